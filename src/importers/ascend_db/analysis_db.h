// analysis.db: the communication and step analysis torch_npu's profiler writes
// beside its other output in ASCEND_PROFILER_OUTPUT (CANN 8.x; the SQLite
// twin of step_trace_time.csv and communication.json, written for every
// export type). Tables, units and how they map: docs/formats/ascend-db.md.
//   StepTraceTime        (µs)  → step rows with the step breakdown
//   CommAnalyzerTime     (ms)  → device attributes "communication/<step>/<op>@<group>/<field>",
//   CommAnalyzerBandwidth       the keys communication.json gives, so one reader of them serves both
//   CommAnalyzerMatrix          → counted in a note (link matrix; read by the multi-rank views)
#pragma once

#include <string>

#include "importers/importer.h"

namespace pypto::ascend {

// What the run already has from its text files; those win, analysis.db fills the rest.
struct AnalysisDbNeeds {
  bool steps = true;           // no step_trace_time.csv was read for this device
  bool communication = true;   // no communication.json was read for this device
};

// Reads `path` for `device`. Never fails the import: the file is a side file
// of the run, so a damaged one (cut, corrupt, not SQLite) is counted as data
// loss with its place, and what could be read is kept.
void ImportAnalysisDb(const std::string& path, int32_t device, const AnalysisDbNeeds& needs,
                      const ImportOptions& options, Profile* profile);

}  // namespace pypto::ascend
