// The parallel Kineto import (events of a buffer parsed by several threads into
// thread-local tables, committed in file order) must give exactly the profile
// of the single-thread reader: rows, string ids, tracks, metadata, notes and
// data loss with first locations, also around malformed events (a range is
// discarded and re-read one event at a time) and buffer edges.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "unit/parse_threads_env.h"
#include "importers/kineto/kineto_importer.h"

namespace pypto {
namespace {

// A synthetic trace of `events` events with the pathologies the reader counts
// sprinkled through it (several per parallel range).
std::string MakeTrace(int events) {
  std::string out = "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\"}],\n";
  out += "\"traceEvents\": [\n";
  int64_t ts = 1000;
  for (int i = 0; i < events; ++i) {
    const std::string n = std::to_string(i);
    const std::string t = std::to_string(ts) + "." + std::to_string(i % 1000);
    ts += 7;
    std::string e;
    switch (i % 11) {
      case 0:
        e = "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm_" + std::to_string(i % 37) +
            "\", \"pid\": 1, \"tid\": " + std::to_string(1 + i % 3) + ", \"ts\": " + t +
            ", \"dur\": 5, \"args\": {\"External id\": " + n + ", \"Input Dims\": [[4, " + n +
            "], []], \"Sequence number\": " + n + "}}";
        break;
      case 1:
        e = "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, "
            "\"ts\": " + t + ", \"dur\": 2, \"args\": {\"correlation\": " + n + ", \"External id\": " + n + "}}";
        break;
      case 2:
        e = "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_" + std::to_string(i % 13) +
            "\", \"pid\": 0, \"tid\": \"stream " + std::to_string(7 + i % 2) + "\", \"ts\": " + t +
            ", \"dur\": 3, \"args\": {\"correlation\": " + std::to_string(i - 1) +
            ", \"device\": 0, \"stream\": " + std::to_string(7 + i % 2) + ", \"grid\": [1, 2, 3], \"block\": [4, 5, 6]}}";
        break;
      case 3:
        e = "{\"ph\": \"s\", \"cat\": \"fwdbwd\", \"id\": " + n + ", \"pid\": 1, \"tid\": 2, \"ts\": " + t + "}";
        break;
      case 4:
        e = "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": " +
            std::to_string(i % 5) + ", \"ts\": " + t + ", \"args\": {\"Total Allocated\": " + n +
            ", \"Bytes\": 512}}";
        break;
      case 5:
        e = "{\"ph\": \"C\", \"name\": \"mem\", \"pid\": " + std::to_string(10 + i % 4) + ", \"tid\": 0, \"ts\": " +
            t + ", \"args\": {\"a\": " + n + ", \"b\": 2.5}}";
        break;
      case 6:
        e = "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": " + std::to_string(1 + i % 3) +
            ", \"args\": {\"name\": \"thread " + n + "\"}}";
        break;
      case 7:
        e = "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ann_" + n + "\", \"pid\": 1, \"tid\": 1, "
            "\"ts\": " + t + ", \"dur\": 9, \"args\": {\"Collective name\": \"allreduce\", \"Group size\": 8}}";
        break;
      case 8:
        e = "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7, \"ts\": " +
            t + ", \"dur\": 4, \"args\": {\"bytes\": 4096, \"correlation\": 99999999}}";
        break;
      case 9:
        e = "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"fn_" + std::to_string(i % 101) +
            "\", \"pid\": 1, \"tid\": 1, \"ts\": " + t + ", \"dur\": -1}";
        break;
      default:
        e = "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(i % 2) +
            ", \"args\": {\"name\": \"proc " + n + "\"}}";
        break;
    }
    // Pathologies, each repeated through the file.
    if (i % 997 == 500) e = "{\"ph\": 5, \"name\": \"bad phase type\", \"ts\": 1}";                 // corrupt: re-read
    if (i % 1499 == 700) e = "{\"ph\": \"X\", \"name\": \"utf8 \xff\xfe\", \"ts\": 3, \"dur\": 1}";  // repaired
    if (i % 1777 == 900) e = "{\"ph\": \"X\", \"name\": \"na\", \"ts\": 3, \"dur\": N/A}";           // repaired
    if (i % 1301 == 300) e = "{\"ph\": \"X\", \"name\": \"dup\", \"ts\": 3, \"ts\": 4, \"dur\": 1}";
    if (i % 2003 == 1000) e = "{\"ph\": \"B\", \"name\": \"begin\", \"ts\": 3}";
    if (i % 2501 == 1200) e = "{\"ph\": \"X\", \"name\": \"ctl\t\", \"ts\": 3}";                  // control char
    if (i == events / 2) e += "\n{\"ph\": \"i\", \"name\": \"Record Window End\", \"pid\": 1, \"tid\": 1, \"ts\": 1}";
    out += e;
    if (i + 1 < events) out += (i % 3001 == 1500) ? "\n" : ",\n";  // missing comma now and then
    if (i % 4001 == 2000) out += "42,\n";                             // non-object element
  }
  out += "],\n\"baseTimeNanoseconds\": 1700000000000000000, \"traceName\": \"t\"}\n";
  return out;
}

Profile Import(const std::string& path, const char* threads) {
  testing::ScopedParseThreads env(threads);
  Profile profile;
  Status status = KinetoImporter()->Import(path, {}, &profile);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return profile;
}

void ExpectSameProfile(const Profile& a, const Profile& b) {
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StrId id = 0; id < a.strings.size(); ++id) ASSERT_EQ(a.Str(id), b.Str(id)) << "string " << id;
  EXPECT_EQ(a.tracks.pid_token, b.tracks.pid_token);
  EXPECT_EQ(a.tracks.tid_token, b.tracks.tid_token);
  EXPECT_EQ(a.tracks.name, b.tracks.name);
  EXPECT_EQ(a.tracks.process_name, b.tracks.process_name);
  EXPECT_EQ(a.tracks.kind, b.tracks.kind);
  EXPECT_EQ(a.tracks.device, b.tracks.device);
  EXPECT_EQ(a.tracks.stream, b.tracks.stream);
  const HostOpTable &h = a.host_ops, &g = b.host_ops;
  EXPECT_EQ(h.name, g.name);
  EXPECT_EQ(h.category, g.category);
  EXPECT_EQ(h.kind, g.kind);
  EXPECT_EQ(h.track, g.track);
  EXPECT_EQ(h.ts, g.ts);
  EXPECT_EQ(h.dur, g.dur);
  EXPECT_EQ(h.input_dims, g.input_dims);
  EXPECT_EQ(h.input_types, g.input_types);
  EXPECT_EQ(h.correlation, g.correlation);
  EXPECT_EQ(h.external_id, g.external_id);
  EXPECT_EQ(h.sequence_number, g.sequence_number);
  const DeviceTaskTable &d = a.device_tasks, &e = b.device_tasks;
  EXPECT_EQ(d.name, e.name);
  EXPECT_EQ(d.kind, e.kind);
  EXPECT_EQ(d.track, e.track);
  EXPECT_EQ(d.ts, e.ts);
  EXPECT_EQ(d.dur, e.dur);
  EXPECT_EQ(d.correlation, e.correlation);
  ASSERT_EQ(d.size(), e.size());
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d.grid(i), e.grid(i)) << i;
    EXPECT_EQ(d.block(i), e.block(i)) << i;
  }
  EXPECT_EQ(d.bytes, e.bytes);
  EXPECT_EQ(d.detail, e.detail);
  EXPECT_TRUE(a.attributes == b.attributes);
  EXPECT_EQ(a.flows.id, b.flows.id);
  EXPECT_EQ(a.flows.track, b.flows.track);
  EXPECT_EQ(a.flows.ts, b.flows.ts);
  EXPECT_TRUE(a.counters.Rows() == b.counters.Rows());
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.notes, b.notes);
  ASSERT_EQ(a.data_loss.size(), b.data_loss.size());
  for (const auto& [reason, entry] : a.data_loss) {
    auto it = b.data_loss.find(reason);
    ASSERT_NE(it, b.data_loss.end()) << reason;
    EXPECT_EQ(entry.count, it->second.count) << reason;
    EXPECT_EQ(entry.first_location, it->second.first_location) << reason;
  }
}

class KinetoParallelTest : public ::testing::TestWithParam<int> {};

TEST_P(KinetoParallelTest, SameProfileAsOneThread) {
  // 20 k events (~3 MB, one buffer, ranges of ~1 MB) and 80 k (~12 MB: crosses
  // the 8 MiB buffer edge).
  const int events = GetParam();
  // The process id keeps concurrent runs of this test (ctest -j, several build
  // trees) from writing the same file under each other.
  const std::string path = ::testing::TempDir() + "parallel_" + std::to_string(events) + "_" +
                           std::to_string(::getpid()) + ".json";
  std::ofstream(path, std::ios::binary) << MakeTrace(events);
  const Profile one = Import(path, "1");
  ASSERT_GT(one.host_ops.size(), 1000u);
  ASSERT_GT(one.data_loss.size(), 5u);  // the pathologies were met
  for (const char* threads : {"2", "3", "8"}) {
    SCOPED_TRACE(std::string("threads ") + threads);
    const Profile many = Import(path, threads);
    ExpectSameProfile(one, many);
  }
  if (!HasFailure()) std::remove(path.c_str());  // kept for a look when the test fails
}

INSTANTIATE_TEST_SUITE_P(Sizes, KinetoParallelTest, ::testing::Values(20000, 80000));

}  // namespace
}  // namespace pypto
