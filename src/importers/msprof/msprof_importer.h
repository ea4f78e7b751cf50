// msprof text-export importer, name "msprof": a `PROF_*` directory (CANN 6.3-7.0
// `device_*/summary/*.csv`, CANN ≥ 8.0 `mindstudio_profiler_output/*.csv`,
// `device_*/info.json.N`), a parent holding several PROF_* folders, or a bare
// op_summary*.csv. Format facts: docs/formats/ascend.md.
#pragma once

#include "importers/importer.h"

namespace pypto {

const Importer* MsprofImporter();

}  // namespace pypto
