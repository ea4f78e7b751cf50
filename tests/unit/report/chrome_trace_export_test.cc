// Chrome trace export: the output is parsed back with simdjson and checked
// event by event against the hand-built sample profile (report_test_helpers).
#include "report/chrome_trace_export.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "unit/report/report_test_helpers.h"

namespace pypto::report {
namespace {

using testing::SampleProfile;
constexpr double kTwoTo53 = 9007199254740992.0;

struct Exported {
  SampleProfile sample;
  std::unique_ptr<OperatorCallGraph> graph;
  std::string text;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
};

void Export(Exported* e, const ChromeTraceOptions& options = {}) {
  testing::BuildSampleProfile(&e->sample);
  StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(e->sample.profile);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  e->graph = std::make_unique<OperatorCallGraph>(std::move(graph).value());
  StatusOr<std::string> text = ChromeTraceToString(*e->graph, options);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  e->text = std::move(text).value();
  ASSERT_EQ(e->parser.parse(e->text).get(e->root), simdjson::SUCCESS) << e->text;
}

std::string_view Str(simdjson::dom::element element, const char* key) {
  std::string_view value;
  if (element[key].get(value) != simdjson::SUCCESS) return {};
  return value;
}

int64_t Int(simdjson::dom::element element, const char* key) {
  int64_t value = -1;
  if (element[key].get(value) != simdjson::SUCCESS) return -1;
  return value;
}

// Microseconds (as parsed) back to ns, rounded: the text has 3 fraction digits.
int64_t Ns(simdjson::dom::element element, const char* key) {
  double value = 0;
  if (element[key].get(value) != simdjson::SUCCESS) return -1;
  return std::llround(value * 1000.0);
}

std::vector<simdjson::dom::element> EventsWithPhase(const Exported& e, std::string_view phase) {
  std::vector<simdjson::dom::element> events;
  for (simdjson::dom::element event : e.root["traceEvents"].get_array())
    if (Str(event, "ph") == phase) events.push_back(event);
  return events;
}

// (pid, tid) -> thread name, pid -> process name.
std::map<int64_t, std::string> ProcessNames(const Exported& e) {
  std::map<int64_t, std::string> names;
  for (auto event : EventsWithPhase(e, "M"))
    if (Str(event, "name") == "process_name") names[Int(event, "pid")] = std::string(Str(event["args"], "name"));
  return names;
}

std::map<int64_t, std::string> ThreadNames(const Exported& e) {
  std::map<int64_t, std::string> names;
  for (auto event : EventsWithPhase(e, "M"))
    if (Str(event, "name") == "thread_name") names[Int(event, "tid")] = std::string(Str(event["args"], "name"));
  return names;
}

simdjson::dom::element FindX(const Exported& e, std::string_view name) {
  for (auto event : EventsWithPhase(e, "X"))
    if (Str(event, "name") == name) return event;
  ADD_FAILURE() << "no X event named " << name;
  return {};
}

TEST(ChromeTraceExport, TopLevelObjectWithBaseTimeAndSchema) {
  Exported e;
  Export(&e);
  EXPECT_EQ(Int(e.root, "baseTimeNanoseconds"), SampleProfile::kBaseWholeSecond);
  EXPECT_EQ(Str(e.root["otherData"], "schema"), kChromeTraceSchema);
  EXPECT_EQ(Str(e.root["otherData"], "format"), "kineto");
  EXPECT_EQ(Str(e.root, "displayTimeUnit"), "ms");
}

TEST(ChromeTraceExport, TimesAreExactMicrosecondsRelativeToTheBase) {
  Exported e;
  Export(&e);
  // t0 = base + 123456789 ns; aten::mm starts 10 µs later and lasts 40 µs.
  EXPECT_NE(e.text.find(R"("name":"aten::mm","pid":1,"tid":1,"ts":123466.789,"dur":40.000)"), std::string::npos)
      << e.text;
  auto kernel = FindX(e, "gemm\"k\x01\xEF\xBF\xBD");
  EXPECT_EQ(Ns(kernel, "ts"), 123456789 + 30'000);
  EXPECT_EQ(Ns(kernel, "dur"), 50'000);
}

TEST(ChromeTraceExport, NamesProcessesAndThreads) {
  Exported e;
  Export(&e);
  auto processes = ProcessNames(e);
  auto threads = ThreadNames(e);
  auto matmul = FindX(e, "aten::mm");
  auto kernel = FindX(e, "gemm\"k\x01\xEF\xBF\xBD");
  EXPECT_EQ(processes[Int(matmul, "pid")], "python3");
  EXPECT_EQ(threads[Int(matmul, "tid")], "python \"main\" thread");
  EXPECT_EQ(processes[Int(kernel, "pid")], "Device 0: NVIDIA A100");
  EXPECT_EQ(threads[Int(kernel, "tid")], "Stream 7");
  EXPECT_NE(Int(matmul, "pid"), Int(kernel, "pid"));
}

TEST(ChromeTraceExport, ArgsKeepShapesIdsAndKernelFacts) {
  Exported e;
  Export(&e);
  auto matmul = FindX(e, "aten::mm");
  EXPECT_EQ(Str(matmul["args"], "Input Dims"), "[[4096, 1024], [1024, 512]]");
  EXPECT_EQ(Str(matmul["args"], "kind"), "operator");
  // Above 2^53: written as a string so that no digit is lost.
  EXPECT_EQ(Str(matmul["args"], "External id"), std::to_string(SampleProfile::kHugeExternalId));

  auto kernel = FindX(e, "gemm\"k\x01\xEF\xBF\xBD");
  EXPECT_EQ(Str(kernel, "cat"), "kernel");
  EXPECT_EQ(Int(kernel["args"], "correlation"), SampleProfile::kCorrelation);
  EXPECT_EQ(Int(kernel["args"], "device"), 0);
  EXPECT_EQ(Int(kernel["args"], "stream"), 7);
  EXPECT_EQ(Str(kernel["args"], "operator"), "aten::mm");
  EXPECT_EQ(Str(kernel["args"], "registers per thread"), "128");
  simdjson::dom::array grid;
  ASSERT_EQ(kernel["args"]["grid"].get(grid), simdjson::SUCCESS);
  EXPECT_EQ(grid.size(), 3u);
  EXPECT_EQ(int64_t(grid.at(0)), 80);
}

TEST(ChromeTraceExport, LaunchFlowFromRuntimeCallToKernel) {
  Exported e;
  Export(&e);
  auto starts = EventsWithPhase(e, "s");
  auto ends = EventsWithPhase(e, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(Int(starts[0], "id"), Int(ends[0], "id"));
  EXPECT_LT(static_cast<double>(Int(starts[0], "id")), kTwoTo53);
  EXPECT_EQ(Str(ends[0], "bp"), "e");
  auto launch = FindX(e, "cudaLaunchKernel");
  auto kernel = FindX(e, "gemm\"k\x01\xEF\xBF\xBD");
  EXPECT_EQ(Int(starts[0], "tid"), Int(launch, "tid"));
  EXPECT_EQ(Ns(starts[0], "ts"), Ns(launch, "ts"));
  EXPECT_EQ(Int(ends[0], "tid"), Int(kernel, "tid"));
  EXPECT_EQ(Ns(ends[0], "ts"), Ns(kernel, "ts"));
}

TEST(ChromeTraceExport, CriticalPathRowMirrorsTheSegments) {
  Exported e;
  Export(&e);
  StatusOr<CriticalPath> path = e.graph->ComputeCriticalPath();
  ASSERT_TRUE(path.ok());
  ASSERT_FALSE(path->segments.empty());

  int64_t path_pid = -1;
  for (const auto& [pid, name] : ProcessNames(e))
    if (name == "Critical path") path_pid = pid;
  ASSERT_NE(path_pid, -1);

  int64_t total_ns = 0;
  size_t slices = 0;
  std::set<std::string> marked_names;
  for (auto event : EventsWithPhase(e, "X")) {
    bool on_path = false;
    if (event["args"]["critical_path"].get(on_path) != simdjson::SUCCESS) on_path = false;
    if (Int(event, "pid") == path_pid) {
      EXPECT_TRUE(on_path);
      total_ns += Ns(event, "dur");
      ++slices;
    } else if (on_path) {
      marked_names.insert(std::string(Str(event, "name")));
    }
  }
  EXPECT_EQ(slices, path->segments.size());
  EXPECT_EQ(total_ns, path->latency_ns);

  std::set<std::string> expected_names;
  const Profile& p = e.sample.profile;
  for (const PathSegment& segment : path->segments) {
    if (segment.host_op != kNoIndex) expected_names.insert(std::string(p.Str(p.host_ops.name[segment.host_op])));
    if (segment.device_task != kNoIndex)
      expected_names.insert("gemm\"k\x01\xEF\xBF\xBD");  // the only task, repaired as exported
  }
  EXPECT_EQ(marked_names, expected_names);
}

TEST(ChromeTraceExport, CriticalPathCanBeLeftOut) {
  Exported e;
  ChromeTraceOptions options;
  options.mark_critical_path = false;
  Export(&e, options);
  for (const auto& [pid, name] : ProcessNames(e)) EXPECT_NE(name, "Critical path");
  EXPECT_EQ(e.text.find("critical_path"), std::string::npos);
}

class ChromeTraceFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pypto_trace_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    testing::BuildSampleProfile(&sample_);
    StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(sample_.profile);
    ASSERT_TRUE(graph.ok());
    graph_ = std::make_unique<OperatorCallGraph>(std::move(graph).value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  size_t FilesInDir() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_), {}));
  }

  std::string dir_;
  SampleProfile sample_;
  std::unique_ptr<OperatorCallGraph> graph_;
};

TEST_F(ChromeTraceFile, WritesAParseableFile) {
  const std::string out = dir_ + "/trace.json";
  Status written = ExportChromeTraceFile(*graph_, {}, out, false);
  ASSERT_TRUE(written.ok()) << written.ToString();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.load(out).get(root), simdjson::SUCCESS);
  EXPECT_GT(root["traceEvents"].get_array().size(), 4u);
  EXPECT_EQ(FilesInDir(), 1u);  // no temporary file left behind
}

TEST_F(ChromeTraceFile, RefusesToOverwriteWithoutPermission) {
  const std::string out = dir_ + "/trace.json";
  std::ofstream(out) << "keep me";
  Status refused = ExportChromeTraceFile(*graph_, {}, out, false);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find(out), std::string::npos);
  EXPECT_NE(refused.message().find("already exists"), std::string::npos);
  std::ifstream kept(out);
  std::string content((std::istreambuf_iterator<char>(kept)), {});
  EXPECT_EQ(content, "keep me");
  EXPECT_EQ(FilesInDir(), 1u);

  ASSERT_TRUE(ExportChromeTraceFile(*graph_, {}, out, true).ok());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.load(out).get(root), simdjson::SUCCESS);
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(ChromeTraceFile, RefusesADirectoryAndReportsAMissingParent) {
  Status directory = ExportChromeTraceFile(*graph_, {}, dir_, true);
  EXPECT_EQ(directory.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(directory.message().find("is a directory"), std::string::npos);

  const std::string nowhere = dir_ + "/missing/trace.json";
  Status missing = ExportChromeTraceFile(*graph_, {}, nowhere, false);
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find(nowhere), std::string::npos);
  EXPECT_NE(missing.message().find("No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace pypto::report
