// A small streaming CSV reader (RFC 4180 plus the habits of real profiler
// exports). Written here rather than taken from a library: Debian ships no
// maintained C++ CSV library, and the header-only ones on the net either load
// the whole file, throw exceptions (the engine returns Status) or do not
// report line numbers for data-loss messages.
//
// Handles: quoted fields with doubled quotes, embedded commas and newlines,
// LF and CRLF line ends, a UTF-8 byte order mark, and (optionally) trims
// spaces/TABs around every cell — Ascend writers end timestamps with a literal
// TAB so that spreadsheets keep all digits. Memory stays bounded: one read
// buffer plus the current record (and, with StartReadAhead, a few batches of
// records), never the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/file.h"

namespace pypto::csv {

// Longest record accepted, in bytes (all physical lines of one record). The
// longest row of the public Ascend samples is 1354 bytes (kernel_details.csv of
// a Level1 CNN run); shape lists of huge fused ops reach a few KB. 1 MiB leaves
// ~1000x headroom and still stops a binary file, or an unbalanced quote that
// swallows the rest of a file, before it costs memory.
inline constexpr size_t kMaxRecordBytes = 1u << 20;

// Bytes asked from the source per read. 1 MiB: large enough that a read costs
// little next to parsing, small enough to not matter next to the profile.
inline constexpr size_t kReadChunkBytes = 1u << 20;

struct ReaderOptions {
  size_t max_record_bytes = kMaxRecordBytes;
  bool trim_whitespace = true;  // strip spaces/TABs/CR around each cell (after unquoting)
};

// A cell worked out on the read-ahead thread (see CsvReader::StartReadAhead):
// a number and a tag whose meaning the caller's PrepareCellFn defines.
struct PreparedCell {
  // The cell's value, unless decimal_scale >= 0: then it is given as
  // decimal_mantissa / 10^decimal_scale, as written (what a table that keeps
  // decimals stores without computing the value and finding them again).
  double number = std::numeric_limits<double>::quiet_NaN();
  int32_t decimal_mantissa = 0;
  int8_t decimal_scale = -1;
  uint8_t tag = 0;
};
using PrepareCellFn = PreparedCell (*)(std::string_view cell);

// Records handed from the read-ahead thread to the caller at a time, in bytes
// of cell text: 256 KiB (about 800 kernel_details rows), so the hand-off costs
// little per record and the batches held stay small next to the profile.
inline constexpr size_t kReadAheadBatchBytes = 256u << 10;
// Batches the read-ahead thread may hold ready before it waits for the caller:
// with the one being read and the spares, a few MiB.
inline constexpr size_t kReadAheadBatches = 4;

struct ReadAheadOptions {
  // Columns whose cells `prepare` works out on the read-ahead thread, read
  // back with CsvReader::prepared(), called on every such cell (comparing a
  // cell with the one above, to reuse its result, cost as much as preparing
  // a plain decimal, model/plain_decimal.h).
  std::vector<int> prepared_columns;
  PrepareCellFn prepare = nullptr;
  size_t batch_bytes = kReadAheadBatchBytes;  // smaller in tests, to cross many batches
};

class CsvReader {
 public:
  // Opens `path` through io::OpenByteSource (no-follow, size cap, gzip).
  static StatusOr<std::unique_ptr<CsvReader>> Open(const std::string& path, const io::Limits& limits = {},
                                                  const ReaderOptions& options = {});
  CsvReader(std::unique_ptr<io::ByteSource> source, std::string display_name, const ReaderOptions& options = {});
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  // From here on the records are split into cells on a helper thread, a few
  // batches ahead of Next(), so that splitting (plain records straight from
  // the read buffer) overlaps the caller's work. Next() gives the same
  // records, lines, flags and errors, in the same order, as without it. Call
  // it once, after the header has been read.
  void StartReadAhead(ReadAheadOptions options);
  // The prepared form of cell `i` of the current record; nullptr when read
  // ahead is off, the column is not prepared, or the record is shorter.
  const PreparedCell* prepared(size_t i) const {
    // Inline: called on every prepared cell (27 M on a 1 M-row kernel_details.csv).
    if (prepared_row_ == nullptr || i >= prepared_slot_of_column_.size()) return nullptr;
    const int slot = prepared_slot_of_column_[i];
    return slot < 0 ? nullptr : prepared_row_ + slot;
  }

  // Reads the next record. Returns false at end of input. An error (record
  // longer than the limit, I/O error) names the file and the line.
  StatusOr<bool> Next();

  // Cells of the current record; valid until the next call to Next().
  const std::vector<std::string_view>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  std::string_view operator[](size_t i) const { return fields_[i]; }

  // 1-based physical line on which the current record starts.
  uint64_t line() const { return record_line_; }
  // True when the current record ended at end of input inside a quoted cell
  // (a file cut in the middle of a record).
  bool unterminated_quote() const { return unterminated_quote_; }
  // True when the current record is the last one and has no line end (often a
  // truncated file, though writers may also omit the final newline).
  bool missing_final_newline() const { return missing_final_newline_; }
  const std::string& display_name() const { return display_name_; }
  // With read ahead, the bytes read up to the end of the current batch.
  uint64_t bytes_consumed() const;
  uint64_t file_size() const;

 private:
  struct ReadAhead;
  // Makes at least one more byte available at buffer_[pos_]; false at EOF.
  StatusOr<bool> Fill();
  // Next() on this thread, splitting the bytes itself.
  StatusOr<bool> NextRecord();
  // Next() with read ahead: the next record of the helper's batches.
  StatusOr<bool> NextReadAhead();

  std::unique_ptr<io::ByteSource> source_;
  std::string display_name_;
  ReaderOptions options_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // start of unparsed data in buffer_
  size_t end_ = 0;    // end of valid data in buffer_
  bool eof_ = false;
  bool started_ = false;
  uint64_t line_ = 1;  // physical line of buffer_[begin_]
  uint64_t record_line_ = 0;
  bool unterminated_quote_ = false;
  bool missing_final_newline_ = false;
  std::string record_;                 // unquoted cell bytes of the current record
  std::vector<size_t> cell_bounds_;    // [start, end) pairs into record_
  std::vector<std::string_view> fields_;
  std::unique_ptr<ReadAhead> ahead_;  // set by StartReadAhead
  // The current record's prepared cells (nullptr: none), and the index of a
  // column among them (-1: not prepared).
  const PreparedCell* prepared_row_ = nullptr;
  std::vector<int> prepared_slot_of_column_;
};

// Splits one line of text (e.g. a sniffed header) into cells with the same
// rules; for small inputs only.
std::vector<std::string> SplitLine(std::string_view line, bool trim_whitespace = true);

}  // namespace pypto::csv
