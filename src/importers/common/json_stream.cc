#include "importers/common/json_stream.h"

#include <immintrin.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pypto::json_stream {
namespace {

// Bytes kept free in front of each buffer so that the unfinished tail of the
// previous buffer (a partial event, usually < 2 KB) can be copied right before
// the new data and parsed in place. Tails longer than this go through a
// separate carry buffer (rare: only events longer than this cross a buffer edge).
constexpr size_t kHeadroomBytes = 256u << 10;
// How many bytes after a candidate `{` the resynchroniser may need to look at
// (whitespace then `"name"`); pretty-printed Kineto puts a newline and 4 spaces.
constexpr size_t kResyncLookaheadBytes = 64;

std::string At(const std::string& name, uint64_t offset) { return name + ": byte " + std::to_string(offset); }

inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// ---------------------------------------------------------------- producer
// Reads the source on its own thread into a ring of reused buffers so that
// reading/inflating overlaps parsing (the two halves of a 2-core budget).
class BufferRing {
 public:
  struct Slot {
    std::unique_ptr<char[]> memory;  // headroom + data + SIMDJSON_PADDING
    size_t size = 0;                 // data bytes
    bool eof = false;
    Status error;
    uint64_t raw_consumed = 0;       // source bytes consumed after this fill
    char* data() { return memory.get() + kHeadroomBytes; }
  };

  BufferRing(io::ByteSource& source, size_t buffer_bytes, size_t count)
      : source_(source), buffer_bytes_(buffer_bytes), slots_(count) {
    for (size_t i = 0; i < count; ++i) {
      slots_[i].memory.reset(new char[kHeadroomBytes + buffer_bytes + simdjson::SIMDJSON_PADDING]);
      free_.push_back(i);
    }
    thread_ = std::thread([this] { Produce(); });
  }
  ~BufferRing() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // Waits for the next filled slot.
  size_t Next() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !filled_.empty(); });
    size_t index = filled_.front();
    filled_.pop_front();
    return index;
  }
  void Release(size_t index) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(index);
    }
    cv_.notify_all();
  }
  Slot& slot(size_t index) { return slots_[index]; }

 private:
  void Produce() {
    bool done = false;
    while (!done) {
      size_t index;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || !free_.empty(); });
        if (stop_) return;
        index = free_.front();
        free_.pop_front();
      }
      Slot& slot = slots_[index];
      slot.size = 0;
      slot.eof = false;
      slot.error = Status::Ok();
      while (slot.size < buffer_bytes_) {
        auto n = source_.Read(slot.data() + slot.size, buffer_bytes_ - slot.size);
        if (!n.ok()) { slot.error = n.status(); done = true; break; }
        if (*n == 0) { slot.eof = true; done = true; break; }
        slot.size += *n;
      }
      slot.raw_consumed = source_.raw_bytes_consumed();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        filled_.push_back(index);
      }
      cv_.notify_all();
    }
  }

  io::ByteSource& source_;
  size_t buffer_bytes_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<size_t> free_, filled_;
  bool stop_ = false;
  std::thread thread_;
};

// ---------------------------------------------------------------- helpers
// Threads that parse event ranges for the reader. Run() hands job(i) to thread
// i (i = 0 is the caller) and returns when all are done, so everything the
// jobs wrote is visible to the caller afterwards (mutex hand-off).
class WorkerPool {
 public:
  explicit WorkerPool(size_t helpers) {
    threads_.reserve(helpers);
    for (size_t i = 0; i < helpers; ++i) threads_.emplace_back([this, i] { Loop(i + 1); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  size_t threads() const { return threads_.size() + 1; }

  void Run(size_t n, const std::function<void(size_t)>& job) {
    n = std::min(n, threads());
    if (n <= 1) {
      if (n == 1) job(0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      participants_ = n;
      pending_ = n - 1;
      ++generation_;
    }
    wake_.notify_all();
    job(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void Loop(size_t index) {
    uint64_t seen = 0;
    while (true) {
      const std::function<void(size_t)>* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (index >= participants_) continue;
        job = job_;
      }
      (*job)(index);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t participants_ = 0;
  size_t pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// ---------------------------------------------------------------- scanner
// Finds where a JSON object/array ends by tracking quotes, backslashes and
// brackets 64 bytes at a time (the bit tricks of simdjson's stage 1). Hand
// written because simdjson exposes no resumable "find the end of this value"
// over a partial buffer, and finding event bounds must run at several GB/s.
struct Masks {
  uint64_t quote, backslash, open, close, control;
};

__attribute__((target("avx2"))) Masks MasksAvx2(const char* p) {
  Masks m;
#define bits(lo_cmp, hi_cmp)                                                   \
  (static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(lo_cmp))) | \
   (static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(hi_cmp))) << 32))
  __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  __m256i lo20 = _mm256_or_si256(lo, _mm256_set1_epi8(0x20));
  __m256i hi20 = _mm256_or_si256(hi, _mm256_set1_epi8(0x20));
  m.quote = bits(_mm256_cmpeq_epi8(lo, _mm256_set1_epi8('"')), _mm256_cmpeq_epi8(hi, _mm256_set1_epi8('"')));
  m.backslash = bits(_mm256_cmpeq_epi8(lo, _mm256_set1_epi8('\\')), _mm256_cmpeq_epi8(hi, _mm256_set1_epi8('\\')));
  // '[' | 0x20 == '{' and ']' | 0x20 == '}'
  m.open = bits(_mm256_cmpeq_epi8(lo20, _mm256_set1_epi8('{')), _mm256_cmpeq_epi8(hi20, _mm256_set1_epi8('{')));
  m.close = bits(_mm256_cmpeq_epi8(lo20, _mm256_set1_epi8('}')), _mm256_cmpeq_epi8(hi20, _mm256_set1_epi8('}')));
  __m256i c1f = _mm256_set1_epi8(0x1f);
  m.control = bits(_mm256_cmpeq_epi8(_mm256_max_epu8(lo, c1f), c1f), _mm256_cmpeq_epi8(_mm256_max_epu8(hi, c1f), c1f));
#undef bits
  return m;
}

// One 64-byte compare per mask: a third of the AVX2 version's instructions.
__attribute__((target("avx512bw"))) Masks MasksAvx512(const char* p) {
  const __m512i block = _mm512_loadu_si512(p);
  const __m512i folded = _mm512_or_si512(block, _mm512_set1_epi8(0x20));
  Masks m;
  m.quote = _mm512_cmpeq_epi8_mask(block, _mm512_set1_epi8('"'));
  m.backslash = _mm512_cmpeq_epi8_mask(block, _mm512_set1_epi8('\\'));
  m.open = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('{'));
  m.close = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('}'));
  m.control = _mm512_cmple_epu8_mask(block, _mm512_set1_epi8(0x1f));
  return m;
}

Masks MasksScalar(const char* p) {
  Masks m{0, 0, 0, 0, 0};
  for (int i = 0; i < 64; ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    uint64_t bit = uint64_t{1} << i;
    if (c == '"') m.quote |= bit;
    else if (c == '\\') m.backslash |= bit;
    else if ((c | 0x20) == '{') m.open |= bit;
    else if ((c | 0x20) == '}') m.close |= bit;
    else if (c < 0x20) m.control |= bit;
  }
  return m;
}

__attribute__((target("pclmul"))) uint64_t PrefixXorClmul(uint64_t bits) {
  __m128i all_ones = _mm_set1_epi8(static_cast<char>(0xFF));
  __m128i result = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(bits)), all_ones, 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(result));
}

uint64_t PrefixXorScalar(uint64_t bits) {
  bits ^= bits << 1; bits ^= bits << 2; bits ^= bits << 4;
  bits ^= bits << 8; bits ^= bits << 16; bits ^= bits << 32;
  return bits;
}

const bool kHaveAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
const bool kHaveAvx512 = kHaveAvx2 && __builtin_cpu_supports("avx512bw");

enum class ScanResult { kComplete, kNeedMore, kTooDeep, kControlInString };

// Scans the object/array starting at `begin` (which is '{' or '['). Reads up to
// 63 bytes past `end` (callers keep SIMDJSON_PADDING readable). On kComplete,
// *stop is one past the closing bracket; on kTooDeep / kControlInString, the
// offending byte.
ScanResult ScanContainer(const char* begin, const char* end, size_t max_depth, const char** stop) {
  uint64_t prev_escaped = 0;   // carry: first byte of next block is escaped
  uint64_t prev_in_string = 0; // all ones when the previous block ended inside a string
  size_t depth = 0;
  for (const char* p = begin; p < end; p += 64) {
    Masks m = kHaveAvx512 ? MasksAvx512(p) : kHaveAvx2 ? MasksAvx2(p) : MasksScalar(p);
    size_t left = static_cast<size_t>(end - p);
    if (left < 64) {
      uint64_t valid = (uint64_t{1} << left) - 1;
      m.quote &= valid; m.backslash &= valid; m.open &= valid; m.close &= valid; m.control &= valid;
    }
    // Escaped characters: odd-length runs of backslashes (simdjson's algorithm).
    uint64_t backslash = m.backslash & ~prev_escaped;
    uint64_t follows_escape = (backslash << 1) | prev_escaped;
    constexpr uint64_t kEvenBits = 0x5555555555555555ULL;
    uint64_t odd_starts = backslash & ~kEvenBits & ~follows_escape;
    uint64_t even_starts;
    prev_escaped = __builtin_add_overflow(odd_starts, backslash, &even_starts) ? 1 : 0;
    uint64_t escaped = (kEvenBits ^ (even_starts << 1)) & follows_escape;
    uint64_t quotes = m.quote & ~escaped;
    uint64_t in_string = (kHaveAvx2 ? PrefixXorClmul(quotes) : PrefixXorScalar(quotes)) ^ prev_in_string;
    prev_in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    uint64_t structural = (m.open | m.close) & ~in_string;
    // A control character inside a string counts only if it comes before the
    // container closes: the block may already hold the start of the next
    // event, whose bad string must not make this (valid) one be skipped.
    const uint64_t bad = m.control & in_string;
    if (bad) structural &= (uint64_t{1} << __builtin_ctzll(bad)) - 1;
    const uint64_t opens = structural & m.open;
    const uint64_t closes = structural & ~m.open;
    const size_t open_count = static_cast<size_t>(__builtin_popcountll(opens));
    const size_t close_count = static_cast<size_t>(__builtin_popcountll(closes));
    if (depth > close_count && depth + open_count <= max_depth) {
      // Neither closing nor too deep inside this block: count, no walk (most
      // blocks of an event; walking every bracket mispredicts a branch each).
      depth += open_count - close_count;
    } else {
      while (structural) {
        int i = __builtin_ctzll(structural);
        structural &= structural - 1;
        if ((m.open >> i) & 1) {
          if (++depth > max_depth) { *stop = p + i; return ScanResult::kTooDeep; }
        } else if (--depth == 0) {
          *stop = p + i + 1;
          return ScanResult::kComplete;
        }
      }
    }
    if (bad) {
      *stop = p + __builtin_ctzll(bad);
      return ScanResult::kControlInString;
    }
  }
  return ScanResult::kNeedMore;
}

// Ends of small top-level tokens (keys, scalar values), scanned bytewise.
// Returns one past the closing quote, or nullptr if the string runs past end.
const char* StringEnd(const char* p, const char* end) {
  for (++p; p < end; ++p) {
    if (*p == '\\') { ++p; continue; }
    if (*p == '"') return p + 1;
  }
  return nullptr;
}
const char* ScalarEnd(const char* p, const char* end) {
  if (*p == '"') return StringEnd(p, end);
  while (p < end && *p != ',' && *p != '}' && *p != ']' && !IsSpace(*p)) ++p;
  return p < end ? p : nullptr;
}

// ---------------------------------------------------------------- repairs
struct RepairCounts {
  uint64_t invalid_utf8 = 0;
  uint64_t bare_na = 0;
};

// Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid.
size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; }
  else return 0;
  if (static_cast<size_t>(end - p) < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

// Rewrites `text` into `out` with invalid UTF-8 replaced by U+FFFD and bare
// N/A values quoted (TB's _preprocess_file does the same). Returns true if
// anything changed.
bool Repair(std::string_view text, std::string* out, RepairCounts* counts) {
  out->clear();
  out->reserve(text.size() + 64 + simdjson::SIMDJSON_PADDING);
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  bool in_string = false;
  bool changed = false;
  while (p < end) {
    unsigned char c = *p;
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(p, end);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");
        ++counts->invalid_utf8;
        changed = true;
        ++p;
      } else {
        out->append(reinterpret_cast<const char*>(p), n);
        p += n;
      }
      continue;
    }
    if (in_string) {
      if (c == '\\' && p + 1 < end) { out->push_back('\\'); out->push_back(static_cast<char>(p[1])); p += 2; continue; }
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == 'N' && end - p >= 3 && p[1] == '/' && p[2] == 'A') {
      out->append("\"N/A\"");
      ++counts->bare_na;
      changed = true;
      p += 3;
      continue;
    }
    out->push_back(static_cast<char>(c));
    ++p;
  }
  return changed;
}

// ---------------------------------------------------------------- reader
class Reader {
 public:
  // `sinks` empty: events go to on_event; else they are parsed in parallel
  // batches into the sinks (see StreamJsonEventsParallel).
  Reader(const JsonStreamOptions& options, const TopLevelKeyFn& on_key, const EventFn& on_event, Profile* profile,
         const std::vector<EventSink*>& sinks = {})
      : options_(options), on_key_(on_key), on_event_(on_event), profile_(profile), sinks_(sinks) {
    if (!sinks_.empty()) {
      for (size_t i = 0; i < sinks_.size(); ++i) workers_.push_back(std::make_unique<Worker>());
      pool_ = std::make_unique<WorkerPool>(sinks_.size() - 1);
    }
  }

  // Processes [begin, end) whose first byte is at stream offset `base`.
  // Returns the number of bytes consumed; the rest must be presented again
  // (followed by more input) on the next call. `eof`: no more input follows.
  StatusOr<size_t> Process(const char* begin, const char* end, uint64_t base, bool eof);
  Status Finish(uint64_t total_bytes);
  JsonStreamStats& stats() { return stats_; }

 private:
  enum class State { kStart, kRootKey, kRootColon, kRootValue, kRootAfterValue, kEventsFirst, kEventsNext,
                     kEventsAfter, kDone };

  uint64_t Off(const char* p) const { return base_ + static_cast<uint64_t>(p - begin_); }
  void Loss(LossKind kind, const std::string& reason, const char* p) {
    profile_->CountLoss(kind, reason, At(options_.display_name, Off(p)));
  }
  Status DepthError(const char* p) {
    return LimitExceededError(At(options_.display_name, Off(p)) + ": JSON nested deeper than " +
                              std::to_string(options_.max_depth) + " levels (nesting limit)");
  }
  Status SizeError(const char* p) {
    return LimitExceededError(At(options_.display_name, Off(p)) + ": event or value larger than " +
                              std::to_string(options_.max_event_bytes) + " bytes (event size limit)");
  }
  // Parses one event text and hands it to `fn`; kCorrupt when it does not parse.
  template <typename Fn>
  Status Deliver(simdjson::ondemand::parser& parser, const char* text, size_t size, size_t capacity,
                 uint64_t offset, Fn& fn);
  // Deliver, then once more after Repair when it failed; repairs that made the
  // event readable are counted in `repairs`. Nothing else is counted.
  template <typename Fn>
  Status ParseEvent(simdjson::ondemand::parser& parser, std::string& scratch, const char* p, const char* stop,
                    Fn& fn, Profile* repairs);
  // One event on the reader thread: parse, count (events, skipped, loss).
  Status HandleEvent(const char* p, const char* stop);
  bool parallel() const { return !sinks_.empty(); }
  // False when the options' prefilter refuses the event's text: it is then
  // counted but not parsed (any thread; the prefilter is a pure function).
  bool Wanted(const char* p, const char* stop) const {
    return !options_.prefilter || options_.prefilter(std::string_view(p, static_cast<size_t>(stop - p)));
  }
  // Parses and commits the batched events. Returns nullptr when all were
  // committed, else the start of the first event of the range that failed
  // (that range and the later ones were discarded: re-read them one by one).
  StatusOr<const char*> Flush();
  // Parallel mode, at an event start `p` with plenty of the region left: the
  // threads find and parse the events of their own byte ranges at once (see
  // the definition). Commits what is certain and returns where the state
  // machine goes on (state_ set accordingly); `p` itself when nothing was done.
  StatusOr<const char*> ScanInParallel(const char* p, const char* end);
  Status HandleTopLevelValue(const char* p, const char* stop);
  // Looks for the next event boundary from p; returns the position to resume
  // from, or nullptr with *keep set when more input is needed.
  const char* Resync(const char* p, const char* end, bool eof, const char** keep);

  const JsonStreamOptions& options_;
  const TopLevelKeyFn& on_key_;
  const EventFn& on_event_;
  Profile* profile_;
  JsonStreamStats stats_;
  State state_ = State::kStart;
  bool resyncing_ = false;
  std::string key_;
  const char* begin_ = nullptr;
  uint64_t base_ = 0;
  simdjson::ondemand::parser parser_;
  std::string scratch_;
  // Parallel mode.
  struct Worker {
    simdjson::ondemand::parser parser;
    std::string scratch;
    Status status;
    uint64_t events = 0;
  };
  struct Span {
    const char* p;
    const char* stop;
  };
  const std::vector<EventSink*> sinks_;           // a copy: the serial path passes a temporary
  std::vector<std::unique_ptr<Worker>> workers_;  // one per sink
  std::unique_ptr<WorkerPool> pool_;
  std::vector<Span> batch_;       // complete events found in this region, not parsed yet
  bool serial_stretch_ = false;   // after a discarded range: one event at a time until the region ends
};

template <typename Fn>
Status Reader::Deliver(simdjson::ondemand::parser& parser, const char* text, size_t size, size_t capacity,
                       uint64_t offset, Fn& fn) {
  simdjson::ondemand::document doc;
  if (auto error = parser.iterate(text, size, capacity).get(doc))
    return CorruptError(std::string("malformed event skipped (") + simdjson::error_message(error) + ")");
  JsonEvent event;
  event.offset = offset;
  event.text = std::string_view(text, size);
  if (auto error = doc.get_object().get(event.object))
    return CorruptError(std::string("malformed event skipped (") + simdjson::error_message(error) + ")");
  return fn(event);
}

template <typename Fn>
Status Reader::ParseEvent(simdjson::ondemand::parser& parser, std::string& scratch, const char* p,
                          const char* stop, Fn& fn, Profile* repairs) {
  size_t size = static_cast<size_t>(stop - p);
  // The buffer keeps SIMDJSON_PADDING readable bytes after any data.
  Status status = Deliver(parser, p, size, size + simdjson::SIMDJSON_PADDING, Off(p), fn);
  if (status.code() == StatusCode::kCorrupt) {
    RepairCounts counts;
    if (Repair(std::string_view(p, size), &scratch, &counts)) {
      size_t repaired = scratch.size();
      scratch.resize(repaired + simdjson::SIMDJSON_PADDING);
      status = Deliver(parser, scratch.data(), repaired, scratch.size(), Off(p), fn);
      if (status.ok()) {
        std::string where = At(options_.display_name, Off(p));
        if (counts.invalid_utf8) repairs->CountLoss(LossKind::kTextReplaced, "invalid UTF-8 replaced with U+FFFD", where, counts.invalid_utf8);
        if (counts.bare_na) repairs->CountLoss(LossKind::kValueRepaired, "bare N/A value read as the string \"N/A\"", where, counts.bare_na);
      }
    }
  }
  return status;
}

Status Reader::HandleEvent(const char* p, const char* stop) {
  Status status;
  // An event the caller does not want is not parsed at all (a pass that
  // reads only a few kinds of events: trace_view's metadata pass).
  if (!Wanted(p, stop)) {
    ++stats_.events;
    return status;
  }
  if (parallel()) {
    // A re-read after a discarded range: sink 0, committed at once, so that
    // what it stages keeps its place among the reader's own loss counts.
    EventSink* sink = sinks_[0];
    auto fn = [sink](JsonEvent& event) { return sink->OnEvent(event); };
    status = ParseEvent(parser_, scratch_, p, stop, fn, profile_);
    sink->Commit();
  } else {
    status = ParseEvent(parser_, scratch_, p, stop, on_event_, profile_);
  }
  if (status.ok()) { ++stats_.events; return status; }
  if (status.code() != StatusCode::kCorrupt) return status;
  Loss(LossKind::kRowSkipped, status.message(), p);
  ++stats_.skipped_events;
  return status;
}

StatusOr<const char*> Reader::Flush() {
  const size_t n = batch_.size();
  const size_t bytes = static_cast<size_t>(batch_.back().stop - batch_.front().p);
  const size_t threads = bytes < kMinParallelBatchBytes ? 1 : std::min(sinks_.size(), n);
  // Contiguous ranges of about equal bytes (events differ in size).
  std::vector<size_t> bounds(threads + 1, n);
  bounds[0] = 0;
  for (size_t w = 1; w < threads; ++w) {
    const char* target = batch_.front().p + bytes / threads * w;
    bounds[w] = static_cast<size_t>(
        std::lower_bound(batch_.begin() + static_cast<std::ptrdiff_t>(bounds[w - 1]), batch_.end(), target,
                         [](const Span& span, const char* at) { return span.p < at; }) -
        batch_.begin());
  }
  auto job = [&](size_t w) {
    Worker& worker = *workers_[w];
    EventSink* sink = sinks_[w];
    auto fn = [sink](JsonEvent& event) { return sink->OnEvent(event); };
    worker.status = Status::Ok();
    worker.events = 0;
    for (size_t i = bounds[w]; i < bounds[w + 1]; ++i) {
      if (!Wanted(batch_[i].p, batch_[i].stop)) {
        ++worker.events;
        continue;
      }
      Status status = ParseEvent(worker.parser, worker.scratch, batch_[i].p, batch_[i].stop, fn, sink->loss_profile());
      if (!status.ok()) {
        worker.status = std::move(status);
        return;
      }
      ++worker.events;
    }
  };
  pool_->Run(threads, job);
  for (size_t w = 0; w < threads; ++w) {
    Worker& worker = *workers_[w];
    if (worker.status.ok()) {
      sinks_[w]->Commit();
      stats_.events += worker.events;
      continue;
    }
    for (size_t v = w; v < threads; ++v) sinks_[v]->Discard();
    const char* rewind = bounds[w] < n ? batch_[bounds[w]].p : nullptr;
    batch_.clear();
    if (worker.status.code() != StatusCode::kCorrupt) return worker.status;
    return rewind;
  }
  batch_.clear();
  return static_cast<const char*>(nullptr);
}

// Finds the first place at or after `from` that looks like the start of an
// event: '{', blanks, then the key "ph" or "name" (Kineto writes "ph" first,
// trace_view.json "name"). A guess: it may lie inside a string, which is why
// ScanInParallel checks every guess against the scan of the range before it.
const char* EventStartCandidate(const char* from, const char* end) {
  for (const char* c = from; c < end;) {
    c = static_cast<const char*>(std::memchr(c, '{', static_cast<size_t>(end - c)));
    if (!c) return nullptr;
    const char* q = c + 1;
    while (q < end && IsSpace(*q)) ++q;
    const std::string_view rest(q, static_cast<size_t>(std::min<std::ptrdiff_t>(end - q, 6)));
    if (rest.substr(0, 4) == "\"ph\"" || rest == "\"name\"") return c;
    c = c + 1;
  }
  return nullptr;
}

// Thread t takes the events that start in the t-th of T equal byte ranges of
// [p, end) and parses each one as soon as it has found its end, while the text
// is still in its cache. Thread 0 starts at `p`, a known event start; thread
// t > 0 at EventStartCandidate(split t), and that guess counts only if thread
// t-1's scan arrives exactly there. A thread follows the array's grammar
// strictly (event, blanks, ',', blanks, '{', …) and stops at anything else
// (an incomplete event at the end of the region, ']', a control character,
// nesting or size limits…), which the state machine then meets itself. Parts
// are committed in order while each start is confirmed, so the events, their
// order and the data loss are those of the one-thread reader; a part whose
// event does not parse is read again one event at a time, as in Flush.
StatusOr<const char*> Reader::ScanInParallel(const char* p, const char* end) {
  struct Part {
    const char* start = nullptr;      // first event start (a guess for t > 0), nullptr: none
    const char* last_stop = nullptr;  // one past its last parsed event
    const char* next = nullptr;       // the event start it stopped at, when it reached its limit
    uint64_t events = 0;
    Status status;                    // first parse failure
  };
  const size_t threads = sinks_.size();
  const size_t bytes = static_cast<size_t>(end - p);
  std::vector<const char*> split(threads + 1, end);
  std::vector<Part> parts(threads);
  for (size_t t = 0; t < threads; ++t) split[t] = p + bytes / threads * t;
  parts[0].start = p;
  for (size_t t = 1; t < threads; ++t) parts[t].start = EventStartCandidate(split[t], end);
  auto job = [&](size_t t) {
    Part& part = parts[t];
    Worker& worker = *workers_[t];
    EventSink* sink = sinks_[t];
    auto fn = [sink](JsonEvent& event) { return sink->OnEvent(event); };
    const char* limit = split[t + 1];  // events starting here or later belong to the next part
    for (const char* q = part.start; q != nullptr;) {
      if (t + 1 < threads && q >= limit) {
        part.next = q;
        return;
      }
      const char* stop = nullptr;
      if (ScanContainer(q, end, options_.max_depth, &stop) != ScanResult::kComplete) return;
      if (static_cast<size_t>(stop - q) > options_.max_event_bytes) return;
      if (Wanted(q, stop)) {
        Status status = ParseEvent(worker.parser, worker.scratch, q, stop, fn, sink->loss_profile());
        if (!status.ok()) {
          part.status = std::move(status);
          return;
        }
      }
      ++part.events;
      part.last_stop = stop;
      const char* a = stop;
      while (a < end && IsSpace(*a)) ++a;
      if (a >= end || *a != ',') return;
      ++a;
      while (a < end && IsSpace(*a)) ++a;
      if (a >= end || *a != '{') return;
      q = a;
    }
  };
  pool_->Run(threads, job);

  const char* resume = p;
  for (size_t t = 0; t < threads; ++t) {
    Part& part = parts[t];
    const bool confirmed = t == 0 || (parts[t - 1].next != nullptr && parts[t - 1].next == part.start);
    if (!confirmed) {
      for (size_t v = t; v < threads; ++v) sinks_[v]->Discard();
      break;
    }
    if (!part.status.ok()) {
      for (size_t v = t; v < threads; ++v) sinks_[v]->Discard();
      if (part.status.code() != StatusCode::kCorrupt) return part.status;
      state_ = State::kEventsNext;
      serial_stretch_ = true;
      return part.start;
    }
    sinks_[t]->Commit();
    stats_.events += part.events;
    if (part.events > 0) {
      resume = part.last_stop;
      state_ = State::kEventsAfter;
    }
    if (part.next == nullptr) {  // stopped before its limit: the state machine takes over there
      for (size_t v = t + 1; v < threads; ++v) sinks_[v]->Discard();
      break;
    }
  }
  return resume;
}

Status Reader::HandleTopLevelValue(const char* p, const char* stop) {
  // Wrapped in [ ] so that scalars, objects and arrays all come out as a value.
  scratch_.assign("[");
  scratch_.append(p, static_cast<size_t>(stop - p));
  scratch_.append("]");
  size_t size = scratch_.size();
  scratch_.resize(size + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array array;
  simdjson::ondemand::value value;
  Status status;
  if (parser_.iterate(scratch_.data(), size, scratch_.size()).get(doc) || doc.get_array().get(array)) {
    status = CorruptError("x");
  } else {
    auto it = array.begin();
    if (it.error() || it == array.end() || (*it).get(value)) status = CorruptError("x");
    else status = on_key_(key_, value);
  }
  if (status.code() == StatusCode::kCorrupt) {
    Loss(LossKind::kValueIgnored, "unreadable top-level value \"" + key_ + "\" skipped", p);
    return Status::Ok();
  }
  return status;
}

const char* Reader::Resync(const char* p, const char* end, bool eof, const char** keep) {
  *keep = nullptr;
  while (p < end) {
    const char* brace = static_cast<const char*>(std::memchr(p, '{', static_cast<size_t>(end - p)));
    const char* bracket = static_cast<const char*>(std::memchr(p, ']', static_cast<size_t>(end - p)));
    const char* c = brace && (!bracket || brace < bracket) ? brace : bracket;
    if (!c) return end;
    if (!eof && static_cast<size_t>(end - c) < kResyncLookaheadBytes) { *keep = c; return nullptr; }
    const char* q = c + 1;
    while (q < end && IsSpace(*q)) ++q;
    std::string_view rest(q, static_cast<size_t>(end - q));
    if (*c == '{') {
      if (rest.substr(0, 4) == "\"ph\"" || rest.substr(0, 6) == "\"name\"") return c;
    } else {
      // End of the events array: `]` then `,` + key or `}` (root object) or the end (root array).
      if (rest.empty() || rest[0] == '}' || (rest[0] == ',' && rest.find('"') != std::string_view::npos &&
                                             rest.find_first_not_of(" \n\r\t", 1) == rest.find('"')))
        return c;
    }
    p = c + 1;
  }
  return end;
}

StatusOr<size_t> Reader::Process(const char* begin, const char* end, uint64_t base, bool eof) {
  begin_ = begin;
  base_ = base;
  serial_stretch_ = false;
  const char* p = begin;
  auto consumed = [&](const char* at) { return static_cast<size_t>(at - begin); };
// Parallel mode: parse and commit the batched events before anything that
// follows them in the file is counted or returned; when a range was discarded,
// go back to its first event and read on one event at a time.
#define PYPTO_FLUSH_BATCH()                                   \
  if (!batch_.empty()) {                                      \
    PYPTO_ASSIGN_OR_RETURN(const char* rewind_to, Flush());   \
    if (rewind_to) {                                          \
      p = rewind_to;                                          \
      state_ = State::kEventsNext;                            \
      serial_stretch_ = true;                                 \
      continue;                                               \
    }                                                         \
  }
  while (true) {
    if (resyncing_) {
      const char* keep;
      const char* at = Resync(p, end, eof, &keep);
      if (!at) return consumed(keep);
      if (at == end) return consumed(end);
      resyncing_ = false;
      p = at;
      state_ = State::kEventsNext;
    }
    if (state_ == State::kStart && base == 0 && p == begin && end - p >= 3 &&
        std::memcmp(p, "\xEF\xBB\xBF", 3) == 0)
      p += 3;  // UTF-8 byte order mark
    while (p < end && IsSpace(*p)) ++p;
    if (p == end) {
      PYPTO_FLUSH_BATCH();
      return consumed(end);
    }
    char c = *p;
    switch (state_) {
      case State::kStart:
        if (c == '{' && options_.root_must_be_array)
          return UnsupportedError(At(options_.display_name, Off(p)) +
                                  ": expected a JSON array of trace events ('['), found '{'");
        if (c == '{') { state_ = State::kRootKey; ++p; break; }
        if (c == '[') { stats_.root_is_array = true; stats_.found_events = true; state_ = State::kEventsFirst; ++p; break; }
        return UnsupportedError(At(options_.display_name, Off(p)) +
                                ": not a JSON trace (expected '{' or '[' as the first character)");
      case State::kRootKey: {
        if (c == '}') { state_ = State::kDone; ++p; break; }
        if (c != '"') return CorruptError(At(options_.display_name, Off(p)) + ": expected a key in the top-level object");
        const char* stop = StringEnd(p, end);
        if (!stop) {
          if (static_cast<size_t>(end - p) > options_.max_event_bytes) return SizeError(p);
          return consumed(p);
        }
        key_.assign(p + 1, static_cast<size_t>(stop - p - 2));
        p = stop;
        state_ = State::kRootColon;
        break;
      }
      case State::kRootColon:
        if (c != ':') return CorruptError(At(options_.display_name, Off(p)) + ": expected ':' after key \"" + key_ + "\"");
        ++p;
        state_ = State::kRootValue;
        break;
      case State::kRootValue: {
        if (key_ == options_.events_key && c == '[') {
          stats_.found_events = true;
          state_ = State::kEventsFirst;
          ++p;
          break;
        }
        if (c == '}' || c == ']' || c == ',' || c == ':')
          return CorruptError(At(options_.display_name, Off(p)) + ": expected a value for key \"" + key_ + "\"");
        const char* stop = nullptr;
        if (c == '{' || c == '[') {
          ScanResult r = ScanContainer(p, end, options_.max_depth, &stop);
          if (r == ScanResult::kTooDeep) return DepthError(stop);
          if (r == ScanResult::kControlInString) {
            return CorruptError(At(options_.display_name, Off(stop)) + ": control character inside a string in top-level value \"" + key_ + "\"");
          }
          if (r == ScanResult::kNeedMore) stop = nullptr;
        } else {
          stop = ScalarEnd(p, end);
        }
        if (!stop) {
          if (eof) { state_ = State::kRootValue; stats_.truncated = true; return consumed(end); }
          if (static_cast<size_t>(end - p) > options_.max_event_bytes) return SizeError(p);
          return consumed(p);
        }
        if (static_cast<size_t>(stop - p) > options_.max_event_bytes) return SizeError(p);
        PYPTO_RETURN_IF_ERROR(HandleTopLevelValue(p, stop));
        p = stop;
        state_ = State::kRootAfterValue;
        break;
      }
      case State::kRootAfterValue:
        if (c == ',') { state_ = State::kRootKey; ++p; break; }
        if (c == '}') { state_ = State::kDone; ++p; break; }
        return CorruptError(At(options_.display_name, Off(p)) + ": expected ',' or '}' in the top-level object");
      case State::kEventsFirst:
      case State::kEventsNext: {
        if (c == ']' ) {
          PYPTO_FLUSH_BATCH();
          if (state_ == State::kEventsNext) Loss(LossKind::kValueIgnored, "trailing comma in the events array", p);
          ++p;
          state_ = stats_.root_is_array ? State::kDone : State::kRootAfterValue;
          break;
        }
        if (parallel() && !serial_stretch_ && c == '{' &&
            static_cast<size_t>(end - p) >= std::max<size_t>(options_.min_parallel_scan_bytes, 1) * sinks_.size()) {
          PYPTO_FLUSH_BATCH();
          PYPTO_ASSIGN_OR_RETURN(const char* resume, ScanInParallel(p, end));
          if (resume != p || serial_stretch_) {
            p = resume;
            break;
          }
        }
        const char* stop = nullptr;
        ScanResult r = ScanResult::kComplete;
        if (c == '{' || c == '[') {
          r = ScanContainer(p, end, options_.max_depth, &stop);
          if (r == ScanResult::kTooDeep) {
            PYPTO_FLUSH_BATCH();
            return DepthError(stop);
          }
        } else {
          stop = ScalarEnd(p, end);
          if (!stop) r = ScanResult::kNeedMore;
        }
        if (r == ScanResult::kNeedMore) {
          PYPTO_FLUSH_BATCH();
          if (eof) { stats_.truncated = true; return consumed(end); }
          if (static_cast<size_t>(end - p) > options_.max_event_bytes) return SizeError(p);
          return consumed(p);
        }
        if (r == ScanResult::kControlInString) {
          PYPTO_FLUSH_BATCH();
          Loss(LossKind::kRowSkipped, "malformed event skipped (control character or unescaped quote in a string)", p);
          ++stats_.skipped_events;
          resyncing_ = true;
          ++p;
          break;
        }
        if (static_cast<size_t>(stop - p) > options_.max_event_bytes) {
          PYPTO_FLUSH_BATCH();
          return SizeError(p);
        }
        if (c != '{') {
          PYPTO_FLUSH_BATCH();
          ++stats_.non_object_elements;
          Loss(LossKind::kRowSkipped, "non-object element in the events array skipped", p);
          p = stop;
          state_ = State::kEventsAfter;
          break;
        }
        if (parallel() && !serial_stretch_) {
          batch_.push_back({p, stop});
          p = stop;
          state_ = State::kEventsAfter;
          break;
        }
        Status status = HandleEvent(p, stop);
        if (status.code() == StatusCode::kCorrupt) {
          resyncing_ = true;
          ++p;
          break;
        }
        PYPTO_RETURN_IF_ERROR(status);
        p = stop;
        state_ = State::kEventsAfter;
        break;
      }
      case State::kEventsAfter:
        if (c == ',') { state_ = State::kEventsNext; ++p; break; }
        PYPTO_FLUSH_BATCH();
        if (c == ']') { ++p; state_ = stats_.root_is_array ? State::kDone : State::kRootAfterValue; break; }
        if (c == '{') { Loss(LossKind::kValueIgnored, "missing comma between events", p); state_ = State::kEventsNext; break; }
        Loss(LossKind::kRowSkipped, "malformed event skipped (unexpected character between events)", p);
        resyncing_ = true;
        break;
      case State::kDone:
        Loss(LossKind::kValueIgnored, "data after the end of the JSON root ignored", p);
        return consumed(end);
    }
  }
}
#undef PYPTO_FLUSH_BATCH

Status Reader::Finish(uint64_t total_bytes) {
  stats_.bytes = total_bytes;
  if (state_ == State::kStart) {
    return UnsupportedError(options_.display_name + (total_bytes == 0 ? ": file is empty" : ": file holds only whitespace"));
  }
  if (state_ != State::kDone && !resyncing_) stats_.truncated = true;
  if (state_ != State::kDone && resyncing_) {
    // The end of the array was lost while skipping a malformed event.
    profile_->CountLoss(LossKind::kTruncated, "input ends while skipping a malformed event", At(options_.display_name, total_bytes));
  } else if (stats_.truncated) {
    profile_->CountLoss(LossKind::kTruncated, "truncated (input ends before the JSON closes; events so far kept)",
                        At(options_.display_name, total_bytes));
  }
  if (!stats_.found_events) {
    return UnsupportedError(options_.display_name + ": JSON but not a trace (no \"" + options_.events_key +
                            "\" array in the top-level object)");
  }
  return Status::Ok();
}

}  // namespace

std::string_view TrimToken(std::string_view token) {
  while (!token.empty() && IsSpace(token.back())) token.remove_suffix(1);
  while (!token.empty() && IsSpace(token.front())) token.remove_prefix(1);
  return token;
}

void AppendCompactJson(std::string_view json, std::string* out) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      out->push_back(c);
      if (c == '\\' && i + 1 < json.size()) out->push_back(json[++i]);
      else if (c == '"') in_string = false;
    } else if (!IsSpace(c)) {
      if (c == '"') in_string = true;
      out->push_back(c);
    }
  }
}

namespace {

// Parses a mapped plain file in place, in windows of options.buffer_bytes:
// the reader sees the regions it would see through the ring (the unconsumed
// tail, then the next window) without a byte copied. simdjson may read up to
// SIMDJSON_PADDING bytes past a region's end; inside the file those are the
// bytes that follow, so only the last region, which ends within that distance
// of the file's end, is copied into a padded buffer.
StatusOr<JsonStreamStats> StreamMapped(io::FileMapping& mapping, io::ByteSource& source,
                                       const JsonStreamOptions& options, Reader& reader) {
  const char* data = mapping.data();
  const uint64_t size = mapping.size();
  const uint64_t window = std::max<size_t>(options.buffer_bytes, 1);
  std::vector<char> last;       // the final region and its padding
  uint64_t tail = 0;            // the first byte the reader has not consumed
  uint64_t window_end = 0;
  uint64_t next_progress = kProgressIntervalBytes;
  bool eof = false;
  while (!eof) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
      return CancelledError(options.display_name + ": import cancelled at byte " + std::to_string(window_end));
    window_end = std::min(size, window_end + window);
    const char* begin = data + tail;
    const char* end = data + window_end;
    if (size - window_end < simdjson::SIMDJSON_PADDING) {
      window_end = size;
      eof = true;
      last.assign(data + tail, data + size);
      last.resize(last.size() + simdjson::SIMDJSON_PADDING);
      begin = last.data();
      end = begin + (size - tail);
    }
    auto used = reader.Process(begin, end, tail, eof);
    PYPTO_RETURN_IF_ERROR(mapping.Intact());
    if (!used.ok()) return used.status();
    tail += *used;
    mapping.ReleaseBefore(tail);
    if (options.progress && window_end >= next_progress) {
      options.progress(window_end, source.file_size());
      next_progress = window_end + kProgressIntervalBytes;
    }
  }
  PYPTO_RETURN_IF_ERROR(reader.Finish(size));
  PYPTO_RETURN_IF_ERROR(mapping.Intact());
  if (options.progress) options.progress(source.file_size(), source.file_size());
  return reader.stats();
}

StatusOr<JsonStreamStats> Stream(io::ByteSource& source, const JsonStreamOptions& options, Reader& reader) {
  if (options.map_plain_files) {
    if (std::unique_ptr<io::FileMapping> mapping = source.MapWhole())
      return StreamMapped(*mapping, source, options, reader);
  }
  BufferRing ring(source, options.buffer_bytes, std::max<size_t>(options.buffer_count, 2));
  std::vector<char> carry;        // region for tails longer than the headroom
  const char* tail = nullptr;     // unconsumed bytes of the previous region
  size_t tail_size = 0;
  uint64_t offset = 0;            // stream offset of the next slot's first data byte
  uint64_t next_progress = kProgressIntervalBytes;
  int held = -1;                  // slot whose bytes `tail` points into
  bool eof = false;
  while (!eof) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
      return CancelledError(options.display_name + ": import cancelled at byte " + std::to_string(offset));
    size_t index = ring.Next();
    BufferRing::Slot& slot = ring.slot(index);
    if (!slot.error.ok()) {
      if (held >= 0) ring.Release(static_cast<size_t>(held));
      return slot.error;
    }
    eof = slot.eof;
    const char* begin;
    const char* end;
    if (tail_size <= kHeadroomBytes) {
      char* start = slot.data() - tail_size;
      if (tail_size) std::memmove(start, tail, tail_size);
      begin = start;
      end = slot.data() + slot.size;
    } else {
      // Long tail (a big event crossing the buffer edge): tail + new data in the carry buffer.
      std::vector<char> joined(tail_size + slot.size + simdjson::SIMDJSON_PADDING);
      std::memcpy(joined.data(), tail, tail_size);
      std::memcpy(joined.data() + tail_size, slot.data(), slot.size);
      carry.swap(joined);
      begin = carry.data();
      end = carry.data() + tail_size + slot.size;
    }
    if (held >= 0) ring.Release(static_cast<size_t>(held));
    held = static_cast<int>(index);
    uint64_t region_base = offset - tail_size;
    offset += slot.size;
    auto used = reader.Process(begin, end, region_base, eof);
    if (!used.ok()) { ring.Release(index); return used.status(); }
    tail = begin + *used;
    tail_size = static_cast<size_t>(end - tail);
    if (begin == carry.data()) { ring.Release(index); held = -1; }
    if (options.progress && slot.raw_consumed >= next_progress) {
      options.progress(slot.raw_consumed, source.file_size());
      next_progress = slot.raw_consumed + kProgressIntervalBytes;
    }
  }
  if (held >= 0) ring.Release(static_cast<size_t>(held));
  PYPTO_RETURN_IF_ERROR(reader.Finish(offset));
  if (options.progress) options.progress(source.file_size(), source.file_size());
  return reader.stats();
}

}  // namespace

StatusOr<JsonStreamStats> StreamJsonEvents(io::ByteSource& source, const JsonStreamOptions& options,
                                           const TopLevelKeyFn& on_top_level_key, const EventFn& on_event,
                                           Profile* for_data_loss) {
  Reader reader(options, on_top_level_key, on_event, for_data_loss);
  return Stream(source, options, reader);
}

StatusOr<JsonStreamStats> StreamJsonEventsParallel(io::ByteSource& source, const JsonStreamOptions& options,
                                                   const TopLevelKeyFn& on_top_level_key,
                                                   const std::vector<EventSink*>& sinks, Profile* for_data_loss) {
  if (sinks.empty()) return InvalidArgumentError("json_stream: no event sink");
  static const EventFn kUnused = [](JsonEvent&) { return Status::Ok(); };
  Reader reader(options, on_top_level_key, kUnused, for_data_loss, sinks);
  return Stream(source, options, reader);
}

}  // namespace pypto::json_stream
