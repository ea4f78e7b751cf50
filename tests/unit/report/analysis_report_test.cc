// Analyze summary and its renderers on the hand-built sample profile: the
// summary copies the graph's figures, --step errors list the steps, the JSON
// parses and carries the schema, the text is aligned and has units.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "report/analysis_json.h"
#include "report/analysis_summary.h"
#include "report/analysis_text.h"
#include "report/progress_line.h"
#include "report/text_table.h"
#include "unit/report/report_test_helpers.h"

namespace pypto::report {
namespace {

using testing::SampleProfile;

class AnalysisReport : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::BuildSampleProfile(&sample_);
    StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(sample_.profile);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    graph_ = std::make_unique<OperatorCallGraph>(std::move(graph).value());
  }

  AnalysisSummary Summarize(const SummaryOptions& options = {}) {
    StatusOr<AnalysisSummary> summary = SummarizeAnalysis(*graph_, options);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? std::move(summary).value() : AnalysisSummary{};
  }

  SampleProfile sample_;
  std::unique_ptr<OperatorCallGraph> graph_;
};

TEST_F(AnalysisReport, SummaryCopiesTheGraphFigures) {
  AnalysisSummary summary = Summarize();
  EXPECT_EQ(summary.source_path, "sample.json");
  EXPECT_EQ(summary.op_count, 1u);
  EXPECT_EQ(summary.host_op_total, 3u);
  EXPECT_EQ(summary.device_task_total, 1u);
  ASSERT_EQ(summary.devices.size(), 1u);
  EXPECT_EQ(summary.devices[0].name, "NVIDIA A100");
  ASSERT_EQ(summary.steps.size(), graph_->Steps().size());
  ASSERT_EQ(summary.top_host_ops.size(), 1u);
  EXPECT_EQ(summary.top_host_ops[0].name, "aten::mm");
  EXPECT_EQ(summary.top_host_ops[0].total_ns, 40'000);
  EXPECT_EQ(summary.top_host_ops[0].self_ns, graph_->SelfTime(sample_.matmul_op));
  ASSERT_EQ(summary.top_device_tasks.size(), 1u);
  EXPECT_EQ(summary.top_device_tasks[0].total_ns, 50'000);
  EXPECT_EQ(summary.critical_path.latency_ns, graph_->CriticalPathLatency().value());
  EXPECT_EQ(summary.critical_path.breakdown.size(), kPathSegmentKindCount);
  ASSERT_EQ(summary.device_utilization.size(), 1u);
  EXPECT_EQ(summary.device_utilization[0].busy_ns, 50'000);
  ASSERT_EQ(summary.stream_utilization.size(), 1u);
  EXPECT_EQ(summary.stream_utilization[0].stream, 7);
}

TEST_F(AnalysisReport, TopRowsCutsTheTables) {
  SummaryOptions options;
  options.top_rows = 0;
  AnalysisSummary summary = Summarize(options);
  EXPECT_TRUE(summary.top_host_ops.empty());
  EXPECT_EQ(summary.distinct_host_op_names, 1u);
}

TEST_F(AnalysisReport, StepSelectsThePathWindow) {
  bool has_step_3 = false;
  for (const StepInfo& step : graph_->Steps()) has_step_3 |= step.number == 3;
  ASSERT_TRUE(has_step_3) << "the graph should find ProfilerStep#3";
  SummaryOptions options;
  options.step_number = 3;
  AnalysisSummary summary = Summarize(options);
  ASSERT_TRUE(summary.selected_step.has_value());
  EXPECT_EQ(*summary.selected_step, 3);
  EXPECT_EQ(summary.analysis_window.start, summary.critical_path.window.start);
  EXPECT_EQ(summary.analysis_window.end, summary.critical_path.window.end);
}

TEST_F(AnalysisReport, MissingStepListsTheAvailableOnes) {
  SummaryOptions options;
  options.step_number = 7;
  StatusOr<AnalysisSummary> summary = SummarizeAnalysis(*graph_, options);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(summary.status().message(), "sample.json: no step 7; available steps: 3");
}

TEST_F(AnalysisReport, JsonCarriesTheSchemaAndParses) {
  const std::string json = RenderAnalysisJson(Summarize());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(root["schema"]), "pypto.analyze/1");
  EXPECT_EQ(uint64_t(root["counts"]["op_count"]), 1u);
  EXPECT_EQ(std::string_view(root["top_host_ops"]["rows"].at(0)["name"]), "aten::mm");
  EXPECT_EQ(int64_t(root["top_device_kernels"]["rows"].at(0)["total_ns"]), 50'000);
  // The kernel name has an invalid byte: repaired to U+FFFD in the JSON.
  EXPECT_EQ(std::string_view(root["top_device_kernels"]["rows"].at(0)["name"]), "gemm\"k\x01\xEF\xBF\xBD");
  EXPECT_TRUE(root["selected_step"].is_null());
  EXPECT_EQ(int64_t(root["critical_path"]["latency_ns"]), graph_->CriticalPathLatency().value());
}

TEST_F(AnalysisReport, TextHasSectionsAndUnits) {
  const std::string text = RenderAnalysisText(Summarize());
  for (const char* section : {"Profile", "Devices (1)", "Steps", "Critical path", "Device utilization",
                              "Stream utilization", "Top 1 host operators by self time", "Counts",
                              "Data loss (import)", "Links (call graph)"}) {
    EXPECT_NE(text.find(section), std::string::npos) << section << "\n" << text;
  }
  EXPECT_NE(text.find("40.000 µs"), std::string::npos) << text;  // aten::mm total
  EXPECT_NE(text.find("50.000 µs"), std::string::npos) << text;  // kernel total
}

TEST_F(AnalysisReport, ManyStepsAreSummarisedUnlessAskedForEvery) {
  // 40 steps with latencies 1..40 ms (step 7 the slowest at 100 ms): the
  // text lists the first and the 5 slowest, with the nearest-rank p50 (20 ms:
  // the 20th of 40 sorted) and the max; --steps lists all 40.
  AnalysisSummary summary = Summarize();
  summary.steps.clear();
  for (int i = 0; i < 40; ++i) {
    StepSummary step;
    step.number = i;
    step.name = "ProfilerStep#" + std::to_string(i);
    step.latency_ns = (i == 7 ? 100 : i + 1) * TimeNs{1'000'000};
    summary.steps.push_back(step);
  }
  const std::string brief = RenderAnalysisText(summary);
  EXPECT_NE(brief.find("over 40 steps; below: the first and the 5 slowest (34 more: --steps"), std::string::npos)
      << brief;
  EXPECT_NE(brief.find("max 100.000 ms"), std::string::npos) << brief;
  for (const char* shown : {"ProfilerStep#0 ", "ProfilerStep#7 ", "ProfilerStep#39 ", "ProfilerStep#36 "})
    EXPECT_NE(brief.find(shown), std::string::npos) << shown;
  EXPECT_EQ(brief.find("ProfilerStep#35 "), std::string::npos);  // the 6th slowest
  // With the phases the structure analysis decided, one line per phase.
  LatencyStats decode;
  decode.count = 39;
  decode.p50_ms = 21, decode.p90_ms = 36, decode.p99_ms = 100, decode.max_ms = 100;
  summary.phase_latency = {{"decode", decode}};
  EXPECT_NE(RenderAnalysisText(summary).find("  decode: 39 steps, p50 21.000 ms, p90 36.000 ms, p99 100.000 ms, max "
                                             "100.000 ms"),
            std::string::npos);
  EXPECT_NE(RenderAnalysisJson(summary).find("\"phase_latency\""), std::string::npos);
  summary.phase_latency.clear();
  const std::string all = RenderAnalysisText(summary, AnalysisTextOptions{.all_steps = true});
  EXPECT_NE(all.find("ProfilerStep#20 "), std::string::npos);
  EXPECT_EQ(all.find("--steps lists every step"), std::string::npos);
}

TEST_F(AnalysisReport, OutlierStepsAndRepeatedStepNumbersAreSaid) {
  // 30 steps of 10 ms + 0.1 ms x (i % 3): median 10.1 ms, absolute deviations
  // 0 (10 steps) or 0.1 ms (20): MAD 0.1 ms, robust sigma 0.14826 ms, limit
  // 10.1 + 3 x 0.14826 = 10.545 ms. Step 12 is set to 50 ms: the one outlier.
  // Numbers 0..14 twice (a trace whose counter restarts): 15 repeats.
  AnalysisSummary summary = Summarize();
  summary.steps.clear();
  for (int i = 0; i < 30; ++i) {
    StepSummary step;
    step.number = i % 15;
    step.name = "ProfilerStep#" + std::to_string(i % 15);
    step.latency_ns = i == 12 ? TimeNs{50'000'000} : TimeNs{10'000'000} + (i % 3) * TimeNs{100'000};
    summary.steps.push_back(step);
  }
  const std::string text = RenderAnalysisText(summary);
  EXPECT_NE(text.find("outliers: 1 step(s) over median 10.100 ms + 3 x 0.148 ms (robust sigma) = 10.545 ms: "
                      "ProfilerStep#12 (50.000 ms)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("note: 15 step number(s) occur more than once on one device (#0 x2, #1 x2, #2 x2, #3 x2, #4 x2, "
                      "… 10 more)"),
            std::string::npos) << text;
}

TEST(TextFormatting, DurationsCarryUnits) {
  EXPECT_EQ(FormatDuration(812), "812 ns");
  EXPECT_EQ(FormatDuration(12'345), "12.345 µs");
  EXPECT_EQ(FormatDuration(3'210'000), "3.210 ms");
  EXPECT_EQ(FormatDuration(1'500'000'000), "1.500 s");
  EXPECT_EQ(FormatDuration(kUnknownNs), "-");
  EXPECT_EQ(FormatPercent(0.375), "37.5%");
}

TEST(TextFormatting, TableAlignsByCodePoints) {
  TextTable table({{"NAME"}, {"TIME", Align::kRight}});
  table.AddRow({"a", "1.000 µs"});
  table.AddRow({"longer", "12.000 ms"});
  EXPECT_EQ(table.Render(), "  NAME         TIME\n  a        1.000 µs\n  longer  12.000 ms\n");
}

TEST(TextFormatting, LongNamesAreCutWithAnEllipsis) {
  EXPECT_EQ(Ellipsize("abcdef", 4), "abc…");
  EXPECT_EQ(Ellipsize("µµµµµµ", 4), "µµµ…");
  EXPECT_EQ(Ellipsize("abc", 4), "abc");
}

TEST(ProgressLine, ShowsMegabytesPercentAndRate) {
  EXPECT_EQ(FormatProgressLine(45'200'000, 120'000'000, 2.0),
            "[#########...............]  45.2 / 120.0 MB   37%  22.6 MB/s");
  EXPECT_EQ(FormatProgressLine(5'000'000, 0, 0.5), "5.0 MB  10.0 MB/s");
  EXPECT_EQ(FormatProgressLine(0, 10, 0), "[........................]  0.0 / 0.0 MB    0%");
}

}  // namespace
}  // namespace pypto::report
