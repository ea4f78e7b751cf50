#include <gtest/gtest.h>

#include <sqlite3.h>

#include "importers/common/sqlite_input.h"

namespace pypto::sqlite_input {
namespace {

// An in-memory database with a table of `rows` rows.
DbHandle MemoryDbWithRows(int rows) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
  DbHandle db(raw);
  EXPECT_EQ(sqlite3_exec(raw, "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  for (int i = 0; i < rows; ++i)
    EXPECT_EQ(sqlite3_exec(raw, "INSERT INTO TASK VALUES(1, 2)", nullptr, nullptr, nullptr), SQLITE_OK);
  return db;
}

TEST(RowCountHint, CountsTheRowsUpToWhatTheFileCouldHold) {
  DbHandle db = MemoryDbWithRows(5);
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 1u << 20), 5u);
  // A 48-byte file holds at most 48 / kMinStoredRowBytes (16) = 3 rows.
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 48), 3u);
  EXPECT_EQ(RowCountHint(db.get(), "TASK", 0), 0u);
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

}  // namespace
}  // namespace pypto::sqlite_input
