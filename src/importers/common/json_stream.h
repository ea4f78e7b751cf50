// Streaming reader for large JSON trace files whose bulk is one array of
// event objects: Chrome-trace / Kineto (`{"traceEvents": [...], ...}` or a bare
// `[...]`) and Ascend trace_view.json. The file is never materialised: a
// producer thread reads (and inflates) it into a few reused buffers, a
// structural scanner finds each event's bounds, and each event is handed to
// the caller already opened with simdjson On-Demand, in place.
//
// Robustness (reference kineto-format.md §10): invalid UTF-8, bare N/A values
// and raw control characters inside strings are repaired and counted; an event
// that still does not parse is skipped by resynchronising at the next
// `{ "ph"` / `{ "name"` boundary and counted; a truncated file keeps the events
// read so far and records "truncated at byte N". Limits (event size, nesting)
// end the import with an error that names the file and byte offset.
//
// Build note: the On-Demand types in this API live in a namespace named after
// the instruction set the file is compiled for (simdjson::icelake::ondemand,
// simdjson::fallback::ondemand, ...), so a file that calls it must be compiled
// with the same flags as json_stream.cc (CMake: pypto_json_hot_path()).
#pragma once

#include <simdjson.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "importers/common/parse_threads.h"
#include "io/file.h"
#include "model/profile.h"

namespace pypto::json_stream {

// Size of each read buffer, in bytes. 2 MiB: the ring (3 buffers) stays in
// the last-level cache, so the kernel's copy into it and the parse that follows
// hit the cache (1 GB bench: 8 MiB buffers spent 0.46-0.52 s in the kernel,
// 2 MiB 0.32-0.37 s), while per-buffer costs (thread hand-off, the carry of a
// partial event, waking the parse threads) stay near 10 ms per GB. A mapped
// plain file is parsed in windows of the same size: 2 and 8 MiB windows ran
// alike on the 1 GB bench, 32 MiB ones held ~60 MB more at the peak.
inline constexpr size_t kDefaultBufferBytes = 2u << 20;
// Number of buffers in the producer/consumer ring. 3: one being filled, one
// being parsed, one spare so that neither side waits on the other's jitter.
inline constexpr size_t kDefaultBufferCount = 3;
// Largest single event (or top-level value such as deviceProperties), bytes.
// 16 MiB: the largest real events are kernels with long template names and
// python_function frames (a few KB); 16 MiB is ~1000x that.
inline constexpr size_t kDefaultMaxEventBytes = 16u << 20;
// Deepest nesting of arrays/objects accepted inside one event or value.
// 256: real events nest at most ~5 levels (args -> Input Dims -> dims); far
// below simdjson's own default of 1024 and small enough that a 10^6-deep
// `[[[[...` fails at once.
inline constexpr size_t kDefaultMaxNestingDepth = 256;
// Bytes of the buffer left per parse thread for the threads to split it and
// find the event ends of their own ranges, rather than the reader thread alone
// (StreamJsonEventsParallel): 256 KiB, several hundred events each, so that
// waking the helpers (tens of microseconds) and a wrong guess at a split point
// cost little against the scan they share.
inline constexpr size_t kMinParallelScanBytes = 256u << 10;
// Progress callback interval, bytes of input consumed.
inline constexpr uint64_t kProgressIntervalBytes = 16u << 20;
// A gzip-compressed trace holds about this many times its size in JSON text
// (real Kineto traces compress ~16x: pytorch/torchtitan PR #3483; reference
// kineto-format §10.15).
inline constexpr uint64_t kTypicalGzipRatio = 16;
// The JSON text `source` holds, estimated from its size (gzip: kTypicalGzipRatio
// times the file), for reserving table capacity before a read: a hint, never a bound.
inline uint64_t EstimatedTextBytes(const io::ByteSource& source) {
  return source.file_size() * (source.compression() == io::Compression::kGzip ? kTypicalGzipRatio : uint64_t{1});
}

struct JsonStreamOptions {
  // Name used in messages and data-loss locations (usually the file's base name).
  std::string display_name;
  // Key of the events array when the root is an object; a root array is
  // always taken as the events array.
  std::string events_key = "traceEvents";
  // Refuse a root object (formats whose events are always a bare array, such
  // as Ascend trace_view.json): the error names the first byte.
  bool root_must_be_array = false;
  size_t buffer_bytes = kDefaultBufferBytes;
  // Parse a plain (uncompressed) file in place through a read-only mapping
  // instead of copying it into the buffers (io/file_mapping.h); the windows
  // are buffer_bytes long. false: read, as for gzip input (tests of the
  // buffer edges).
  bool map_plain_files = true;
  size_t buffer_count = kDefaultBufferCount;
  size_t max_event_bytes = kDefaultMaxEventBytes;
  size_t max_depth = kDefaultMaxNestingDepth;
  // Parallel streams: bytes of a buffer left per parse thread for the threads
  // to find the event ends of their own byte ranges (kMinParallelScanBytes;
  // tests set it small to reach that path with small inputs).
  size_t min_parallel_scan_bytes = kMinParallelScanBytes;
  // When set, an event whose text it refuses is skipped without being parsed
  // (nor repaired, nor counted as damage), but counted in the stats' events.
  // For passes that read a few kinds of events out of many. Parallel streams
  // call it on every parse thread at once: it must not change shared state.
  std::function<bool(std::string_view)> prefilter;
  // (bytes of the file consumed, file size), about every kProgressIntervalBytes.
  std::function<void(uint64_t, uint64_t)> progress;
  const std::atomic<bool>* cancel = nullptr;
};

// One event of the events array, opened in place (no copy unless it spanned
// two buffers or needed a repair).
struct JsonEvent {
  uint64_t offset = 0;                 // byte offset of its `{` in the (decompressed) input
  std::string_view text;               // the event's JSON text
  simdjson::ondemand::object object;   // iterate once, in order (On-Demand)
};

// What a stream looked like, for the caller's metadata.
struct JsonStreamStats {
  bool root_is_array = false;       // bare `[...]` (legacy export, trace_view.json)
  bool found_events = false;        // saw the events array
  bool truncated = false;           // input ended before the root closed
  uint64_t bytes = 0;               // decompressed bytes read
  uint64_t events = 0;              // events handed to on_event
  uint64_t skipped_events = 0;      // malformed events skipped (counted in data loss too)
  uint64_t non_object_elements = 0; // array elements that were not objects (skipped, counted)
};

// Called for each top-level key other than the events key (root objects only),
// in file order, before or after the events.
using TopLevelKeyFn = std::function<Status(std::string_view key, simdjson::ondemand::value value)>;
// Called for each event. Return OK to go on; a kCorrupt status marks this event
// as malformed (it is skipped, counted under the status message, and the
// reader resynchronises); any other error stops the stream and is returned.
// The callback must not keep `text` or `object` beyond the call.
using EventFn = std::function<Status(JsonEvent& event)>;

// Streams `source` to the end. Non-fatal problems are counted in
// `for_data_loss` (reason -> count, first "<display_name>: byte N").
// Errors: empty input, a root that is not an object/array, no events array in
// a root object ("unsupported"), limits exceeded, cancellation, I/O errors.
StatusOr<JsonStreamStats> StreamJsonEvents(io::ByteSource& source, const JsonStreamOptions& options,
                                           const TopLevelKeyFn& on_top_level_key, const EventFn& on_event,
                                           Profile* for_data_loss);

// Parallel parsing ------------------------------------------------------------
//
// On a plain file the producer thread only copies from the page cache, so the
// consumer (event bounds + simdjson + the importer's callback) is the
// bottleneck. With several sinks, the reader still finds the event bounds of a
// buffer on its own thread, then splits that buffer's events into contiguous
// ranges (by bytes), one per sink, and parses them at once: range 0 on the
// reader thread, the others on helper threads. Each sink stages what its events
// produce (rows in a thread-local table, data loss) and the reader commits the
// sinks in range order, so the result is in file order, as if one thread had
// read the file. Anything unusual between events (a missing comma, a
// non-object element, the end of the array) first commits the events before it.
// When an event of a range does not parse (kCorrupt), that range and the later
// ones are discarded and re-read one event at a time from the range's first
// event, exactly as the single-thread reader does (count, skip, resynchronise).

// Batches smaller than this are parsed on the reader thread alone: waking the
// helpers costs tens of microseconds, more than parsing ~64 KiB.
inline constexpr size_t kMinParallelBatchBytes = 64u << 10;


class EventSink {
 public:
  virtual ~EventSink() = default;
  // Same contract as EventFn. Runs on the reader thread (sink 0, and every
  // sink's single-event re-reads) or on a helper thread; never concurrently
  // with another call on the same sink.
  virtual Status OnEvent(JsonEvent& event) = 0;
  // Where the reader counts the repairs (invalid UTF-8, bare N/A) of this
  // sink's events; committed with them.
  virtual Profile* loss_profile() = 0;
  // Reader thread, in file order: what OnEvent staged since the last Commit or
  // Discard becomes part of the result.
  virtual void Commit() = 0;
  // Reader thread: forget what OnEvent staged since the last Commit.
  virtual void Discard() = 0;
};

// Like StreamJsonEvents, with the events parsed by `sinks.size()` threads (one
// sink per thread; sinks[0] also serves the single-event re-reads). The result
// (events, their order, data loss with first locations, stats) is the same as
// StreamJsonEvents with one sink's OnEvent + Commit as the callback.
StatusOr<JsonStreamStats> StreamJsonEventsParallel(io::ByteSource& source, const JsonStreamOptions& options,
                                                   const TopLevelKeyFn& on_top_level_key,
                                                   const std::vector<EventSink*>& sinks, Profile* for_data_loss);

// Helpers for event callbacks -------------------------------------------------

// Text of a JSON token without surrounding whitespace (On-Demand's
// raw_json_token() may include trailing blanks).
std::string_view TrimToken(std::string_view token);
// Copies `json` without whitespace outside strings: "[[4096, 1024], []]" -> "[[4096,1024],[]]".
void AppendCompactJson(std::string_view json, std::string* out);

// `text == "literal"` with the literal's length known at compile time, so the
// byte compare inlines to a load and a compare instead of a call to memcmp
// (std::string_view's operator== calls memcmp; ~20 compares run per event).
template <size_t N>
inline bool Eq(std::string_view text, const char (&literal)[N]) {
  return text.size() == N - 1 && std::memcmp(text.data(), literal, N - 1) == 0;
}

// A field's key as written, without unescaping (On-Demand's unescaped_key()
// copies every key; events have ~15 keys and none of the keys the importers
// look for has an escape). A key with an escaped quote is cut at it and then
// matches nothing; a caller that keeps keys checks for '\\' and unescapes.
inline std::string_view RawKey(simdjson::ondemand::field& field) {
  const char* start = field.key().raw();
  const char* end = start;
  while (*end != '"') ++end;  // the key string is closed (simdjson validated it)
  return std::string_view(start, static_cast<size_t>(end - start));
}

}  // namespace pypto::json_stream
