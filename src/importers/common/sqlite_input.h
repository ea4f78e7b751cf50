// Opening an SQLite file that came from a user (a profiler database, a saved
// pypto profile) and reading its rows. Shared by the SQLite importers so that
// every one opens untrusted files the same way: the guarded io:: checks first
// (no symlink following unless asked, size cap, regular file), then SQLite
// read-only with the immutable URI flag, extensions off, schema functions
// untrusted, defensive mode on.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/limits.h"
#include "model/profile.h"

namespace pypto::sqlite_input {

// The 16-byte header every SQLite 3 database file starts with (sqlite.org/fileformat.html §1.3).
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
// Byte offset and size of the big-endian "Application ID" in the database
// header (sqlite.org/fileformat.html §1.3.15; set with PRAGMA application_id).
inline constexpr size_t kApplicationIdOffset = 68;
// Check for cancellation every this many rows.
inline constexpr uint64_t kCancelCheckRows = 65536;

// The application id in a database header (first bytes of the file), or 0 when
// the prefix is not an SQLite header or too short.
uint32_t ApplicationId(std::string_view prefix);

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

// Opens `path` for reading as described at the top. Errors name the path and
// the reason (missing, symlink, not a regular file, too large, not SQLite).
StatusOr<DbHandle> OpenUntrusted(const std::string& path, const io::Limits& limits);

// Where the database file ends short of what its header promises: the header
// (sqlite.org/fileformat.html §1.3) gives the page size (offset 16) and, when
// valid (change counter at 24 equals the version-valid-for number at 92), the
// page count (offset 28). Returns "" for a whole file, else the reason with
// its byte place ("byte 8192: file holds 2 of 8 pages (truncated)"). SQLite
// reads a cut file without complaint until a query touches a missing page,
// so a reader that wants to count the loss asks here first.
StatusOr<std::string> TruncationProblem(const std::string& path, const io::Limits& limits);

// Names of the tables and views of an open database.
StatusOr<std::set<std::string>> TableNames(sqlite3* db, const std::string& path);
// Column names of `table`.
StatusOr<std::set<std::string>> ColumnNames(sqlite3* db, const std::string& path, const std::string& table);

// One row of a query, with helpers that hide NULLs.
class Row {
 public:
  Row(sqlite3_stmt* stmt, uint64_t index) : stmt_(stmt), index_(index) {}
  int Type(int col) const { return sqlite3_column_type(stmt_, col); }
  bool IsNull(int col) const { return Type(col) == SQLITE_NULL; }
  bool IsInteger(int col) const { return Type(col) == SQLITE_INTEGER; }
  bool IsText(int col) const { return Type(col) == SQLITE_TEXT; }
  int64_t Int(int col, int64_t if_null = kNoId) const {
    return IsNull(col) ? if_null : sqlite3_column_int64(stmt_, col);
  }
  double Real(int col) const {
    return IsNull(col) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(stmt_, col);
  }
  std::string_view Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    if (!t) return {};
    return {reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
  }
  uint64_t index() const { return index_; }  // 0-based position in the result

 private:
  sqlite3_stmt* stmt_;
  uint64_t index_;
};

// Runs SELECT `columns` FROM `table` `tail` and calls `on_row` for each row;
// wanted columns the table lacks read as NULL (schemas differ across
// versions). Stops at the first error of `on_row`, and with kCancelled when
// `cancel` is set. Errors name the path, the table and the row.
Status SelectRows(sqlite3* db, const std::string& path, const std::string& table,
                  const std::vector<std::string>& columns, const std::function<Status(const Row&)>& on_row,
                  const std::string& tail = "", const std::atomic<bool>* cancel = nullptr);

// Bytes a stored row takes at least, for capping RowCountHint: an SQLite
// record header plus two 8-byte epoch-ns integers (start and end), which every
// row an importer keeps has.
inline constexpr uint64_t kMinStoredRowBytes = 16;

// Rows of `table`: SELECT count(*), which walks the table's b-tree pages
// (about 20 ms per million rows). Errors name the path and the table.
StatusOr<uint64_t> CountRows(sqlite3* db, const std::string& path, const std::string& table);

// CountRows, capped at `file_bytes` / kMinStoredRowBytes
// so a damaged count cannot ask for more than the file could hold; 0 when the
// count fails (a cut file). For reserving columns before a long read: a hint,
// never trusted as the number of rows read.
uint64_t RowCountHint(sqlite3* db, const std::string& table, uint64_t file_bytes);

// "<path>: table <table> row <1-based row>"
std::string RowLocation(const std::string& path, const std::string& table, uint64_t row_index);

}  // namespace pypto::sqlite_input
