#include "importers/common/csv_reader.h"

#include <cstring>
#include <thread>

#include "core/handoff_queue.h"

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

StatusOr<bool> CsvReader::NextRecord() {
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

// ------------------------------------------------------------ read ahead

namespace {

// Records split on the helper thread: the cells' text back to back, each
// record's cells, line and flags, and its prepared cells.
struct RecordBatch {
  std::string text;
  std::vector<uint32_t> cell_begin, cell_end;   // into text
  std::vector<uint32_t> first_cell;             // per record, plus one past the last
  std::vector<uint64_t> line;
  std::vector<uint8_t> flags;                   // kUnterminatedQuote | kMissingFinalNewline
  std::vector<PreparedCell> prepared;           // per record, one per prepared column
  std::vector<uint8_t> has_prepared;            // per record: it had every prepared column
  uint64_t bytes_consumed = 0;                  // the source's count after the last record
  bool end = false;                             // no batch follows
  Status error = Status::Ok();                  // what ended the input, after the records

  static constexpr uint8_t kUnterminatedQuote = 1, kMissingFinalNewline = 2;
  size_t records() const { return line.size(); }
  void Clear() {
    text.clear(); cell_begin.clear(); cell_end.clear(); first_cell.assign(1, 0); line.clear(); flags.clear();
    prepared.clear(); has_prepared.clear(); bytes_consumed = 0; end = false; error = Status::Ok();
  }
};

}  // namespace

struct CsvReader::ReadAhead {
  std::unique_ptr<CsvReader> splitter;  // the reader as it was, splitting on the helper thread
  ReadAheadOptions options;
  std::vector<int> slot_of_column;      // column -> index among the prepared columns, or -1
  uint64_t file_size = 0;

  HandoffQueue<RecordBatch> batches{kReadAheadBatches};
  std::thread helper;

  std::unique_ptr<RecordBatch> current;  // the batch Next() reads (caller's thread)
  size_t record = 0;                     // next record of `current`

  void Split();
  void Append(RecordBatch& batch);
};

void CsvReader::ReadAhead::Append(RecordBatch& batch) {
  const CsvReader& r = *splitter;
  // The record's cells are views into its unquoted text: copy that once.
  const size_t base = batch.text.size();
  batch.text.append(r.record_);
  for (std::string_view cell : r.fields()) {
    const size_t begin = base + static_cast<size_t>(cell.data() - r.record_.data());
    batch.cell_begin.push_back(static_cast<uint32_t>(begin));
    batch.cell_end.push_back(static_cast<uint32_t>(begin + cell.size()));
  }
  batch.first_cell.push_back(static_cast<uint32_t>(batch.cell_begin.size()));
  batch.line.push_back(r.line());
  batch.flags.push_back((r.unterminated_quote() ? RecordBatch::kUnterminatedQuote : 0) |
                        (r.missing_final_newline() ? RecordBatch::kMissingFinalNewline : 0));
  if (options.prepared_columns.empty()) return;
  bool all = true;
  for (size_t slot = 0; slot < options.prepared_columns.size(); ++slot) {
    const size_t column = static_cast<size_t>(options.prepared_columns[slot]);
    if (column >= r.size()) {
      batch.prepared.push_back(PreparedCell{});
      all = false;
      continue;
    }
    batch.prepared.push_back(options.prepare(r[column]));
  }
  batch.has_prepared.push_back(all);
}

void CsvReader::ReadAhead::Split() {
  while (true) {
    std::unique_ptr<RecordBatch> batch = batches.TakeSpare();
    batch->Clear();
    while (batch->text.size() < options.batch_bytes) {
      auto more = splitter->NextRecord();
      if (!more.ok()) {
        batch->error = more.status();
        batch->end = true;
        break;
      }
      if (!*more) {
        batch->end = true;
        break;
      }
      Append(*batch);
    }
    batch->bytes_consumed = splitter->bytes_consumed();
    const bool end = batch->end;
    if (!batches.Push(std::move(batch)) || end) return;
  }
}

CsvReader::~CsvReader() {
  if (!ahead_) return;
  ahead_->batches.Stop();
  if (ahead_->helper.joinable()) ahead_->helper.join();
}

void CsvReader::StartReadAhead(ReadAheadOptions options) {
  if (ahead_) return;
  auto ahead = std::make_unique<ReadAhead>();
  ahead->file_size = file_size();
  // The splitter takes over the source and whatever is buffered, mid-file.
  auto splitter = std::make_unique<CsvReader>(std::move(source_), display_name_, options_);
  splitter->buffer_.swap(buffer_);
  splitter->begin_ = begin_;
  splitter->end_ = end_;
  splitter->eof_ = eof_;
  splitter->started_ = started_;
  splitter->line_ = line_;
  ahead->splitter = std::move(splitter);
  if (options.prepare == nullptr) options.prepared_columns.clear();
  std::erase_if(options.prepared_columns, [](int column) { return column < 0; });
  if (options.batch_bytes == 0) options.batch_bytes = 1;
  for (size_t slot = 0; slot < options.prepared_columns.size(); ++slot) {
    const int column = options.prepared_columns[slot];
    if (ahead->slot_of_column.size() <= static_cast<size_t>(column)) ahead->slot_of_column.resize(column + 1, -1);
    ahead->slot_of_column[column] = static_cast<int>(slot);
  }
  ahead->options = std::move(options);
  ahead_ = std::move(ahead);
  ahead_->helper = std::thread([a = ahead_.get()] { a->Split(); });
}

StatusOr<bool> CsvReader::Next() { return ahead_ ? NextReadAhead() : NextRecord(); }

StatusOr<bool> CsvReader::NextReadAhead() {
  ReadAhead& a = *ahead_;
  fields_.clear();
  while (!a.current || a.record >= a.current->records()) {
    if (a.current && a.current->end) {
      if (!a.current->error.ok()) return a.current->error;
      return false;
    }
    a.current = a.batches.Pop(std::move(a.current));
    a.record = 0;
  }
  const RecordBatch& batch = *a.current;
  const size_t r = a.record++;
  for (uint32_t c = batch.first_cell[r]; c < batch.first_cell[r + 1]; ++c)
    fields_.emplace_back(batch.text.data() + batch.cell_begin[c], batch.cell_end[c] - batch.cell_begin[c]);
  record_line_ = batch.line[r];
  unterminated_quote_ = (batch.flags[r] & RecordBatch::kUnterminatedQuote) != 0;
  missing_final_newline_ = (batch.flags[r] & RecordBatch::kMissingFinalNewline) != 0;
  return true;
}

const PreparedCell* CsvReader::prepared(size_t i) const {
  if (!ahead_ || !ahead_->current || ahead_->record == 0) return nullptr;
  const ReadAhead& a = *ahead_;
  if (i >= a.slot_of_column.size() || a.slot_of_column[i] < 0) return nullptr;
  const size_t r = a.record - 1;
  if (!a.current->has_prepared[r]) return nullptr;
  return &a.current->prepared[r * a.options.prepared_columns.size() + a.slot_of_column[i]];
}

uint64_t CsvReader::bytes_consumed() const {
  if (ahead_) return ahead_->current ? ahead_->current->bytes_consumed : 0;
  return source_ ? source_->raw_bytes_consumed() : 0;
}

uint64_t CsvReader::file_size() const {
  if (ahead_) return ahead_->file_size;
  return source_ ? source_->file_size() : 0;
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
