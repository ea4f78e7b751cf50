#include <gtest/gtest.h>

#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "unit/parse_threads_env.h"
#include "importers/common/sqlite_input.h"

namespace pypto::sqlite_input {
namespace {

// An in-memory database made by `sql`.
DbHandle MemoryDb(const std::string& sql) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
  DbHandle db(raw);
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  return db;
}

// An in-memory database with a table of `rows` rows.
DbHandle MemoryDbWithRows(int rows) {
  std::string sql = "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER);";
  for (int i = 0; i < rows; ++i) sql += "INSERT INTO TASK VALUES(1, 2);";
  return MemoryDb(sql);
}

TEST(RowCountHint, CountsTheRowsUpToWhatTheFileCouldHold) {
  DbHandle db = MemoryDbWithRows(5);
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 1u << 20), 5u);
  // A 48-byte file holds at most 48 / kMinStoredRowBytes (16) = 3 rows.
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 48), 3u);
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 0), 0u);
}

TEST(RowCountHint, ReadsTheLargestRowidOrCountsATableWithoutRowid) {
  // Rows 1..5 with 2 and 3 deleted: the largest rowid (5) stands for the
  // rows, an over-estimate that only reserves room.
  DbHandle db = MemoryDbWithRows(5);
  ASSERT_EQ(sqlite3_exec(db.get(), "DELETE FROM TASK WHERE rowid IN (2, 3)", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(LargestRowid(db.get(), "t.db", "TASK").value(), 5u);
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 1u << 20), 5u);
  // A table without rowid is counted: 3 rows.
  DbHandle keyed = MemoryDb(
      "CREATE TABLE K(id INTEGER PRIMARY KEY, v INTEGER) WITHOUT ROWID;"
      "INSERT INTO K VALUES(10, 1); INSERT INTO K VALUES(20, 2); INSERT INTO K VALUES(30, 3);");
  const StatusOr<uint64_t> no_rowid = LargestRowid(keyed.get(), "t.db", "K");
  ASSERT_FALSE(no_rowid.ok());
  EXPECT_NE(no_rowid.status().message().find("t.db: table K: no rowid"), std::string::npos)
      << no_rowid.status().message();
  EXPECT_EQ(RowCountHint(keyed.get(), "K", 1u << 20), 3u);
  // Empty, and a table that is not there.
  DbHandle empty = MemoryDbWithRows(0);
  EXPECT_EQ(RowCountHint(empty.get(), "TASK", 1u << 20), 0u);
  EXPECT_EQ(RowCountHint(empty.get(), "MISSING", 1u << 20), 0u);
}

TEST(RowCountHint, IsZeroForAnEmptyOrMissingTable) {
  DbHandle db = MemoryDbWithRows(0);
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 1u << 20), 0u);
  EXPECT_EQ(RowCountHint(db.get(), "NO_SUCH_TABLE", 1u << 20), 0u);
  EXPECT_EQ(RowCountHint(db.get(), "bad\"name", 1u << 20), 0u);
}

TEST(CountRows, CountsOrNamesTheTableThatCannotBeCounted) {
  DbHandle db = MemoryDbWithRows(3);
  auto rows = CountRows(db.get(), "mem.db", "TASK");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 3u);
  auto missing = CountRows(db.get(), "mem.db", "NOPE");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "mem.db: table NOPE: no such table: NOPE");
}

// What a row handler saw of one row, as text.
std::string Describe(const Row& r, int columns) {
  std::string out = std::to_string(r.index()) + ":";
  for (int c = 0; c < columns; ++c) {
    out += " " + std::to_string(r.Type(c)) + "/" + std::to_string(r.Int(c, -7)) + "/";
    out += std::isnan(r.Real(c)) ? std::string("nan") : std::to_string(r.Real(c));
    out += "/" + std::string(r.Text(c));
  }
  return out;
}

// Runs SelectRows with PYPTO_PARSE_THREADS=`threads`; `stop_at` >= 0 makes
// the handler fail at that row.
struct Selected {
  std::vector<std::string> rows;
  Status status;
};
Selected SelectWithThreads(sqlite3* db, const char* threads, const std::vector<std::string>& columns,
                           int64_t stop_at = -1, uint64_t text_only_columns = 0) {
  testing::ScopedParseThreads env(threads);
  Selected out;
  out.status = SelectRows(
      db, "mem.db", "T", columns,
      [&](const Row& r) {
        if (static_cast<int64_t>(r.index()) == stop_at) return CorruptError("stop at " + std::to_string(stop_at));
        out.rows.push_back(Describe(r, static_cast<int>(columns.size())));
        return Status::Ok();
      },
      "", nullptr, text_only_columns);
  return out;
}

// 3000 rows (three read-ahead batches) of an integer, a real, text, a blob
// and NULLs, plus a column the table lacks: the helper thread's rows are the
// one-thread rows, an integer's text is its digits, and a handler's error
// stops both at the same row.
TEST(SelectRows, ReadAheadGivesTheOneThreadRows) {
  const DbHandle db = MemoryDb(
      "CREATE TABLE T(i INTEGER, r REAL, t TEXT, b BLOB);"
      "WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < 2999) "
      "INSERT INTO T SELECT CASE WHEN k % 7 = 0 THEN NULL ELSE k * 1000000007 END, k / 4.0, "
      "CASE WHEN k % 5 = 0 THEN NULL ELSE 'name' || k END, x'00ff' FROM n");
  sqlite3* raw = db.get();
  const std::vector<std::string> columns = {"i", "r", "t", "b", "missing"};
  const Selected one = SelectWithThreads(raw, "1", columns);
  const Selected ahead = SelectWithThreads(raw, "2", columns);
  ASSERT_TRUE(one.status.ok()) << one.status.ToString();
  ASSERT_TRUE(ahead.status.ok()) << ahead.status.ToString();
  ASSERT_EQ(one.rows.size(), 3000u);
  EXPECT_EQ(ahead.rows, one.rows);
  // Row 1: i = 1000000007, r = 0.25, t = 'name1', a 2-byte blob, NULL.
  EXPECT_EQ(one.rows[1], "1: 1/1000000007/1000000007.000000/1000000007 2/0/0.250000/0.25 3/0/0.000000/name1 "
                         "4/0/0.000000/" + std::string("\0\xff", 2) + " 5/-7/nan/");
  const Selected stopped_one = SelectWithThreads(raw, "1", columns, 2500);
  const Selected stopped_ahead = SelectWithThreads(raw, "2", columns, 2500);
  EXPECT_EQ(stopped_ahead.rows.size(), 2500u);
  EXPECT_EQ(stopped_ahead.rows, stopped_one.rows);
  EXPECT_EQ(stopped_ahead.status.ToString(), stopped_one.status.ToString());
  EXPECT_EQ(stopped_ahead.status.message(), "stop at 2500");
}

// A text-only column's TEXT values keep their text and type and read 0 / NaN
// as numbers (SQLite is not asked to convert them); its other values, and
// every other column, read as without the flag. Expected: the rows of the
// plain query with the TEXT cells' integer and real parts replaced.
TEST(SelectRows, TextOnlyColumnsKeepTheTextOfTextValuesAndNothingElseChanges) {
  // startNs as torch_npu writes it (TEXT), and as other versions do (INTEGER), a NULL, a REAL; t stays plain.
  const DbHandle db = MemoryDb(
      "CREATE TABLE T(s, t TEXT);"
      "INSERT INTO T VALUES('1764246877171569640', '12abc');"
      "INSERT INTO T VALUES(1764246877171569641, '7');"
      "INSERT INTO T VALUES(NULL, NULL);"
      "INSERT INTO T VALUES(2.5, 'x');");
  sqlite3* raw = db.get();
  for (const char* threads : {"1", "2"}) {
    const Selected plain = SelectWithThreads(raw, threads, {"s", "t"});
    const Selected text_only = SelectWithThreads(raw, threads, {"s", "t"}, -1, 0b1);
    ASSERT_TRUE(text_only.status.ok()) << text_only.status.ToString();
    ASSERT_EQ(plain.rows.size(), 4u);
    EXPECT_EQ(plain.rows[0], "0: 3/1764246877171569640/1764246877171569664.000000/1764246877171569640 3/12/12.000000/12abc");
    EXPECT_EQ(text_only.rows[0], "0: 3/0/nan/1764246877171569640 3/12/12.000000/12abc") << threads;
    EXPECT_EQ(text_only.rows[1], plain.rows[1]) << threads;
    EXPECT_EQ(text_only.rows[2], plain.rows[2]) << threads;
    EXPECT_EQ(text_only.rows[3], plain.rows[3]) << threads;
  }
}

}  // namespace
}  // namespace pypto::sqlite_input
