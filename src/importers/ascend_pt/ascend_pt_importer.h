// Ascend PyTorch Profiler (torch_npu) output importer, name "ascend-pt".
// Accepts a `*_ascend_pt` run directory, its ASCEND_PROFILER_OUTPUT folder, a
// parent directory holding several ranks (`*_ascend_pt` subdirectories; device
// index = rank), or a single kernel_details.csv / op_statistic.csv /
// step_trace_time.csv / memory CSV. Format facts: docs/formats/ascend.md.
#pragma once

#include "importers/importer.h"

namespace pypto {

const Importer* AscendPtImporter();

}  // namespace pypto
