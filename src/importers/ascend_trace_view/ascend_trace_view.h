// Ascend timeline JSON importer: torch_npu `trace_view.json` and the msprof
// timeline `msprof_{ts}.json` (Chrome trace events in a bare JSON array, string
// µs timestamps, processes named by metadata events). Format facts and the way
// flows become correlation ids: docs/formats/ascend-trace-view.md.
#pragma once

#include <string>

#include "importers/importer.h"

namespace pypto {

// Importer name "ascend-trace-view".
const Importer* AscendTraceViewImporter();

// Reads one timeline file into `profile` (which may already hold other files of
// the same run, e.g. kernel_details.csv read by the directory importer).
// Non-fatal problems (truncation, malformed events, unbound flows) become data loss.
Status ImportAscendTraceView(const std::string& path, const ImportOptions& options, Profile* profile);

}  // namespace pypto
