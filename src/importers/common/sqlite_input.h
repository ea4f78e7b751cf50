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
// so a reader that wants to count the loss asks here first. `file_bytes`, when
// given, receives the file's size from the same open.
StatusOr<std::string> TruncationProblem(const std::string& path, const io::Limits& limits,
                                        uint64_t* file_bytes = nullptr);

// Names of the tables and views of an open database.
StatusOr<std::set<std::string>> TableNames(sqlite3* db, const std::string& path);
// Column names of `table`.
StatusOr<std::set<std::string>> ColumnNames(sqlite3* db, const std::string& path, const std::string& table);

// One value of a result row as SQLite gave it: its type, and what
// sqlite3_column_int64 / _double / _text return for it (the text is kept for
// text, blob and real values; an integer's text is its decimal digits).
struct Value {
  int type = SQLITE_NULL;
  int64_t integer = 0;
  double real = 0;
  size_t text_begin = 0;  // into the text of the rows read with it
  uint32_t text_size = 0;
};

// One row of a query, with helpers that hide NULLs. Reads the values
// SelectRows took from SQLite, so it is the same whichever thread stepped the
// statement.
class Row {
 public:
  Row(const Value* values, const char* text, uint64_t index) : values_(values), text_(text), index_(index) {}
  int Type(int col) const { return values_[col].type; }
  bool IsNull(int col) const { return Type(col) == SQLITE_NULL; }
  bool IsInteger(int col) const { return Type(col) == SQLITE_INTEGER; }
  bool IsText(int col) const { return Type(col) == SQLITE_TEXT; }
  int64_t Int(int col, int64_t if_null = kNoId) const { return IsNull(col) ? if_null : values_[col].integer; }
  double Real(int col) const {
    return IsNull(col) ? std::numeric_limits<double>::quiet_NaN() : values_[col].real;
  }
  // Valid while the row is.
  std::string_view Text(int col) const;
  uint64_t index() const { return index_; }  // 0-based position in the result

 private:
  const Value* values_;
  const char* text_;
  uint64_t index_;
  mutable std::vector<std::string> integer_text_;  // by column, made when asked
};

// Rows stepped on the read-ahead thread and handed over at once.
// 1024: the hand-off costs little per row, and a batch of a dozen columns
// stays near 400 KiB.
inline constexpr size_t kReadAheadRows = 1024;
// ...or fewer when their text passes this many bytes (long names, blobs).
inline constexpr size_t kReadAheadTextBytes = 256u << 10;
// Batches the read-ahead thread may hold ready before it waits for the caller.
inline constexpr size_t kReadAheadBatches = 4;

// Runs SELECT `columns` FROM `table` `tail` and calls `on_row` for each row;
// wanted columns the table lacks read as NULL (schemas differ across
// versions). Stops at the first error of `on_row`, and with kCancelled when
// `cancel` is set. Errors name the path, the table and the row.
// When DefaultParseThreads() > 1 a helper thread steps the statement a few
// batches of rows ahead of `on_row` (SQLite's own work was a third of an
// Ascend DB import); `on_row` must then not use `db` itself. The rows, their
// order and the errors are those of stepping on one thread.
// `text_only_columns`: a bit per column (of the first 64) whose TEXT values
// the caller reads as text only; SQLite is not asked to convert them to
// integer and real, and Row::Int / Real read 0 and NaN for them. A 1 M-task
// profiler DB has 2.9 M PYTORCH_API rows whose startNs and endNs are TEXT
// (read as text, exactly), and those conversions were half of what stepping
// them cost.
Status SelectRows(sqlite3* db, const std::string& path, const std::string& table,
                  const std::vector<std::string>& columns, const std::function<Status(const Row&)>& on_row,
                  const std::string& tail = "", const std::atomic<bool>* cancel = nullptr,
                  uint64_t text_only_columns = 0);

// Bytes a stored row takes at least, for capping RowCountHint: an SQLite
// record header plus two 8-byte epoch-ns integers (start and end), which every
// row an importer keeps has.
inline constexpr uint64_t kMinStoredRowBytes = 16;

// Rows of `table`: SELECT count(*), which walks the table's b-tree pages
// (about 20 ms per million rows). Errors name the path and the table.
StatusOr<uint64_t> CountRows(sqlite3* db, const std::string& path, const std::string& table);

// The largest rowid of `table` (0 when empty): one b-tree descent. Fails for
// a table without rowid; errors name the path and the table.
StatusOr<uint64_t> LargestRowid(sqlite3* db, const std::string& path, const std::string& table);

// About the rows of `table`: its largest rowid (a table written once and
// never deleted from numbers its rows 1..N), or CountRows when it has no
// rowid; capped at `file_bytes` / kMinStoredRowBytes so a damaged number
// cannot ask for more than the file could hold; 0 when both fail (a cut
// file). For reserving columns before a long read: a hint, never trusted as
// the number of rows read.
uint64_t RowCountHint(sqlite3* db, const std::string& table, uint64_t file_bytes);

// "<path>: table <table> row <1-based row>"
std::string RowLocation(const std::string& path, const std::string& table, uint64_t row_index);

}  // namespace pypto::sqlite_input
