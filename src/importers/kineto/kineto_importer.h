// PyTorch profiler (Kineto) Chrome-trace JSON importer, every era from torch 1.8
// to 2.x, plain or gzip, plus the legacy export of torch builds without Kineto.
// Format facts and how each era maps to the model: docs/formats/kineto.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "importers/importer.h"

namespace pypto {

// "kineto": `{"traceEvents": [...]}` objects (and bare arrays of Kineto-looking events).
const Importer* KinetoImporter();
// "kineto-legacy": the bare-array export of torch builds without Kineto
// (pid "CPU functions", no cat, no shapes; reference kineto-format.md §9).
const Importer* KinetoLegacyImporter();

namespace kineto {

// Communication kernels by name prefix (NCCL renamed ncclKernel_ to
// ncclDevKernel_, HTA #360; RCCL keeps the nccl names and adds rccl ones).
bool IsCommunicationKernelName(std::string_view name);

}  // namespace kineto
}  // namespace pypto
