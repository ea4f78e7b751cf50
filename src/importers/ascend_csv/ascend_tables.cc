#include "importers/ascend_csv/ascend_tables.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "importers/common/csv_reader.h"
#include "importers/common/csv_values.h"
#include "importers/common/number_text.h"
#include "importers/common/parse_threads.h"
#include "model/plain_decimal.h"

namespace pypto::ascend {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// "Model ID" of eager / single-operator rows: UINT32_MAX means "not
// applicable" (msprof docs), so it is not stored as an attribute.
constexpr int64_t kModelIdNotApplicable = 4294967295;

// Core-type vocabulary → task kind. HCCL (≤ Jan 2025) and COMMUNICATION
// (CANN 8.3) are communication; SQE task types of DMA engines are copies and
// event SQEs synchronisation (reference §5.1). Anything else is a kernel.
struct CoreTypeKind {
  std::string_view core_type;
  DeviceTaskKind kind;
};
constexpr CoreTypeKind kCoreTypeKinds[] = {
    {"HCCL", DeviceTaskKind::kCommunication},  {"COMMUNICATION", DeviceTaskKind::kCommunication},
    {"SDMA_SQE", DeviceTaskKind::kMemcpy},     {"PCIE_DMA_SQE", DeviceTaskKind::kMemcpy},
    {"EVENT_RECORD_SQE", DeviceTaskKind::kSync}, {"EVENT_WAIT_SQE", DeviceTaskKind::kSync},
    {"PLACE_HOLDER_SQE", DeviceTaskKind::kOther},
};

DeviceTaskKind KindOfCoreType(std::string_view core_type) {
  for (const auto& e : kCoreTypeKinds)
    if (e.core_type == core_type) return e.kind;
  return DeviceTaskKind::kKernel;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string At(const std::string& path, uint64_t line) { return path + ": line " + std::to_string(line); }
std::string At(const std::string& path, uint64_t line, std::string_view column) {
  return At(path, line) + ", column '" + std::string(column) + "'";
}

int FindColumn(const std::vector<std::string>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

// "NPU:3" / "npu:3" / "3" → 3; -1 when unreadable.
int32_t DeviceFromText(std::string_view text) {
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) text.remove_prefix(colon + 1);
  auto v = number_text::ParseInt64(text);
  return v && *v >= 0 && *v < (1 << 20) ? static_cast<int32_t>(*v) : -1;
}

bool CheckCancel(const RunContext& run, const std::string& path) {
  return run.options && run.options->cancel && run.options->cancel->load(std::memory_order_relaxed);
}

// Checks a data row's shape; counts the loss and returns false when unusable.
bool RowUsable(const csv::CsvReader& reader, size_t header_size, const std::string& path, Profile* profile) {
  if (reader.unterminated_quote()) {
    profile->CountLoss(LossKind::kTruncated, kLossRowCut, At(path, reader.line()));
    return false;
  }
  if (reader.size() != header_size) {
    profile->CountLoss(LossKind::kRowSkipped, kLossCellCount, At(path, reader.line()) + ": " + std::to_string(reader.size()) +
                                           " cells, header has " + std::to_string(header_size));
    return false;
  }
  return true;
}

// A numeric attribute from a cell; absent cells are skipped, non-numeric
// cells kept as text and counted.
void AddNumericAttribute(Profile* profile, OwnerKind owner_kind, uint32_t owner, StrId key, std::string_view cell,
                         const std::string& path, uint64_t line, std::string_view column) {
  if (csv::IsAbsent(cell)) return;
  auto number = csv::ParseDouble(cell);
  if (!number) profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(path, line, column));
  const double value = number ? *number : kNaN;
  profile->AddAttribute(owner_kind, owner, key, cell, value);
}

void Progress(const RunContext& run, const csv::CsvReader& reader) {
  if (run.options && run.options->progress) run.options->progress(reader.bytes_consumed(), reader.file_size());
}

// ------------------------------------------------------------ per-task tables

// Gives an existing task (read from trace_view.json) the Ascend facts of a
// kernel_details row.
void EnrichTask(Profile* profile, uint32_t task, const DeviceTaskRow& row) {
  DeviceTaskTable& t = profile->device_tasks;
  t.core_type[task] = row.core_type;
  if (row.core_type != kEmptyStr) t.kind[task] = row.kind;  // the trace may say "Other" (2024)
  // Detail rows are shared between tasks: the task gets the row of its new facts.
  t.detail[task] = t.details.RowOf(DeviceTaskDetailTable::Facts::Of(row));
}

// The column adapter: the forced cann_version, else the run's, else the one
// whose spelling the header uses; `why` says which, for the note.
Status ChooseTaskAdapter(const std::vector<std::string>& header, const RunContext& run,
                         const TaskColumnAdapter** adapter, std::string* why) {
  const TableStyle style = StyleOfHeader(header);
  const std::string forced = run.options ? run.options->cann_version : std::string();
  if (!forced.empty()) {
    auto v = ParseCannVersion(forced);
    if (!v) return InvalidArgumentError("cann version '" + forced + "' is not a version like 8.3.RC1");
    *adapter = AdapterForVersion(style, *v);
    *why = "forced cann_version " + forced;
  } else if (auto v = ParseCannVersion(run.cann_version); v && !run.cann_version.empty()) {
    *adapter = AdapterForVersion(style, *v);
    *why = "cann_version " + run.cann_version + " from " + run.version_source;
  } else {
    *adapter = AdapterForHeader(header);
    *why = "inferred from the header";
  }
  return Status::Ok();
}

Status CheckRequiredTaskColumns(const TaskColumnMap& map, const TaskColumnAdapter& adapter, const std::string& path) {
  for (TaskField required : {TaskField::kName, TaskField::kStart, TaskField::kDuration}) {
    if (map.index[static_cast<size_t>(required)] >= 0) continue;
    std::string looked;
    for (std::string_view alias : TaskFieldAliases(required)) looked += (looked.empty() ? "'" : ", '") + std::string(alias) + "'";
    std::string own(adapter.columns[static_cast<size_t>(required)]);
    return CorruptError(path + ": line 1: missing required column '" + (own.empty() ? looked : own) +
                         "' (" + std::string(TaskFieldName(required)) + "; adapter " + std::string(adapter.id) +
                         ", also looked for " + looked + ")");
  }
  return Status::Ok();
}

void RecordTaskAdapter(const TaskColumnMap& map, const TaskColumnAdapter& adapter, const std::string& why,
                       const std::string& path, Profile* profile) {
  const std::string base = BaseName(path);
  profile->metadata["adapter." + base] = std::string(adapter.id);
  AddMetadataValue(profile, "format_version", adapter.id);
  profile->notes.push_back(path + ": adapter " + std::string(adapter.id) + " (" + why + ")");
  for (const auto& m : map.alias_matches)
    profile->notes.push_back(path + ": column " + m + " (spelling of another generation than adapter " +
                             std::string(adapter.id) + ")");
}

// Columns kept as attributes: PMU metrics, unknown columns, and the task
// fields the model has no column for.
struct ExtraColumn {
  int index;
  StrId key;
  bool numeric;
};
struct FieldAttributeColumn {
  TaskField field;
  int index;
  StrId key;
  bool numeric;
};

std::vector<ExtraColumn> ExtraColumns(const TaskColumnMap& map, const std::vector<std::string>& header,
                                      const std::string& path, Profile* profile) {
  std::vector<ExtraColumn> extras;
  for (size_t i = 0; i < header.size(); ++i) {
    if (map.is_field_column[i]) continue;
    bool pmu = IsPmuColumn(header[i]);
    if (!pmu) {
      std::string note = path + ": unknown column '" + header[i] + "' kept as attribute";
      if (std::find(profile->notes.begin(), profile->notes.end(), note) == profile->notes.end())
        profile->notes.push_back(note);
    }
    extras.push_back({static_cast<int>(i), profile->Intern(header[i]), pmu});
  }
  return extras;
}

std::vector<FieldAttributeColumn> FieldAttributeColumns(const TaskColumnMap& map,
                                                        const std::vector<std::string>& header, Profile* profile) {
  struct FieldAttribute {
    TaskField field;
    bool numeric;
  };
  static constexpr FieldAttribute kFieldAttributes[] = {
      {TaskField::kStepId, true},   {TaskField::kTaskId, true},       {TaskField::kModelId, true},
      {TaskField::kWait, true},     {TaskField::kOpState, false},     {TaskField::kHf32Eligible, false},
      {TaskField::kContextId, true},
  };
  auto col = [&](TaskField f) { return map.index[static_cast<size_t>(f)]; };
  std::vector<FieldAttributeColumn> field_attributes;
  for (const auto& fa : kFieldAttributes)
    if (col(fa.field) >= 0) field_attributes.push_back({fa.field, col(fa.field), profile->Intern(header[col(fa.field)]), fa.numeric});
  return field_attributes;
}

// Where a task table's cells are (-1: no such column), resolved once from its header.
struct TaskColumns {
  int name, start, dur, core, type, device, stream, block, mix;
  int input_shapes, input_types, input_formats, output_shapes, output_types, output_formats;
  std::vector<ExtraColumn> extras;
  std::vector<FieldAttributeColumn> field_attributes;
  StrId device_id_key;
};

TaskColumns ResolveTaskColumns(const TaskColumnMap& map, const std::vector<std::string>& header,
                               const std::string& path, Profile* profile) {
  auto col = [&](TaskField f) { return map.index[static_cast<size_t>(f)]; };
  TaskColumns c;
  c.extras = ExtraColumns(map, header, path, profile);
  c.field_attributes = FieldAttributeColumns(map, header, profile);
  c.device_id_key = profile->Intern("Device_id");
  c.name = col(TaskField::kName), c.start = col(TaskField::kStart), c.dur = col(TaskField::kDuration);
  c.core = col(TaskField::kCoreType), c.type = col(TaskField::kOpType);
  c.device = col(TaskField::kDeviceId), c.stream = col(TaskField::kStreamId);
  c.block = col(TaskField::kBlockDim), c.mix = col(TaskField::kMixBlockDim);
  c.input_shapes = col(TaskField::kInputShapes), c.input_types = col(TaskField::kInputTypes);
  c.input_formats = col(TaskField::kInputFormats), c.output_shapes = col(TaskField::kOutputShapes);
  c.output_types = col(TaskField::kOutputTypes), c.output_formats = col(TaskField::kOutputFormats);
  return c;
}

// What every row reads; fixed for the whole table.
struct TaskTableInput {
  csv::CsvReader& reader;
  const std::vector<std::string>& header;
  const std::string& path;
  const RunContext& run;
  const TaskColumns& cols;
  Profile* profile;
};

// What the rows accumulate.
// The previous row's cell of a numeric attribute column with what it was read
// as: about 45 % of the cells of the public kernel_details.csv samples repeat
// the cell above them (zeros, N/A ratios, block dims), and parsing and checking
// each again cost a fifth of the import.
struct NumericCellMemo {
  std::string cell;
  double number = kNaN;      // NaN when the cell is not a number
  Profile::AttributeTextRef text;  // Profile::AttributeTextOf the cell
  bool numeric = false;      // the cell parsed as a number (else counted as repaired per row)
  bool valid = false;
};

struct TaskTableState {
  std::map<std::pair<int32_t, int64_t>, uint32_t> tracks;
  std::vector<NumericCellMemo> numeric_cells;  // by column index
  std::unordered_map<StrId, DeviceTaskKind> kinds;
  std::unordered_multimap<TimeNs, uint32_t> trace_tasks;  // start → task read from trace_view.json
  uint64_t merged = 0, unmatched = 0;
};

// Start and duration in ns; false (loss counted) when the row has no usable times.
bool ReadTaskTimes(const TaskTableInput& in, uint64_t line, TimeNs* start, TimeNs* dur) {
  const csv::CsvReader& reader = in.reader;
  std::string_view start_text = reader[in.cols.start], dur_text = reader[in.cols.dur];
  if (csv::IsAbsent(start_text) || csv::IsAbsent(dur_text)) {
    in.profile->CountLoss(LossKind::kRowSkipped, kLossNoTime, At(in.path, line));
    return false;
  }
  auto s = number_text::MicrosToNs(start_text);
  if (!s) {
    in.profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(in.path, line, in.header[in.cols.start]));
    return false;
  }
  auto d = number_text::MicrosToNs(dur_text);
  if (!d) {
    in.profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(in.path, line, in.header[in.cols.dur]));
    return false;
  }
  *start = *s;
  *dur = *d;
  return true;
}

// `file_device`: the row's Device_id (-1 when absent or unreadable);
// `device`: the device the task goes to (the run's, else the file's, else 0).
void ReadDeviceAndStream(const TaskTableInput& in, uint64_t line, int32_t* file_device, int32_t* device,
                         int64_t* stream) {
  const csv::CsvReader& reader = in.reader;
  const int c_device = in.cols.device, c_stream = in.cols.stream;
  *file_device = -1;
  if (c_device >= 0 && !csv::IsAbsent(reader[c_device])) {
    *file_device = DeviceFromText(reader[c_device]);
    if (*file_device < 0) in.profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(in.path, line, in.header[c_device]));
  }
  *device = in.run.device >= 0 ? in.run.device : (*file_device >= 0 ? *file_device : 0);
  *stream = -1;
  if (c_stream >= 0 && !csv::IsAbsent(reader[c_stream])) {
    auto s = number_text::ParseInt64(reader[c_stream]);
    if (s) *stream = *s;
    else in.profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(in.path, line, in.header[c_stream]));
  }
}

DeviceTaskKind CachedKindOfCoreType(const TaskTableInput& in, TaskTableState& state, StrId core_type) {
  auto [kind_it, kind_new] = state.kinds.try_emplace(core_type, DeviceTaskKind::kKernel);
  if (kind_new) kind_it->second = KindOfCoreType(in.profile->Str(core_type));
  return kind_it->second;
}

uint32_t TrackOfTask(const TaskTableInput& in, TaskTableState& state, int32_t device, int64_t stream,
                     DeviceTaskKind kind) {
  Profile* profile = in.profile;
  auto [track_it, track_new] = state.tracks.try_emplace({device, stream}, 0);
  if (track_new) {
    std::string pid = "NPU " + std::to_string(device);
    // Communication rows carry no stream id (N/A): they get their own track.
    std::string tid = stream >= 0 ? "Stream " + std::to_string(stream)
                                  : (kind == DeviceTaskKind::kCommunication ? "Communication" : "Stream N/A");
    uint32_t t = profile->DeviceTrack(pid, tid, device, stream);
    profile->tracks.name[t] = profile->Intern(tid);
    profile->tracks.process_name[t] = profile->Intern(pid);
    track_it->second = t;
    EnsureNpuDevice(profile, device);
  }
  return track_it->second;
}

void ReadBlockDim(const TaskTableInput& in, int c, uint64_t line, int32_t* out) {
  if (c < 0 || csv::IsAbsent(in.reader[c])) return;
  auto v = number_text::ParseInt64(in.reader[c]);
  if (v && *v >= 0 && *v <= std::numeric_limits<int32_t>::max()) *out = static_cast<int32_t>(*v);
  else in.profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(in.path, line, in.header[c]));
}

StrId InternListCell(const TaskTableInput& in, int c, bool formats) {
  if (c < 0 || csv::IsAbsent(in.reader[c])) return kEmptyStr;
  std::string_view cell = in.reader[c];
  if (cell.find('"') == std::string_view::npos && (!formats || cell.find("FORMAT_") == std::string_view::npos))
    return in.profile->Intern(cell);
  return in.profile->Intern(csv::NormalizeListCell(cell, formats));
}

// Op type, block dims and the shape / type / format lists.
void ReadTaskDetails(const TaskTableInput& in, uint64_t line, DeviceTaskRow* row) {
  const TaskColumns& c = in.cols;
  if (c.type >= 0 && !csv::IsAbsent(in.reader[c.type])) row->op_type = in.profile->Intern(in.reader[c.type]);
  ReadBlockDim(in, c.block, line, &row->block_dim);
  ReadBlockDim(in, c.mix, line, &row->mix_block_dim);
  row->input_shapes = InternListCell(in, c.input_shapes, false);
  row->input_types = InternListCell(in, c.input_types, false);
  row->input_formats = InternListCell(in, c.input_formats, true);
  row->output_shapes = InternListCell(in, c.output_shapes, false);
  row->output_types = InternListCell(in, c.output_types, false);
  row->output_formats = InternListCell(in, c.output_formats, true);
}

// Enriches the trace_view.json task with the same start and name, else adds
// the row as a new task; returns the task.
uint32_t MergeOrAddTask(const TaskTableInput& in, TaskTableState& state, const DeviceTaskRow& row) {
  Profile* profile = in.profile;
  uint32_t task = UINT32_MAX;
  if (!state.trace_tasks.empty()) {
    auto range = state.trace_tasks.equal_range(row.ts);
    for (auto it = range.first; it != range.second; ++it) {
      if (profile->device_tasks.name[it->second] != row.name) continue;
      task = it->second;
      state.trace_tasks.erase(it);
      break;
    }
    if (task == UINT32_MAX) ++state.unmatched;
    else ++state.merged;
  }
  if (task == UINT32_MAX) task = profile->device_tasks.Add(row);
  else EnrichTask(profile, task, row);
  return task;
}

// What the CSV read-ahead thread found a numeric attribute cell to be
// (csv::PreparedCell::tag).
// A number in a text form (Profile::NumberTextForm) is tagged kCellInTextForm + form.
enum NumericCellTag : uint8_t { kCellAbsent = 1, kCellNotNumeric, kCellOtherNumber, kCellInTextForm = 16 };
static_assert(kCellInTextForm + 1 + kMaxFixedDecimals < kNoNumberTextForm, "text-form tags fit in a byte");

// Runs on the read-ahead thread: the parse and the text-form check of a
// numeric attribute cell, most of what storing it costs.
csv::PreparedCell PrepareNumericCell(std::string_view cell) {
  csv::PreparedCell out;
  if (csv::IsAbsent(cell)) {
    out.tag = kCellAbsent;
    return out;
  }
  // Most PMU cells are plain decimals: their value and form from one scan.
  std::optional<uint8_t> form;
  if (const std::optional<PlainDecimal> plain = ParsePlainDecimal(cell)) {
    form = PlainDecimalTextForm(*plain);
    // A number in a text form goes to the table as its mantissa and scale
    // (AttributeTable::AddDecimal), unless it is -0 (an int32 has no
    // negative zero) or beyond int32; any other as its value.
    if (form && *form != kNoNumberTextForm &&
        plain->digits <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) &&
        plain->decimals <= AttributeTable::kMaxDecimalTextScale && !(plain->negative && plain->digits == 0)) {
      const auto magnitude = static_cast<int32_t>(plain->digits);
      out.decimal_mantissa = plain->negative ? -magnitude : magnitude;
      out.decimal_scale = static_cast<int8_t>(plain->decimals);
    } else {
      out.number = plain->Value();
    }
  }
  if (!form) {
    const auto number = csv::ParseDouble(cell);
    if (!number) {
      out.tag = kCellNotNumeric;
      return out;
    }
    out.number = *number;
    form = Profile::NumberTextForm(cell, *number);
  }
  out.tag = *form == kNoNumberTextForm ? static_cast<uint8_t>(kCellOtherNumber)
                                       : static_cast<uint8_t>(kCellInTextForm + *form);
  return out;
}

// The numeric attribute columns of a task table, for PrepareNumericCell.
std::vector<int> NumericAttributeColumns(const TaskColumns& cols) {
  std::vector<int> columns;
  for (const auto& fa : cols.field_attributes)
    if (fa.numeric) columns.push_back(fa.index);
  for (const auto& extra : cols.extras)
    if (extra.numeric) columns.push_back(extra.index);
  return columns;
}

// AddNumericAttribute for a task: a cell the read-ahead thread found absent or
// in a text form is stored at once; any other goes through the column's memo
// of the cell above. On a memo miss the read-ahead thread's parse is taken as
// it is, so only the interning of the text is left to this thread.
void AddTaskNumericAttribute(const TaskTableInput& in, TaskTableState& state, uint32_t task, StrId key, int column,
                             uint64_t line) {
  const csv::PreparedCell* prepared = in.reader.prepared(column);
  if (prepared) {
    if (prepared->tag == kCellAbsent) return;
    if (prepared->tag >= kCellInTextForm) {
      const auto form = static_cast<uint8_t>(prepared->tag - kCellInTextForm);
      if (prepared->decimal_scale >= 0)
        in.profile->attributes.AddDecimal(OwnerKind::kDeviceTask, task, key, prepared->decimal_mantissa,
                                          prepared->decimal_scale, form);
      else
        in.profile->attributes.Add(OwnerKind::kDeviceTask, task, key, kEmptyStr, prepared->number, form);
      return;
    }
  }
  const std::string_view cell = in.reader[column];
  if (csv::IsAbsent(cell)) return;
  if (state.numeric_cells.size() <= static_cast<size_t>(column)) state.numeric_cells.resize(in.header.size());
  NumericCellMemo& memo = state.numeric_cells[column];
  if (!memo.valid || memo.cell != cell) {
    memo.cell.assign(cell);
    if (prepared) {
      // Neither tag is a number in a text form, so the text is the cell itself.
      memo.numeric = prepared->tag == kCellOtherNumber;
      memo.number = memo.numeric ? prepared->number : kNaN;
      memo.text = {in.profile->Intern(cell), kShortestNumberText};
    } else {
      auto number = csv::ParseDouble(cell);
      memo.numeric = number.has_value();
      memo.number = number ? *number : kNaN;
      memo.text = in.profile->AttributeTextOf(cell, memo.number);
    }
    memo.valid = true;
  }
  if (!memo.numeric)
    in.profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(in.path, line, in.header[column]));
  in.profile->attributes.Add(OwnerKind::kDeviceTask, task, key, memo.text.text, memo.number, memo.text.form);
}

void AddTaskAttributes(const TaskTableInput& in, TaskTableState& state, uint32_t task, uint64_t line,
                       int32_t file_device, int32_t device) {
  const csv::CsvReader& reader = in.reader;
  Profile* profile = in.profile;
  if (file_device >= 0 && file_device != device)
    profile->attributes.Add(OwnerKind::kDeviceTask, task, in.cols.device_id_key,
                            profile->Intern(reader[in.cols.device]), file_device);
  // AddTaskNumericAttribute skips an absent cell itself, from what the
  // read-ahead thread found when it prepared the cell.
  for (const auto& fa : in.cols.field_attributes) {
    std::string_view cell = reader[fa.index];
    if (!fa.numeric) {
      if (!csv::IsAbsent(cell))
        profile->attributes.Add(OwnerKind::kDeviceTask, task, fa.key, profile->Intern(cell), kNaN);
      continue;
    }
    if (fa.field == TaskField::kModelId && number_text::ParseInt64(cell) == kModelIdNotApplicable) continue;
    AddTaskNumericAttribute(in, state, task, fa.key, fa.index, line);
  }
  for (const auto& extra : in.cols.extras) {
    if (extra.numeric) {
      AddTaskNumericAttribute(in, state, task, extra.key, extra.index, line);
      continue;
    }
    std::string_view cell = reader[extra.index];
    if (csv::IsAbsent(cell)) continue;
    auto number = csv::ParseDouble(cell);
    const double value = number ? *number : kNaN;
    profile->AddAttribute(OwnerKind::kDeviceTask, task, extra.key, cell, value);
  }
}

// One usable row → one task (new or merged) with its attributes; rows
// without usable times are counted as loss and skipped.
void ImportTaskRow(const TaskTableInput& in, TaskTableState& state) {
  const csv::CsvReader& reader = in.reader;
  const uint64_t line = reader.line();
  TimeNs start, dur;
  if (!ReadTaskTimes(in, line, &start, &dur)) return;
  int32_t file_device, device;
  int64_t stream;
  ReadDeviceAndStream(in, line, &file_device, &device, &stream);

  DeviceTaskRow row;
  row.name = in.profile->Intern(reader[in.cols.name]);
  if (in.cols.core >= 0 && !csv::IsAbsent(reader[in.cols.core])) row.core_type = in.profile->Intern(reader[in.cols.core]);
  row.category = row.core_type;
  row.kind = CachedKindOfCoreType(in, state, row.core_type);
  row.track = TrackOfTask(in, state, device, stream, row.kind);
  row.ts = start;
  row.dur = dur;
  ReadTaskDetails(in, line, &row);
  const uint32_t task = MergeOrAddTask(in, state, row);
  AddTaskAttributes(in, state, task, line, file_device, device);
}

// Reserves the task and attribute columns for the rest of the file, scaled
// from what the bytes read so far produced, once kBytesBeforeReserve are read.
// Growing by doubling copied the attribute columns of a 500k-row
// kernel_details.csv again and again (a tenth of the import) and held the old
// and new buffers at once (the import's peak memory).
class TableReservation {
 public:
  explicit TableReservation(const Profile& p) : tasks_at_start_(p.device_tasks.size()), attributes_at_start_(p.attributes.size()) {}
  void MaybeReserve(const csv::CsvReader& reader, Profile* p) {
    const uint64_t read = reader.bytes_consumed(), size = reader.file_size();
    if (done_ || read < kBytesBeforeReserve || size <= read) return;
    done_ = true;
    const double scale = double(size) / double(read) * kReserveHeadroom;
    p->device_tasks.Reserve(tasks_at_start_ + static_cast<size_t>(double(p->device_tasks.size() - tasks_at_start_) * scale));
    p->attributes.Reserve(attributes_at_start_ +
                          static_cast<size_t>(double(p->attributes.size() - attributes_at_start_) * scale));
  }

 private:
  // 16 MiB: the reader's bytes count runs up to one read chunk (1 MiB) ahead
  // of the rows parsed, so the estimate is within ~6 %; smaller files do not
  // need it.
  static constexpr uint64_t kBytesBeforeReserve = 16u << 20;
  // Rows vary in length: 10 % over the estimate (unused if the rest is shorter).
  static constexpr double kReserveHeadroom = 1.10;
  size_t tasks_at_start_, attributes_at_start_;
  bool done_ = false;
};

Status ImportTaskRows(const TaskTableInput& in, TaskTableState& state) {
  const size_t width = in.header.size();
  uint64_t rows = 0;
  TableReservation reservation(*in.profile);
  if (DefaultParseThreads() > 1)
    in.reader.StartReadAhead({.prepared_columns = NumericAttributeColumns(in.cols), .prepare = PrepareNumericCell});
  while (true) {
    PYPTO_ASSIGN_OR_RETURN(bool more, in.reader.Next());
    if (!more) break;
    if (++rows % kRowsBetweenProgressChecks == 0) {
      if (CheckCancel(in.run, in.path)) return CancelledError(At(in.path, in.reader.line()) + ": import cancelled");
      Progress(in.run, in.reader);
      reservation.MaybeReserve(in.reader, in.profile);
    }
    if (!RowUsable(in.reader, width, in.path, in.profile)) continue;
    ImportTaskRow(in, state);
  }
  return Status::Ok();
}

Status ImportTaskTable(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                       const RunContext& run, Profile* profile) {
  const TaskColumnAdapter* adapter = nullptr;
  std::string why;
  PYPTO_RETURN_IF_ERROR(ChooseTaskAdapter(header, run, &adapter, &why));
  const TaskColumnMap map = MapTaskColumns(header, *adapter);
  PYPTO_RETURN_IF_ERROR(CheckRequiredTaskColumns(map, *adapter, path));
  RecordTaskAdapter(map, *adapter, why, path, profile);
  const TaskColumns cols = ResolveTaskColumns(map, header, path, profile);

  const TaskTableInput in{reader, header, path, run, cols, profile};
  TaskTableState state;
  for (size_t i = run.merge_from_task; i < profile->device_tasks.size(); ++i)
    state.trace_tasks.emplace(profile->device_tasks.ts[i], static_cast<uint32_t>(i));
  PYPTO_RETURN_IF_ERROR(ImportTaskRows(in, state));
  Progress(run, reader);
  if (run.merge_from_task != SIZE_MAX && run.merge_from_task < profile->device_tasks.size())
    profile->notes.push_back(path + ": " + std::to_string(state.merged) + " rows matched a trace_view.json task (same start "
                             "and name) and enriched it; " + std::to_string(state.unmatched) + " rows added as new tasks");
  return Status::Ok();
}

// ------------------------------------------------------------ op_statistic

Status ImportOpStatistic(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                         const RunContext& run, Profile* profile) {
  const int c_op = FindColumn(header, "OP Type"), c_core = FindColumn(header, "Core Type");
  const int c_device = FindColumn(header, "Device_id");
  if (c_op < 0) return CorruptError(path + ": line 1: missing required column 'OP Type' (op_statistic)");
  while (true) {
    PYPTO_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (!RowUsable(reader, header.size(), path, profile)) continue;
    int32_t device = run.device;
    if (device < 0) device = c_device >= 0 ? std::max(0, DeviceFromText(reader[c_device])) : 0;
    uint32_t owner = EnsureNpuDevice(profile, device);
    std::string prefix = "op_statistic/" + std::string(reader[c_op]) + "/" +
                         (c_core >= 0 ? std::string(reader[c_core]) : std::string()) + "/";
    for (size_t i = 0; i < header.size(); ++i) {
      if (static_cast<int>(i) == c_op || static_cast<int>(i) == c_core || static_cast<int>(i) == c_device) continue;
      AddNumericAttribute(profile, OwnerKind::kDevice, owner, profile->Intern(prefix + header[i]), reader[i], path,
                          reader.line(), header[i]);
    }
  }
  profile->notes.push_back(path + ": op_statistic rows kept as device attributes 'op_statistic/<OP Type>/<Core Type>/<column>'");
  return Status::Ok();
}

// ------------------------------------------------------------ api_statistic

// api_statistic.csv: one row per (Level, API Name) with Time(us), Count,
// Avg/Min/Max(us), Variance; Device_id is "host" for host-side APIs. Kept as
// device attributes "api_statistic/<Level>/<API Name>/<column>" of the run's device.
Status ImportApiStatistic(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                          const RunContext& run, Profile* profile) {
  const int c_level = FindColumn(header, "Level"), c_name = FindColumn(header, "API Name");
  const int c_device = FindColumn(header, "Device_id");
  if (c_name < 0) return CorruptError(path + ": line 1: missing required column 'API Name' (api_statistic)");
  size_t rows = 0;
  while (true) {
    PYPTO_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (!RowUsable(reader, header.size(), path, profile)) continue;
    int32_t device = run.device;
    if (device < 0) device = c_device >= 0 ? std::max(0, DeviceFromText(reader[c_device])) : 0;
    const uint32_t owner = EnsureNpuDevice(profile, device);
    const std::string prefix = "api_statistic/" + (c_level >= 0 ? std::string(reader[c_level]) : std::string()) + "/" +
                               std::string(reader[c_name]) + "/";
    for (size_t i = 0; i < header.size(); ++i) {
      if (static_cast<int>(i) == c_level || static_cast<int>(i) == c_name || static_cast<int>(i) == c_device) continue;
      AddNumericAttribute(profile, OwnerKind::kDevice, owner, profile->Intern(prefix + header[i]), reader[i], path,
                          reader.line(), header[i]);
    }
    ++rows;
  }
  profile->notes.push_back(path + ": " + std::to_string(rows) +
                           " api_statistic rows kept as device attributes 'api_statistic/<Level>/<API Name>/<column>'");
  return Status::Ok();
}

// ------------------------------------------------------------ operator_details / task_time

// Files without timestamps that still hold numbers no other file has: every
// row is kept as device attributes "<stem>/<name>/<column>" (a name that
// repeats gives repeated keys, in file order). Columns in `text_columns` keep
// their text (shapes, types, call stacks); every other cell must be a number
// and counts as data loss (file:line, column) when it is not. N/A is absent.
Status ImportKeyedRows(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                       const RunContext& run, Profile* profile, std::string_view stem, std::string_view name_column,
                       std::initializer_list<std::string_view> text_columns) {
  const int c_name = FindColumn(header, name_column), c_device = FindColumn(header, "Device_id");
  if (c_name < 0)
    return CorruptError(path + ": line 1: missing required column '" + std::string(name_column) + "' (" +
                        std::string(stem) + ")");
  std::vector<bool> is_text(header.size(), false);
  for (std::string_view t : text_columns) {
    int c = FindColumn(header, t);
    if (c >= 0) is_text[static_cast<size_t>(c)] = true;
  }
  uint64_t rows = 0;
  while (true) {
    PYPTO_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (!RowUsable(reader, header.size(), path, profile)) continue;
    if (++rows % kRowsBetweenProgressChecks == 0) {
      if (CheckCancel(run, path)) return CancelledError(path + ": import cancelled");
      Progress(run, reader);
    }
    int32_t device = run.device;
    if (device < 0) device = c_device >= 0 ? std::max(0, DeviceFromText(reader[c_device])) : 0;
    uint32_t owner = EnsureNpuDevice(profile, device);
    std::string prefix = std::string(stem) + "/" + std::string(reader[c_name]) + "/";
    for (size_t i = 0; i < header.size(); ++i) {
      if (static_cast<int>(i) == c_name || static_cast<int>(i) == c_device) continue;
      std::string_view cell = reader[i];
      StrId key = profile->Intern(prefix + header[i]);
      if (is_text[i]) {
        if (!csv::IsAbsent(cell)) profile->attributes.Add(OwnerKind::kDevice, owner, key, profile->Intern(cell), kNaN);
        continue;
      }
      AddNumericAttribute(profile, OwnerKind::kDevice, owner, key, cell, path, reader.line(), header[i]);
    }
  }
  Progress(run, reader);
  profile->notes.push_back(path + ": " + std::string(stem) + " rows kept as device attributes '" + std::string(stem) +
                           "/<" + std::string(name_column) + ">/<column>'");
  return Status::Ok();
}

Status ImportOperatorDetails(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                             const RunContext& run, Profile* profile) {
  return ImportKeyedRows(reader, header, path, run, profile, "operator_details", "Name",
                         {"Input Shapes", "Input Type", "Input Types", "Call Stack"});
}

Status ImportTaskTime(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                      const RunContext& run, Profile* profile) {
  return ImportKeyedRows(reader, header, path, run, profile, "task_time", "kernel_name", {"kernel_type"});
}

// ------------------------------------------------------------ step_trace_time

Status ImportStepTraceTime(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                           const RunContext& run, Profile* profile) {
  struct BreakdownColumn {
    std::string_view name;
    TimeNs StepRow::*field;
  };
  static constexpr BreakdownColumn kBreakdown[] = {
      {"Computing", &StepRow::computing},
      {"Communication(Not Overlapped)", &StepRow::communication_not_overlapped},
      {"Overlapped", &StepRow::overlapped},
      {"Communication", &StepRow::communication},
      {"Free", &StepRow::free},
      {"Stage", &StepRow::stage},
      {"Bubble", &StepRow::bubble},
      {"Communication(Not Overlapped and Exclude Receive)", &StepRow::communication_not_overlapped_excluding_receive},
      {"Preparing", &StepRow::preparing},
  };
  const int c_step = FindColumn(header, "Step"), c_device = FindColumn(header, "Device_id");
  if (FindColumn(header, "Computing") < 0)
    return CorruptError(path + ": line 1: missing required column 'Computing' (step_trace_time)");
  std::vector<int> breakdown_index;
  std::vector<bool> used(header.size(), false);
  for (const auto& b : kBreakdown) {
    int c = FindColumn(header, b.name);
    breakdown_index.push_back(c);
    if (c >= 0) used[c] = true;
  }
  if (c_step >= 0) used[c_step] = true;
  if (c_device >= 0) used[c_device] = true;
  const StrId source = profile->Intern(BaseName(path));
  while (true) {
    PYPTO_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (!RowUsable(reader, header.size(), path, profile)) continue;
    StepRow step;
    step.source = source;
    step.ts = kUnknownNs;
    step.dur = kUnknownNs;
    if (c_step >= 0 && !csv::IsAbsent(reader[c_step])) {
      auto n = number_text::ParseInt64(reader[c_step]);
      if (n) step.number = *n;
      else profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(path, reader.line(), "Step"));
      step.name = profile->Intern("Step " + std::string(reader[c_step]));
    }
    step.device = run.device;
    if (step.device < 0) step.device = c_device >= 0 ? std::max(0, DeviceFromText(reader[c_device])) : 0;
    EnsureNpuDevice(profile, step.device);
    for (size_t k = 0; k < std::size(kBreakdown); ++k) {
      int c = breakdown_index[k];
      if (c < 0 || csv::IsAbsent(reader[c])) continue;
      auto ns = number_text::MicrosToNs(reader[c]);
      if (ns) step.*kBreakdown[k].field = *ns;
      else profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(path, reader.line(), header[c]));
    }
    // Step time as msprof-analyze defines it: computing + not-overlapped
    // communication + free (the three partition the step).
    if (step.computing != kUnknownNs && step.communication_not_overlapped != kUnknownNs && step.free != kUnknownNs)
      step.dur = SaturatingAdd(SaturatingAdd(step.computing, step.communication_not_overlapped), step.free);
    uint32_t row = static_cast<uint32_t>(profile->steps.rows.size());
    profile->steps.rows.push_back(step);
    for (size_t i = 0; i < header.size(); ++i)
      if (!used[i])
        AddNumericAttribute(profile, OwnerKind::kStep, row, profile->Intern(header[i]), reader[i], path,
                            reader.line(), header[i]);
  }
  return Status::Ok();
}

// ------------------------------------------------------------ memory

Status ImportMemoryCsv(csv::CsvReader& reader, const std::vector<std::string>& header, const std::string& path,
                       CsvKind kind, const RunContext& run, Profile* profile) {
  const bool operator_memory = kind == CsvKind::kOperatorMemory;
  const int c_time = FindColumn(header, operator_memory ? "Allocation Time(us)" : "Timestamp(us)");
  const int c_release = FindColumn(header, "Release Time(us)");
  const int c_component = FindColumn(header, "Component");
  int c_device = FindColumn(header, "Device Type");
  if (c_device < 0) c_device = FindColumn(header, "Device");
  if (c_device < 0) c_device = FindColumn(header, "Device_id");
  if (c_time < 0)
    return CorruptError(path + ": line 1: missing required column '" +
                        std::string(operator_memory ? "Allocation Time(us)" : "Timestamp(us)") + "'");
  // Counters: every "Total …" column (memory_record) or the allocator totals
  // at allocation / release (operator_memory).
  struct CounterColumn {
    int index;
    StrId name;
    bool at_release;
  };
  std::vector<CounterColumn> counters;
  for (size_t i = 0; i < header.size(); ++i) {
    std::string_view h = header[i];
    if (!operator_memory && h.substr(0, 6) == "Total ") counters.push_back({static_cast<int>(i), profile->Intern(h), false});
    if (operator_memory && h.substr(0, 17) == "Allocation Total ") counters.push_back({static_cast<int>(i), profile->Intern(h.substr(11)), false});
    if (operator_memory && h.substr(0, 14) == "Release Total " && c_release >= 0)
      counters.push_back({static_cast<int>(i), profile->Intern(h.substr(8)), true});
  }
  std::map<std::pair<int32_t, std::string>, uint32_t> tracks;
  while (true) {
    PYPTO_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (!RowUsable(reader, header.size(), path, profile)) continue;
    int32_t device = run.device;
    if (device < 0) device = c_device >= 0 ? std::max(0, DeviceFromText(reader[c_device])) : 0;
    std::string component = c_component >= 0 ? std::string(reader[c_component]) : std::string("operators");
    auto [it, inserted] = tracks.try_emplace({device, component}, 0);
    if (inserted) {
      std::string pid = "NPU " + std::to_string(device) + " memory";
      uint32_t t = profile->TrackFor(pid, component, TrackKind::kOther);
      profile->tracks.device[t] = device;
      profile->tracks.name[t] = profile->Intern(component);
      profile->tracks.process_name[t] = profile->Intern(pid);
      it->second = t;
      EnsureNpuDevice(profile, device);
    }
    auto time = [&](int c) -> std::optional<TimeNs> {
      if (c < 0 || csv::IsAbsent(reader[c])) return std::nullopt;
      auto ns = number_text::MicrosToNs(reader[c]);
      if (!ns) profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(path, reader.line(), header[c]));
      return ns;
    };
    auto alloc_ts = time(c_time);
    auto release_ts = operator_memory ? time(c_release) : std::nullopt;
    for (const auto& counter : counters) {
      auto ts = counter.at_release ? release_ts : alloc_ts;
      if (!ts || csv::IsAbsent(reader[counter.index])) continue;
      auto v = csv::ParseDouble(reader[counter.index]);
      if (!v) {
        profile->CountLoss(LossKind::kValueRepaired, kLossNotNumeric, At(path, reader.line(), header[counter.index]));
        continue;
      }
      profile->counters.Add(counter.name, it->second, *ts, *v);
    }
  }
  return Status::Ok();
}

// ------------------------------------------------------------ JSON helpers

// A small JSON side file (profiler_info, info.json, communication*.json,
// profiler_metadata) whose top level must be an object; `what` names the
// file kind in the error. The DOM lives in `parser`.
StatusOr<simdjson::dom::object> ParseJsonObjectFile(const std::string& path, std::string_view what,
                                                    const ImportOptions& options, simdjson::dom::parser* parser) {
  PYPTO_ASSIGN_OR_RETURN(std::string storage, io::ReadWholeFile(path, options.limits));
  if (storage.empty()) return CorruptError(path + ": byte 0: file is empty (expected JSON)");
  simdjson::dom::element doc;
  auto error = parser->parse(simdjson::padded_string(storage)).get(doc);
  if (error) return CorruptError(path + ": invalid JSON: " + simdjson::error_message(error));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return CorruptError(path + ": byte 0: expected a JSON object (" + std::string(what) + ")");
  return root;
}

// communication.json and communication_matrix.json share their nesting:
// step ("step13") → group kind ("p2p", "collective") → op ("name@group") → value.
template <typename OnOp>
void ForEachCommunicationOp(simdjson::dom::object root, OnOp on_op) {
  for (auto [step, step_value] : root) {
    simdjson::dom::object groups;
    if (step_value.get_object().get(groups) != simdjson::SUCCESS) continue;
    for (auto [group, group_value] : groups) {
      simdjson::dom::object op_map;
      if (group_value.get_object().get(op_map) != simdjson::SUCCESS) continue;
      for (auto [op, op_value] : op_map) on_op(step, op, op_value);
    }
  }
}

// A JSON scalar as text (strings as is, numbers/bools printed).
std::string JsonText(simdjson::dom::element e) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  if (e.is_null()) return "";
  return simdjson::minify(e);
}

double JsonNumber(simdjson::dom::element e) {
  double d;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  uint64_t u;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    auto v = csv::ParseDouble(s);
    if (v) return *v;
  }
  bool b;
  if (e.get_bool().get(b) == simdjson::SUCCESS) return b ? 1 : 0;
  return kNaN;
}

void SetMetadata(Profile* profile, const std::string& key, const std::string& value, const std::string& path) {
  if (value.empty()) return;
  auto [it, inserted] = profile->metadata.try_emplace(key, value);
  if (!inserted && it->second != value)
    profile->notes.push_back(path + ": " + key + " '" + value + "' differs from '" + it->second + "' (kept the first)");
}

}  // namespace

bool CheckRowShape(const csv::CsvReader& reader, size_t header_size, const std::string& path, Profile* profile) {
  return RowUsable(reader, header_size, path, profile);
}

void AddNumericCell(Profile* profile, OwnerKind owner_kind, uint32_t owner, StrId key, std::string_view cell,
                    const std::string& path, uint64_t line, std::string_view column) {
  AddNumericAttribute(profile, owner_kind, owner, key, cell, path, line, column);
}

// ------------------------------------------------------------ public

uint32_t EnsureNpuDevice(Profile* profile, int32_t device) {
  auto& rows = profile->devices.rows;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].index == device && rows[i].kind == DeviceKind::kNpu) return static_cast<uint32_t>(i);
  DeviceRow row;
  row.index = device;
  row.kind = DeviceKind::kNpu;
  rows.push_back(row);
  return static_cast<uint32_t>(rows.size() - 1);
}

void AddMetadataValue(Profile* profile, const std::string& key, std::string_view text) {
  std::string& value = profile->metadata[key];
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t end = value.find(", ", pos);
    if (std::string_view(value).substr(pos, end == std::string::npos ? std::string::npos : end - pos) == text) return;
    if (end == std::string::npos) break;
    pos = end + 2;
  }
  if (!value.empty()) value += ", ";
  value += text;
}

std::vector<std::string> HeaderOfPrefix(std::string_view prefix) {
  size_t end = prefix.find('\n');
  return csv::SplitLine(prefix.substr(0, end == std::string_view::npos ? prefix.size() : end + 1));
}

CsvKind ClassifyHeader(const std::vector<std::string>& header) {
  auto has = [&](std::string_view name) { return FindColumn(header, name) >= 0; };
  bool duration = has("Duration(us)") || has("Task Duration(us)");
  bool start = has("Start Time(us)") || has("Task Start Time(us)");
  bool task_name = has("Name") || has("Op Name");
  if (duration && start && task_name) return CsvKind::kTaskTable;
  if (has("OP Type") && has("Core Type") && has("Count")) return CsvKind::kOpStatistic;
  if (has("Name") && (has("Host Self Duration(us)") || has("Device Self Duration(us)")))
    return CsvKind::kOperatorDetails;
  if (has("kernel_name") && has("task_time(us)")) return CsvKind::kTaskTime;
  if (has("Step") && has("Computing") && has("Free")) return CsvKind::kStepTraceTime;
  if (has("API Name") && has("Level") && has("Count")) return CsvKind::kApiStatistic;
  if (has("Name") && has("Size(KB)") && has("Allocation Time(us)")) return CsvKind::kOperatorMemory;
  if (has("Component") && has("Timestamp(us)")) return CsvKind::kMemoryRecord;
  return CsvKind::kUnknown;
}

Status ImportAscendCsv(const std::string& path, const RunContext& run, Profile* profile, CsvKind expected) {
  static const ImportOptions kDefaults;
  const ImportOptions& options = run.options ? *run.options : kDefaults;
  PYPTO_ASSIGN_OR_RETURN(auto reader, csv::CsvReader::Open(path, options.limits));
  PYPTO_ASSIGN_OR_RETURN(bool has_header, reader->Next());
  if (!has_header) return CorruptError(path + ": line 1: file is empty (expected a CSV header)");
  std::vector<std::string> header(reader->fields().begin(), reader->fields().end());
  CsvKind kind = ClassifyHeader(header);
  // Writers end the header row with a line end; a header that is the whole
  // file means the file was cut inside its first line (the columns after the
  // cut and every row are lost), not an empty table.
  if (reader->missing_final_newline()) profile->CountLoss(LossKind::kTruncated, kLossHeaderCut, At(path, 1));
  if (kind == CsvKind::kUnknown || (expected != CsvKind::kUnknown && kind != expected)) {
    if (expected == CsvKind::kTaskTable) {
      // Say which required column is missing rather than "unknown".
      RunContext r = run;
      return ImportTaskTable(*reader, header, path, r, profile);
    }
    // Files found by name: say which required column is missing, or read a
    // header-only / reduced-column file rather than refusing it.
    if (expected == CsvKind::kOperatorDetails || expected == CsvKind::kTaskTime) {
      profile->source_files.push_back(path);
      return expected == CsvKind::kOperatorDetails ? ImportOperatorDetails(*reader, header, path, run, profile)
                                                   : ImportTaskTime(*reader, header, path, run, profile);
    }
    return UnsupportedError(path + ": line 1: header is not one of the Ascend summary files pypto reads "
                            "(kernel_details, op_summary, op_statistic, operator_details, task_time, "
                            "step_trace_time, api_statistic, memory_record, operator_memory)");
  }
  profile->source_files.push_back(path);
  switch (kind) {
    case CsvKind::kTaskTable: return ImportTaskTable(*reader, header, path, run, profile);
    case CsvKind::kOpStatistic: return ImportOpStatistic(*reader, header, path, run, profile);
    case CsvKind::kApiStatistic: return ImportApiStatistic(*reader, header, path, run, profile);
    case CsvKind::kOperatorDetails: return ImportOperatorDetails(*reader, header, path, run, profile);
    case CsvKind::kTaskTime: return ImportTaskTime(*reader, header, path, run, profile);
    case CsvKind::kStepTraceTime: return ImportStepTraceTime(*reader, header, path, run, profile);
    case CsvKind::kMemoryRecord:
    case CsvKind::kOperatorMemory: return ImportMemoryCsv(*reader, header, path, kind, run, profile);
    case CsvKind::kUnknown: break;
  }
  return InternalError(path + ": unhandled CSV kind");
}

StatusOr<int32_t> ImportProfilerInfo(const std::string& path, const ImportOptions& options, Profile* profile) {
  simdjson::dom::parser parser;
  PYPTO_ASSIGN_OR_RETURN(simdjson::dom::object root, ParseJsonObjectFile(path, "profiler_info", options, &parser));
  profile->source_files.push_back(path);
  simdjson::dom::element e;
  if (root["torch_npu_version"].get(e) == simdjson::SUCCESS) SetMetadata(profile, "torch_npu_version", JsonText(e), path);
  if (root["cann_version"].get(e) == simdjson::SUCCESS) SetMetadata(profile, "cann_version", JsonText(e), path);
  if (root.at_pointer("/config/experimental_config/_profiler_level").get(e) == simdjson::SUCCESS)
    SetMetadata(profile, "profiler_level", JsonText(e), path);
  if (root.at_pointer("/config/experimental_config/_aic_metrics").get(e) == simdjson::SUCCESS)
    SetMetadata(profile, "aic_metrics", JsonText(e), path);
  if (root.at_pointer("/config/experimental_config/_export_type").get(e) == simdjson::SUCCESS)
    SetMetadata(profile, "export_type", JsonText(e), path);
  simdjson::dom::object common;
  if (root.at_pointer("/config/common_config").get_object().get(common) == simdjson::SUCCESS) {
    for (auto [key, value] : common) {
      if (key == "schedule") {
        simdjson::dom::object schedule;
        if (value.get_object().get(schedule) != simdjson::SUCCESS) continue;
        std::string text;
        for (auto [k, v] : schedule) text += (text.empty() ? "" : ",") + std::string(k) + "=" + JsonText(v);
        SetMetadata(profile, "schedule", text, path);
      } else {
        SetMetadata(profile, std::string(key), JsonText(value), path);
      }
    }
  }
  int32_t rank = -1;
  if (root["rank_id"].get(e) == simdjson::SUCCESS) {
    double r = JsonNumber(e);
    if (std::isfinite(r) && r >= 0 && r < (1 << 20)) rank = static_cast<int32_t>(r);
  }
  return rank;
}

Status ImportProfilerMetadata(const std::string& path, int32_t device, const ImportOptions& options,
                              Profile* profile) {
  simdjson::dom::parser parser;
  PYPTO_ASSIGN_OR_RETURN(simdjson::dom::object root, ParseJsonObjectFile(path, "profiler_metadata", options, &parser));
  profile->source_files.push_back(path);
  const uint32_t owner = EnsureNpuDevice(profile, device);
  auto add = [&](const std::string& key, const std::string& text, double number) {
    profile->attributes.Add(OwnerKind::kDevice, owner, profile->Intern(key), profile->Intern(text), number);
  };
  size_t groups = 0;
  for (auto [key, value] : root) {
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) {
      add(std::string(key), JsonText(value), JsonNumber(value));
      continue;
    }
    if (key == "ENV_VARIABLES") {  // job-wide settings: metadata, only those set
      for (auto [name, v] : object)
        if (!JsonText(v).empty()) SetMetadata(profile, "env." + std::string(name), JsonText(v), path);
    } else if (key == "parallel_group_info") {  // "<group_name>" -> this rank's place and the group's ranks
      for (auto [id, group] : object) {
        simdjson::dom::element name, ranks, group_rank;
        if (group["group_name"].get(name) != simdjson::SUCCESS) continue;
        const std::string prefix = "parallel_group/" + JsonText(name) + "/";
        if (group["global_ranks"].get(ranks) == simdjson::SUCCESS) add(prefix + "global_ranks", JsonText(ranks), kNaN);
        if (group["group_rank"].get(group_rank) == simdjson::SUCCESS)
          add(prefix + "group_rank", JsonText(group_rank), JsonNumber(group_rank));
        ++groups;
      }
    } else {  // distributed_args and other objects: one attribute a field
      for (auto [k, v] : object) add(std::string(key) + "/" + std::string(k), JsonText(v), JsonNumber(v));
    }
  }
  profile->notes.push_back(path + ": " + std::to_string(groups) +
                           " parallel groups kept as device attributes 'parallel_group/<name>/global_ranks'");
  return Status::Ok();
}

Status ImportCommunicationMatrixJson(const std::string& path, int32_t device, const ImportOptions& options,
                                     Profile* profile) {
  simdjson::dom::parser parser;
  PYPTO_ASSIGN_OR_RETURN(simdjson::dom::object root, ParseJsonObjectFile(path, "communication_matrix.json", options, &parser));
  profile->source_files.push_back(path);
  const uint32_t owner = EnsureNpuDevice(profile, device);
  size_t links = 0;
  ForEachCommunicationOp(root, [&](std::string_view step, std::string_view op, simdjson::dom::element op_value) {
    simdjson::dom::object link_map;
    if (op_value.get_object().get(link_map) != simdjson::SUCCESS) return;
    for (auto [link, link_value] : link_map) {  // "<src rank>-<dst rank>" within the group
      simdjson::dom::object fields;
      if (link_value.get_object().get(fields) != simdjson::SUCCESS) continue;
      ++links;
      const std::string prefix = "communication_matrix/" + std::string(step) + "/" + std::string(op) + "/" +
                                 std::string(link) + "/";
      for (auto [k, v] : fields)
        profile->attributes.Add(OwnerKind::kDevice, owner, profile->Intern(prefix + std::string(k)),
                                profile->Intern(JsonText(v)), JsonNumber(v));
    }
  });
  profile->notes.push_back(path + ": " + std::to_string(links) +
                           " links kept as device attributes 'communication_matrix/<step>/<op>/<src-dst>/<field>'");
  return Status::Ok();
}

Status ImportDeviceInfo(const std::string& path, int32_t device, const ImportOptions& options, Profile* profile) {
  simdjson::dom::parser parser;
  PYPTO_ASSIGN_OR_RETURN(simdjson::dom::object root, ParseJsonObjectFile(path, "msprof info.json", options, &parser));
  profile->source_files.push_back(path);
  simdjson::dom::element e;
  if (root["platform_version"].get(e) == simdjson::SUCCESS) SetMetadata(profile, "platform_version", JsonText(e), path);
  simdjson::dom::object info;
  if (root.at_pointer("/DeviceInfo/0").get_object().get(info) != simdjson::SUCCESS) {
    profile->notes.push_back(path + ": no DeviceInfo[0] object; device properties unknown");
    return Status::Ok();
  }
  uint32_t owner = EnsureNpuDevice(profile, device);
  for (auto [key, value] : info) {
    if (value.is_object() || value.is_array()) continue;
    std::string text = JsonText(value);
    profile->attributes.Add(OwnerKind::kDevice, owner, profile->Intern(key), profile->Intern(text), JsonNumber(value));
  }
  return Status::Ok();
}

Status ImportCommunicationJson(const std::string& path, int32_t device, const ImportOptions& options,
                               Profile* profile) {
  simdjson::dom::parser parser;
  PYPTO_ASSIGN_OR_RETURN(simdjson::dom::object root, ParseJsonObjectFile(path, "communication.json", options, &parser));
  profile->source_files.push_back(path);
  uint32_t owner = EnsureNpuDevice(profile, device);
  auto add = [&](const std::string& key, simdjson::dom::element value) {
    profile->attributes.Add(OwnerKind::kDevice, owner, profile->Intern(key), profile->Intern(JsonText(value)),
                            JsonNumber(value));
  };
  size_t ops = 0;
  ForEachCommunicationOp(root, [&](std::string_view step, std::string_view op, simdjson::dom::element op_value) {
    ++ops;
    std::string prefix = "communication/" + std::string(step) + "/" + std::string(op) + "/";
    simdjson::dom::object time_info, bandwidth_info;
    if (op_value["Communication Time Info"].get_object().get(time_info) == simdjson::SUCCESS)
      for (auto [k, v] : time_info) add(prefix + std::string(k), v);
    if (op_value["Communication Bandwidth Info"].get_object().get(bandwidth_info) == simdjson::SUCCESS) {
      for (auto [transport, t] : bandwidth_info) {
        simdjson::dom::element size;
        // Only transports that moved data: the others are all zeros.
        if (t["Transit Size(MB)"].get(size) != simdjson::SUCCESS || !(JsonNumber(size) > 0)) continue;
        for (const char* k : {"Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"}) {
          simdjson::dom::element v;
          if (t[k].get(v) == simdjson::SUCCESS) add(prefix + std::string(transport) + " " + k, v);
        }
        // Size Distribution: {"<size MB>": [count, time ms]}, kept per size
        // for the packet-size rule ("<transport> Size Distribution <size> Count" / "… Time(ms)").
        simdjson::dom::object sizes;
        if (t["Size Distribution"].get_object().get(sizes) == simdjson::SUCCESS) {
          for (auto [size, entry] : sizes) {
            simdjson::dom::array pair;
            if (entry.get_array().get(pair) != simdjson::SUCCESS || pair.size() < 2) continue;
            const std::string base = prefix + std::string(transport) + " Size Distribution " + std::string(size);
            add(base + " Count", pair.at(0).value_unsafe());
            add(base + " Time(ms)", pair.at(1).value_unsafe());
          }
        }
      }
    }
  });
  profile->notes.push_back(path + ": " + std::to_string(ops) +
                           " communication ops kept as device attributes 'communication/<step>/<op>/<field>'");
  return Status::Ok();
}

namespace {

// First start and last end of a set of tasks; first == kUnknownNs while empty.
struct TaskSpan {
  TimeNs first = kUnknownNs, last = kUnknownNs;
  void Add(TimeNs start, TimeNs end) {
    first = first == kUnknownNs ? start : std::min(first, start);
    last = last == kUnknownNs ? end : std::max(last, end);
  }
  void Add(const TaskSpan& other) {
    if (other.first != kUnknownNs) Add(other.first, other.last);
  }
};

// The spans of the device tasks by the Step Id their cells give, found in one
// pass over the tasks, so that placing S steps costs S lookups, not S passes
// over the tasks (15,178 steps over 9 M tasks in a 3 GB kernel_details.csv).
struct StepIdSpans {
  std::map<std::pair<int32_t, int64_t>, TaskSpan> by_device_and_step;  // (device, Step Id)
  std::map<int64_t, TaskSpan> by_step;                                  // Step Id, any device
  std::map<int32_t, TaskSpan> without_step_by_device;                   // tasks with no Step Id
  TaskSpan without_step;

  StepIdSpans(const Profile& profile, const std::vector<int64_t>& step_of_task) {
    const DeviceTaskTable& d = profile.device_tasks;
    // Tasks come in runs of one device and step: the run's span is looked up once.
    std::pair<int32_t, int64_t> run_key{0, kNoId};
    TaskSpan* run = nullptr;
    for (size_t t = 0; t < d.size(); ++t) {
      const std::pair<int32_t, int64_t> key{profile.tracks.device[d.track[t]], step_of_task[t]};
      if (run == nullptr || key != run_key) {
        run_key = key;
        run = key.second == kNoId ? &without_step_by_device[key.first] : &by_device_and_step[key];
      }
      run->Add(d.ts[t], SaturatingAdd(d.ts[t], std::max<TimeNs>(d.dur[t], 0)));
    }
    for (const auto& [key, span] : by_device_and_step) by_step[key.second].Add(span);
    for (const auto& [device, span] : without_step_by_device) without_step.Add(span);
  }
  // The tasks of step `number` on `device` (any device when < 0), and with
  // `with_unnumbered` those without a Step Id there as well.
  TaskSpan Of(int32_t device, int64_t number, bool with_unnumbered) const {
    TaskSpan span;
    if (device < 0) {
      if (auto it = by_step.find(number); it != by_step.end()) span.Add(it->second);
      if (with_unnumbered) span.Add(without_step);
      return span;
    }
    if (auto it = by_device_and_step.find({device, number}); it != by_device_and_step.end()) span.Add(it->second);
    if (with_unnumbered)
      if (auto it = without_step_by_device.find(device); it != without_step_by_device.end()) span.Add(it->second);
    return span;
  }
};

// The steps the per-task "Step Id" cells name that no step row gives (a
// kernel_details.csv read without its step_trace_time.csv): one StepRow per
// (device, Step Id), spanning its tasks, source kStepSourceStepIdColumn, so that
// `--step N` and the per-step views work on such a file.
void AddStepsFromStepIds(Profile* profile, const StepIdSpans& spans) {
  if (spans.by_device_and_step.empty()) return;
  auto& steps = profile->steps.rows;
  // The step rows already there: a row without a device stands for every device.
  std::set<int64_t> known_on_every_device;
  std::set<std::pair<int32_t, int64_t>> known;
  for (const StepRow& s : steps) {
    if (s.device < 0) known_on_every_device.insert(s.number);
    else known.insert({s.device, s.number});
  }
  const StrId source = profile->Intern(kStepSourceStepIdColumn);
  size_t added = 0;
  for (const auto& [key, span] : spans.by_device_and_step) {
    // Plain copies: clang 14 cannot capture structured bindings in a lambda.
    const int32_t device = key.first;
    const int64_t number = key.second;
    if (known_on_every_device.count(number) > 0 || known.count(key) > 0) continue;
    if (device < 0) known_on_every_device.insert(number);  // as a row without a device, it stands for all
    StepRow step;
    step.number = number;
    step.name = profile->Intern("Step " + std::to_string(number));
    step.source = source;
    step.device = device;
    step.ts = span.first;
    TimeNs dur;
    step.dur = __builtin_sub_overflow(span.last, span.first, &dur) ? std::numeric_limits<TimeNs>::max() : dur;
    steps.push_back(step);
    ++added;
  }
  if (added > 0)
    profile->notes.push_back(std::to_string(added) +
                             " step(s) taken from the tasks' Step Id column (no step_trace_time row for them): "
                             "each spans its tasks, first start to last end");
}

// Step Id of each device task, from its attribute rows with key `step_key`
// (one pass over the attributes; kNoId where a task has none, and for every
// task when the key is kEmptyStr). The key is compared before the number is
// read: one row in ~27 of a kernel_details.csv is a Step Id.
std::vector<int64_t> StepIdOfEachTask(const Profile& profile, StrId step_key) {
  std::vector<int64_t> step_of_task(profile.device_tasks.size(), kNoId);
  if (step_key == kEmptyStr) return step_of_task;
  const AttributeTable& a = profile.attributes;
  a.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    if (kind != OwnerKind::kDeviceTask || a.key(i) != step_key) return;
    const double number = a.number(i);
    if (number == number) step_of_task[owner] = static_cast<int64_t>(number);
  });
  return step_of_task;
}

}  // namespace

void PlaceStepsOnTasks(Profile* profile) {
  auto& steps = profile->steps.rows;
  bool any_unknown = false;
  for (const StepRow& s : steps) any_unknown |= s.ts == kUnknownNs;
  // Without steps of unknown times only the Step Id column can still name steps.
  const StrId step_key = profile->strings.Find("Step Id");
  if (!any_unknown && step_key == kEmptyStr) return;
  const StepIdSpans spans(*profile, StepIdOfEachTask(*profile, step_key));
  if (any_unknown) {
    std::map<int32_t, int> steps_per_device;
    for (const StepRow& s : steps) ++steps_per_device[s.device];
    for (StepRow& s : steps) {
      if (s.ts != kUnknownNs) continue;
      // The only step row of its device also holds the tasks without a Step Id.
      const TaskSpan span = spans.Of(s.device, s.number, steps_per_device[s.device] == 1);
      if (span.first == kUnknownNs) continue;
      s.ts = span.first;
      s.dur = std::max<TimeNs>(s.dur == kUnknownNs ? 0 : s.dur, span.last - span.first);
    }
  }
  AddStepsFromStepIds(profile, spans);
}

}  // namespace pypto::ascend
