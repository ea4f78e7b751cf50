#include "importers/common/sqlite_input.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "core/handoff_queue.h"
#include "importers/common/parse_threads.h"
#include "io/file.h"

namespace pypto::sqlite_input {
namespace {

std::string PercentEncode(const std::string& path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                 c == '.' || c == '_' || c == '-' || c == '~';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

uint32_t ApplicationId(std::string_view prefix) {
  if (!prefix.starts_with(kSqliteMagic) || prefix.size() < kApplicationIdOffset + 4) return 0;
  uint32_t id = 0;
  for (size_t i = 0; i < 4; ++i) id = (id << 8) | static_cast<unsigned char>(prefix[kApplicationIdOffset + i]);
  return id;
}

std::string RowLocation(const std::string& path, const std::string& table, uint64_t row_index) {
  return path + ": table " + table + " row " + std::to_string(row_index + 1);
}

StatusOr<DbHandle> OpenUntrusted(const std::string& path, const io::Limits& limits) {
  switch (io::GetPathKind(path)) {
    case io::PathKind::kMissing:
      return NotFoundError(path + ": no such file");
    case io::PathKind::kSymlink:
      if (!limits.follow_symlinks)
        return InvalidArgumentError(path + ": is a symbolic link (not followed by default; pass --follow-symlinks to allow)");
      break;
    case io::PathKind::kFile:
      break;
    default:
      return InvalidArgumentError(path + ": not a regular file");
  }
  // Size cap and regular-file check through the same guarded open as every input.
  { PYPTO_ASSIGN_OR_RETURN(auto source, io::OpenByteSource(path, limits)); }
  PYPTO_ASSIGN_OR_RETURN(std::string head, io::ReadPrefix(path, kSqliteMagic.size(), limits));
  if (head != kSqliteMagic)
    return UnsupportedError(path + ": byte 0: not an SQLite database (no 'SQLite format 3' header)");

  std::string uri = "file:" + PercentEncode(path) + "?mode=ro&immutable=1";
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  DbHandle db(raw);
  if (rc != SQLITE_OK)
    return IoError(path + ": cannot open as SQLite database: " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  // Untrusted file: no extensions, no functions called from schema objects, no writes.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  return db;
}

StatusOr<std::string> TruncationProblem(const std::string& path, const io::Limits& limits, uint64_t* file_bytes) {
  // Header fields used (sqlite.org/fileformat.html §1.3).
  constexpr size_t kHeaderBytes = 100, kPageSizeOffset = 16, kChangeCounterOffset = 24, kPageCountOffset = 28,
                   kVersionValidForOffset = 92;
  PYPTO_ASSIGN_OR_RETURN(auto source, io::OpenByteSource(path, limits));
  const uint64_t size = source->file_size();
  if (file_bytes) *file_bytes = size;
  PYPTO_ASSIGN_OR_RETURN(std::string head, io::ReadPrefix(path, kHeaderBytes, limits));
  if (head.size() < kHeaderBytes)
    return "byte " + std::to_string(head.size()) + ": file ends inside the 100-byte database header (truncated)";
  auto be = [&head](size_t at, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(head[at + i]);
    return v;
  };
  uint64_t page_size = be(kPageSizeOffset, 2);
  if (page_size == 1) page_size = 65536;  // the header's encoding of 64 KiB
  const bool count_valid = be(kChangeCounterOffset, 4) == be(kVersionValidForOffset, 4);
  const uint64_t pages = be(kPageCountOffset, 4);
  if (page_size < 512 || !count_valid || pages == 0) return std::string();  // no page count to check against
  if (size < pages * page_size)
    return "byte " + std::to_string(size) + ": file holds " + std::to_string(size / page_size) + " of " +
           std::to_string(pages) + " pages (truncated)";
  return std::string();
}

StatusOr<std::set<std::string>> TableNames(sqlite3* db, const std::string& path) {
  std::set<std::string> tables;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type IN ('table','view')", -1, &stmt, nullptr);
  std::unique_ptr<sqlite3_stmt, StmtCloser> guard(stmt);
  if (rc != SQLITE_OK) return CorruptError(path + ": cannot read the database schema: " + sqlite3_errmsg(db));
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(stmt, 0);
    if (t) tables.insert(reinterpret_cast<const char*>(t));
  }
  if (rc != SQLITE_DONE) return CorruptError(path + ": cannot read the database schema: " + sqlite3_errmsg(db));
  return tables;
}

StatusOr<std::set<std::string>> ColumnNames(sqlite3* db, const std::string& path, const std::string& table) {
  std::set<std::string> present;
  sqlite3_stmt* info = nullptr;
  std::string pragma = "PRAGMA table_info(\"" + table + "\")";
  if (sqlite3_prepare_v2(db, pragma.c_str(), -1, &info, nullptr) != SQLITE_OK)
    return CorruptError(path + ": table " + table + ": cannot read columns: " + sqlite3_errmsg(db));
  std::unique_ptr<sqlite3_stmt, StmtCloser> guard(info);
  int rc;
  while ((rc = sqlite3_step(info)) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(info, 1);
    if (name) present.insert(reinterpret_cast<const char*>(name));
  }
  if (rc != SQLITE_DONE) return CorruptError(path + ": table " + table + ": cannot read columns: " + sqlite3_errmsg(db));
  return present;
}

std::string_view Row::Text(int col) const {
  const Value& v = values_[col];
  if (v.type == SQLITE_NULL) return {};
  if (v.type != SQLITE_INTEGER) return {text_ + v.text_begin, v.text_size};
  if (integer_text_.size() <= static_cast<size_t>(col)) integer_text_.resize(col + 1);
  char digits[24];
  const auto written = std::to_chars(digits, digits + sizeof digits, v.integer);
  integer_text_[col].assign(digits, written.ptr);
  return integer_text_[col];
}

namespace {

// Rows of a result, their values back to back.
struct RowBatch {
  std::vector<Value> values;  // rows x columns
  std::string text;
  size_t rows = 0;
  uint64_t first_index = 0;
  bool end = false;            // no batch follows
  Status error = Status::Ok();  // what ended the rows early, after them

  void Clear() {
    values.clear();
    text.clear();
    rows = 0;
    first_index = 0;
    end = false;
    error = Status::Ok();
  }
};

// Appends the current row of `stmt` to `batch`. The type is read first:
// after a conversion SQLite's type of a value is undefined. Each value is
// taken once with sqlite3_column_value and read through sqlite3_value_*:
// every sqlite3_column_* call looks the column up and checks the
// connection's malloc state again (sqlite3ApiExit), and two or three of them
// a value were a third of stepping a 2.9 M-row PYTORCH_API. The connection is
// opened SQLITE_OPEN_NOMUTEX and only this thread steps the statement, so
// the value being "unprotected" (no mutex held) changes nothing here.
void AppendRow(sqlite3_stmt* stmt, int columns, uint64_t text_only_columns, RowBatch& batch) {
  for (int c = 0; c < columns; ++c) {
    sqlite3_value* value = sqlite3_column_value(stmt, c);
    Value v;
    v.type = sqlite3_value_type(value);
    if (v.type == SQLITE_INTEGER) {
      v.integer = sqlite3_value_int64(value);
      v.real = static_cast<double>(v.integer);  // what sqlite3_column_double gives an integer
    } else if (v.type != SQLITE_NULL) {
      if (v.type == SQLITE_TEXT && c < 64 && (text_only_columns >> c & 1) != 0) {
        v.integer = 0;
        v.real = std::numeric_limits<double>::quiet_NaN();
      } else {
        v.integer = sqlite3_value_int64(value);
        v.real = sqlite3_value_double(value);
      }
      const unsigned char* t = sqlite3_value_text(value);
      if (t) {
        v.text_begin = batch.text.size();
        v.text_size = static_cast<uint32_t>(sqlite3_value_bytes(value));
        batch.text.append(reinterpret_cast<const char*>(t), v.text_size);
      }
    }
    batch.values.push_back(v);
  }
  ++batch.rows;
}

// Steps a prepared statement on a helper thread, kReadAheadRows at a time.
class RowReadAhead {
 public:
  RowReadAhead(sqlite3* db, sqlite3_stmt* stmt, int columns, uint64_t text_only_columns, const std::string& path,
               const std::string& table)
      : db_(db), stmt_(stmt), columns_(columns), text_only_columns_(text_only_columns), path_(path), table_(table) {
    helper_ = std::thread([this] { Step(); });
  }
  ~RowReadAhead() {
    batches_.Stop();
    helper_.join();
  }

  // The next batch; the one before it goes back for reuse.
  const RowBatch& Next() {
    current_ = batches_.Pop(std::move(current_));
    return *current_;
  }

 private:
  void Step() {
    uint64_t index = 0;
    while (true) {
      std::unique_ptr<RowBatch> batch = batches_.TakeSpare();
      batch->Clear();
      batch->first_index = index;
      int rc = SQLITE_ROW;
      while (batch->rows < kReadAheadRows && batch->text.size() < kReadAheadTextBytes) {
        rc = sqlite3_step(stmt_);
        if (rc != SQLITE_ROW) break;
        AppendRow(stmt_, columns_, text_only_columns_, *batch);
        ++index;
      }
      if (rc != SQLITE_ROW) {
        batch->end = true;
        if (rc != SQLITE_DONE) batch->error = CorruptError(RowLocation(path_, table_, index) + ": " + sqlite3_errmsg(db_));
      }
      const bool end = batch->end;
      if (!batches_.Push(std::move(batch)) || end) return;
    }
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  const int columns_;
  const uint64_t text_only_columns_;
  const std::string& path_;
  const std::string& table_;
  HandoffQueue<RowBatch> batches_{kReadAheadBatches};
  std::unique_ptr<RowBatch> current_;
  std::thread helper_;  // last: starts once the members above exist
};

}  // namespace

Status SelectRows(sqlite3* db, const std::string& path, const std::string& table,
                  const std::vector<std::string>& columns, const std::function<Status(const Row&)>& on_row,
                  const std::string& tail, const std::atomic<bool>* cancel, uint64_t text_only_columns) {
  PYPTO_ASSIGN_OR_RETURN(std::set<std::string> present, ColumnNames(db, path, table));
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i) sql += ", ";
    sql += present.count(columns[i]) ? "\"" + columns[i] + "\"" : std::string("NULL");
  }
  sql += " FROM \"" + table + "\" " + tail;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    return CorruptError(path + ": table " + table + ": " + sqlite3_errmsg(db));
  std::unique_ptr<sqlite3_stmt, StmtCloser> guard(stmt);
  const int width = sqlite3_column_count(stmt);
  uint64_t index = 0;
  // One row to on_row, then the cancel check, as rows come.
  auto deliver = [&](const RowBatch& batch, size_t r) -> Status {
    PYPTO_RETURN_IF_ERROR(on_row(Row(batch.values.data() + r * width, batch.text.data(), index)));
    if (++index % kCancelCheckRows == 0 && cancel && cancel->load()) return CancelledError(path + ": import cancelled");
    return Status::Ok();
  };
  if (DefaultParseThreads() > 1) {
    RowReadAhead ahead(db, stmt, width, text_only_columns, path, table);  // joined before `guard` finalizes the statement
    while (true) {
      const RowBatch& batch = ahead.Next();
      for (size_t r = 0; r < batch.rows; ++r) PYPTO_RETURN_IF_ERROR(deliver(batch, r));
      if (batch.end) return batch.error;
    }
  }
  RowBatch one;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    one.Clear();
    AppendRow(stmt, width, text_only_columns, one);
    PYPTO_RETURN_IF_ERROR(deliver(one, 0));
  }
  if (rc != SQLITE_DONE) return CorruptError(RowLocation(path, table, index) + ": " + sqlite3_errmsg(db));
  return Status::Ok();
}

namespace {

// The integer `SELECT <expression> FROM "<table>"` gives. Errors name the
// path and the table; `unprepared` heads the reason when the query does not
// prepare, `unread` says what could not be read when it does not step.
StatusOr<int64_t> TableInteger(sqlite3* db, const std::string& path, const std::string& table,
                               const std::string& expression, const std::string& unprepared,
                               const std::string& unread) {
  const std::string sql = "SELECT " + expression + " FROM \"" + table + "\"";
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    return CorruptError(path + ": table " + table + ": " + unprepared + sqlite3_errmsg(db));
  std::unique_ptr<sqlite3_stmt, StmtCloser> guard(stmt);
  if (sqlite3_step(stmt) != SQLITE_ROW)
    return CorruptError(path + ": table " + table + ": cannot " + unread + ": " + sqlite3_errmsg(db));
  return sqlite3_column_int64(stmt, 0);  // 0 for NULL
}

}  // namespace

StatusOr<uint64_t> CountRows(sqlite3* db, const std::string& path, const std::string& table) {
  PYPTO_ASSIGN_OR_RETURN(const int64_t rows, TableInteger(db, path, table, "count(*)", "", "count rows"));
  if (rows < 0) return CorruptError(path + ": table " + table + ": count(*) gave " + std::to_string(rows));
  return static_cast<uint64_t>(rows);
}

StatusOr<uint64_t> LargestRowid(sqlite3* db, const std::string& path, const std::string& table) {
  PYPTO_ASSIGN_OR_RETURN(const int64_t largest,
                         TableInteger(db, path, table, "max(rowid)", "no rowid: ", "read the largest rowid"));
  return static_cast<uint64_t>(std::max<int64_t>(largest, 0));  // 0 for an empty table (NULL)
}

uint64_t RowCountHint(sqlite3* db, const std::string& table, uint64_t file_bytes) {
  // The largest rowid first: one walk down the b-tree, where count(*) reads
  // every leaf page (0.3 s of CPU for the 5.5 M rows of a 1 M-task DB's three
  // big tables). A profiler writes its tables once, so the two agree within
  // a few rows there (CANN_API: 1,645,750 against 1,645,488 rows).
  StatusOr<uint64_t> rows = LargestRowid(db, "", table);
  if (!rows.ok()) rows = CountRows(db, "", table);  // a WITHOUT ROWID table
  if (!rows.ok()) return 0;
  return std::min<uint64_t>(*rows, file_bytes / kMinStoredRowBytes);
}

}  // namespace pypto::sqlite_input
