// json_stream: the parallel reader (parse threads that find the event ends of
// their own byte ranges, or parse ranges the reader thread bounded) must hand
// over exactly the events of the one-thread reader, in order, with the same
// data loss and stats, on random traces full of what breaks a guess at an
// event start: args objects whose first key is "name", strings holding
// braces and escaped quotes, missing commas, non-object elements, events that
// do not parse, control characters, invalid UTF-8, bare N/A, truncation.
// Buffers and the parallel threshold are made small so that every path is
// taken many times per trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "importers/common/json_stream.h"
#include "io/file.h"

namespace pypto::json_stream {
namespace {

struct Seen {
  uint64_t offset;
  std::string text;
  bool operator==(const Seen&) const = default;
};

// Stages events; Commit appends them (and the repairs counted for them) to
// the shared result in commit order.
class RecordingSink final : public EventSink {
 public:
  RecordingSink(std::vector<Seen>* out, Profile* loss) : out_(out), loss_(loss) {}
  Status OnEvent(JsonEvent& event) override {
    // Touch the object the way an importer does: read the "ph" field.
    for (auto field : event.object) {
      if (field.error()) return CorruptError("malformed event skipped (field)");
    }
    staged_.push_back({event.offset, std::string(event.text)});
    return Status::Ok();
  }
  Profile* loss_profile() override { return &staged_loss_; }
  void Commit() override {
    out_->insert(out_->end(), staged_.begin(), staged_.end());
    staged_.clear();
    for (const auto& [reason, entry] : staged_loss_.data_loss) loss_->CountLoss(entry.kind, reason, entry.first_location, entry.count);
    staged_loss_.data_loss.clear();
  }
  void Discard() override {
    staged_.clear();
    staged_loss_.data_loss.clear();
  }

 private:
  std::vector<Seen>* out_;
  Profile* loss_;
  std::vector<Seen> staged_;
  Profile staged_loss_;
};

std::string RandomEvent(std::mt19937& rng, int i) {
  const std::string n = std::to_string(i);
  switch (rng() % 6) {
    case 0:
      return "{\"ph\": \"X\", \"name\": \"op" + n + "\", \"ts\": " + n + ", \"dur\": 1, \"args\": {\"Input Dims\": [[" +
             n + ", 2], []], \"s\": \"a{b}[c],d\\\"ph\\\"\"}}";
    case 1:  // args object that looks like an event start
      return "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": " + n +
             ", \"args\": {\"name\": \"thread " + n + "\"}}";
    case 2:  // first key "name", as trace_view.json writes it
      return "{\"name\": \"k" + n + "\", \"ph\": \"X\", \"ts\": " + n + ".5, \"dur\": 2}";
    case 3:
      return "{\n    \"ph\": \"i\", \"name\": \"[memory]\",\n    \"args\": {\"Bytes\": " + n + "}\n  }";
    case 4:  // a first key neither "ph" nor "name": never a guess
      return "{\"cat\": \"kernel\", \"ph\": \"X\", \"name\": \"gemm\", \"ts\": " + n + "}";
    default:
      return "{\"ph\": \"X\", \"name\": \"deep\", \"args\": {\"a\": [[[[" + n + "]]]], \"b\": {\"name\": {\"c\": 1}}}}";
  }
}

std::string RandomTrace(uint32_t seed, int events) {
  std::mt19937 rng(seed);
  std::string out = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
  for (int i = 0; i < events; ++i) {
    std::string e = RandomEvent(rng, i);
    switch (rng() % 97) {  // pathologies, each a few times per trace
      case 0: e = "{\"ph\": X, \"name\": \"unquoted\"}"; break;                   // does not parse
      case 1: e = "{\"ph\": \"X\", \"name\": \"ctl\x01\", \"ts\": 1}"; break;       // control character
      case 2: e = "{\"ph\": \"X\", \"name\": \"utf8 \xff\", \"ts\": 1}"; break;     // repaired
      case 3: e = "{\"ph\": \"X\", \"name\": \"na\", \"dur\": N/A}"; break;         // repaired
      case 4: e = "17"; break;                                                     // non-object element
      case 5: e = "{\"ph\": \"X\", \"name\": \"unbalanced\", \"args\": {\"a\": [1, 2}}"; break;
      default: break;
    }
    out += e;
    if (i + 1 < events) {
      const uint32_t sep = rng() % 53;
      out += sep == 0 ? "\n" : sep == 1 ? " , \n\t" : ",\n";  // a missing comma now and then
    }
  }
  if (seed % 3 != 0) out += "\n], \"displayTimeUnit\": \"ms\"}\n";  // a third of the traces are truncated
  return out;
}

struct Result {
  Status status;
  JsonStreamStats stats;
  std::vector<Seen> events;
  Profile loss;
};

// Keeps the events holding the string "M" (a metadata pass's filter).
bool HoldsM(std::string_view text) { return text.find("\"M\"") != std::string_view::npos; }

JsonStreamOptions SmallOptions(bool filtered = false, bool mapped = true) {
  JsonStreamOptions options;
  if (filtered) options.prefilter = HoldsM;
  options.map_plain_files = mapped;
  options.display_name = "t.json";
  options.buffer_bytes = 16u << 10;         // many buffer edges
  options.min_parallel_scan_bytes = 1024;  // the threads' own scans on almost every buffer
  return options;
}

Result ReadSerial(const std::string& path, bool filtered = false, bool mapped = true) {
  Result r;
  auto source = io::OpenByteSource(path);
  EXPECT_TRUE(source.ok());
  RecordingSink sink(&r.events, &r.loss);
  auto on_key = [](std::string_view, simdjson::ondemand::value) { return Status::Ok(); };
  auto on_event = [&](JsonEvent& event) {
    Status s = sink.OnEvent(event);
    sink.Commit();
    return s;
  };
  auto stats = StreamJsonEvents(**source, SmallOptions(filtered, mapped), on_key, on_event, &r.loss);
  r.status = stats.status();
  if (stats.ok()) r.stats = *stats;
  return r;
}

Result ReadParallel(const std::string& path, size_t threads, bool filtered = false, bool mapped = true) {
  Result r;
  auto source = io::OpenByteSource(path);
  EXPECT_TRUE(source.ok());
  std::vector<std::unique_ptr<RecordingSink>> owned;
  std::vector<EventSink*> sinks;
  for (size_t t = 0; t < threads; ++t) {
    owned.push_back(std::make_unique<RecordingSink>(&r.events, &r.loss));
    sinks.push_back(owned.back().get());
  }
  auto on_key = [](std::string_view, simdjson::ondemand::value) { return Status::Ok(); };
  auto stats = StreamJsonEventsParallel(**source, SmallOptions(filtered, mapped), on_key, sinks, &r.loss);
  r.status = stats.status();
  if (stats.ok()) r.stats = *stats;
  return r;
}

// The parallel read `many` handed over what the one-thread read `one` did:
// the events in order, the stats and the data loss with first locations.
void ExpectSameRead(const Result& one, const Result& many) {
  ASSERT_EQ(one.events.size(), many.events.size());
  EXPECT_TRUE(one.events == many.events);
  EXPECT_EQ(one.stats.events, many.stats.events);
  EXPECT_EQ(one.stats.skipped_events, many.stats.skipped_events);
  EXPECT_EQ(one.stats.non_object_elements, many.stats.non_object_elements);
  EXPECT_EQ(one.stats.truncated, many.stats.truncated);
  ASSERT_EQ(one.loss.data_loss.size(), many.loss.data_loss.size());
  for (const auto& [reason, entry] : one.loss.data_loss) {
    auto it = many.loss.data_loss.find(reason);
    ASSERT_NE(it, many.loss.data_loss.end()) << reason;
    EXPECT_EQ(entry.count, it->second.count) << reason;
    EXPECT_EQ(entry.first_location, it->second.first_location) << reason;
  }
}

TEST(JsonStreamParallel, SameEventsAsOneThreadOnRandomTraces) {
  const std::string path = ::testing::TempDir() + "json_stream_parallel_" + std::to_string(::getpid()) + ".json";
  size_t compared = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << RandomTrace(seed, 600 + static_cast<int>(seed) * 37);
    const Result one = ReadSerial(path);
    ASSERT_TRUE(one.status.ok()) << one.status.ToString();
    ASSERT_GT(one.events.size(), 100u);
    for (size_t threads : {size_t{2}, size_t{3}, size_t{5}}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", threads " + std::to_string(threads));
      const Result many = ReadParallel(path, threads);
      ASSERT_TRUE(many.status.ok()) << many.status.ToString();
      ExpectSameRead(one, many);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 120u);
  if (!HasFailure()) std::remove(path.c_str());
}

TEST(JsonStreamParallel, MappedFileGivesWhatTheReadFileGives) {
  // A plain file is parsed in place through a mapping, in windows of
  // buffer_bytes (16 KiB here); gzip input and map_plain_files = false read
  // it into the ring of buffers. Both must hand over the same events, stats
  // and data loss, serial and parallel. Trailing spaces put the file's end
  // 0 to 79 bytes past a window's end: within simdjson's padding (64 bytes)
  // that window's end moves to the file's end and the last region is copied
  // into a padded buffer; beyond it the window is parsed in place.
  const std::string path = ::testing::TempDir() + "json_stream_mapped_" + std::to_string(::getpid()) + ".json";
  constexpr size_t kWindow = 16u << 10;
  size_t compared = 0;
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    std::string text = RandomTrace(seed, 500 + static_cast<int>(seed) * 29);
    // The file ends `past` bytes after a window's end: 0 to 79, so both sides of 64.
    const size_t past = (seed * 7) % 80;
    text.append(kWindow - text.size() % kWindow + past, ' ');
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(text.size()) + " bytes");
    const Result read = ReadSerial(path, false, false);
    ASSERT_TRUE(read.status.ok()) << read.status.ToString();
    ASSERT_GT(read.events.size(), 100u);
    ExpectSameRead(read, ReadSerial(path, false, true));
    ExpectSameRead(read, ReadParallel(path, 2, false, true));
    ExpectSameRead(ReadParallel(path, 3, true, false), ReadParallel(path, 3, true, true));
    ++compared;
  }
  EXPECT_EQ(compared, 24u);
  if (!HasFailure()) std::remove(path.c_str());
}

TEST(JsonStreamParallel, PrefilterRefusesTheSameEventsOnEveryThread) {
  // With a prefilter (trace_view's metadata pass), the parallel reader skips
  // unparsed exactly the events the one-thread reader skips: the events, the
  // stats and the data loss are the same. The events it hands over are those
  // of the unfiltered read that hold "M" (RandomEvent's case 1, ~1 in 6),
  // at the same offsets.
  const std::string path = ::testing::TempDir() + "json_stream_prefilter_par_" + std::to_string(::getpid()) + ".json";
  size_t compared = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << RandomTrace(seed, 600 + static_cast<int>(seed) * 37);
    const Result all = ReadSerial(path);
    const Result one = ReadSerial(path, true);
    ASSERT_TRUE(one.status.ok()) << one.status.ToString();
    std::vector<Seen> expected;
    for (const Seen& e : all.events)
      if (HoldsM(e.text)) expected.push_back(e);
    ASSERT_GT(expected.size(), 50u);
    EXPECT_TRUE(one.events == expected);
    for (size_t threads : {size_t{2}, size_t{3}}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", threads " + std::to_string(threads));
      const Result many = ReadParallel(path, threads, true);
      ASSERT_TRUE(many.status.ok()) << many.status.ToString();
      ExpectSameRead(one, many);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 40u);
  if (!HasFailure()) std::remove(path.c_str());
}

}  // namespace
}  // namespace pypto::json_stream

namespace pypto::json_stream {
namespace {

TEST(JsonStreamPrefilter, RefusedEventsAreNotParsedNorCountedAsDamage) {
  // Three events: a metadata event, a complete event, and one that does not
  // parse (a missing comma inside it). With a prefilter that keeps only
  // events holding "M", the callback sees the metadata event alone, and the
  // broken event (refused unparsed) is no data loss; without it, it is.
  const std::string path = ::testing::TempDir() + "json_stream_prefilter_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"Python"}},)"
      << R"({"ph":"X","name":"aten::mm","pid":1,"tid":1,"ts":"1.0","dur":1},)"
      << R"({"ph":"X","name":"bad" "pid":1}])";
  auto read = [&](bool filtered, std::vector<std::string>* seen, Profile* loss) {
    auto source = io::OpenByteSource(path);
    EXPECT_TRUE(source.ok());
    JsonStreamOptions options;
    options.display_name = "p.json";
    if (filtered) options.prefilter = [](std::string_view text) { return text.find("\"M\"") != std::string_view::npos; };
    auto on_key = [](std::string_view, simdjson::ondemand::value) { return Status::Ok(); };
    auto on_event = [&](JsonEvent& event) {
      for (auto field : event.object)  // read it as an importer does: a broken event fails here
        if (field.error()) return CorruptError("malformed event skipped (field)");
      seen->push_back(std::string(event.text));
      return Status::Ok();
    };
    return StreamJsonEvents(**source, options, on_key, on_event, loss);
  };
  std::vector<std::string> seen;
  Profile loss;
  auto stats = read(true, &seen, &loss);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("process_name"), std::string::npos);
  EXPECT_TRUE(loss.data_loss.empty());
  std::vector<std::string> all;
  Profile all_loss;
  ASSERT_TRUE(read(false, &all, &all_loss).ok());
  EXPECT_EQ(all.size(), 2u);
  EXPECT_FALSE(all_loss.data_loss.empty());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pypto::json_stream
