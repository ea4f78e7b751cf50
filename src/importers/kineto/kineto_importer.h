// PyTorch profiler (Kineto) Chrome-trace JSON importer, every era from torch 1.9
// to 2.x, plain or gzip, plus the legacy export of torch builds without Kineto.
// Format facts: docs/formats/kineto.md.
#pragma once

#include "importers/importer.h"

namespace pypto {

const Importer* KinetoImporter();

}  // namespace pypto
