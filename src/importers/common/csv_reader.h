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
// buffer plus the current record, never the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
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

class CsvReader {
 public:
  // Opens `path` through io::OpenByteSource (no-follow, size cap, gzip).
  static StatusOr<std::unique_ptr<CsvReader>> Open(const std::string& path, const io::Limits& limits = {},
                                                  const ReaderOptions& options = {});
  CsvReader(std::unique_ptr<io::ByteSource> source, std::string display_name, const ReaderOptions& options = {});

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
  uint64_t bytes_consumed() const { return source_ ? source_->raw_bytes_consumed() : 0; }
  uint64_t file_size() const { return source_ ? source_->file_size() : 0; }

 private:
  // Makes at least one more byte available at buffer_[pos_]; false at EOF.
  StatusOr<bool> Fill();

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
};

// Splits one line of text (e.g. a sniffed header) into cells with the same
// rules; for small inputs only.
std::vector<std::string> SplitLine(std::string_view line, bool trim_whitespace = true);

}  // namespace pypto::csv
