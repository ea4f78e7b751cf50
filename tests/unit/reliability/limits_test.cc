// Every safety limit, end to end through LoadProfile (the path the CLI takes):
// each is a named constant, and exceeding it is a clear error naming the file,
// the place and the limit -- never a crash, a hang or a silent empty result.
// The table of limits with their defaults and sources: docs/reliability.md.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "session/profile_session.h"
#include "graph/call_graph.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"
#include "importers/common/csv_reader.h"
#include "importers/detect.h"
#include "importers/common/json_stream.h"
#include "importers/kineto/kineto_importer.h"
#include "io/limits.h"
#include "report/analysis_json.h"
#include "report/analysis_summary.h"
#include "report/chrome_trace_export.h"

namespace pypto {
namespace {

namespace fs = std::filesystem;

class Limits : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pypto-limits.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& data) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
    return path;
  }

  static double SecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  std::string dir_;
};

long MaxRssKb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST_F(Limits, InputSizeCapIsConfigurable) {
  const std::string path = Write("trace.json", "{\"traceEvents\": [" + std::string(5000, ' ') + "]}");
  ImportOptions options;
  options.limits.max_input_bytes = 4096;  // what --max-input-bytes 4096 sets
  auto loaded = LoadProfile(path, options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(loaded.status().message().find(path), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("4096"), std::string::npos) << loaded.status().message();
  // Under the default cap (io::kDefaultMaxInputBytes) the same file loads.
  EXPECT_TRUE(LoadProfile(path).ok());
}

TEST_F(Limits, SingleJsonEventSize) {
  const std::string big = "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" +
                          std::string(json_stream::kDefaultMaxEventBytes + 1, 'a') + "\"}]}";
  auto loaded = LoadProfile(Write("big_event.json", big));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(loaded.status().message().find("big_event.json: byte 18"), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("event size limit"), std::string::npos);
}

TEST_F(Limits, CsvRecordLength) {
  const std::string header =
      "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us)\n";
  const std::string row = "1,4294967295,1,2,k,MatMulV3,dynamic,AI_CORE,1000.5,2\n";
  const std::string huge = "1,4294967295,2,2," + std::string(csv::kMaxRecordBytes + 10, 'x') + ",T,d,AI_CORE,1,2\n";
  auto loaded = LoadProfile(Write("kernel_details.csv", header + row + row + huge + row));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kLimitExceeded) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("kernel_details.csv"), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("line 4"), std::string::npos) << loaded.status().message();
}

TEST_F(Limits, MillionDeepJsonNestingInKinetoAndTraceView) {
  // Kineto: a 10^6-deep `[[[...` file and the same depth inside an event's args.
  const std::string deep(1000000, '[');
  const std::string inside = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"x\": " + deep;
  for (const auto& [name, text] : {std::pair{"deep.json", deep}, std::pair{"deep_args.json", inside}}) {
    const std::string path = Write(name, text);
    Profile profile;
    const auto start = std::chrono::steady_clock::now();
    Status status = KinetoImporter()->Import(path, {}, &profile);
    EXPECT_LT(SecondsSince(start), 1.0) << name;
    EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.message();
    EXPECT_NE(status.message().find(std::string(name) + ": byte "), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("nesting limit"), std::string::npos) << status.message();
  }
  // trace_view.json (a bare array of events): deep inside the root and inside an event.
  const std::string tv_inside = "[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": \"1.0\", \"args\": " + deep;
  for (const auto& [name, text] : {std::pair{"trace_view.json", deep}, std::pair{"trace_view_args.json", tv_inside}}) {
    const std::string path = Write(name, text);
    Profile profile;
    const auto start = std::chrono::steady_clock::now();
    Status status = ImportAscendTraceView(path, {}, &profile);
    EXPECT_LT(SecondsSince(start), 1.0) << name;
    EXPECT_FALSE(status.ok()) << name;
    EXPECT_NE(status.message().find(std::string(name) + ": byte "), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("nesting"), std::string::npos) << status.message();
  }
  // Through detection: a deep file is refused with a message, not a crash.
  auto loaded = LoadProfile(Write("deep_detect.json", inside));
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("deep_detect.json"), std::string::npos) << loaded.status().message();
}

TEST_F(Limits, MillionDeepOpNestingInTheGraphAndReports) {
  // 10^6 cpu_ops on one thread, each inside the previous one: the graph's
  // nesting, self time, critical path and both renderers must not recurse.
  constexpr int kDepth = 1000000;
  std::string text = "{\"traceEvents\": [\n";
  text.reserve(static_cast<size_t>(kDepth) * 96);
  for (int i = 0; i < kDepth; ++i) {
    text += "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op";
    text += std::to_string(i % 7);
    text += "\",\"pid\":1,\"tid\":1,\"ts\":";
    text += std::to_string(1000 + i);
    text += ",\"dur\":";
    text += std::to_string(2 * (kDepth - i) + 1);
    text += "},\n";
  }
  text += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"python\"}}]}";
  const std::string path = Write("deep_ops.json", text);
  text.clear();
  text.shrink_to_fit();

  auto loaded = ProfileSession::Open(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ((*loaded)->profile().host_ops.size(), static_cast<size_t>(kDepth));
  auto summary = report::SummarizeAnalysis((*loaded)->graph());
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const std::string json = report::RenderAnalysisJson(*summary);
  EXPECT_NE(json.find("\"max_depth\""), std::string::npos);
  auto trace = report::ChromeTraceToString((*loaded)->graph());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_GT(trace->size(), static_cast<size_t>(kDepth) * 40);
}

TEST_F(Limits, GzipBombIsRefusedQuicklyWithBoundedMemory) {
  // 256 MiB of blanks deflate to ~256 KB (ratio ~1000x, far above
  // kDefaultMaxGzipRatio); writing it takes ~2 s, reading must stop far sooner.
  const std::string path = dir_ + "/bomb.json.gz";
  {
    gzFile gz = gzopen(path.c_str(), "wb6");
    ASSERT_NE(gz, nullptr);
    ASSERT_GT(gzwrite(gz, "{\"traceEvents\": [", 17), 0);
    std::string zeros(1u << 20, ' ');
    for (int i = 0; i < 256; ++i) ASSERT_GT(gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size())), 0);
    gzclose(gz);
  }
  const long rss_before_kb = MaxRssKb();
  const auto start = std::chrono::steady_clock::now();
  auto loaded = LoadProfile(path);
  const double seconds = SecondsSince(start);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kLimitExceeded) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("bomb.json.gz"), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("gzip expands more than 200"), std::string::npos)
      << loaded.status().message();
  // Refused after the grace window (io::kGzipRatioGraceBytes, 64 MiB inflated),
  // long before the 256 MiB are inflated; memory stays at the reader's buffers.
  EXPECT_LT(seconds, 5.0);
  EXPECT_LT(MaxRssKb() - rss_before_kb, 256 * 1024) << "peak RSS grew by more than 256 MiB";
}

}  // namespace
}  // namespace pypto
