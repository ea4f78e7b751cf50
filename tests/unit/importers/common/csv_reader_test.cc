#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
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

// `read_ahead_batch` > 0: after the first record, the rest is read ahead in
// batches of that many bytes (CsvReader::StartReadAhead).
Parsed ParseAll(const std::string& text, size_t chunk = 1 << 20, ReaderOptions options = {},
                size_t read_ahead_batch = 0) {
  Parsed out;
  CsvReader reader(std::make_unique<ChunkedSource>(text, chunk), "mem.csv", options);
  while (true) {
    if (read_ahead_batch > 0 && out.rows.size() == 1) reader.StartReadAhead({.batch_bytes = read_ahead_batch});
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

// Every input of the tests above, read ahead in batches of 1 byte (a record
// per batch), 5 bytes and 1 MiB, from reads of 1, 3 and 1 MiB bytes: the same
// records, lines, flags and errors as reading on one thread.
TEST(CsvReader, ReadAheadGivesTheOneThreadResult) {
  const std::string long_record = "h\nshort\n\"" + std::string(200, 'x') + "\n";
  const std::vector<std::string> texts = {
      "a,b,c\n1,\"x,y\",\"say \"\"hi\"\"\"\n2,\"line1\nline2\",end\n",
      "\xEF\xBB\xBFStart Time(us),Duration(us)\r\n1736408883704643.212\t,53.741\r\n",
      "a,,c\n\n\r\n,\n",
      "a,b,c\n1,2,3\n4,\"5",
      "",
      "h\n",
      long_record,
  };
  ReaderOptions options;
  options.max_record_bytes = 64;
  for (const std::string& text : texts) {
    for (size_t chunk : {1, 3, 1 << 20}) {
      const Parsed one = ParseAll(text, chunk, options);
      for (size_t batch : {1, 5, 1 << 20}) {
        const Parsed ahead = ParseAll(text, chunk, options, batch);
        const std::string where = "text " + std::to_string(&text - texts.data()) + " chunk " + std::to_string(chunk) +
                                  " batch " + std::to_string(batch);
        EXPECT_EQ(ahead.rows, one.rows) << where;
        EXPECT_EQ(ahead.lines, one.lines) << where;
        EXPECT_EQ(ahead.status.ToString(), one.status.ToString()) << where;
        EXPECT_EQ(ahead.last_unterminated, one.last_unterminated) << where;
        EXPECT_EQ(ahead.last_missing_newline, one.last_missing_newline) << where;
      }
    }
  }
  // Spelled out for two of them, so that a fault shared by both paths shows too.
  const Parsed cut = ParseAll(texts[3], 1, options, 1);
  EXPECT_EQ(cut.rows, (Rows{{"a", "b", "c"}, {"1", "2", "3"}, {"4", "5"}}));
  EXPECT_EQ(cut.lines, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(cut.last_unterminated);
  const Parsed too_long = ParseAll(long_record, 16, options, 5);
  EXPECT_EQ(too_long.rows, (Rows{{"h"}, {"short"}}));
  EXPECT_EQ(too_long.status.message(), "mem.csv: line 3: record longer than 64 bytes (unbalanced quote or not a CSV file?)");
}

// Random text of the kinds NextRecord treats apart: plain cells, spaces and
// TABs around them, quoted cells with commas, doubled quotes, LF and CR
// inside, quotes inside unquoted cells, text after a closing quote, LF, CRLF
// and lone CR line ends, blank lines, records near the length limit, and a
// last record cut short. Read ahead (which splits plain records in its
// buffer, CsvReader::ReadAhead::SplitBuffered) must give what one thread
// reading byte by byte gives, for every read size that moves the records
// across buffer ends.
std::string RandomCsv(std::mt19937& rng, size_t records) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto plain = [&] {
    static constexpr char kLetters[] = "ab01.x;DT_";
    std::string out;
    for (int i = pick(9); i > 0; --i) out.push_back(kLetters[pick(sizeof(kLetters) - 1)]);
    return out;
  };
  std::string text = "h1,h2,h3\n";
  for (size_t r = 0; r < records; ++r) {
    if (pick(40) == 0) text += pick(2) ? "\n" : "\r\n";  // a blank line
    const int cells = 1 + pick(6);
    for (int c = 0; c < cells; ++c) {
      if (c > 0) text.push_back(',');
      switch (pick(12)) {
        case 0: text += " " + plain() + "\t"; break;
        case 1: text += "\"" + plain() + "," + plain() + "\""; break;
        case 2: text += "\"\"\"" + plain() + ";" + plain() + "\"\"\""; break;  // Ascend shape cell
        case 3: text += "\"\""; break;
        case 4: if (pick(4) == 0) text += "\"a\nb\""; else text += "\"a\rb\""; break;
        case 5: if (pick(3) == 0) text += plain() + "\"" + plain(); else text += plain(); break;
        case 6: if (pick(3) == 0) text += "\"" + plain() + "\"" + plain(); else text += plain(); break;
        case 7: text += "\" " + plain() + " \""; break;
        case 8: text += std::string(static_cast<size_t>(20 + pick(60)), 'y'); break;
        default: text += plain(); break;
      }
    }
    switch (pick(10)) {
      case 0: text += "\r\n"; break;
      case 1: text += "\r"; break;
      default: text += "\n"; break;
    }
  }
  if (pick(2)) text += "cut,\"shor";  // the last record cut inside quotes
  return text;
}

TEST(CsvReader, ReadAheadGivesTheOneThreadResultOnRandomText) {
  std::mt19937 rng(20261206);
  size_t records_read = 0;
  for (int round = 0; round < 12; ++round) {
    const std::string text = RandomCsv(rng, 400);
    ReaderOptions options;
    options.max_record_bytes = round % 3 == 0 ? 96 : kMaxRecordBytes;  // some records over the limit
    for (size_t chunk : {size_t{1} << 20, size_t{4093}, size_t{61}, size_t{17}}) {
      const Parsed one = ParseAll(text, chunk, options);
      for (size_t batch : {size_t{1} << 20, size_t{300}}) {
        const Parsed ahead = ParseAll(text, chunk, options, batch);
        const std::string where = "round " + std::to_string(round) + " chunk " + std::to_string(chunk) + " batch " +
                                  std::to_string(batch);
        ASSERT_EQ(ahead.rows, one.rows) << where;
        EXPECT_EQ(ahead.lines, one.lines) << where;
        EXPECT_EQ(ahead.status.ToString(), one.status.ToString()) << where;
        EXPECT_EQ(ahead.last_unterminated, one.last_unterminated) << where;
        EXPECT_EQ(ahead.last_missing_newline, one.last_missing_newline) << where;
        records_read += ahead.rows.size();
      }
    }
  }
  EXPECT_GT(records_read, 12u * 8 * 100);  // the generator makes records, not only errors
}

// Cells a record split in the buffer gives, spelled out: trimmed plain cells,
// quoted commas, undoubled quotes, empty quoted cells, CRLF. Every record is
// checked: the last ones (within 64 bytes of the end of the read) are
// NextRecord's, the others the in-buffer split's.
TEST(CsvReader, ReadAheadSplitsPlainRecordsAsWritten) {
  std::string text = "h\n";
  for (int i = 0; i < 50; ++i) text += " a\t,\"x,y\",\"\"\"8,1;3\"\"\",\"\",\" q \"\r\n";
  const Parsed ahead = ParseAll(text, 1 << 20, {}, 1 << 20);
  ASSERT_TRUE(ahead.status.ok());
  ASSERT_EQ(ahead.rows.size(), 51u);
  for (size_t r = 1; r < ahead.rows.size(); ++r) {
    EXPECT_EQ(ahead.rows[r], (std::vector<std::string>{"a", "x,y", "\"8,1;3\"", "", "q"})) << "record " << r;
    EXPECT_EQ(ahead.lines[r], r + 1) << "record " << r;
  }
}

// Test preparation: tag 1 and the number for a number, tag 2 for other text.
PreparedCell PrepareForTest(std::string_view cell) {
  auto number = ParseDouble(cell);
  PreparedCell out;
  out.tag = number ? 1 : 2;
  if (number) out.number = *number;
  return out;
}

TEST(CsvReader, ReadAheadPreparesTheNamedColumnsOfFullRecords) {
  const std::string text = "n,name,v\n1,x,2.50\n1,y,abc\n5\n7,z,8\n";
  CsvReader reader(std::make_unique<ChunkedSource>(text, 4), "mem.csv");
  ASSERT_TRUE(*reader.Next());  // the header, before read ahead
  EXPECT_EQ(reader.prepared(0), nullptr);
  reader.StartReadAhead({.prepared_columns = {0, 2, -1}, .prepare = PrepareForTest, .batch_bytes = 6});
  EXPECT_EQ(reader.prepared(0), nullptr);  // no record read ahead yet

  ASSERT_TRUE(*reader.Next());  // 1,x,2.50
  ASSERT_NE(reader.prepared(0), nullptr);
  EXPECT_EQ(reader.prepared(0)->tag, 1);
  EXPECT_EQ(reader.prepared(0)->number, 1.0);
  EXPECT_EQ(reader.prepared(1), nullptr);  // not a prepared column
  EXPECT_EQ(reader.prepared(2)->number, 2.5);
  EXPECT_EQ(reader.prepared(9), nullptr);

  ASSERT_TRUE(*reader.Next());  // 1,y,abc: "1" repeats the cell above
  EXPECT_EQ(reader.prepared(0)->number, 1.0);
  EXPECT_EQ(reader.prepared(2)->tag, 2);
  EXPECT_TRUE(std::isnan(reader.prepared(2)->number));

  ASSERT_TRUE(*reader.Next());  // 5: too short for column 2, so nothing is prepared
  EXPECT_EQ(reader.fields().size(), 1u);
  EXPECT_EQ(reader.prepared(0), nullptr);

  ASSERT_TRUE(*reader.Next());  // 7,z,8
  EXPECT_EQ(reader.prepared(0)->number, 7.0);
  EXPECT_EQ(reader.prepared(2)->number, 8.0);
  EXPECT_EQ(reader.line(), 5u);
  EXPECT_FALSE(*reader.Next());
  EXPECT_EQ(reader.bytes_consumed(), text.size());
  EXPECT_EQ(reader.file_size(), text.size());
}

// A caller that stops early (an error, a cancel) leaves the helper waiting for
// room in the queue: letting the reader go must stop and join it.
TEST(CsvReader, ReadAheadStopsWhenTheReaderIsDroppedEarly) {
  std::string text = "h\n";
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + ",x\n";
  for (int round = 0; round < 20; ++round) {
    CsvReader reader(std::make_unique<ChunkedSource>(text, 1 << 10), "mem.csv");
    ASSERT_TRUE(*reader.Next());
    reader.StartReadAhead({.batch_bytes = 64});
    ASSERT_TRUE(*reader.Next());
    EXPECT_EQ(reader.fields()[0], "0");
  }
}

TEST(CsvValues, Doubles) {
  EXPECT_EQ(ParseDouble("0.052"), 0.052);
  EXPECT_FALSE(ParseDouble("abc"));
  EXPECT_TRUE(IsAbsent("N/A"));
  EXPECT_FALSE(IsAbsent("0"));
}

}  // namespace
}  // namespace pypto::csv
