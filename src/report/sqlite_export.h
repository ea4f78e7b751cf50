// `pypto export-sqlite`: the profile model and the findings as SQLite tables
// (also pypto's own saved profile format, read back by importers/pypto_db)
// (docs/sqlite-schema.md documents every table and gives example queries).
// Written through the SQLite C API with prepared statements inside one
// transaction, into a temporary file renamed into place.
#pragma once

#include <string>

#include "analysis/diagnostic_report.h"
#include "core/status.h"
#include "graph/call_graph.h"
#include "importers/pypto_db/pypto_db_format.h"

namespace pypto::report {

// Value of meta.schema_version and meta.schema; defined with the importer
// that reads the file back (pypto's saved profile format).
inline constexpr int kSqliteSchemaVersion = pypto_db::kSchemaVersion;
inline constexpr std::string_view kSqliteSchemaName = pypto_db::kSchemaName;

struct SqliteExportStats {
  uint64_t tracks = 0;
  uint64_t host_ops = 0;
  uint64_t device_tasks = 0;
  uint64_t steps = 0;
  uint64_t issues = 0;
};

// `diagnosis` may be null (no issues tables filled). Refuses an existing
// `path` unless `overwrite`.
StatusOr<SqliteExportStats> ExportSqlite(const OperatorCallGraph& graph, const DiagnosticReport* diagnosis,
                                         const std::string& path, bool overwrite);

}  // namespace pypto::report
