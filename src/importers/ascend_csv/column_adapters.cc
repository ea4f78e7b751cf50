#include "importers/ascend_csv/column_adapters.h"

#include <algorithm>
#include <charconv>

namespace pypto::ascend {
namespace {

// Columns in TaskField order:
// Step Id, Device_id, Model ID, Task ID, Stream ID, name, op type, OP State, core type,
// start, duration, wait, block, mix block, HF32 Eligible,
// Input Shapes, Input Data Types, Input Formats, Output Shapes, Output Data Types, Output Formats, Context ID.
// Sources: the fixture headers (SOURCES.md), torch_npu _csv_headers.py, msprof docs; see docs/formats/ascend.md.
const std::vector<TaskColumnAdapter>& Table() {
  static const std::vector<TaskColumnAdapter> adapters = {
      {"kernel_details/cann8.0", TableStyle::kKernelDetails,
       "torch_npu 2.1-2.6 with CANN 8.0-8.2 (Jan 2025 samples): no Device_id column",
       {"Step Id", "", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State", "Accelerator Core",
        "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
        "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
        "Output Formats", "Context ID"}},
      {"kernel_details/cann8.3", TableStyle::kKernelDetails,
       "torch_npu 2.7 with CANN 8.3 (Nov 2025 sample): Device_id after Step Id, COMMUNICATION core type",
       {"Step Id", "Device_id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State",
        "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Dim", "Mix Block Dim",
        "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
        "Output Data Types", "Output Formats", "Context ID"}},
      {"kernel_details/block-num", TableStyle::kKernelDetails,
       "torch_npu after commit 48596093 (2026-02, 'rename block dim to block num'): Block Num, Mix Block Num",
       {"Step Id", "Device_id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State",
        "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num", "Mix Block Num",
        "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
        "Output Data Types", "Output Formats", "Context ID"}},
      {"op_summary/cann7", TableStyle::kOpSummary,
       "msprof of CANN 6.3-7.0 (2023 sample): Start Time(us), no OP State, HCCL task type",
       {"Step Id", "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "", "Task Type",
        "Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Mix Block Dim",
        "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
        "Output Data Types", "Output Formats", "Context ID"}},
      {"op_summary/cann8.0", TableStyle::kOpSummary,
       "msprof of CANN 8.0-8.3: Task Start Time(us), OP State, Block Dim",
       {"", "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
        "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Mix Block Dim",
        "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
        "Output Data Types", "Output Formats", "Context ID"}},
      {"op_summary/block-num", TableStyle::kOpSummary,
       "msprof of the newest CANN (msprof docs; 2026 sample): Block Num, Mix Block Num",
       {"", "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
        "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Num", "Mix Block Num",
        "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
        "Output Data Types", "Output Formats", "Context ID"}},
  };
  return adapters;
}

// Spellings no adapter above lists as its own but real files use.
struct ExtraAlias {
  TaskField field;
  std::string_view spelling;
};
constexpr ExtraAlias kExtraAliases[] = {
    {TaskField::kDeviceId, "Device Id"},  // msprof op (OpBasicInfo.csv)
    {TaskField::kOpType, "Op Type"},      // msprof op (OpBasicInfo.csv)
};

constexpr std::string_view kFieldNames[kTaskFieldCount] = {
    "step id", "device id", "model id", "task id", "stream id", "task name", "op type", "op state",
    "core type", "start time", "duration", "wait time", "block dim", "mix block dim", "hf32 eligible",
    "input shapes", "input types", "input formats", "output shapes", "output types", "output formats",
    "context id"};

bool Contains(const std::vector<std::string>& header, std::string_view name) {
  return std::find(header.begin(), header.end(), name) != header.end();
}

}  // namespace

const std::vector<TaskColumnAdapter>& TaskColumnAdapters() { return Table(); }

const TaskColumnAdapter* FindTaskAdapter(std::string_view id) {
  for (const auto& a : Table())
    if (a.id == id) return &a;
  return nullptr;
}

std::string_view TaskFieldName(TaskField field) { return kFieldNames[static_cast<size_t>(field)]; }

std::vector<std::string_view> TaskFieldAliases(TaskField field) {
  std::vector<std::string_view> out;
  auto add = [&](std::string_view s) {
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const auto& a : Table()) add(a.columns[static_cast<size_t>(field)]);
  for (const auto& e : kExtraAliases)
    if (e.field == field) add(e.spelling);
  return out;
}

std::optional<CannVersion> ParseCannVersion(std::string_view text) {
  // "8.3.RC1", "8.0.0", "7.0.RC1.alpha003", "CANN 8.1"
  size_t i = text.find_first_of("0123456789");
  if (i == std::string_view::npos) return std::nullopt;
  CannVersion v;
  auto r1 = std::from_chars(text.data() + i, text.data() + text.size(), v.major);
  if (r1.ec != std::errc()) return std::nullopt;
  const char* p = r1.ptr;
  if (p < text.data() + text.size() && *p == '.') {
    auto r2 = std::from_chars(p + 1, text.data() + text.size(), v.minor);
    if (r2.ec != std::errc()) v.minor = 0;
  }
  return v;
}

const TaskColumnAdapter* AdapterForVersion(TableStyle style, CannVersion v) {
  auto at_least = [&](int major, int minor) { return v.major > major || (v.major == major && v.minor >= minor); };
  // Block Num: first release after the 2026-02 rename, assumed ≥ 8.5 (docs/formats/ascend.md).
  if (style == TableStyle::kKernelDetails) {
    if (at_least(8, 5)) return FindTaskAdapter("kernel_details/block-num");
    if (at_least(8, 3)) return FindTaskAdapter("kernel_details/cann8.3");
    return FindTaskAdapter("kernel_details/cann8.0");
  }
  if (at_least(8, 5)) return FindTaskAdapter("op_summary/block-num");
  if (at_least(8, 0)) return FindTaskAdapter("op_summary/cann8.0");
  return FindTaskAdapter("op_summary/cann7");
}

TableStyle StyleOfHeader(const std::vector<std::string>& header) {
  if (Contains(header, "Op Name") || Contains(header, "Task Type") || Contains(header, "Task Duration(us)"))
    return TableStyle::kOpSummary;
  return TableStyle::kKernelDetails;
}

const TaskColumnAdapter* AdapterForHeader(const std::vector<std::string>& header) {
  const TaskColumnAdapter* best = nullptr;
  int best_score = -1000;
  for (const auto& a : Table()) {
    int matched = 0, missing = 0;
    for (std::string_view col : a.columns) {
      if (col.empty()) continue;
      if (Contains(header, col)) ++matched;
      else ++missing;
    }
    int score = 2 * matched - missing;
    if (score >= best_score) {  // >=: later (newer) adapters win ties
      best = &a;
      best_score = score;
    }
  }
  return best;
}

TaskColumnMap MapTaskColumns(const std::vector<std::string>& header, const TaskColumnAdapter& adapter) {
  TaskColumnMap map;
  map.adapter = &adapter;
  map.index.fill(-1);
  map.is_field_column.assign(header.size(), false);
  auto find = [&](std::string_view name) -> int {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name && !map.is_field_column[i]) return static_cast<int>(i);
    return -1;
  };
  for (size_t f = 0; f < kTaskFieldCount; ++f) {
    std::string_view own = adapter.columns[f];
    int idx = own.empty() ? -1 : find(own);
    if (idx < 0) {
      for (std::string_view alias : TaskFieldAliases(static_cast<TaskField>(f))) {
        if (alias == own) continue;
        idx = find(alias);
        if (idx >= 0) {
          map.alias_matches.push_back("'" + std::string(alias) + "' for " +
                                      (own.empty() ? std::string(TaskFieldName(static_cast<TaskField>(f)))
                                                   : "'" + std::string(own) + "'"));
          break;
        }
      }
    }
    map.index[f] = idx;
    if (idx >= 0) map.is_field_column[idx] = true;
  }
  return map;
}

bool IsPmuColumn(std::string_view c) {
  static constexpr std::string_view kPrefixes[] = {"aic_", "aiv_", "aicore_", "cube_utilization", "memory_bound",
                                                   "vec_", "mac_", "scalar_", "mte1_", "mte2_", "mte3_",
                                                   "fixpipe_", "icache_", "ub_", "l0a_", "l0b_", "l0c_",
                                                   "l2_", "main_mem_", "total_cycles"};
  for (std::string_view p : kPrefixes)
    if (c.substr(0, p.size()) == p) return true;
  return false;
}

}  // namespace pypto::ascend
