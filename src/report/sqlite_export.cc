#include "report/sqlite_export.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "analysis/op_class.h"
#include "report/analysis_summary.h"
#include "io/output_file.h"
#include "report/chrome_trace_export.h"
#include "report/profile_report.h"

namespace pypto::report {

namespace {

// Views over the declared tables (pypto_db::kTables); docs/sqlite-schema.md describes them.
constexpr char kViewSql[] = R"SQL(
CREATE VIEW host_ops_v AS SELECT h.*, n.value AS name, c.value AS category, d.value AS input_dims
  FROM host_ops h JOIN strings n ON n.id = h.name_id JOIN strings c ON c.id = h.category_id
  JOIN strings d ON d.id = h.input_dims_id;
CREATE VIEW device_tasks_v AS SELECT t.*, n.value AS name, o.value AS op_type, ct.value AS core_type,
  s.value AS input_shapes FROM device_tasks t JOIN strings n ON n.id = t.name_id JOIN strings o ON o.id = t.op_type_id
  JOIN strings ct ON ct.id = t.core_type_id JOIN strings s ON s.id = t.input_shapes_id;
)SQL";

constexpr char kIndexSql[] = R"SQL(
CREATE INDEX host_ops_name ON host_ops(name_id);
CREATE INDEX host_ops_parent ON host_ops(parent);
CREATE INDEX device_tasks_name ON device_tasks(name_id);
CREATE INDEX device_tasks_operator ON device_tasks(operator);
CREATE INDEX device_tasks_ts ON device_tasks(ts);
CREATE INDEX attributes_owner ON attributes(owner_kind, owner);
)SQL";

class Db {
 public:
  ~Db() {
    for (sqlite3_stmt* s : stmts_) sqlite3_finalize(s);
    if (db_) sqlite3_close(db_);
  }
  Status Open(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
      return Error(path + ": cannot open");
    return Status::Ok();
  }
  Status Exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return IoError("sqlite: " + msg);
    }
    return Status::Ok();
  }
  StatusOr<sqlite3_stmt*> Prepare(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return Error("prepare " + sql);
    stmts_.push_back(s);
    return s;
  }
  Status Step(sqlite3_stmt* s) {
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE) return Error("insert");
    return Status::Ok();
  }
  Status Close() {
    for (sqlite3_stmt* s : stmts_) sqlite3_finalize(s);
    stmts_.clear();
    const int rc = sqlite3_close(db_);
    db_ = nullptr;
    return rc == SQLITE_OK ? Status::Ok() : IoError("sqlite: close failed");
  }
  Status Error(const std::string& what) {
    return IoError("sqlite: " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }

 private:
  sqlite3* db_ = nullptr;
  std::vector<sqlite3_stmt*> stmts_;
};

// An empty view may have a null data(): SQLite would store NULL, so "" is bound instead.
void BindText(sqlite3_stmt* s, int i, std::string_view v) {
  if (v.empty()) sqlite3_bind_text(s, i, "", 0, SQLITE_STATIC);
  else sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void BindTextStatic(sqlite3_stmt* s, int i, std::string_view v) {
  if (v.empty()) sqlite3_bind_text(s, i, "", 0, SQLITE_STATIC);
  else sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}
void BindId(sqlite3_stmt* s, int i, int64_t v) {  // kNoId -> NULL
  if (v == kNoId) sqlite3_bind_null(s, i); else sqlite3_bind_int64(s, i, v);
}
void BindRow(sqlite3_stmt* s, int i, int64_t v) {  // negative row -> NULL
  if (v < 0) sqlite3_bind_null(s, i); else sqlite3_bind_int64(s, i, v);
}
void BindTime(sqlite3_stmt* s, int i, TimeNs v) {
  if (v == kNoTime) sqlite3_bind_null(s, i); else sqlite3_bind_int64(s, i, v);
}
void BindUnknown(sqlite3_stmt* s, int i, TimeNs v) {  // kUnknownNs -> NULL
  if (v == kUnknownNs) sqlite3_bind_null(s, i); else sqlite3_bind_int64(s, i, v);
}
void BindReal(sqlite3_stmt* s, int i, double v) {
  if (std::isnan(v)) sqlite3_bind_null(s, i); else sqlite3_bind_double(s, i, v);
}

Status BeginSchema(Db& db) {
  PYPTO_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;"));
  // Header marks that let a sniffer that sees only the first bytes know the file.
  PYPTO_RETURN_IF_ERROR(db.Exec(("PRAGMA application_id=" + std::to_string(pypto_db::kApplicationId) +
                                 "; PRAGMA user_version=" + std::to_string(kSqliteSchemaVersion) + ";")
                                    .c_str()));
  PYPTO_RETURN_IF_ERROR(db.Exec("BEGIN"));
  return db.Exec(pypto_db::CreateTablesSql() + kViewSql);
}

Status WriteMeta(Db& db, const Profile& p, const DiagnosticReport* diagnosis) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("meta"));
  if (!s.ok()) return s.status();
  auto put = [&](std::string_view k, std::string_view v) {
    BindText(*s, 1, k);
    BindText(*s, 2, v);
    return db.Step(*s);
  };
  PYPTO_RETURN_IF_ERROR(put("schema", kSqliteSchemaName));
  PYPTO_RETURN_IF_ERROR(put("schema_version", std::to_string(kSqliteSchemaVersion)));
  PYPTO_RETURN_IF_ERROR(put("pypto_version", PYPTO_VERSION));
  for (const auto& [k, v] : p.metadata) PYPTO_RETURN_IF_ERROR(put("profile." + k, v));
  for (size_t i = 0; i < p.source_files.size(); ++i)
    PYPTO_RETURN_IF_ERROR(put("source_file." + std::to_string(i), p.source_files[i]));
  if (diagnosis) {
    PYPTO_RETURN_IF_ERROR(put("diagnosis.hardware_id", diagnosis->hardware_id));
    PYPTO_RETURN_IF_ERROR(put("diagnosis.step_basis", diagnosis->step_basis));
    PYPTO_RETURN_IF_ERROR(put("diagnosis.step_time_ns", std::to_string(diagnosis->step_time_ns)));
    PYPTO_RETURN_IF_ERROR(put("diagnosis.estimated_saved_ns", std::to_string(diagnosis->estimated_saved_ns)));
    PYPTO_RETURN_IF_ERROR(put("diagnosis.estimated_combined_speedup", std::to_string(diagnosis->estimated_combined_speedup)));
  }
  return Status::Ok();
}

Status WriteStrings(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("strings"));
  if (!s.ok()) return s.status();
  for (StrId id = 0; id < static_cast<StrId>(p.strings.size()); ++id) {
    sqlite3_bind_int64(*s, 1, id);
    BindTextStatic(*s, 2, p.Str(id));
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
  }
  return Status::Ok();
}

Status WriteTracks(Db& db, const Profile& p, SqliteExportStats* stats) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("tracks"));
  if (!s.ok()) return s.status();
  const TrackTable& t = p.tracks;
  for (size_t i = 0; i < t.size(); ++i) {
    sqlite3_bind_int64(*s, 1, static_cast<int64_t>(i));
    BindTextStatic(*s, 2, p.Str(t.pid_token[i]));
    BindTextStatic(*s, 3, p.Str(t.tid_token[i]));
    BindTextStatic(*s, 4, p.Str(t.name[i]));
    BindTextStatic(*s, 5, p.Str(t.process_name[i]));
    BindTextStatic(*s, 6, TrackKindName(t.kind[i]));
    BindRow(*s, 7, t.device[i]);
    BindRow(*s, 8, t.stream[i]);
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
    ++stats->tracks;
  }
  return Status::Ok();
}

Status WriteDevices(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("devices"));
  if (!s.ok()) return s.status();
  for (size_t i = 0; i < p.devices.rows.size(); ++i) {
    const DeviceRow& d = p.devices.rows[i];
    sqlite3_bind_int64(*s, 1, static_cast<int64_t>(i));  // row: what device attributes name as owner
    sqlite3_bind_int64(*s, 2, d.index);
    BindTextStatic(*s, 3, DeviceKindName(d.kind));
    BindTextStatic(*s, 4, p.Str(d.name));
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
  }
  return Status::Ok();
}

Status WriteHostOps(Db& db, const OperatorCallGraph& graph, const OpClassification& classes,
                    SqliteExportStats* stats) {
  const Profile& p = graph.profile();
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("host_ops"));
  if (!s.ok()) return s.status();
  const HostOpTable& h = p.host_ops;
  for (size_t i = 0; i < h.size(); ++i) {
    sqlite3_bind_int64(*s, 1, static_cast<int64_t>(i));
    sqlite3_bind_int64(*s, 2, h.name[i]);
    sqlite3_bind_int64(*s, 3, h.category[i]);
    BindTextStatic(*s, 4, HostOpKindName(h.kind[i]));
    sqlite3_bind_int64(*s, 5, h.track[i]);
    sqlite3_bind_int64(*s, 6, h.ts[i]);
    sqlite3_bind_int64(*s, 7, h.dur[i]);
    sqlite3_bind_int64(*s, 8, graph.SelfTime(static_cast<uint32_t>(i)));
    if (i < h.depth.size()) sqlite3_bind_int64(*s, 9, h.depth[i]); else sqlite3_bind_null(*s, 9);
    BindRow(*s, 10, i < h.parent.size() ? h.parent[i] : kNoIndex);
    BindTextStatic(*s, 11, OpClassName(classes.host_class[i]));
    sqlite3_bind_int64(*s, 12, h.input_dims[i]);
    sqlite3_bind_int64(*s, 13, h.input_types[i]);
    BindId(*s, 14, h.correlation[i]);
    BindId(*s, 15, h.external_id[i]);
    BindId(*s, 16, h.sequence_number[i]);
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
    ++stats->host_ops;
  }
  return Status::Ok();
}

Status WriteDeviceTasks(Db& db, const OperatorCallGraph& graph, const OpClassification& classes,
                        SqliteExportStats* stats) {
  const Profile& p = graph.profile();
  StatusOr<sqlite3_stmt*> s =
      db.Prepare(pypto_db::InsertSql("device_tasks"));
  if (!s.ok()) return s.status();
  const DeviceTaskTable& t = p.device_tasks;
  for (size_t i = 0; i < t.size(); ++i) {
    const uint32_t row = static_cast<uint32_t>(i);
    const uint32_t track = t.track[i];
    sqlite3_bind_int64(*s, 1, row);
    sqlite3_bind_int64(*s, 2, t.name[i]);
    sqlite3_bind_int64(*s, 3, t.category[i]);
    BindTextStatic(*s, 4, DeviceTaskKindName(t.kind[i]));
    sqlite3_bind_int64(*s, 5, track);
    BindRow(*s, 6, track < p.tracks.size() ? p.tracks.device[track] : -1);
    BindRow(*s, 7, track < p.tracks.size() ? p.tracks.stream[track] : -1);
    sqlite3_bind_int64(*s, 8, t.ts[i]);
    sqlite3_bind_int64(*s, 9, t.dur[i]);
    BindTextStatic(*s, 10, OpClassName(classes.task_class[i]));
    BindTextStatic(*s, 11, ClassSourceName(classes.task_source[i]));
    BindRow(*s, 12, graph.LauncherOf(row));
    BindRow(*s, 13, graph.OperatorOf(row));
    BindTextStatic(*s, 14, TaskLinkName(graph.LinkOf(row)));
    sqlite3_bind_int(*s, 15, graph.IsGraphLaunched(row) ? 1 : 0);
    BindId(*s, 16, t.correlation[i]);
    BindId(*s, 17, t.external_id[i]);
    BindRow(*s, 18, t.bytes[i]);
    sqlite3_bind_int64(*s, 19, t.core_type[i]);
    sqlite3_bind_int64(*s, 20, t.op_type(i));
    BindRow(*s, 21, t.block_dim(i));
    sqlite3_bind_int64(*s, 22, t.input_shapes(i));
    for (int k = 0; k < 3; ++k) {
      if (t.grid(i)[k] > 0) sqlite3_bind_int(*s, 23 + k, t.grid(i)[k]); else sqlite3_bind_null(*s, 23 + k);
      if (t.block(i)[k] > 0) sqlite3_bind_int(*s, 26 + k, t.block(i)[k]); else sqlite3_bind_null(*s, 26 + k);
    }
    BindRow(*s, 29, t.mix_block_dim(i));
    sqlite3_bind_int64(*s, 30, t.input_types(i));
    sqlite3_bind_int64(*s, 31, t.input_formats(i));
    sqlite3_bind_int64(*s, 32, t.output_shapes(i));
    sqlite3_bind_int64(*s, 33, t.output_types(i));
    sqlite3_bind_int64(*s, 34, t.output_formats(i));
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
    ++stats->device_tasks;
  }
  return Status::Ok();
}

Status WriteAttributes(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("attributes"));
  if (!s.ok()) return s.status();
  const AttributeTable& a = p.attributes;
  Status status = Status::Ok();
  a.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    if (!status.ok()) return;
    BindTextStatic(*s, 1, OwnerKindName(kind));
    sqlite3_bind_int64(*s, 2, owner);
    BindTextStatic(*s, 3, p.Str(a.key(i)));
    BindText(*s, 4, p.AttributeText(i));  // transient: the text may be formatted here
    BindReal(*s, 5, a.number(i));
    status = db.Step(*s);
  });
  return status;
}

// The steps as the graph found them (table "steps").
Status WriteGraphSteps(Db& db, const OperatorCallGraph& graph, SqliteExportStats* stats) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("steps"));
  if (!s.ok()) return s.status();
  const auto& steps = graph.Steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepInfo& st = steps[i];
    sqlite3_bind_int64(*s, 1, static_cast<int64_t>(i));
    sqlite3_bind_int64(*s, 2, st.number);
    BindText(*s, 3, st.name);
    BindText(*s, 4, st.source);
    BindRow(*s, 5, st.device);
    sqlite3_bind_int64(*s, 6, st.cpu.start);
    sqlite3_bind_int64(*s, 7, st.cpu.end);
    BindTime(*s, 8, st.device_start);
    BindTime(*s, 9, st.device_end);
    sqlite3_bind_int64(*s, 10, static_cast<int64_t>(st.device_task_count));
    sqlite3_bind_int64(*s, 11, st.latency_ns());
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
    ++stats->steps;
  }
  return Status::Ok();
}

// The model's own step rows (the table the graph reads; Ascend breakdown included).
Status WriteProfileSteps(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("profile_steps"));
  if (!s.ok()) return s.status();
  for (size_t i = 0; i < p.steps.rows.size(); ++i) {
    const StepRow& st = p.steps.rows[i];
    sqlite3_bind_int64(*s, 1, static_cast<int64_t>(i));
    sqlite3_bind_int64(*s, 2, st.number);
    sqlite3_bind_int64(*s, 3, st.name);
    BindUnknown(*s, 4, st.ts);
    BindUnknown(*s, 5, st.dur);
    sqlite3_bind_int64(*s, 6, st.source);
    BindRow(*s, 7, st.device);
    const TimeNs breakdown[] = {st.computing, st.communication_not_overlapped, st.overlapped, st.communication,
                                st.free, st.stage, st.bubble, st.communication_not_overlapped_excluding_receive,
                                st.preparing};
    for (int k = 0; k < 9; ++k) BindUnknown(*s, 8 + k, breakdown[k]);
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
  }
  return Status::Ok();
}

Status WriteFlows(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> f = db.Prepare(pypto_db::InsertSql("flows"));
  if (!f.ok()) return f.status();
  const FlowTable& fl = p.flows;
  for (size_t i = 0; i < fl.size(); ++i) {
    sqlite3_bind_int64(*f, 1, static_cast<int64_t>(fl.id[i]));  // uint64 kept as its int64 bit pattern
    sqlite3_bind_int64(*f, 2, fl.category[i]);
    const char phase[1] = {fl.phase[i]};
    BindText(*f, 3, std::string_view(phase, 1));
    sqlite3_bind_int64(*f, 4, fl.track[i]);
    sqlite3_bind_int64(*f, 5, fl.ts[i]);
    PYPTO_RETURN_IF_ERROR(db.Step(*f));
  }
  return Status::Ok();
}

Status WriteCounters(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> c = db.Prepare(pypto_db::InsertSql("counters"));
  if (!c.ok()) return c.status();
  CounterTable::Reader rows(p.counters);
  for (CounterRow row; rows.Next(&row);) {
    sqlite3_bind_int64(*c, 1, row.name);
    sqlite3_bind_int64(*c, 2, row.track);
    sqlite3_bind_int64(*c, 3, row.ts);
    BindReal(*c, 4, row.value);
    PYPTO_RETURN_IF_ERROR(db.Step(*c));
  }
  return Status::Ok();
}

Status WriteDataLoss(Db& db, const Profile& p) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("data_loss"));
  if (!s.ok()) return s.status();
  for (const auto& [reason, e] : p.data_loss) {
    BindText(*s, 1, reason);
    sqlite3_bind_int64(*s, 2, static_cast<int64_t>(e.count));
    BindText(*s, 3, e.first_location);
    BindTextStatic(*s, 4, DescribeLoss(e.kind).name);
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
  }
  return Status::Ok();
}

// The import's notes, then the diagnosis's.
Status WriteNotes(Db& db, const Profile& p, const DiagnosticReport* diagnosis) {
  StatusOr<sqlite3_stmt*> n = db.Prepare("INSERT INTO notes(source, text) VALUES(?,?)");
  if (!n.ok()) return n.status();
  for (const std::string& note : p.notes) {
    BindTextStatic(*n, 1, "import");
    BindText(*n, 2, note);
    PYPTO_RETURN_IF_ERROR(db.Step(*n));
  }
  if (diagnosis) {
    for (const std::string& note : diagnosis->notes) {
      BindTextStatic(*n, 1, "diagnosis");
      BindText(*n, 2, note);
      PYPTO_RETURN_IF_ERROR(db.Step(*n));
    }
  }
  return Status::Ok();
}

// Issue `issue`'s metrics (statement m) and evidence rows (statement r).
Status WriteIssueEvidence(Db& db, sqlite3_stmt* m, sqlite3_stmt* r, size_t issue, const Issue& is) {
  for (const Metric& met : is.evidence.metrics) {
    sqlite3_bind_int64(m, 1, static_cast<int64_t>(issue));
    BindText(m, 2, met.name);
    BindReal(m, 3, met.value);
    BindText(m, 4, met.unit);
    PYPTO_RETURN_IF_ERROR(db.Step(m));
  }
  for (uint32_t row : is.evidence.tasks) {
    sqlite3_bind_int64(r, 1, static_cast<int64_t>(issue));
    BindTextStatic(r, 2, "device_task");
    sqlite3_bind_int64(r, 3, row);
    PYPTO_RETURN_IF_ERROR(db.Step(r));
  }
  for (uint32_t row : is.evidence.host_ops) {
    sqlite3_bind_int64(r, 1, static_cast<int64_t>(issue));
    BindTextStatic(r, 2, "host_op");
    sqlite3_bind_int64(r, 3, row);
    PYPTO_RETURN_IF_ERROR(db.Step(r));
  }
  return Status::Ok();
}

Status WriteIssues(Db& db, const DiagnosticReport& diagnosis, SqliteExportStats* stats) {
  StatusOr<sqlite3_stmt*> s = db.Prepare(pypto_db::InsertSql("issues"));
  StatusOr<sqlite3_stmt*> m = db.Prepare(pypto_db::InsertSql("issue_metrics"));
  StatusOr<sqlite3_stmt*> r = db.Prepare(pypto_db::InsertSql("issue_rows"));
  if (!s.ok()) return s.status();
  if (!m.ok()) return m.status();
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < diagnosis.issues.size(); ++i) {
    const Issue& is = diagnosis.issues[i];
    sqlite3_bind_int64(*s, 1, static_cast<int64_t>(i));
    BindTextStatic(*s, 2, IssueTypeName(is.type));
    BindTextStatic(*s, 3, SeverityName(is.severity));
    BindText(*s, 4, is.op_name);
    BindText(*s, 5, is.op_type);
    BindText(*s, 6, is.phase);
    BindText(*s, 7, is.detail);
    sqlite3_bind_int64(*s, 8, is.affected_ns);
    BindReal(*s, 9, is.affected_share);
    sqlite3_bind_int64(*s, 10, is.saved_ns);
    BindTextStatic(*s, 11, SavingMethodName(is.method));
    BindText(*s, 12, is.saving_formula);
    sqlite3_bind_int64(*s, 13, static_cast<int64_t>(is.evidence.count));
    sqlite3_bind_int64(*s, 14, is.evidence.total_ns);
    BindReal(*s, 15, is.compute_ratio);
    BindReal(*s, 16, is.memory_ratio);
    PYPTO_RETURN_IF_ERROR(db.Step(*s));
    ++stats->issues;
    PYPTO_RETURN_IF_ERROR(WriteIssueEvidence(db, *m, *r, i, is));
  }
  return Status::Ok();
}

Status WriteRecommendations(Db& db, const DiagnosticReport& diagnosis) {
  bool available = false;
  const std::vector<ReportRecommendation> recs = CollectRecommendations(diagnosis, &available);
  StatusOr<sqlite3_stmt*> rc = db.Prepare(pypto_db::InsertSql("recommendations"));
  if (!rc.ok()) return rc.status();
  for (size_t i = 0; i < recs.size(); ++i) {
    sqlite3_bind_int64(*rc, 1, static_cast<int64_t>(i));
    BindText(*rc, 2, recs[i].hotspot_type);
    BindText(*rc, 3, recs[i].title);
    BindText(*rc, 4, recs[i].description);
    BindText(*rc, 5, recs[i].action);
    BindText(*rc, 6, recs[i].code);
    BindReal(*rc, 7, recs[i].estimated_speedup);
    PYPTO_RETURN_IF_ERROR(db.Step(*rc));
  }
  return Status::Ok();
}

// One transaction: schema, the profile model, the findings, then the indexes.
Status WriteAll(Db& db, const OperatorCallGraph& graph, const DiagnosticReport* diagnosis, SqliteExportStats* stats) {
  const Profile& p = graph.profile();
  PYPTO_RETURN_IF_ERROR(BeginSchema(db));
  const OpClassification classes = ClassifyProfile(p, graph, OpClassifier::Builtin());
  PYPTO_RETURN_IF_ERROR(WriteMeta(db, p, diagnosis));
  PYPTO_RETURN_IF_ERROR(WriteStrings(db, p));
  PYPTO_RETURN_IF_ERROR(WriteTracks(db, p, stats));
  PYPTO_RETURN_IF_ERROR(WriteDevices(db, p));
  PYPTO_RETURN_IF_ERROR(WriteHostOps(db, graph, classes, stats));
  PYPTO_RETURN_IF_ERROR(WriteDeviceTasks(db, graph, classes, stats));
  PYPTO_RETURN_IF_ERROR(WriteAttributes(db, p));
  PYPTO_RETURN_IF_ERROR(WriteGraphSteps(db, graph, stats));
  PYPTO_RETURN_IF_ERROR(WriteProfileSteps(db, p));
  PYPTO_RETURN_IF_ERROR(WriteFlows(db, p));
  PYPTO_RETURN_IF_ERROR(WriteCounters(db, p));
  PYPTO_RETURN_IF_ERROR(WriteDataLoss(db, p));
  PYPTO_RETURN_IF_ERROR(WriteNotes(db, p, diagnosis));
  if (diagnosis) {
    PYPTO_RETURN_IF_ERROR(WriteIssues(db, *diagnosis, stats));
    PYPTO_RETURN_IF_ERROR(WriteRecommendations(db, *diagnosis));
  }
  PYPTO_RETURN_IF_ERROR(db.Exec(kIndexSql));
  return db.Exec("COMMIT");
}

}  // namespace

StatusOr<SqliteExportStats> ExportSqlite(const OperatorCallGraph& graph, const DiagnosticReport* diagnosis,
                                         const std::string& path, bool overwrite) {
  SqliteExportStats stats;
  PYPTO_RETURN_IF_ERROR(io::WriteOutputFile(path, overwrite, [&](int, const std::string& temp) {
    Db db;
    Status written = db.Open(temp);
    if (written.ok()) written = WriteAll(db, graph, diagnosis, &stats);
    if (written.ok()) written = db.Close();
    return written.ok() ? written : Status(written.code(), path + ": " + written.message());
  }));
  return stats;
}

}  // namespace pypto::report
