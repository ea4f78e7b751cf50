#include "importers/common/csv_reader.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/handoff_queue.h"

namespace pypto::csv {
namespace {

bool IsTrimmable(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Narrows the cell text[begin, end) to what lies between the spaces, TABs
// and CRs around it (ReaderOptions::trim_whitespace).
void TrimCell(const char* text, size_t* begin, size_t* end) {
  while (*begin < *end && IsTrimmable(text[*begin])) ++*begin;
  while (*end > *begin && IsTrimmable(text[*end - 1])) --*end;
}

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
    if (options_.trim_whitespace) TrimCell(record_.data(), &b, &e);
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

// Bytes the in-buffer splitter examines at a time (SpecialBytes): one mask
// bit each, so that the loop over a block's special bytes ends (a branch
// mispredicted) once per 64 bytes.
constexpr size_t kSplitBlockBytes = 64;

// Bit i of `special` set when p[i] is one of the bytes that end or quote a
// cell (, " LF CR), of `comma` when it is a comma: the splitter tells a plain
// cell's end from the mask, without waiting for the byte to load.
struct SpecialByteMasks {
  uint64_t special = 0, comma = 0;
};
// SSE2 is the x86-64 baseline; other targets take the byte loop.
SpecialByteMasks SpecialBytes(const char* p) {
  SpecialByteMasks masks;
#if defined(__SSE2__)
  for (size_t part = 0; part < kSplitBlockBytes / 16; ++part) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
    const __m128i commas = _mm_cmpeq_epi8(v, _mm_set1_epi8(','));
    const __m128i others = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
                                                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
    const auto bits = [](__m128i m) { return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(m))); };
    masks.comma |= bits(commas) << (16 * part);
    masks.special |= bits(_mm_or_si128(commas, others)) << (16 * part);
  }
#else
  for (size_t i = 0; i < kSplitBlockBytes; ++i) {
    const char c = p[i];
    if (c == ',') masks.comma |= uint64_t{1} << i;
    if (c == ',' || c == '"' || c == '\n' || c == '\r') masks.special |= uint64_t{1} << i;
  }
#endif
  return masks;
}

struct CsvReader::ReadAhead {
  std::unique_ptr<CsvReader> splitter;  // the reader as it was, splitting on the helper thread
  ReadAheadOptions options;
  uint64_t file_size = 0;

  HandoffQueue<RecordBatch> batches{kReadAheadBatches};
  std::thread helper;

  std::unique_ptr<RecordBatch> current;  // the batch Next() reads (caller's thread)
  size_t record = 0;                     // next record of `current`

  std::vector<size_t> cells_with_doubled_quotes;  // scratch of SplitBuffered: cells of the batch

  void Split();
  // Appends the splitter's current record (NextRecord's) to `batch`.
  void Append(RecordBatch& batch);
  // Splits the record at the splitter's read position straight from its
  // buffer into `batch`, when the record lies whole in the buffer and is of
  // the plain kind (quotes only around whole cells, no line end inside
  // quotes, no blank line, well under the length limit), and returns true.
  // Returns false, having changed nothing, for any other record: NextRecord
  // then reads it, so the records are those NextRecord gives. NextRecord
  // copies every byte into the record and then the batch, and decides on each
  // byte; here the bytes that end or quote cells are found 64 at a time and
  // the record is copied once (kernel_details.csv: splitting alone 630-710 ms
  // -> 330-390 ms, bench/csv_split).
  bool SplitBuffered(RecordBatch& batch);
  // Prepares the named columns of the batch's last record.
  void PrepareLast(RecordBatch& batch);
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
  PrepareLast(batch);
}

void CsvReader::ReadAhead::PrepareLast(RecordBatch& batch) {
  if (options.prepared_columns.empty()) return;
  const size_t records = batch.records();
  const size_t first = batch.first_cell[records - 1];
  const size_t cell_count = batch.first_cell[records] - first;
  bool all = true;
  for (size_t slot = 0; slot < options.prepared_columns.size(); ++slot) {
    const size_t column = static_cast<size_t>(options.prepared_columns[slot]);
    if (column >= cell_count) {
      batch.prepared.push_back(PreparedCell{});
      all = false;
      continue;
    }
    const size_t cell = first + column;
    batch.prepared.push_back(options.prepare(
        std::string_view(batch.text.data() + batch.cell_begin[cell], batch.cell_end[cell] - batch.cell_begin[cell])));
  }
  batch.has_prepared.push_back(all);
}

bool CsvReader::ReadAhead::SplitBuffered(RecordBatch& batch) {
  CsvReader& r = *splitter;
  if (!r.started_ || r.begin_ >= r.end_) return false;
  const char* const record = r.buffer_.data() + r.begin_;
  const size_t available = r.end_ - r.begin_;
  if (record[0] == '\n' || record[0] == '\r') return false;  // a blank line: NextRecord skips it
  // Records this long are left to NextRecord, which knows the limit to the byte
  // (and the cell offsets stay within 32 bits).
  const size_t bound = std::min<size_t>({r.options_.max_record_bytes, available, size_t{UINT32_MAX}});
  if (bound < 2) return false;
  const size_t longest = bound - 1;
  const bool trim = r.options_.trim_whitespace;

  // The cells go straight to the batch, as offsets into the record's bytes
  // that are appended once it is known to be plain; taken back otherwise.
  const size_t base = batch.text.size();
  const size_t first_cell = batch.cell_begin.size();
  auto give_up = [&] {
    batch.cell_begin.resize(first_cell);
    batch.cell_end.resize(first_cell);
    return false;
  };
  cells_with_doubled_quotes.clear();
  // A cell's bounds in the record, trimmed unless its doubled quotes are
  // still to be undoubled (it is trimmed then).
  auto add_cell = [&](size_t begin, size_t end, bool trim_now) {
    if (trim_now) TrimCell(record, &begin, &end);
    batch.cell_begin.push_back(static_cast<uint32_t>(base + begin));
    batch.cell_end.push_back(static_cast<uint32_t>(base + end));
  };
  size_t cell_begin = 0;  // the cell's first byte
  bool in_quotes = false;
  bool quoted = false;   // the cell opened with a quote
  bool doubled = false;  // a doubled quote inside it
  size_t quoted_begin = 0, quoted_end = 0;
  size_t skip_below = 0;  // special bytes before this were read with the one before
  size_t line_end = 0;
  for (size_t block = 0;; block += kSplitBlockBytes) {
    // A record reaching the last block of the buffer, or the limit: NextRecord's.
    if (block + kSplitBlockBytes > available || block >= longest) return give_up();
    const SpecialByteMasks masks = SpecialBytes(record + block);
    for (uint64_t mask = masks.special; mask != 0; mask &= mask - 1) {
      const int bit = std::countr_zero(mask);
      const size_t at = block + static_cast<size_t>(bit);
      if ((masks.comma >> bit & 1) != 0 && !in_quotes && !quoted) [[likely]] {  // the end of a plain cell: most special bytes
        add_cell(cell_begin, at, trim);
        cell_begin = at + 1;
        continue;
      }
      if (at < skip_below) continue;  // the second quote of a doubled one (a comma never is)
      const char c = record[at];
      if (in_quotes) {
        if (c == '\n' || c == '\r') return give_up();  // a line end inside quotes (NextRecord counts the lines)
        if (c != '"') continue;                         // a comma inside quotes
        if (at + 1 >= available) return give_up();
        const char next = record[at + 1];
        if (next == '"') {  // a doubled quote stands for one
          doubled = true;
          skip_below = at + 2;
          continue;
        }
        // The closing quote: text after it, kept literally by NextRecord, is not plain.
        if (next != ',' && next != '\n' && next != '\r') return give_up();
        in_quotes = false;
        quoted_end = at;
        continue;
      }
      if (c == '"') {
        if (at != cell_begin) return give_up();  // a quote inside an unquoted cell, kept literally
        in_quotes = quoted = true;
        quoted_begin = at + 1;
        continue;
      }
      // , LF or CR: the cell ends.
      if (doubled) cells_with_doubled_quotes.push_back(batch.cell_begin.size());
      if (quoted) add_cell(quoted_begin, quoted_end, trim && !doubled);
      else add_cell(cell_begin, at, trim);
      quoted = doubled = false;
      cell_begin = at + 1;
      if (c == ',') continue;
      line_end = at;
      goto record_end;
    }
  }
record_end:
  if (line_end >= longest) return give_up();
  size_t consumed = line_end + 1;
  if (record[line_end] == '\r') {
    if (consumed >= available) return give_up();  // the LF of a CRLF may be in the next read
    if (record[consumed] == '\n') ++consumed;
  }

  // The record's bytes once, then the text of cells with doubled quotes, undoubled.
  batch.text.append(record, line_end);
  for (size_t cell : cells_with_doubled_quotes) {
    // Runs up to and with a quote are copied whole; the quote after each is its double.
    size_t begin = batch.text.size();
    const size_t from = batch.cell_begin[cell] - base, to = batch.cell_end[cell] - base;
    batch.text.resize(begin + (to - from));
    char* out = batch.text.data() + begin;
    for (size_t i = from; i < to;) {
      const void* quote = std::memchr(record + i, '"', to - i);
      const size_t run = quote ? static_cast<size_t>(static_cast<const char*>(quote) - (record + i)) + 1 : to - i;
      std::memcpy(out, record + i, run);
      out += run;
      i += run + (quote ? 1 : 0);
    }
    size_t end = static_cast<size_t>(out - batch.text.data());
    batch.text.resize(end);
    if (trim) TrimCell(batch.text.data(), &begin, &end);
    batch.cell_begin[cell] = static_cast<uint32_t>(begin);
    batch.cell_end[cell] = static_cast<uint32_t>(end);
  }
  batch.first_cell.push_back(static_cast<uint32_t>(batch.cell_begin.size()));
  batch.line.push_back(r.line_);
  batch.flags.push_back(0);
  PrepareLast(batch);
  r.begin_ += consumed;
  ++r.line_;
  return true;
}

void CsvReader::ReadAhead::Split() {
  while (true) {
    std::unique_ptr<RecordBatch> batch = batches.TakeSpare();
    batch->Clear();
    while (batch->text.size() < options.batch_bytes) {
      if (SplitBuffered(*batch)) continue;
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
    if (prepared_slot_of_column_.size() <= static_cast<size_t>(column))
      prepared_slot_of_column_.resize(column + 1, -1);
    prepared_slot_of_column_[column] = static_cast<int>(slot);
  }
  ahead->options = std::move(options);
  ahead_ = std::move(ahead);
  ahead_->helper = std::thread([a = ahead_.get()] { a->Split(); });
}

StatusOr<bool> CsvReader::Next() { return ahead_ ? NextReadAhead() : NextRecord(); }

StatusOr<bool> CsvReader::NextReadAhead() {
  ReadAhead& a = *ahead_;
  fields_.clear();
  prepared_row_ = nullptr;  // its batch goes back to the helper below
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
  const uint32_t first = batch.first_cell[r];
  fields_.resize(batch.first_cell[r + 1] - first);
  for (size_t i = 0; i < fields_.size(); ++i)
    fields_[i] = std::string_view(batch.text.data() + batch.cell_begin[first + i],
                                  batch.cell_end[first + i] - batch.cell_begin[first + i]);
  const size_t slots = a.options.prepared_columns.size();
  prepared_row_ = slots > 0 && batch.has_prepared[r] ? batch.prepared.data() + r * slots : nullptr;
  record_line_ = batch.line[r];
  unterminated_quote_ = (batch.flags[r] & RecordBatch::kUnterminatedQuote) != 0;
  missing_final_newline_ = (batch.flags[r] & RecordBatch::kMissingFinalNewline) != 0;
  return true;
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
