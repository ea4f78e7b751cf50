#include "importers/common/csv_reader.h"

#include <cstring>

namespace pypto::csv {
namespace {

bool IsTrimmable(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The reference source for a ByteSource that reads from a string (SplitLine).
class StringSource final : public io::ByteSource {
 public:
  explicit StringSource(std::string_view text) : text_(text) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = std::min(capacity, text_.size() - pos_);
    std::memcpy(buffer, text_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t raw_bytes_consumed() const override { return pos_; }
  uint64_t file_size() const override { return text_.size(); }
  io::Compression compression() const override { return io::Compression::kNone; }
  const std::string& path() const override { return path_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string path_ = "<text>";
};

}  // namespace

StatusOr<std::unique_ptr<CsvReader>> CsvReader::Open(const std::string& path, const io::Limits& limits,
                                                     const ReaderOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(auto source, io::OpenByteSource(path, limits));
  return std::make_unique<CsvReader>(std::move(source), path, options);
}

CsvReader::CsvReader(std::unique_ptr<io::ByteSource> source, std::string display_name,
                     const ReaderOptions& options)
    : source_(std::move(source)), display_name_(std::move(display_name)), options_(options) {}

StatusOr<bool> CsvReader::Fill() {
  if (begin_ < end_) return true;
  if (eof_) return false;
  if (buffer_.empty()) buffer_.resize(kReadChunkBytes);
  begin_ = end_ = 0;
  PYPTO_ASSIGN_OR_RETURN(size_t n, source_->Read(buffer_.data(), buffer_.size()));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ = n;
  return true;
}

StatusOr<bool> CsvReader::Next() {
  fields_.clear();
  record_.clear();
  cell_bounds_.clear();
  unterminated_quote_ = false;
  missing_final_newline_ = false;

  if (!started_) {
    started_ = true;
    // A UTF-8 byte order mark may only stand at the very start. Reads may
    // return fewer than three bytes, so gather them one by one.
    static constexpr char kBom[] = "\xEF\xBB\xBF";
    std::string head;
    while (head.size() < 3) {
      PYPTO_ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) break;
      if (buffer_[begin_] != kBom[head.size()]) break;
      head.push_back(buffer_[begin_++]);
    }
    if (head.size() != 3 && !head.empty()) {
      // Not a BOM after all: those bytes start the first cell.
      record_ = head;
    }
  }

  enum class State { kCellStart, kUnquoted, kQuoted, kQuoteInQuoted };
  State state = State::kCellStart;
  size_t cell_start = 0;
  size_t record_bytes = record_.size();
  bool any_byte = !record_.empty();
  if (any_byte) state = State::kUnquoted;
  record_line_ = line_;

  auto finish_cell = [&]() {
    size_t b = cell_start, e = record_.size();
    if (options_.trim_whitespace) {
      while (b < e && IsTrimmable(record_[b])) ++b;
      while (e > b && IsTrimmable(record_[e - 1])) --e;
    }
    cell_bounds_.push_back(b);
    cell_bounds_.push_back(e);
    cell_start = record_.size();
  };

  while (true) {
    if (begin_ == end_) {
      PYPTO_ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) {
        if (!any_byte) return false;  // clean end of input
        if (state == State::kQuoted) unterminated_quote_ = true;
        missing_final_newline_ = true;
        finish_cell();
        break;
      }
    }
    // Consume a run of ordinary bytes at once, then one special byte.
    const char* p = buffer_.data() + begin_;
    const char* limit = buffer_.data() + end_;
    if (state == State::kUnquoted) {
      const char* q = p;
      while (q < limit && *q != ',' && *q != '\n' && *q != '\r') ++q;
      record_.append(p, q - p);
      record_bytes += q - p;
      begin_ += q - p;
      if (record_bytes > options_.max_record_bytes) break;
      if (begin_ == end_) continue;
    } else if (state == State::kQuoted) {
      const char* q = p;
      while (q < limit && *q != '"') {
        if (*q == '\n') ++line_;
        ++q;
      }
      record_.append(p, q - p);
      record_bytes += q - p;
      begin_ += q - p;
      if (record_bytes > options_.max_record_bytes) break;
      if (begin_ == end_) continue;
    }
    char c = buffer_[begin_++];
    ++record_bytes;
    if (record_bytes > options_.max_record_bytes) break;
    if (state == State::kCellStart && !any_byte && (c == '\n' || c == '\r')) {
      // Blank line: not a record. Swallow the LF of a CRLF.
      if (c == '\r') {
        PYPTO_ASSIGN_OR_RETURN(bool more, Fill());
        if (more && buffer_[begin_] == '\n') ++begin_;
      }
      ++line_;
      record_line_ = line_;
      record_bytes = 0;
      continue;
    }
    any_byte = true;
    switch (state) {
      case State::kCellStart:
        if (c == '"') {
          state = State::kQuoted;
          cell_start = record_.size();
          continue;
        }
        [[fallthrough]];
      case State::kQuoteInQuoted:
        if (state == State::kQuoteInQuoted && c == '"') {  // doubled quote = one quote
          record_.push_back('"');
          state = State::kQuoted;
          continue;
        }
        [[fallthrough]];
      case State::kUnquoted:
        if (c == ',') {
          finish_cell();
          state = State::kCellStart;
          continue;
        }
        if (c == '\n' || c == '\r') {
          finish_cell();
          if (c == '\r') {
            PYPTO_ASSIGN_OR_RETURN(bool more, Fill());
            if (more && buffer_[begin_] == '\n') ++begin_;
          }
          ++line_;
          goto record_done;
        }
        // Text after a closing quote, or a quote inside an unquoted cell:
        // kept literally (lenient, as Python's csv module does).
        record_.push_back(c);
        state = State::kUnquoted;
        continue;
      case State::kQuoted:
        state = State::kQuoteInQuoted;  // c is '"'
        continue;
    }
  }
  if (record_bytes > options_.max_record_bytes) {
    return LimitExceededError(display_name_ + ": line " + std::to_string(record_line_) +
                              ": record longer than " + std::to_string(options_.max_record_bytes) +
                              " bytes (unbalanced quote or not a CSV file?)");
  }
record_done:
  fields_.reserve(cell_bounds_.size() / 2);
  for (size_t i = 0; i < cell_bounds_.size(); i += 2)
    fields_.emplace_back(record_.data() + cell_bounds_[i], cell_bounds_[i + 1] - cell_bounds_[i]);
  return true;
}

std::vector<std::string> SplitLine(std::string_view line, bool trim_whitespace) {
  ReaderOptions options;
  options.trim_whitespace = trim_whitespace;
  CsvReader reader(std::make_unique<StringSource>(line), "<text>", options);
  std::vector<std::string> out;
  auto more = reader.Next();
  if (more.ok() && *more)
    for (std::string_view f : reader.fields()) out.emplace_back(f);
  return out;
}

}  // namespace pypto::csv
