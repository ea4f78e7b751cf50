#include "importers/ascend_db/ascend_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/ascend_db/sorted_id_multimap.h"
#include "importers/common/ascend_vocabulary.h"
#include "importers/pypto_db/pypto_db_format.h"
#include "importers/common/sqlite_input.h"
#include "importers/common/number_text.h"
#include "model/phase_timer.h"

namespace pypto {
namespace {

using sqlite_input::kSqliteMagic;
using sqlite_input::Row;
using ascend_db::SortedIdMultimap;

constexpr std::string_view kImporterName = "ascend-db";
// CANN_API / PYTORCH_API globalTid = pid << 32 | tid (reference §7 "Joins").
constexpr int kGlobalTidShift = 32;
// ENUM_API_TYPE ids of PYTORCH_API.type (reference §7; the 2025 sample's enum table).
constexpr int64_t kTorchApiOp = 50001, kTorchApiQueue = 50002, kTorchApiTrace = 50003, kTorchApiMstx = 50004;

// Tables without which a file is not a profiler database.
constexpr std::string_view kRequiredTables[] = {"STRING_IDS", "TASK"};

// end - start into *dur; false when end < start or the difference overflows
// int64 (a corrupt database: fuzzing found TASK rows with startNs = -7.5e18
// and endNs = 1.7e18, whose difference overflowed).
bool SpanNs(int64_t start, int64_t end, int64_t* dur) {
  return end >= start && !__builtin_sub_overflow(end, start, dur);
}

class DbReader {
 public:
  DbReader(const std::string& path, const ImportOptions& options, Profile* profile)
      : path_(path), options_(options), p_(*profile) {}
  Status Run();

 private:
  Status Open();
  // Runs SELECT of `columns` from `table`; columns the table lacks read as NULL.
  // `text_only_columns`: sqlite_input::SelectRows's.
  Status Select(const std::string& table, const std::vector<std::string>& columns,
                const std::function<Status(const Row&)>& on_row, const std::string& tail = "",
                uint64_t text_only_columns = 0);
  // Rows `table` holds (sqlite_input::RowCountHint), for reserving the columns
  // its rows go to: growing them by doubling copied them again and again (a
  // tenth of a 1M-task import) and held the old and new buffers at once.
  size_t RowsAhead(const std::string& table) const {
    return static_cast<size_t>(sqlite_input::RowCountHint(db_.get(), table, file_bytes_));
  }
  bool HasTable(std::string_view t) const { return tables_.count(std::string(t)) > 0; }
  // A text column: an id into STRING_IDS (integer) or literal text (some columns, some versions).
  StrId Str(const Row& row, int col);
  std::string Loc(const std::string& table, uint64_t row) const {
    return sqlite_input::RowLocation(path_, table, row);
  }
  void Attr(OwnerKind kind, uint32_t owner, std::string_view key, const Row& row, int col, bool string_id) {
    Attr(kind, owner, p_.Intern(key), row, col, string_id);
  }
  void Attr(OwnerKind kind, uint32_t owner, StrId key, const Row& row, int col, bool string_id);

  Status ReadStrings();
  Status ReadMetadata();
  Status ReadTasks();
  Status ReadPmu();
  Status ReadCommunicationOps();
  Status ReadCannApi();
  Status ReadTorchApi();
  uint32_t HostTrack(int64_t global_tid);
  Status ReadSteps();
  Status ReadFrequency();

  const std::string& path_;
  const ImportOptions& options_;
  Profile& p_;
  sqlite_input::DbHandle db_;
  std::set<std::string> tables_;
  uint64_t file_bytes_ = 0;
  // STRING_IDS id -> interned text. The profiler numbers them 0..N-1, so a
  // vector indexed by id (kNoString where none) serves the lookups of every
  // name / shape / type cell; ids outside [0, kMaxDenseStringId) go to the map.
  static constexpr int64_t kMaxDenseStringId = int64_t{1} << 24;
  static constexpr StrId kNoString = UINT32_MAX;
  std::vector<StrId> dense_strings_;
  std::unordered_map<int64_t, StrId> sparse_strings_;
  // globalTaskId -> device task, for TASK_PMU_INFO (kept only when that table
  // exists); the last TASK row of an id stands. Sealed after TASK.
  SortedIdMultimap<uint32_t> task_by_global_id_;
  SortedIdMultimap<uint32_t> tasks_by_connection_;  // sealed after TASK
  // connectionId -> CANN_API host op; the last row of an id stands (sealed after CANN_API).
  SortedIdMultimap<uint32_t> cann_by_connection_;
  // globalTid -> host track: PYTORCH_API and CANN_API rows name their thread
  // by it, a few threads for millions of rows.
  std::unordered_map<int64_t, uint32_t> host_tracks_;
  int32_t main_device_ = 0;
  uint64_t torch_to_task_links_ = 0;
  uint64_t cann_to_task_links_ = 0;
};

Status DbReader::Open() {
  PYPTO_ASSIGN_OR_RETURN(db_, sqlite_input::OpenUntrusted(path_, options_.limits));
  PYPTO_ASSIGN_OR_RETURN(tables_, sqlite_input::TableNames(db_.get(), path_));
  // A cut file reads until a query meets a missing page; the rows before it still load.
  PYPTO_ASSIGN_OR_RETURN(std::string truncated, sqlite_input::TruncationProblem(path_, options_.limits, &file_bytes_));
  if (!truncated.empty()) p_.CountLoss(LossKind::kTruncated, "database file truncated (rows on the missing pages lost)", path_ + ": " + truncated);
  for (std::string_view t : kRequiredTables)
    if (!HasTable(t)) return UnsupportedError(path_ + ": not an Ascend profiler database: missing table " + std::string(t));
  return Status::Ok();
}

Status DbReader::Select(const std::string& table, const std::vector<std::string>& columns,
                        const std::function<Status(const Row&)>& on_row, const std::string& tail,
                        uint64_t text_only_columns) {
  return sqlite_input::SelectRows(db_.get(), path_, table, columns, on_row, tail, options_.cancel, text_only_columns);
}

StrId DbReader::Str(const Row& row, int col) {
  if (row.IsNull(col)) return kEmptyStr;
  if (row.IsText(col)) return p_.Intern(row.Text(col));
  int64_t id = row.Int(col);
  if (id >= 0 && id < static_cast<int64_t>(dense_strings_.size()) && dense_strings_[id] != kNoString)
    return dense_strings_[id];
  if (id < 0 || id >= kMaxDenseStringId)
    if (auto it = sparse_strings_.find(id); it != sparse_strings_.end()) return it->second;
  p_.CountLoss(LossKind::kValueRepaired, "string id missing from STRING_IDS (kept as number)", path_ + ": id " + std::to_string(id));
  return p_.Intern(std::to_string(id));
}

void DbReader::Attr(OwnerKind kind, uint32_t owner, StrId key, const Row& row, int col, bool string_id) {
  if (row.IsNull(col)) return;
  if (string_id) {
    p_.attributes.Add(kind, owner, key, Str(row, col), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  if (row.IsText(col)) {
    p_.attributes.Add(kind, owner, key, p_.Intern(row.Text(col)), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  int64_t v = row.Int(col);
  char text[24];
  const auto written = std::to_chars(text, text + sizeof text, v);
  const double number = static_cast<double>(v);
  p_.AddAttribute(kind, owner, key, std::string_view(text, written.ptr - text), number);
}

Status DbReader::ReadStrings() {
  return Select("STRING_IDS", {"id", "value"}, [&](const Row& r) {
    const int64_t id = r.Int(0);
    const StrId text = p_.Intern(r.Text(1));
    if (id < 0 || id >= kMaxDenseStringId) {
      sparse_strings_[id] = text;
    } else {
      if (id >= static_cast<int64_t>(dense_strings_.size())) dense_strings_.resize(id + 1, kNoString);
      dense_strings_[id] = text;
    }
    return Status::Ok();
  });
}

Status DbReader::ReadMetadata() {
  if (HasTable("META_DATA"))
    PYPTO_RETURN_IF_ERROR(Select("META_DATA", {"name", "value"}, [&](const Row& r) {
      std::string name(r.Text(0));
      p_.metadata["ascend_db." + name] = std::string(r.Text(1));
      if (name == "SCHEMA_VERSION") p_.metadata["format_version"] = std::string(r.Text(1));
      return Status::Ok();
    }));
  if (HasTable("NPU_INFO"))
    PYPTO_RETURN_IF_ERROR(Select("NPU_INFO", {"id", "name"}, [&](const Row& r) {
      int32_t index = static_cast<int32_t>(r.Int(0, 0));
      StrId name = Str(r, 1);
      for (DeviceRow& d : p_.devices.rows)
        if (d.kind == DeviceKind::kNpu && d.index == index) {
          if (d.name == kEmptyStr) d.name = name;
          return Status::Ok();
        }
      p_.devices.rows.push_back(DeviceRow{index, DeviceKind::kNpu, name});
      return Status::Ok();
    }));
  if (HasTable("HOST_INFO"))
    PYPTO_RETURN_IF_ERROR(Select("HOST_INFO", {"hostName"}, [&](const Row& r) {
      if (!r.IsNull(0)) p_.metadata["host_name"] = std::string(p_.Str(Str(r, 0)));
      return Status::Ok();
    }));
  if (HasTable("RANK_DEVICE_MAP"))
    PYPTO_RETURN_IF_ERROR(Select("RANK_DEVICE_MAP", {"rankId", "deviceId"}, [&](const Row& r) {
      if (!r.IsNull(0)) p_.metadata["rank_id"] = std::to_string(r.Int(0));
      if (!r.IsNull(1)) main_device_ = static_cast<int32_t>(r.Int(1));
      return Status::Ok();
    }));
  if (HasTable("SESSION_TIME_INFO"))
    PYPTO_RETURN_IF_ERROR(Select("SESSION_TIME_INFO", {"startTimeNs", "endTimeNs"}, [&](const Row& r) {
      if (!r.IsNull(0)) p_.metadata["session_start_ns"] = std::to_string(r.Int(0));
      if (!r.IsNull(1)) p_.metadata["session_end_ns"] = std::to_string(r.Int(1));
      return Status::Ok();
    }));
  return Status::Ok();
}

Status DbReader::ReadTasks() {
  struct ComputeInfo {
    StrId name, task_type, op_type, in_formats, in_types, in_shapes, out_formats, out_types, out_shapes;
    int32_t block = -1, mix_block = -1;
  };
  struct CommInfo {
    StrId name, task_type, group;
    int64_t plane = kNoId, size = -1;
  };
  // By globalTaskId; the last row of an id stands, as TASK rows look them up.
  // Sorted pairs with a dense index, not hash maps: a node and an allocation
  // per row, then a cache miss per TASK row for each map, were a fifth of
  // reading TASK on a 1 M-task database.
  SortedIdMultimap<ComputeInfo> compute;
  SortedIdMultimap<CommInfo> comm;
  if (HasTable("COMPUTE_TASK_INFO"))
    PYPTO_RETURN_IF_ERROR(Select(
        "COMPUTE_TASK_INFO",
        {"globalTaskId", "name", "blockDim", "blockNum", "mixBlockDim", "mixBlockNum", "taskType", "opType",
         "inputFormats", "inputDataTypes", "inputShapes", "outputFormats", "outputDataTypes", "outputShapes"},
        [&](const Row& r) {
          ComputeInfo c;
          c.name = Str(r, 1);
          c.block = static_cast<int32_t>(r.IsNull(2) ? r.Int(3, -1) : r.Int(2));
          c.mix_block = static_cast<int32_t>(r.IsNull(4) ? r.Int(5, -1) : r.Int(4));
          c.task_type = Str(r, 6);
          c.op_type = Str(r, 7);
          c.in_formats = Str(r, 8);
          c.in_types = Str(r, 9);
          c.in_shapes = Str(r, 10);
          c.out_formats = Str(r, 11);
          c.out_types = Str(r, 12);
          c.out_shapes = Str(r, 13);
          compute.Add(r.Int(0), c);
          return Status::Ok();
        }));
  if (HasTable("COMMUNICATION_TASK_INFO"))
    PYPTO_RETURN_IF_ERROR(Select("COMMUNICATION_TASK_INFO", {"globalTaskId", "name", "taskType", "groupName", "planeId", "size"},
                                 [&](const Row& r) {
                                   CommInfo c;
                                   c.name = Str(r, 1);
                                   c.task_type = Str(r, 2);
                                   c.group = Str(r, 3);
                                   c.plane = r.Int(4);
                                   c.size = r.Int(5, -1);
                                   comm.Add(r.Int(0), c);
                                   return Status::Ok();
                                 }));
  // connectionId -> opName of the collectives. A TASK row in neither info
  // table that shares a collective's connectionId is that collective's own
  // task (the Level0 2-rank allreduce DB types four 90 ms allReduce tasks
  // AI_CORE): communication, not compute.
  // The first row of an id stands.
  SortedIdMultimap<StrId> collective_of_connection;
  if (HasTable("COMMUNICATION_OP"))
    PYPTO_RETURN_IF_ERROR(Select("COMMUNICATION_OP", {"connectionId", "opName"}, [&](const Row& r) {
      if (!r.IsNull(0)) collective_of_connection.Add(r.Int(0), Str(r, 1));
      return Status::Ok();
    }));
  compute.Seal();
  comm.Seal();
  collective_of_connection.Seal();
  const bool keep_global_ids = HasTable("TASK_PMU_INFO");
  uint64_t collective_tasks = 0;
  bool first = true;
  // What repeats across millions of rows is looked up once: the track of a
  // (device, stream), the class of a task type, the attribute keys. Each is
  // made at its first use, so tracks and strings keep the order of the rows.
  std::map<std::pair<int32_t, int64_t>, uint32_t> track_of_stream;
  struct TypeClass {
    ascend::TaskTypeInfo info;
    StrId core_type = kEmptyStr;  // info.core_type interned (kEmptyStr when empty or not yet)
  };
  std::unordered_map<StrId, TypeClass> class_of_type;
  auto classify = [&](StrId type) -> TypeClass& {
    auto [it, inserted] = class_of_type.try_emplace(type);
    if (inserted) it->second.info = ascend::ClassifyTaskType(p_.Str(type));
    return it->second;
  };
  auto core_type_of = [&](TypeClass& c) {
    if (c.core_type == kEmptyStr) c.core_type = p_.Intern(c.info.core_type);
    return c.core_type;
  };
  std::optional<StrId> task_id_key, context_id_key, model_id_key, op_name_key, group_name_key, plane_id_key;
  auto key = [&](std::optional<StrId>& slot, std::string_view text) {
    if (!slot) slot = p_.Intern(text);
    return *slot;
  };
  p_.device_tasks.Reserve(p_.device_tasks.size() + RowsAhead("TASK"));
  Status status = Select(
      "TASK",
      {"startNs", "endNs", "deviceId", "connectionId", "globalTaskId", "taskType", "streamId", "taskId", "contextId", "modelId"},
      [&](const Row& r) {
        int64_t dur = 0;
        if (r.IsNull(0) || r.IsNull(1) || !SpanNs(r.Int(0), r.Int(1), &dur)) {
          p_.CountLoss(LossKind::kRowSkipped, "task without valid startNs/endNs (skipped)", Loc("TASK", r.index()));
          return Status::Ok();
        }
        int32_t device = static_cast<int32_t>(r.Int(2, 0));
        if (first) main_device_ = device, first = false;
        int64_t stream = r.Int(6, -1);
        int64_t global_id = r.Int(4);
        StrId type = Str(r, 5);
        DeviceTaskRow row;
        row.ts = r.Int(0);
        row.dur = dur;
        auto [track, new_stream] = track_of_stream.try_emplace({device, stream}, 0);
        if (new_stream)
          track->second = p_.DeviceTrack("npu " + std::to_string(device), "stream " + std::to_string(stream), device, stream);
        row.track = track->second;
        row.category = type;
        row.correlation = r.Int(3);
        TypeClass& type_class = classify(type);
        const ascend::TaskTypeInfo& info = type_class.info;
        row.kind = info.kind;
        row.name = type;
        const std::span<const std::pair<int64_t, ComputeInfo>> compute_rows = compute.Find(global_id);
        const std::span<const std::pair<int64_t, CommInfo>> comm_rows = comm.Find(global_id);
        const CommInfo* comm_info = comm_rows.empty() ? nullptr : &comm_rows.back().second;
        if (!compute_rows.empty()) {
          const ComputeInfo& c = compute_rows.back().second;
          TypeClass& compute_type = classify(c.task_type);
          row.kind = DeviceTaskKind::kKernel;
          row.name = c.name;
          if (!compute_type.info.core_type.empty()) row.core_type = core_type_of(compute_type);
          row.block_dim = c.block;
          row.mix_block_dim = c.mix_block;
          row.op_type = c.op_type;
          row.input_formats = c.in_formats;
          row.input_types = c.in_types;
          row.input_shapes = c.in_shapes;
          row.output_formats = c.out_formats;
          row.output_types = c.out_types;
          row.output_shapes = c.out_shapes;
        } else if (comm_info != nullptr) {
          // An HCCL sub-task (Notify Wait, SDMA, Write Value …) is named by its
          // task type, as trace_view names it; the collective it belongs to is
          // the "opName" attribute. Named after the op, one 75 ms allReduce read
          // as 76 calls of 311 ms (its 74 sub-tasks, the op and its own task).
          row.kind = DeviceTaskKind::kCommunication;
          row.name = type != kEmptyStr ? type : comm_info->name;
          row.bytes = comm_info->size;
        } else if (const auto op = collective_of_connection.Find(row.correlation);
                   row.correlation != kNoId && !op.empty()) {
          row.kind = DeviceTaskKind::kCommunication;
          row.name = op.front().second;
          ++collective_tasks;
        } else if (info.core_type.size()) {
          row.core_type = core_type_of(type_class);
        }
        uint32_t task = p_.device_tasks.Add(row);
        if (global_id != kNoId && keep_global_ids) task_by_global_id_.Add(global_id, task);
        if (row.correlation != kNoId) tasks_by_connection_.Add(row.correlation, task);
        Attr(OwnerKind::kDeviceTask, task, key(task_id_key, "taskId"), r, 7, false);
        if (r.Int(8) != ascend::kNotApplicableU32)
          Attr(OwnerKind::kDeviceTask, task, key(context_id_key, "contextId"), r, 8, false);
        if (r.Int(9) != ascend::kNotApplicableU32)
          Attr(OwnerKind::kDeviceTask, task, key(model_id_key, "modelId"), r, 9, false);
        if (comm_info != nullptr) {
          p_.attributes.Add(OwnerKind::kDeviceTask, task, key(op_name_key, "opName"), comm_info->name,
                            std::numeric_limits<double>::quiet_NaN());
          p_.attributes.Add(OwnerKind::kDeviceTask, task, key(group_name_key, "groupName"), comm_info->group,
                            std::numeric_limits<double>::quiet_NaN());
          if (comm_info->plane != kNoId)
            p_.AddAttribute(OwnerKind::kDeviceTask, task, key(plane_id_key, "planeId"), std::to_string(comm_info->plane),
                            static_cast<double>(comm_info->plane));
        }
        return Status::Ok();
      });
  if (collective_tasks > 0)
    p_.notes.push_back(path_ + ": " + std::to_string(collective_tasks) +
                       " TASK rows without compute or communication info share a collective's connectionId "
                       "(COMMUNICATION_OP): read as that collective's communication, not compute");
  tasks_by_connection_.Seal();
  task_by_global_id_.Seal();
  return status;
}

Status DbReader::ReadPmu() {
  if (!HasTable("TASK_PMU_INFO")) return Status::Ok();
  return Select("TASK_PMU_INFO", {"globalTaskId", "name", "value"}, [&](const Row& r) {
    const auto tasks = task_by_global_id_.Find(r.Int(0));
    if (tasks.empty()) {
      p_.CountLoss(LossKind::kLinkLost, "PMU value of an unknown task (skipped)", Loc("TASK_PMU_INFO", r.index()));
      return Status::Ok();
    }
    double v = r.Real(2);
    std::string text = std::isnan(v) ? std::string() : fmt::format("{}", v);
    // Interned only when fmt's text is not the number in a text form (1 M
    // distinct PMU figures would otherwise fill the string table).
    p_.AddAttribute(OwnerKind::kDeviceTask, tasks.back().second, Str(r, 1), text, v);
    return Status::Ok();
  });
}


Status DbReader::ReadCommunicationOps() {
  if (!HasTable("COMMUNICATION_OP")) return Status::Ok();
  return Select(
      "COMMUNICATION_OP",
      {"opName", "startNs", "endNs", "connectionId", "groupName", "opId", "relay", "retry", "dataType", "algType",
       "count", "opType"},
      [&](const Row& r) {
        int64_t dur = 0;
        if (r.IsNull(1) || r.IsNull(2) || !SpanNs(r.Int(1), r.Int(2), &dur)) {
          p_.CountLoss(LossKind::kRowSkipped, "communication op without valid startNs/endNs (skipped)", Loc("COMMUNICATION_OP", r.index()));
          return Status::Ok();
        }
        StrId group = Str(r, 4);
        DeviceTaskRow row;
        row.name = Str(r, 0);
        row.category = p_.Intern("communication_op");
        row.kind = DeviceTaskKind::kCommunication;
        row.ts = r.Int(1);
        row.dur = dur;
        row.correlation = r.Int(3);
        // The table has no device column: a database holds one rank (RANK_DEVICE_MAP / TASK.deviceId).
        row.track = p_.DeviceTrack("npu " + std::to_string(main_device_), "hccl group " + std::string(p_.Str(group)),
                                   main_device_, -1);
        uint32_t task = p_.device_tasks.Add(row);
        p_.attributes.Add(OwnerKind::kDeviceTask, task, p_.Intern("groupName"), group,
                          std::numeric_limits<double>::quiet_NaN());
        Attr(OwnerKind::kDeviceTask, task, "opId", r, 5, false);
        Attr(OwnerKind::kDeviceTask, task, "relay", r, 6, false);
        Attr(OwnerKind::kDeviceTask, task, "retry", r, 7, false);
        Attr(OwnerKind::kDeviceTask, task, "dataType", r, 8, false);  // ENUM_HCCL_DATA_TYPE id
        Attr(OwnerKind::kDeviceTask, task, "algType", r, 9, true);
        Attr(OwnerKind::kDeviceTask, task, "count", r, 10, false);
        Attr(OwnerKind::kDeviceTask, task, "opType", r, 11, true);
        return Status::Ok();
      });
}

uint32_t HostTrackOf(Profile& p, int64_t global_tid) {
  uint64_t g = static_cast<uint64_t>(global_tid);
  return p.TrackFor(std::to_string(g >> kGlobalTidShift), std::to_string(g & 0xffffffffull), TrackKind::kHostThread);
}

uint32_t DbReader::HostTrack(int64_t global_tid) {
  auto [it, added] = host_tracks_.try_emplace(global_tid, 0);
  if (added) it->second = HostTrackOf(p_, global_tid);
  return it->second;
}

Status DbReader::ReadCannApi() {
  if (!HasTable("CANN_API")) return Status::Ok();
  std::unordered_map<int64_t, StrId> api_types;
  if (HasTable("ENUM_API_TYPE"))
    PYPTO_RETURN_IF_ERROR(Select("ENUM_API_TYPE", {"id", "name"}, [&](const Row& r) {
      api_types[r.Int(0)] = p_.Intern(r.Text(1));
      return Status::Ok();
    }));
  Status status = Select("CANN_API", {"startNs", "endNs", "type", "globalTid", "connectionId", "name"}, [&](const Row& r) {
    int64_t dur = 0;
    if (r.IsNull(0) || r.IsNull(1) || !SpanNs(r.Int(0), r.Int(1), &dur)) {
      p_.CountLoss(LossKind::kRowSkipped, "CANN API call without valid startNs/endNs (skipped)", Loc("CANN_API", r.index()));
      return Status::Ok();
    }
    HostOpRow row;
    row.name = Str(r, 5);
    row.kind = HostOpKind::kRuntime;
    auto type = api_types.find(r.Int(2));
    row.category = type != api_types.end() ? type->second : p_.Intern("CANN");
    row.ts = r.Int(0);
    row.dur = dur;
    row.track = HostTrack(r.Int(3, 0));
    row.correlation = r.Int(4);
    uint32_t op = p_.host_ops.Add(row);
    if (row.correlation != kNoId) {
      cann_by_connection_.Add(row.correlation, op);
      cann_to_task_links_ += tasks_by_connection_.Find(row.correlation).size();
    }
    return Status::Ok();
  });
  cann_by_connection_.Seal();
  return status;
}

Status DbReader::ReadTorchApi() {
  if (!HasTable("PYTORCH_API")) return Status::Ok();
  // CONNECTION_IDS: one PYTORCH_API.connectionId -> many CANN/TASK connection ids.
  SortedIdMultimap<int64_t> connections;
  if (HasTable("CONNECTION_IDS"))
    PYPTO_RETURN_IF_ERROR(Select("CONNECTION_IDS", {"id", "connectionId"}, [&](const Row& r) {
      if (!r.IsNull(0) && !r.IsNull(1)) connections.Add(r.Int(0), r.Int(1));
      return Status::Ok();
    }));
  connections.Seal();
  StrId cat_op = p_.Intern("cpu_op"), cat_enqueue = p_.Intern("enqueue"), cat_dequeue = p_.Intern("dequeue"),
        cat_trace = p_.Intern("python_function"), cat_mstx = p_.Intern("mstx"), cat_queue = p_.Intern("async_task_queue");
  StrId fwd_thread_key = kEmptyStr, callchain_key = kEmptyStr;  // interned at first use, as before
  auto key = [&](StrId& id, std::string_view text) { return id != kEmptyStr ? id : (id = p_.Intern(text)); };
  // startNs and endNs (columns 0 and 1) are read as text when they are TEXT.
  constexpr uint64_t kStartAndEndNs = 0b11;
  return Select(
      "PYTORCH_API",
      {"startNs", "endNs", "globalTid", "connectionId", "name", "sequenceNumber", "fwdThreadId", "inputDtypes",
       "inputShapes", "callchainId", "type"},
      [&](const Row& r) {
        // startNs/endNs are TEXT in the 2025 sample: read as integers, exactly.
        auto ns = [&](int col) -> std::optional<int64_t> {
          if (r.IsNull(col)) return std::nullopt;
          if (!r.IsText(col)) return r.Int(col);
          std::optional<uint64_t> v = number_text::ParseUint64(r.Text(col));
          if (!v || *v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
          return static_cast<int64_t>(*v);
        };
        std::optional<int64_t> start = ns(0), end = ns(1);
        int64_t span = 0;
        if (!start || !end || !SpanNs(*start, *end, &span)) {
          p_.CountLoss(LossKind::kRowSkipped, "PyTorch API event without valid startNs/endNs (skipped)", Loc("PYTORCH_API", r.index()));
          return Status::Ok();
        }
        HostOpRow row;
        row.name = Str(r, 4);
        std::string_view name = p_.Str(row.name);
        int64_t type = r.Int(10, kTorchApiOp);
        bool queue = type == kTorchApiQueue;
        if (type == kTorchApiOp) {
          row.kind = name.starts_with("ProfilerStep#") ? HostOpKind::kUserAnnotation : HostOpKind::kOperator;
          row.category = cat_op;
        } else if (queue) {
          row.kind = HostOpKind::kOther;
          row.category = name.starts_with("Dequeue") ? cat_dequeue : cat_enqueue;
        } else if (type == kTorchApiTrace) {
          row.kind = HostOpKind::kPython;
          row.category = cat_trace;
        } else if (type == kTorchApiMstx) {
          row.kind = HostOpKind::kUserAnnotation;
          row.category = cat_mstx;
        } else {
          row.kind = HostOpKind::kOther;
          row.category = p_.Intern(std::to_string(type));
        }
        row.ts = *start;
        row.dur = span;
        row.track = HostTrack(r.Int(2, 0));
        int64_t seq = r.Int(5, -1);
        if (seq >= 0) row.sequence_number = seq;
        row.input_types = Str(r, 7);
        row.input_dims = Str(r, 8);
        int64_t link = r.Int(3);
        if (link != kNoId && !queue) row.external_id = link;
        uint32_t op = p_.host_ops.Add(row);
        if (int64_t fwd = r.Int(6, 0); fwd != 0) Attr(OwnerKind::kHostOp, op, key(fwd_thread_key, "Fwd thread id"), r, 6, false);
        if (!r.IsNull(9)) Attr(OwnerKind::kHostOp, op, key(callchain_key, "callchainId"), r, 9, false);
        if (link == kNoId) return Status::Ok();
        for (const auto& [unused_link, connection] : connections.Find(link)) {
          if (queue) {
            // Enqueue and its Dequeue share a connection id: the task-queue flow.
            p_.flows.Add(static_cast<uint64_t>(connection), cat_queue, name.starts_with("Dequeue") ? 'f' : 's',
                         row.track, row.ts);
            continue;
          }
          // op -> CANN launch -> tasks: the op's link id becomes their external id.
          if (auto c = cann_by_connection_.Find(connection); !c.empty())
            if (p_.host_ops.external_id[c.back().second] == kNoId) p_.host_ops.external_id.set(c.back().second, link);
          for (const auto& [unused_connection, task] : tasks_by_connection_.Find(connection))
            if (p_.device_tasks.external_id[task] == kNoId) {
              p_.device_tasks.external_id.set(task, link);
              ++torch_to_task_links_;
            }
        }
        return Status::Ok();
      },
      "", kStartAndEndNs);
}

Status DbReader::ReadSteps() {
  if (!HasTable("STEP_TIME")) return Status::Ok();
  StrId source = p_.Intern("STEP_TIME");
  return Select("STEP_TIME", {"id", "startNs", "endNs"}, [&](const Row& r) {
    int64_t dur = 0;
    if (r.IsNull(1) || r.IsNull(2) || !SpanNs(r.Int(1), r.Int(2), &dur)) {
      p_.CountLoss(LossKind::kRowSkipped, "step without valid startNs/endNs (skipped)", Loc("STEP_TIME", r.index()));
      return Status::Ok();
    }
    StepRow step;
    step.number = r.Int(0, -1);
    step.name = p_.Intern("ProfilerStep#" + std::to_string(step.number));
    step.ts = r.Int(1);
    step.dur = dur;
    step.source = source;
    p_.steps.rows.push_back(step);
    return Status::Ok();
  });
}

Status DbReader::ReadFrequency() {
  if (!HasTable("AICORE_FREQ")) return Status::Ok();
  StrId name = p_.Intern("AI Core Freq/MHz");
  return Select("AICORE_FREQ", {"deviceId", "timestampNs", "freq"}, [&](const Row& r) {
    if (r.IsNull(1) || r.IsNull(2)) return Status::Ok();
    uint32_t track = p_.TrackFor("npu " + std::to_string(r.Int(0, 0)), "AI Core Freq", TrackKind::kOther);
    p_.counters.Add(name, track, r.Int(1), r.Real(2));
    return Status::Ok();
  });
}

Status DbReader::Run() {
  PYPTO_RETURN_IF_ERROR(Open());
  // PYPTO_TIMINGS=1: one line per table group.
  auto timed = [](const char* phase, auto&& read) {
    PhaseTimer timer(phase);
    return read();
  };
  PYPTO_RETURN_IF_ERROR(timed("import.db.strings", [&] { return ReadStrings(); }));
  PYPTO_RETURN_IF_ERROR(ReadMetadata());
  PYPTO_RETURN_IF_ERROR(timed("import.db.tasks", [&] { return ReadTasks(); }));
  PYPTO_RETURN_IF_ERROR(timed("import.db.pmu", [&] { return ReadPmu(); }));
  PYPTO_RETURN_IF_ERROR(timed("import.db.communication", [&] { return ReadCommunicationOps(); }));
  // Every CANN_API and PYTORCH_API row becomes one host op.
  p_.host_ops.Reserve(p_.host_ops.size() + (HasTable("CANN_API") ? RowsAhead("CANN_API") : 0) +
                      (HasTable("PYTORCH_API") ? RowsAhead("PYTORCH_API") : 0));
  PYPTO_RETURN_IF_ERROR(timed("import.db.cann_api", [&] { return ReadCannApi(); }));
  PYPTO_RETURN_IF_ERROR(timed("import.db.pytorch_api", [&] { return ReadTorchApi(); }));
  PYPTO_RETURN_IF_ERROR(ReadSteps());
  PYPTO_RETURN_IF_ERROR(ReadFrequency());
  p_.metadata.emplace("format", std::string(kImporterName));
  p_.metadata.emplace("clock", "epoch");
  p_.metadata["ascend_db.cann_to_task_links"] = std::to_string(cann_to_task_links_);
  p_.metadata["ascend_db.torch_to_task_links"] = std::to_string(torch_to_task_links_);
  p_.source_files.push_back(path_);
  return Status::Ok();
}

class AscendDb final : public Importer {
 public:
  std::string_view name() const override { return kImporterName; }
  std::string_view description() const override {
    return "Ascend profiler SQLite export (ascend_pytorch_profiler*.db, msprof_*.db)";
  }
  int Sniff(const SniffInput& input) const override {
    // Any SQLite file: the tables are checked on import (a sniffer sees only
    // the first bytes), which gives a clear "missing table" error for others.
    // pypto's own saved profile (application id in the header) is not ours.
    if (input.kind != io::PathKind::kFile) return 0;
    if (sqlite_input::ApplicationId(input.prefix) == pypto_db::kApplicationId) return 0;
    return input.prefix.starts_with(kSqliteMagic) ? 60 : 0;
  }
  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    return ImportAscendDb(path, options, profile);
  }
};

}  // namespace

const Importer* AscendDbImporter() {
  static const AscendDb importer;
  return &importer;
}

Status ImportAscendDb(const std::string& path, const ImportOptions& options, Profile* profile) {
  DbReader reader(path, options, profile);
  return reader.Run();
}

}  // namespace pypto
