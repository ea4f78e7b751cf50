// Readers for the Ascend summary files shared by the torch_npu
// (ASCEND_PROFILER_OUTPUT) and msprof (PROF_*) layouts: per-task tables
// (kernel_details.csv / op_summary*.csv), op_statistic, operator_details,
// msprof task_time, step_trace_time, memory records, and the JSON side files (profiler_info*.json, info.json.N,
// communication.json). They fill the model faithfully and analyse nothing.
// Format facts and sources: docs/formats/ascend.md.
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "importers/ascend_csv/column_adapters.h"
#include "importers/common/csv_reader.h"
#include "importers/importer.h"

namespace pypto::ascend {

// Data-loss reasons (Profile::data_loss keys), shared by both importers.
inline constexpr char kLossCellCount[] = "ascend csv: row has fewer or more cells than the header";
inline constexpr char kLossRowCut[] = "ascend csv: last row cut (file truncated inside a quoted cell)";
inline constexpr char kLossHeaderCut[] = "ascend csv: file ends inside the header row (truncated; no rows read)";
inline constexpr char kLossNotNumeric[] = "ascend csv: value is not a number";
inline constexpr char kLossNoTime[] = "ascend csv: task without start time or duration (row skipped)";

// Rows between checks of ImportOptions::cancel and calls of the progress
// callback: 65536 rows ≈ 40 MB of kernel_details.csv, a fraction of a second.
inline constexpr uint64_t kRowsBetweenProgressChecks = 65536;

// What the caller knows about the run a file belongs to.
struct RunContext {
  const ImportOptions* options = nullptr;
  int32_t device = -1;          // rank / device index from the layout; -1 = from Device_id, else 0
  std::string cann_version;     // from profiler_info*.json / info.json ("" = unknown)
  std::string version_source;   // where cann_version came from (for notes)
  // Device tasks from this row on were read from the run's trace_view.json: a
  // kernel_details row with the same start (ns) and name enriches that task
  // (core type, details, PMU attributes) instead of adding a duplicate. The
  // trace holds the launch links; the CSV holds shapes and PMU metrics.
  size_t merge_from_task = SIZE_MAX;
};

// Which Ascend summary file a CSV header belongs to.
enum class CsvKind {
  kTaskTable,
  kOpStatistic,
  kOperatorDetails,  // ASCEND_PROFILER_OUTPUT/operator_details.csv (per-op host/device aggregates)
  kTaskTime,         // msprof task_time*.csv (per-task rows, no shapes)
  kStepTraceTime,
  kApiStatistic,     // ASCEND_PROFILER_OUTPUT/api_statistic.csv (CANN API calls per level: model, node, acl, runtime …)
  kMemoryRecord,
  kOperatorMemory,
  kUnknown
};
CsvKind ClassifyHeader(const std::vector<std::string>& header);
// Reads the first line of `prefix` (file content) as a CSV header.
std::vector<std::string> HeaderOfPrefix(std::string_view prefix);

// Reads any of the CSV kinds above; `expected` kUnknown = classify by header.
// Fails (naming file and column) only when the file cannot be read at all:
// empty, no header, a required column missing; bad rows become data loss.
Status ImportAscendCsv(const std::string& path, const RunContext& run, Profile* profile,
                       CsvKind expected = CsvKind::kUnknown);

// profiler_info[_{rank}].json → metadata (torch_npu_version, cann_version,
// profiler_level, aic_metrics, schedule, rank_id …). Returns the rank or -1.
StatusOr<int32_t> ImportProfilerInfo(const std::string& path, const ImportOptions& options, Profile* profile);
// msprof device_N/info.json.N → device attributes (ai_core_num, aiv_num, aic_frequency …).
Status ImportDeviceInfo(const std::string& path, int32_t device, const ImportOptions& options, Profile* profile);
// communication.json → device attributes "communication/<step>/<op>/<field>".
Status ImportCommunicationJson(const std::string& path, int32_t device, const ImportOptions& options,
                               Profile* profile);

// Checks a data row's shape against the header: a record cut inside a quoted
// cell or with another cell count is counted (kLossRowCut / kLossCellCount,
// with file and line) and reported unusable.
bool CheckRowShape(const csv::CsvReader& reader, size_t header_size, const std::string& path, Profile* profile);
// A numeric attribute from a cell: absent cells ("NA", "N/A", "") are skipped,
// non-numeric ones kept as text and counted (kLossNotNumeric).
void AddNumericCell(Profile* profile, OwnerKind owner_kind, uint32_t owner, StrId key, std::string_view cell,
                    const std::string& path, uint64_t line, std::string_view column);

// communication_matrix.json → device attributes "communication_matrix/<step>/<op@group>/<src-dst>/<field>"
// (Transport Type, Transit Size(MB), Transit Time(ms), Bandwidth(GB/s), Op Name).
Status ImportCommunicationMatrixJson(const std::string& path, int32_t device, const ImportOptions& options,
                                     Profile* profile);
// profiler_metadata.json (Megatron/torch_npu) → device attributes "distributed_args/<k>" and
// "parallel_group/<group_name>/{global_ranks,group_rank}", metadata "env.<NAME>" for set variables.
Status ImportProfilerMetadata(const std::string& path, int32_t device, const ImportOptions& options,
                              Profile* profile);

// Finds or adds the NPU device row with this index; returns its row.
uint32_t EnsureNpuDevice(Profile* profile, int32_t device);

// step_trace_time.csv gives a step's breakdown but not its start. Places each
// step row whose start is unknown on the device tasks of that step: the tasks
// whose "Step Id" attribute equals the step number (or, without Step Id
// columns, all tasks of the step's device when it is the device's only step).
// The step then spans from its first task start to its last task end (or the
// breakdown total when that is longer). Rows with no such tasks stay unknown.
// Steps that only the tasks' "Step Id" column names (no step_trace_time row)
// are then added, one per (device, Step Id), spanning its tasks, with source
// kStepSourceStepIdColumn: the span of a device-only table, which for an excerpt of
// rows says little (the diagnosis then takes the device busy time as basis).
void PlaceStepsOnTasks(Profile* profile);
// Adds `text` to a comma-separated metadata value unless it is there already.
void AddMetadataValue(Profile* profile, const std::string& key, std::string_view text);

}  // namespace pypto::ascend
