// Identity of pypto's own saved profile: the SQLite file `pypto export-sqlite`
// writes (report/sqlite_export.cc) and the "pypto" importer reads back
// (docs/sqlite-schema.md, docs/formats/pypto-db.md). Kept apart from both so
// the writer, the reader and the Ascend sniffer agree on one definition.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace pypto::pypto_db {

// meta.schema_version; bump on any incompatible table change. 2 added the raw
// model tables (profile_steps with the Ascend step breakdown, flows, counters)
// and the Ascend detail columns of device_tasks, so that a saved profile
// reproduces every figure of the original.
inline constexpr int kSchemaVersion = 2;
// meta.schema value: "pypto.sqlite/<version>".
inline constexpr std::string_view kSchemaName = "pypto.sqlite/2";
inline constexpr std::string_view kSchemaNamePrefix = "pypto.sqlite/";
// Oldest schema the importer reads (1 lacks flows, counters and the step
// breakdown: those come back empty, with a note).
inline constexpr int kOldestReadableSchemaVersion = 1;
// SQLite header application id (PRAGMA application_id, bytes 68..71 of the
// file): ASCII "PYPT". Lets a sniffer that sees only the first bytes tell a
// saved pypto profile from other SQLite files (Ascend profiler databases
// leave it 0).
inline constexpr uint32_t kApplicationId = 0x50595054;

// ---------------------------------------------------------------- schema
// Every table of the saved profile, declared once: the writer
// (report/sqlite_export.cc) creates the tables from this list, in this column
// order, and the reader refuses to ask for a column it does not declare. Types
// are SQLite column definitions; docs/sqlite-schema.md describes each column.
struct Column {
  std::string_view name;
  std::string_view definition;  // "INTEGER NOT NULL", "TEXT", "INTEGER PRIMARY KEY"
};
struct TableSchema {
  std::string_view name;
  std::span<const Column> columns;
  bool Has(std::string_view column) const {
    for (const Column& c : columns)
      if (c.name == column) return true;
    return false;
  }
};

inline constexpr Column kMetaColumns[] = {
    {"key", "TEXT PRIMARY KEY"},
    {"value", "TEXT NOT NULL"}};
inline constexpr Column kStringsColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"value", "TEXT NOT NULL"}};
inline constexpr Column kTracksColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"pid", "TEXT"},
    {"tid", "TEXT"},
    {"name", "TEXT"},
    {"process_name", "TEXT"},
    {"kind", "TEXT NOT NULL"},
    {"device", "INTEGER"},
    {"stream", "INTEGER"}};
inline constexpr Column kDevicesColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"idx", "INTEGER NOT NULL"},
    {"kind", "TEXT NOT NULL"},
    {"name", "TEXT"}};
inline constexpr Column kHostOpsColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"name_id", "INTEGER NOT NULL"},
    {"category_id", "INTEGER NOT NULL"},
    {"kind", "TEXT NOT NULL"},
    {"track", "INTEGER NOT NULL"},
    {"ts", "INTEGER NOT NULL"},
    {"dur", "INTEGER NOT NULL"},
    {"self_ns", "INTEGER NOT NULL"},
    {"depth", "INTEGER"},
    {"parent", "INTEGER"},
    {"op_class", "TEXT NOT NULL"},
    {"input_dims_id", "INTEGER NOT NULL"},
    {"input_types_id", "INTEGER NOT NULL"},
    {"correlation", "INTEGER"},
    {"external_id", "INTEGER"},
    {"sequence_number", "INTEGER"}};
inline constexpr Column kDeviceTasksColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"name_id", "INTEGER NOT NULL"},
    {"category_id", "INTEGER NOT NULL"},
    {"kind", "TEXT NOT NULL"},
    {"track", "INTEGER NOT NULL"},
    {"device", "INTEGER"},
    {"stream", "INTEGER"},
    {"ts", "INTEGER NOT NULL"},
    {"dur", "INTEGER NOT NULL"},
    {"op_class", "TEXT NOT NULL"},
    {"class_source", "TEXT NOT NULL"},
    {"launcher", "INTEGER"},
    {"operator", "INTEGER"},
    {"link", "TEXT NOT NULL"},
    {"graph_launched", "INTEGER NOT NULL"},
    {"correlation", "INTEGER"},
    {"external_id", "INTEGER"},
    {"bytes", "INTEGER"},
    {"core_type_id", "INTEGER NOT NULL"},
    {"op_type_id", "INTEGER NOT NULL"},
    {"block_dim", "INTEGER"},
    {"input_shapes_id", "INTEGER NOT NULL"},
    {"grid_x", "INTEGER"},
    {"grid_y", "INTEGER"},
    {"grid_z", "INTEGER"},
    {"block_x", "INTEGER"},
    {"block_y", "INTEGER"},
    {"block_z", "INTEGER"},
    {"mix_block_dim", "INTEGER"},
    {"input_types_id", "INTEGER NOT NULL"},
    {"input_formats_id", "INTEGER NOT NULL"},
    {"output_shapes_id", "INTEGER NOT NULL"},
    {"output_types_id", "INTEGER NOT NULL"},
    {"output_formats_id", "INTEGER NOT NULL"}};
inline constexpr Column kAttributesColumns[] = {
    {"owner_kind", "TEXT NOT NULL"},
    {"owner", "INTEGER NOT NULL"},
    {"key", "TEXT NOT NULL"},
    {"text", "TEXT"},
    {"number", "REAL"}};
inline constexpr Column kStepsColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"number", "INTEGER"},
    {"name", "TEXT"},
    {"source", "TEXT"},
    {"device", "INTEGER"},
    {"cpu_start", "INTEGER"},
    {"cpu_end", "INTEGER"},
    {"device_start", "INTEGER"},
    {"device_end", "INTEGER"},
    {"device_task_count", "INTEGER"},
    {"latency_ns", "INTEGER"}};
inline constexpr Column kProfileStepsColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"number", "INTEGER NOT NULL"},
    {"name_id", "INTEGER NOT NULL"},
    {"ts", "INTEGER"},
    {"dur", "INTEGER"},
    {"source_id", "INTEGER NOT NULL"},
    {"device", "INTEGER"},
    {"computing", "INTEGER"},
    {"communication_not_overlapped", "INTEGER"},
    {"overlapped", "INTEGER"},
    {"communication", "INTEGER"},
    {"free", "INTEGER"},
    {"stage", "INTEGER"},
    {"bubble", "INTEGER"},
    {"communication_not_overlapped_excluding_receive", "INTEGER"},
    {"preparing", "INTEGER"}};
inline constexpr Column kFlowsColumns[] = {
    {"flow_id", "INTEGER NOT NULL"},
    {"category_id", "INTEGER NOT NULL"},
    {"phase", "TEXT NOT NULL"},
    {"track", "INTEGER NOT NULL"},
    {"ts", "INTEGER NOT NULL"}};
inline constexpr Column kCountersColumns[] = {
    {"name_id", "INTEGER NOT NULL"},
    {"track", "INTEGER NOT NULL"},
    {"ts", "INTEGER NOT NULL"},
    {"value", "REAL"}};
inline constexpr Column kDataLossColumns[] = {
    {"reason", "TEXT PRIMARY KEY"},
    {"count", "INTEGER NOT NULL"},
    {"first_location", "TEXT"},
    {"kind", "TEXT"}};  // LossKindInfo::name; absent from files of earlier pypto versions
inline constexpr Column kNotesColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"source", "TEXT NOT NULL"},
    {"text", "TEXT NOT NULL"}};
inline constexpr Column kIssuesColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"type", "TEXT NOT NULL"},
    {"severity", "TEXT NOT NULL"},
    {"op_name", "TEXT"},
    {"op_type", "TEXT"},
    {"phase", "TEXT"},
    {"detail", "TEXT"},
    {"affected_ns", "INTEGER"},
    {"affected_share", "REAL"},
    {"saved_ns", "INTEGER"},
    {"method", "TEXT"},
    {"saving_formula", "TEXT"},
    {"evidence_count", "INTEGER"},
    {"evidence_total_ns", "INTEGER"},
    {"compute_ratio", "REAL"},
    {"memory_ratio", "REAL"}};
inline constexpr Column kIssueMetricsColumns[] = {
    {"issue_id", "INTEGER NOT NULL"},
    {"name", "TEXT NOT NULL"},
    {"value", "REAL"},
    {"unit", "TEXT"}};
inline constexpr Column kIssueRowsColumns[] = {
    {"issue_id", "INTEGER NOT NULL"},
    {"kind", "TEXT NOT NULL"},
    {"row", "INTEGER NOT NULL"}};
inline constexpr Column kRecommendationsColumns[] = {
    {"id", "INTEGER PRIMARY KEY"},
    {"hotspot_type", "TEXT"},
    {"title", "TEXT"},
    {"description", "TEXT"},
    {"action", "TEXT"},
    {"code", "TEXT"},
    {"estimated_speedup", "REAL"}};

inline constexpr TableSchema kTables[] = {
    {"meta", kMetaColumns},
    {"strings", kStringsColumns},
    {"tracks", kTracksColumns},
    {"devices", kDevicesColumns},
    {"host_ops", kHostOpsColumns},
    {"device_tasks", kDeviceTasksColumns},
    {"attributes", kAttributesColumns},
    {"steps", kStepsColumns},
    {"profile_steps", kProfileStepsColumns},
    {"flows", kFlowsColumns},
    {"counters", kCountersColumns},
    {"data_loss", kDataLossColumns},
    {"notes", kNotesColumns},
    {"issues", kIssuesColumns},
    {"issue_metrics", kIssueMetricsColumns},
    {"issue_rows", kIssueRowsColumns},
    {"recommendations", kRecommendationsColumns},
};

// The declared table named `name`, or null.
inline const TableSchema* FindTable(std::string_view name) {
  for (const TableSchema& t : kTables)
    if (t.name == name) return &t;
  return nullptr;
}

// "INSERT INTO <table> VALUES(?, …)" with one placeholder per declared
// column, bound by position in declaration order.
inline std::string InsertSql(std::string_view table) {
  const TableSchema* t = FindTable(table);
  std::string sql = "INSERT INTO " + std::string(table) + " VALUES(";
  for (size_t i = 0; t && i < t->columns.size(); ++i) sql += i ? ",?" : "?";
  return sql + ")";
}

// CREATE TABLE statements of every declared table.
inline std::string CreateTablesSql() {
  std::string sql;
  for (const TableSchema& t : kTables) {
    sql += "CREATE TABLE ";
    sql += t.name;
    sql += "(";
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i) sql += ", ";
      sql += t.columns[i].name;
      sql += " ";
      sql += t.columns[i].definition;
    }
    sql += ");\n";
  }
  return sql;
}

}  // namespace pypto::pypto_db
