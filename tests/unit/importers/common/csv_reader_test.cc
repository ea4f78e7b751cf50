#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "importers/common/csv_reader.h"
#include "importers/common/csv_values.h"

namespace pypto::csv {
namespace {

// Feeds text to the reader in chunks of `chunk` bytes, so that records and
// quotes straddle read boundaries.
class ChunkedSource final : public io::ByteSource {
 public:
  ChunkedSource(std::string text, size_t chunk) : text_(std::move(text)), chunk_(chunk) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = std::min({capacity, chunk_, text_.size() - pos_});
    std::memcpy(buffer, text_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t raw_bytes_consumed() const override { return pos_; }
  uint64_t file_size() const override { return text_.size(); }
  io::Compression compression() const override { return io::Compression::kNone; }
  const std::string& path() const override { return name_; }

 private:
  std::string text_;
  size_t chunk_;
  size_t pos_ = 0;
  std::string name_ = "mem.csv";
};

struct Parsed {
  std::vector<std::vector<std::string>> rows;
  std::vector<uint64_t> lines;
  Status status;
  bool last_unterminated = false;
  bool last_missing_newline = false;
};

Parsed ParseAll(const std::string& text, size_t chunk = 1 << 20, ReaderOptions options = {}) {
  Parsed out;
  CsvReader reader(std::make_unique<ChunkedSource>(text, chunk), "mem.csv", options);
  while (true) {
    auto more = reader.Next();
    if (!more.ok()) {
      out.status = more.status();
      break;
    }
    if (!*more) break;
    out.rows.emplace_back(reader.fields().begin(), reader.fields().end());
    out.lines.push_back(reader.line());
    out.last_unterminated = reader.unterminated_quote();
    out.last_missing_newline = reader.missing_final_newline();
  }
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

TEST(CsvReader, QuotedFieldsWithDoubledQuotesCommasAndNewlines) {
  const std::string text =
      "a,b,c\n"
      "1,\"x,y\",\"say \"\"hi\"\"\"\n"
      "2,\"line1\nline2\",end\n";
  for (size_t chunk : {1, 2, 3, 7, 1 << 20}) {
    Parsed p = ParseAll(text, chunk);
    ASSERT_TRUE(p.status.ok()) << p.status.ToString();
    EXPECT_EQ(p.rows, (Rows{{"a", "b", "c"}, {"1", "x,y", "say \"hi\""}, {"2", "line1\nline2", "end"}}))
        << "chunk " << chunk;
    EXPECT_EQ(p.lines, (std::vector<uint64_t>{1, 2, 3}));
  }
}

TEST(CsvReader, AscendShapeCellKeepsInnerQuotesUntilNormalized) {
  // Raw kernel_details cell: """151936,1024;1,4096;1""" (pta_level2_llm_cann83).
  Parsed p = ParseAll("Input Shapes,T\n\"\"\"151936,1024;1,4096;1\"\"\",DT_BF16\n");
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(p.rows[1][0], "\"151936,1024;1,4096;1\"");
  EXPECT_EQ(NormalizeListCell(p.rows[1][0]), "151936,1024;1,4096;1");
  EXPECT_EQ(NormalizeListCell("FORMAT_ND;NCHW;FORMAT_FRACTAL_NZ", true), "ND;NCHW;FRACTAL_NZ");
}

TEST(CsvReader, CrlfBomAndTrailingTab) {
  const std::string text = "\xEF\xBB\xBFStart Time(us),Duration(us)\r\n1736408883704643.212\t,53.741\r\n";
  for (size_t chunk : {1, 2, 5, 1 << 20}) {
    Parsed p = ParseAll(text, chunk);
    ASSERT_TRUE(p.status.ok());
    EXPECT_EQ(p.rows, (Rows{{"Start Time(us)", "Duration(us)"}, {"1736408883704643.212", "53.741"}}));
    EXPECT_FALSE(p.last_missing_newline);
  }
  // Quoted timestamp with the TAB inside the quotes (pta_advisor_ut_llm_matmul_fa).
  Parsed q = ParseAll("\"1736413971558972.912\t\",1\n");
  EXPECT_EQ(q.rows[0][0], "1736413971558972.912");
  // Trimming can be turned off.
  ReaderOptions raw;
  raw.trim_whitespace = false;
  Parsed r = ParseAll("a\t,b\n", 1 << 20, raw);
  EXPECT_EQ(r.rows[0][0], "a\t");
}

TEST(CsvReader, BlankLinesSkippedEmptyCellsKept) {
  Parsed p = ParseAll("a,,c\n\n\r\n,\n");
  EXPECT_EQ(p.rows, (Rows{{"a", "", "c"}, {"", ""}}));
  EXPECT_EQ(p.lines, (std::vector<uint64_t>{1, 4}));
}

TEST(CsvReader, TruncatedLastRecordIsFlagged) {
  Parsed p = ParseAll("a,b,c\n1,2,3\n4,\"5");
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_EQ(p.rows[2], (std::vector<std::string>{"4", "5"}));
  EXPECT_TRUE(p.last_unterminated);
  EXPECT_TRUE(p.last_missing_newline);
  EXPECT_EQ(p.lines[2], 3u);
}

TEST(CsvReader, OverlongRecordIsAClearError) {
  ReaderOptions options;
  options.max_record_bytes = 64;
  std::string text = "h\nshort\n\"" + std::string(200, 'x') + "\n";
  Parsed p = ParseAll(text, 16, options);
  ASSERT_FALSE(p.status.ok());
  EXPECT_EQ(p.status.code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(p.status.message(), "mem.csv: line 3: record longer than 64 bytes (unbalanced quote or not a CSV file?)");
  EXPECT_EQ(p.rows.size(), 2u);
}

TEST(CsvReader, EmptyInputHasNoRecords) {
  Parsed p = ParseAll("");
  EXPECT_TRUE(p.status.ok());
  EXPECT_TRUE(p.rows.empty());
}

TEST(CsvValues, Doubles) {
  EXPECT_EQ(ParseDouble("0.052"), 0.052);
  EXPECT_FALSE(ParseDouble("abc"));
  EXPECT_TRUE(IsAbsent("N/A"));
  EXPECT_FALSE(IsAbsent("0"));
}

}  // namespace
}  // namespace pypto::csv
