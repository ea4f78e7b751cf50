#include "importers/pypto_db/pypto_db_importer.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "importers/common/sqlite_input.h"
#include "io/limits.h"

namespace pypto {
namespace {

using sqlite_input::Row;

constexpr std::string_view kImporterName = "pypto";
// Sniff score of a file with pypto's application id in its header: certain,
// and above the Ascend database importer's 60 for "any SQLite file". A
// schema-1 file (written before the id was set) cannot be told from the first
// bytes (its schema text spills past page 1): it loads with --format pypto.
constexpr int kSniffScoreApplicationId = 100;
constexpr StrId kUnmappedString = std::numeric_limits<StrId>::max();
constexpr int64_t kMaxDepth = std::numeric_limits<uint16_t>::max();

// Typed reads of one row. The first problem is kept (naming the file, the
// table, the row and the column) and later reads return harmless defaults, so
// a row handler reads everything and checks status() once.
class Fields {
 public:
  Fields(const Row& row, const std::string& path, const std::string& table, const std::vector<std::string>& names)
      : row_(row), path_(path), table_(table), names_(names) {}

  std::optional<int64_t> OptInt(int col) {
    if (row_.IsNull(col)) return std::nullopt;
    if (!row_.IsInteger(col)) {
      Fail(col, "expected an integer, found " + TypeName(col));
      return std::nullopt;
    }
    return row_.Int(col);
  }
  int64_t Int(int col) {
    if (row_.IsNull(col)) {
      Fail(col, "NULL where an integer is required");
      return 0;
    }
    return OptInt(col).value_or(0);
  }
  // An integer in [lo, hi]; NULL gives `if_null`.
  int64_t Ranged(int col, int64_t lo, int64_t hi, int64_t if_null) {
    std::optional<int64_t> v = OptInt(col);
    if (!v) return if_null;
    if (*v < lo || *v > hi) {
      Fail(col, "value " + std::to_string(*v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return if_null;
    }
    return *v;
  }
  // Text; NULL reads as "".
  std::string_view Text(int col) {
    if (row_.IsNull(col)) return {};
    if (!row_.IsText(col)) {
      Fail(col, "expected text, found " + TypeName(col));
      return {};
    }
    return row_.Text(col);
  }
  // A real or integer; NULL reads as NaN.
  double Real(int col) {
    const int type = row_.Type(col);
    if (type == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) {
      Fail(col, "expected a number, found " + TypeName(col));
      return std::numeric_limits<double>::quiet_NaN();
    }
    return row_.Real(col);
  }
  void Fail(int col, const std::string& why) {
    if (status_.ok())
      status_ = CorruptError(sqlite_input::RowLocation(path_, table_, row_.index()) + ": column " + names_[col] + ": " + why);
  }
  void FailRow(const std::string& why) {
    if (status_.ok()) status_ = CorruptError(sqlite_input::RowLocation(path_, table_, row_.index()) + ": " + why);
  }
  const Status& status() const { return status_; }
  uint64_t index() const { return row_.index(); }

 private:
  std::string TypeName(int col) const {
    switch (row_.Type(col)) {
      case SQLITE_INTEGER: return "an integer";
      case SQLITE_FLOAT: return "a real";
      case SQLITE_TEXT: return "text";
      case SQLITE_BLOB: return "a blob";
      default: return "NULL";
    }
  }
  const Row& row_;
  const std::string& path_;
  const std::string& table_;
  const std::vector<std::string>& names_;
  Status status_;
};

class SavedProfileReader {
 public:
  SavedProfileReader(const std::string& path, const ImportOptions& options, Profile* profile)
      : path_(path), options_(options), p_(*profile) {}
  Status Run();

 private:
  using RowFn = std::function<void(Fields&)>;
  // Checks that `table` exists with every column of `columns`, refuses more
  // rows than the limit, then calls `fn` on each row in `order` (ids must run
  // 0..n-1 when `dense_ids`: rows refer to each other by id).
  Status Read(const std::string& table, const std::vector<std::string>& columns, const std::string& order, bool dense_ids,
              const RowFn& fn);
  Status ReadMeta();
  Status ReadStrings();
  Status ReadTracks();
  Status ReadDevices();
  Status ReadHostOps();
  Status ReadDeviceTasks();
  Status ReadProfileSteps();
  Status ReadSchemaOneSteps();
  Status ReadAttributes();
  Status ReadFlowsAndCounters();
  Status ReadDataLossAndNotes();

  // A string id of the saved table mapped into this profile's strings.
  StrId Str(Fields& f, int col) {
    std::optional<int64_t> id = f.OptInt(col);
    if (!id) {
      if (f.status().ok()) f.Fail(col, "NULL where a string id is required");
      return kEmptyStr;
    }
    if (*id < 0 || static_cast<uint64_t>(*id) >= string_map_.size() || string_map_[*id] == kUnmappedString) {
      f.Fail(col, "string id " + std::to_string(*id) + " is not in table strings");
      return kEmptyStr;
    }
    return string_map_[*id];
  }
  // A track id of the saved table mapped to this profile's track row.
  uint32_t Track(Fields& f, int col) {
    int64_t id = f.Int(col);
    if (id < 0 || static_cast<uint64_t>(id) >= track_map_.size()) {
      if (f.status().ok())
        f.Fail(col, "track " + std::to_string(id) + " beyond the " + std::to_string(track_map_.size()) +
                        " rows of table tracks");
      return 0;
    }
    return track_map_[id];
  }
  // A duration: negative or making ts + dur overflow is counted as data loss and read as 0.
  TimeNs Duration(Fields& f, const std::string& table, TimeNs ts, int col) {
    int64_t dur = f.Int(col);
    TimeNs end = 0;
    if (dur < 0 || __builtin_add_overflow(ts, dur, &end)) {
      p_.CountLoss(LossKind::kValueRepaired, table + ": negative or overflowing dur (read as 0)",
                   sqlite_input::RowLocation(path_, table, f.index()));
      return 0;
    }
    return dur;
  }

  const std::string& path_;
  const ImportOptions& options_;
  Profile& p_;
  sqlite_input::DbHandle db_;
  std::set<std::string> tables_;
  int schema_version_ = 0;
  std::vector<StrId> string_map_;
  std::vector<uint32_t> track_map_;
  size_t host_base_ = 0, host_count_ = 0;
  size_t task_base_ = 0, task_count_ = 0;
  size_t step_base_ = 0, step_count_ = 0;
  size_t device_base_ = 0, device_count_ = 0;
};

Status SavedProfileReader::Read(const std::string& table, const std::vector<std::string>& columns,
                                const std::string& order, bool dense_ids, const RowFn& fn) {
  // The reader asks only for what the writer declares (pypto_db_format.h).
  const pypto_db::TableSchema* declared = pypto_db::FindTable(table);
  for (const std::string& c : columns) {
    if (!declared || !declared->Has(c))
      return InternalError("pypto_db reader: column " + table + "." + c + " is not in the declared schema");
  }
  if (!tables_.count(table))
    return CorruptError(path_ + ": saved pypto profile (schema " + std::to_string(schema_version_) +
                        ") lacks table " + table);
  PYPTO_ASSIGN_OR_RETURN(std::set<std::string> present, sqlite_input::ColumnNames(db_.get(), path_, table));
  std::vector<std::string> names = columns;
  if (dense_ids) names.push_back("id");  // last, so handlers index `columns` from 0
  for (const std::string& c : names)
    if (!present.count(c)) return CorruptError(path_ + ": table " + table + ": missing column " + c);
  // Row count first: nothing is sized from a count the limits refuse.
  PYPTO_ASSIGN_OR_RETURN(const uint64_t n, sqlite_input::CountRows(db_.get(), path_, table));
  if (n > io::kMaxSavedProfileTableRows)
    return LimitExceededError(path_ + ": table " + table + ": " + std::to_string(n) + " rows, more than the " +
                              std::to_string(io::kMaxSavedProfileTableRows) + " a saved profile may hold");
  const int id_col = static_cast<int>(columns.size());
  return sqlite_input::SelectRows(
      db_.get(), path_, table, names,
      [&](const Row& row) {
        Fields fields(row, path_, table, names);
        if (dense_ids && (!row.IsInteger(id_col) || row.Int(id_col) != static_cast<int64_t>(row.index()))) {
          fields.Fail(id_col, "expected " + std::to_string(row.index()) + " (ids run 0..n-1 in order)");
          return fields.status();
        }
        fn(fields);
        return fields.status();
      },
      order.empty() ? "" : "ORDER BY " + order, options_.cancel);
}

Status SavedProfileReader::ReadMeta() {
  if (!tables_.count("meta")) return UnsupportedError(path_ + ": not a saved pypto profile: no table meta");
  std::vector<std::pair<std::string, std::string>> entries;
  std::string schema;
  PYPTO_RETURN_IF_ERROR(Read("meta", {"key", "value"}, "", false, [&](Fields& f) {
    std::string key(f.Text(0)), value(f.Text(1));
    if (key == "schema") schema = value;
    entries.emplace_back(std::move(key), std::move(value));
  }));
  if (schema.empty())
    return UnsupportedError(path_ + ": not a saved pypto profile: table meta has no 'schema' key (expected " +
                            std::string(pypto_db::kSchemaName) + ")");
  if (!schema.starts_with(pypto_db::kSchemaNamePrefix))
    return UnsupportedError(path_ + ": not a saved pypto profile: meta schema is '" + schema + "'");
  const std::string_view digits = std::string_view(schema).substr(pypto_db::kSchemaNamePrefix.size());
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), schema_version_);
  if (ec != std::errc() || end != digits.data() + digits.size() ||
      schema_version_ < pypto_db::kOldestReadableSchemaVersion || schema_version_ > pypto_db::kSchemaVersion)
    return UnsupportedError(path_ + ": saved pypto profile schema '" + schema + "' is not readable by this pypto (reads " +
                            std::string(pypto_db::kSchemaNamePrefix) +
                            std::to_string(pypto_db::kOldestReadableSchemaVersion) + " to " +
                            std::string(pypto_db::kSchemaName) + ")");
  for (auto& [key, value] : entries) {
    if (key.starts_with("profile.")) {
      std::string name = key.substr(8);
      if (name == "format") p_.metadata["source_format"] = value;
      else if (name == "format_version") p_.metadata["source_format_version"] = value;
      else if (name == "source_path") p_.metadata["saved_from_path"] = value;
      else p_.metadata.emplace(std::move(name), value);
    } else if (key.starts_with("source_file.")) {
      p_.metadata["saved_from_file." + key.substr(12)] = value;
    }
  }
  p_.metadata["format"] = std::string(kImporterName);
  p_.metadata["format_version"] = schema;
  return Status::Ok();
}

Status SavedProfileReader::ReadStrings() {
  // Ids run 0..n-1 (the export writes the StringTable in id order).
  PYPTO_RETURN_IF_ERROR(Read("strings", {"id", "value"}, "id", false, [&](Fields& f) {
    int64_t id = f.Ranged(0, 0, static_cast<int64_t>(io::kMaxSavedProfileTableRows) - 1, -1);
    std::string_view value = f.Text(1);
    if (!f.status().ok()) return;
    if (id < 0) return f.Fail(0, "NULL where a string id is required");
    if (static_cast<uint64_t>(id) != f.index())
      return f.Fail(0, "expected " + std::to_string(f.index()) + " (ids run 0..n-1 in order)");
    string_map_.push_back(p_.Intern(value));
  }));
  return Status::Ok();
}

Status SavedProfileReader::ReadTracks() {
  return Read("tracks", {"pid", "tid", "name", "process_name", "kind", "device", "stream"}, "id", true, [&](Fields& f) {
    std::string_view pid = f.Text(0), tid = f.Text(1), name = f.Text(2), process = f.Text(3);
    std::optional<TrackKind> kind = ParseTrackKind(f.Text(4));
    const int64_t device = f.Ranged(5, -1, std::numeric_limits<int32_t>::max(), -1);
    const int64_t stream = f.Ranged(6, -1, std::numeric_limits<int64_t>::max(), -1);
    if (!f.status().ok()) return;
    if (!kind) return f.Fail(4, "unknown track kind '" + std::string(f.Text(4)) + "'");
    const uint32_t row = p_.TrackFor(pid, tid, *kind);
    p_.tracks.kind[row] = *kind;
    p_.tracks.name[row] = p_.Intern(name);
    p_.tracks.process_name[row] = p_.Intern(process);
    p_.tracks.device[row] = static_cast<int32_t>(device);
    p_.tracks.stream[row] = stream;
    track_map_.push_back(row);
  });
}

Status SavedProfileReader::ReadDevices() {
  const bool with_row = schema_version_ >= 2;  // schema 1 keyed devices by index (one row per index)
  device_base_ = p_.devices.size();
  std::vector<std::string> columns = {"idx", "kind", "name"};
  return Read("devices", columns, with_row ? "id" : "idx", with_row, [&](Fields& f) {
    const int64_t index = f.Ranged(0, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 0);
    std::optional<DeviceKind> kind = ParseDeviceKind(f.Text(1));
    std::string_view name = f.Text(2);
    if (!f.status().ok()) return;
    if (!kind) return f.Fail(1, "unknown device kind '" + std::string(f.Text(1)) + "'");
    p_.devices.rows.push_back(DeviceRow{static_cast<int32_t>(index), *kind, p_.Intern(name)});
    ++device_count_;
  });
}

Status SavedProfileReader::ReadHostOps() {
  host_base_ = p_.host_ops.size();
  std::vector<int64_t> parents;
  std::vector<uint16_t> depths;
  PYPTO_RETURN_IF_ERROR(Read(
      "host_ops",
      {"name_id", "category_id", "kind", "track", "ts", "dur", "depth", "parent", "input_dims_id", "input_types_id",
       "correlation", "external_id", "sequence_number"},
      "id", true, [&](Fields& f) {
        HostOpRow row;
        row.name = Str(f, 0);
        row.category = Str(f, 1);
        std::optional<HostOpKind> kind = ParseHostOpKind(f.Text(2));
        row.track = Track(f, 3);
        row.ts = f.Int(4);
        const int64_t depth = f.Ranged(6, 0, kMaxDepth, 0);
        const int64_t parent = f.Ranged(7, 0, std::numeric_limits<int64_t>::max(), -1);
        row.input_dims = Str(f, 8);
        row.input_types = Str(f, 9);
        row.correlation = f.OptInt(10).value_or(kNoId);
        row.external_id = f.OptInt(11).value_or(kNoId);
        row.sequence_number = f.OptInt(12).value_or(kNoId);
        if (!f.status().ok()) return;
        if (!kind) return f.Fail(2, "unknown host op kind '" + std::string(f.Text(2)) + "'");
        row.kind = *kind;
        row.dur = Duration(f, "host_ops", row.ts, 5);
        p_.host_ops.Add(row);
        parents.push_back(parent);
        depths.push_back(static_cast<uint16_t>(depth));
      }));
  host_count_ = parents.size();
  // Parents refer to rows of the same table: checked once every row is known.
  for (size_t i = 0; i < parents.size(); ++i) {
    const int64_t parent = parents[i];
    if (parent >= static_cast<int64_t>(host_count_) || parent == static_cast<int64_t>(i))
      return CorruptError(sqlite_input::RowLocation(path_, "host_ops", i) + ": column parent: host op " +
                          std::to_string(parent) +
                          (parent == static_cast<int64_t>(i) ? " is the row itself"
                                                             : " beyond the " + std::to_string(host_count_) +
                                                                   " rows of table host_ops"));
    p_.host_ops.parent[host_base_ + i] = parent < 0 ? kNoIndex : static_cast<int32_t>(host_base_ + parent);
    p_.host_ops.depth[host_base_ + i] = depths[i];
  }
  return Status::Ok();
}

Status SavedProfileReader::ReadDeviceTasks() {
  task_base_ = p_.device_tasks.size();
  std::vector<std::string> columns = {"name_id", "category_id", "kind", "track", "ts", "dur", "graph_launched",
                                      "correlation", "external_id", "bytes", "core_type_id", "op_type_id", "block_dim",
                                      "input_shapes_id", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"};
  const bool details = schema_version_ >= 2;
  if (details)
    for (const char* c : {"mix_block_dim", "input_types_id", "input_formats_id", "output_shapes_id", "output_types_id",
                          "output_formats_id"})
      columns.push_back(c);
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  PYPTO_RETURN_IF_ERROR(Read("device_tasks", columns, "id", true, [&](Fields& f) {
    DeviceTaskRow row;
    row.name = Str(f, 0);
    row.category = Str(f, 1);
    std::optional<DeviceTaskKind> kind = ParseDeviceTaskKind(f.Text(2));
    row.track = Track(f, 3);
    row.ts = f.Int(4);
    row.graph_launched = f.Ranged(6, 0, 1, 0) != 0;
    row.correlation = f.OptInt(7).value_or(kNoId);
    row.external_id = f.OptInt(8).value_or(kNoId);
    row.bytes = f.Ranged(9, 0, std::numeric_limits<int64_t>::max(), -1);
    row.core_type = Str(f, 10);
    row.op_type = Str(f, 11);
    row.block_dim = static_cast<int32_t>(f.Ranged(12, 0, kInt32Max, -1));
    row.input_shapes = Str(f, 13);
    for (int k = 0; k < 3; ++k) {
      row.grid[k] = static_cast<int32_t>(f.Ranged(14 + k, 1, kInt32Max, 0));
      row.block[k] = static_cast<int32_t>(f.Ranged(17 + k, 1, kInt32Max, 0));
    }
    if (details) {
      row.mix_block_dim = static_cast<int32_t>(f.Ranged(20, 0, kInt32Max, -1));
      row.input_types = Str(f, 21);
      row.input_formats = Str(f, 22);
      row.output_shapes = Str(f, 23);
      row.output_types = Str(f, 24);
      row.output_formats = Str(f, 25);
    }
    if (!f.status().ok()) return;
    if (!kind) return f.Fail(2, "unknown device task kind '" + std::string(f.Text(2)) + "'");
    row.kind = *kind;
    row.dur = Duration(f, "device_tasks", row.ts, 5);
    p_.device_tasks.Add(row);
    ++task_count_;
  }));
  return Status::Ok();
}

Status SavedProfileReader::ReadProfileSteps() {
  step_base_ = p_.steps.size();
  return Read("profile_steps",
              {"number", "name_id", "ts", "dur", "source_id", "device", "computing", "communication_not_overlapped",
               "overlapped", "communication", "free", "stage", "bubble",
               "communication_not_overlapped_excluding_receive", "preparing"},
              "id", true, [&](Fields& f) {
                StepRow step;
                step.number = f.Int(0);
                step.name = Str(f, 1);
                step.ts = f.OptInt(2).value_or(kUnknownNs);
                step.dur = f.OptInt(3).value_or(kUnknownNs);
                step.source = Str(f, 4);
                step.device = static_cast<int32_t>(f.Ranged(5, -1, std::numeric_limits<int32_t>::max(), -1));
                TimeNs* breakdown[] = {&step.computing, &step.communication_not_overlapped, &step.overlapped,
                                       &step.communication, &step.free, &step.stage, &step.bubble,
                                       &step.communication_not_overlapped_excluding_receive, &step.preparing};
                for (int k = 0; k < 9; ++k) *breakdown[k] = f.OptInt(6 + k).value_or(kUnknownNs);
                if (!f.status().ok()) return;
                if (step.dur != kUnknownNs && step.ts != kUnknownNs) step.dur = Duration(f, "profile_steps", step.ts, 3);
                p_.steps.rows.push_back(step);
                ++step_count_;
              });
}

// Schema 1 kept only the graph's steps: the ones a step table gave (not the
// ProfilerStep annotations or the whole window, which the graph finds again)
// come back as step rows, without the Ascend breakdown.
Status SavedProfileReader::ReadSchemaOneSteps() {
  step_base_ = p_.steps.size();
  PYPTO_RETURN_IF_ERROR(Read("steps", {"number", "name", "source", "device", "cpu_start", "cpu_end"}, "id", true,
                             [&](Fields& f) {
                               StepRow step;
                               step.number = f.Int(0);
                               std::string_view name = f.Text(1), source = f.Text(2);
                               step.device = static_cast<int32_t>(
                                   f.Ranged(3, -1, std::numeric_limits<int32_t>::max(), -1));
                               const int64_t start = f.Int(4), end = f.Int(5);
                               if (!f.status().ok()) return;
                               if (source == "ProfilerStep annotation" || source == "whole window") return;
                               if (end < start || __builtin_sub_overflow(end, start, &step.dur))
                                 return f.FailRow("cpu_end before cpu_start");
                               step.ts = start;
                               step.name = p_.Intern(name);
                               step.source = p_.Intern(source);
                               p_.steps.rows.push_back(step);
                               ++step_count_;
                             }));
  p_.notes.push_back(path_ + ": saved with schema pypto.sqlite/1, which lacks flows, counters and the Ascend step "
                             "breakdown; re-export from the original profile to keep them");
  return Status::Ok();
}

Status SavedProfileReader::ReadAttributes() {
  return Read("attributes", {"owner_kind", "owner", "key", "text", "number"}, "", false, [&](Fields& f) {
    std::optional<OwnerKind> kind = ParseOwnerKind(f.Text(0));
    const int64_t owner = f.Int(1);
    std::string_view key = f.Text(2), text = f.Text(3);
    const double number = f.Real(4);
    if (!f.status().ok()) return;
    if (!kind) return f.Fail(0, "unknown owner kind '" + std::string(f.Text(0)) + "'");
    size_t count = 0, base = 0;
    switch (*kind) {
      case OwnerKind::kHostOp: count = host_count_, base = host_base_; break;
      case OwnerKind::kDeviceTask: count = task_count_, base = task_base_; break;
      case OwnerKind::kTrack: count = track_map_.size(); break;
      case OwnerKind::kDevice: count = device_count_, base = device_base_; break;
      case OwnerKind::kStep: count = step_count_, base = step_base_; break;
    }
    if (owner < 0 || static_cast<uint64_t>(owner) >= count) {
      p_.CountLoss(LossKind::kLinkLost, "attributes: owner row out of range (skipped)", sqlite_input::RowLocation(path_, "attributes", f.index()));
      return;
    }
    const uint32_t row = *kind == OwnerKind::kTrack ? track_map_[owner] : static_cast<uint32_t>(base + owner);
    p_.AddAttribute(*kind, row, p_.Intern(key), text, number);
  });
}

Status SavedProfileReader::ReadFlowsAndCounters() {
  PYPTO_RETURN_IF_ERROR(Read("flows", {"flow_id", "category_id", "phase", "track", "ts"}, "rowid", false, [&](Fields& f) {
    const int64_t id = f.Int(0);
    const StrId category = Str(f, 1);
    std::string_view phase = f.Text(2);
    const uint32_t track = Track(f, 3);
    const TimeNs ts = f.Int(4);
    if (!f.status().ok()) return;
    if (phase.size() != 1) return f.Fail(2, "expected one character (s, f or t)");
    p_.flows.Add(static_cast<uint64_t>(id), category, phase[0], track, ts);
  }));
  return Read("counters", {"name_id", "track", "ts", "value"}, "rowid", false, [&](Fields& f) {
    const StrId name = Str(f, 0);
    const uint32_t track = Track(f, 1);
    const TimeNs ts = f.Int(2);
    const double value = f.Real(3);
    if (!f.status().ok()) return;
    p_.counters.Add(name, track, ts, value);
  });
}

Status SavedProfileReader::ReadDataLossAndNotes() {
  // The kind column came after schema 2's first files: without it a reason is
  // read back as unclassified.
  PYPTO_ASSIGN_OR_RETURN(std::set<std::string> present, sqlite_input::ColumnNames(db_.get(), path_, "data_loss"));
  std::vector<std::string> columns = {"reason", "count", "first_location"};
  const bool has_kind = present.count("kind") > 0;
  if (has_kind) columns.push_back("kind");
  PYPTO_RETURN_IF_ERROR(Read("data_loss", columns, "", false, [&](Fields& f) {
    std::string reason(f.Text(0));
    const int64_t count = f.Ranged(1, 0, std::numeric_limits<int64_t>::max(), 0);
    std::string_view where = f.Text(2);
    const LossKind kind = has_kind ? ParseLossKind(f.Text(3)).value_or(LossKind::kUnclassified) : LossKind::kUnclassified;
    if (!f.status().ok() || count == 0) return;
    DataLossEntry& entry = p_.data_loss[reason];
    if (entry.count == 0) entry.first_location = std::string(where), entry.kind = kind;
    if (__builtin_add_overflow(entry.count, static_cast<uint64_t>(count), &entry.count))
      entry.count = std::numeric_limits<uint64_t>::max();
  }));
  return Read("notes", {"source", "text"}, "id", false, [&](Fields& f) {
    std::string_view source = f.Text(0), text = f.Text(1);
    if (!f.status().ok()) return;
    // Diagnosis notes are made again by the diagnosis; import notes belong to the model.
    if (source == "import") p_.notes.emplace_back(text);
  });
}

Status SavedProfileReader::Run() {
  PYPTO_ASSIGN_OR_RETURN(db_, sqlite_input::OpenUntrusted(path_, options_.limits));
  PYPTO_ASSIGN_OR_RETURN(tables_, sqlite_input::TableNames(db_.get(), path_));
  PYPTO_RETURN_IF_ERROR(ReadMeta());
  PYPTO_RETURN_IF_ERROR(ReadStrings());
  PYPTO_RETURN_IF_ERROR(ReadTracks());
  PYPTO_RETURN_IF_ERROR(ReadDevices());
  PYPTO_RETURN_IF_ERROR(ReadHostOps());
  PYPTO_RETURN_IF_ERROR(ReadDeviceTasks());
  if (schema_version_ >= 2) {
    PYPTO_RETURN_IF_ERROR(ReadProfileSteps());
    PYPTO_RETURN_IF_ERROR(ReadFlowsAndCounters());
  } else {
    PYPTO_RETURN_IF_ERROR(ReadSchemaOneSteps());
  }
  PYPTO_RETURN_IF_ERROR(ReadAttributes());
  PYPTO_RETURN_IF_ERROR(ReadDataLossAndNotes());
  p_.source_files.push_back(path_);
  return Status::Ok();
}

class PyptoDb final : public Importer {
 public:
  std::string_view name() const override { return kImporterName; }
  std::string_view description() const override {
    return "pypto saved profile (SQLite file of `pypto export-sqlite` / ProfileResults.save)";
  }
  int Sniff(const SniffInput& input) const override {
    if (input.kind != io::PathKind::kFile || !input.prefix.starts_with(sqlite_input::kSqliteMagic)) return 0;
    return sqlite_input::ApplicationId(input.prefix) == pypto_db::kApplicationId ? kSniffScoreApplicationId : 0;
  }
  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    return ImportPyptoDb(path, options, profile);
  }
};

}  // namespace

const Importer* PyptoDbImporter() {
  static const PyptoDb importer;
  return &importer;
}

Status ImportPyptoDb(const std::string& path, const ImportOptions& options, Profile* profile) {
  SavedProfileReader reader(path, options, profile);
  return reader.Run();
}

}  // namespace pypto
