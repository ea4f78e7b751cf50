// Version adapters for the Ascend per-task tables (torch_npu kernel_details.csv
// and msprof op_summary*.csv). The same facts carry different column names
// across CANN / torch_npu generations; each adapter is one row of a data table
// mapping the model's fields to that generation's header spellings. Format
// facts and sources: docs/formats/ascend.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace pypto::ascend {

// The columns of a per-task table that the importer maps to model fields.
enum class TaskField : uint8_t {
  kStepId, kDeviceId, kModelId, kTaskId, kStreamId, kName, kOpType, kOpState, kCoreType,
  kStart, kDuration, kWait, kBlockDim, kMixBlockDim, kHf32Eligible,
  kInputShapes, kInputTypes, kInputFormats, kOutputShapes, kOutputTypes, kOutputFormats, kContextId,
  kCount
};
inline constexpr size_t kTaskFieldCount = static_cast<size_t>(TaskField::kCount);

enum class TableStyle : uint8_t {
  kKernelDetails,  // torch_npu naming: Name, Type, Accelerator Core, Start Time(us), Duration(us)
  kOpSummary,      // msprof naming: Op Name, OP Type, Task Type, Task Start Time(us), Task Duration(us)
};

struct TaskColumnAdapter {
  std::string_view id;       // written to metadata "format_version", e.g. "kernel_details/cann8.3"
  TableStyle style;
  std::string_view writers;  // which tool versions write this header (docs)
  // Header spelling of each TaskField in this generation; "" = not written.
  std::array<std::string_view, kTaskFieldCount> columns;
};

// Every adapter, oldest first within each style.
const std::vector<TaskColumnAdapter>& TaskColumnAdapters();
const TaskColumnAdapter* FindTaskAdapter(std::string_view id);
std::string_view TaskFieldName(TaskField field);  // a readable name for messages

// Every spelling any generation uses for `field` (the adapter's own first).
std::vector<std::string_view> TaskFieldAliases(TaskField field);

// A parsed CANN version "8.3.RC1" → {8, 3}; nullopt when unreadable.
struct CannVersion {
  int major = 0;
  int minor = 0;
};
std::optional<CannVersion> ParseCannVersion(std::string_view text);

// Picks the adapter for a header of the given style from a CANN version.
const TaskColumnAdapter* AdapterForVersion(TableStyle style, CannVersion version);

// The style a header is written in: op_summary when it uses msprof names
// ("Op Name", "Task Type", "Task Duration(us)"), else kernel_details.
TableStyle StyleOfHeader(const std::vector<std::string>& header);

// Best adapter for a header by its column names (most spellings matched,
// then fewest expected columns missing; ties go to the newer generation).
const TaskColumnAdapter* AdapterForHeader(const std::vector<std::string>& header);

// How the columns of one file map to fields: the index of each field's column
// (-1 absent) and, for messages, fields found through another generation's
// spelling.
struct TaskColumnMap {
  const TaskColumnAdapter* adapter = nullptr;
  std::array<int, kTaskFieldCount> index{};
  std::vector<std::string> alias_matches;  // "'Block Num' for Block Dim"
  std::vector<bool> is_field_column;       // per header column
};
TaskColumnMap MapTaskColumns(const std::vector<std::string>& header, const TaskColumnAdapter& adapter);

// PMU metric columns (aic_*/aiv_*, aicore_time(us), cube_utilization(%),
// memory_bound …): kept as numeric attributes without an "unknown column" note.
bool IsPmuColumn(std::string_view column);

}  // namespace pypto::ascend
