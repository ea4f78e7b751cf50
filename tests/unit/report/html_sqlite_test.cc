// HTML escaping and rendering of the single-file reports, and the SQLite
// export read back with queries checked against the model.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "advisor/optimizers.h"
#include "analysis/kv_cache_cat.h"
#include "analysis/shapes.h"
#include "compare/compare.h"
#include "report/html_charts.h"
#include "report/profile_report.h"
#include "report/sqlite_export.h"
#include "unit/distinct_shapes_trace.h"

namespace pypto::report {
namespace {

StatusOr<ProfileReportData> CollectReport(const std::string& path) {
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<ProfileSession> session, ProfileSession::Open(path));
  return CollectProfileReport(*session, ReportOptions{});
}

TEST(EscapeHtml, EscapesMarkupControlsAndInvalidUtf8) {
  EXPECT_EQ(EscapeHtml("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  EXPECT_EQ(EscapeHtml("a\"b&c"), "a&quot;b&amp;c");
  EXPECT_EQ(EscapeHtml(std::string("x\x01y\x7f", 4)), "x\xEF\xBF\xBDy\xEF\xBF\xBD");
  EXPECT_EQ(EscapeHtml("\xff\xfe"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(EscapeHtml("\xC2\x85"), "\xEF\xBF\xBD");            // C1 control NEL
  EXPECT_EQ(EscapeHtml("caf\xC3\xA9 \xE2\x86\x92"), "caf\xC3\xA9 \xE2\x86\x92");  // valid UTF-8 kept
  EXPECT_EQ(EscapeHtml("tab\tnl\n"), "tab\tnl\n");
}

TEST(Charts, ValuesAndLabelsAreEscaped) {
  const std::string bars = SvgHorizontalBars({{"<b>x</b>", 5.0, ""}, {"y", 10.0, "\"tip\""}}, "", true, "a<b");
  EXPECT_EQ(bars.find("<b>"), std::string::npos);
  EXPECT_NE(bars.find("&lt;b&gt;x&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(bars.find("aria-label=\"a&lt;b\""), std::string::npos);
  const std::string roof = SvgRoofline({{"op<1>", 10, 1e12, 0.5, "s0"}, {"nan", 0, 0, 0, "s0"}}, 1e15, 3e12, "roofline");
  EXPECT_NE(roof.find("<circle"), std::string::npos);
  EXPECT_NE(roof.find("class=\"ceiling\""), std::string::npos);
  EXPECT_NE(roof.find("1 ops without FLOP/byte figures"), std::string::npos);
}

TEST(ProfileHtml, RecommendationsGetCopyButtonsAndEscapedCode) {
  ProfileReportData d;
  d.summary.source_path = "p</title>";
  d.recommendations.push_back({"matmul_tiling", "Pad <N>", "desc", "do it", "x = '<script>'\nprint(x)", 1.2});
  d.advisor_available = true;
  const std::string html = RenderProfileHtml(d);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("data-target=\"code-1\""), std::string::npos);
  EXPECT_NE(html.find("x = &#39;&lt;script&gt;&#39;"), std::string::npos);
  EXPECT_NE(html.find("<title>pypto report: p&lt;/title&gt;</title>"), std::string::npos);
  // One script element: the copy-button handler.
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 1u);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(ProfileHtml, KinetoFixtureRendersEverySection) {
  const std::string path = std::string(PYPTO_FIXTURES_DIR) +
                           "/kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz";
  StatusOr<ProfileReportData> d = CollectReport(path);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->steps_total, d->summary.steps.size());
  EXPECT_FALSE(d->classes.empty());
  const std::string html = RenderProfileHtml(*d);
  for (const char* id : {"id=\"timeline\"", "id=\"classes\"", "id=\"cores\"", "id=\"roofline\"", "id=\"issues\"",
                         "id=\"recommendations\"", "id=\"kernels\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  const std::string json = RenderProfileJson(*d);
  EXPECT_NE(json.find("\"schema\": \"pypto.report/1\""), std::string::npos);
  EXPECT_NE(json.find("\"schema\": \"pypto.analyze/1\""), std::string::npos);
}

TEST(ProfileHtml, FindingsListTheirEvidenceRowsInTheirSteps) {
  // The TensorBoard plugin's ResNet-50 trace: the input_stall finding's rows
  // are the 6 enumerate(DataLoader)#…__next__ ranges, one opening each of
  // ProfilerStep#5 .. #10 (host ranges; the device work of #5 runs into #6's).
  const std::string path = std::string(PYPTO_FIXTURES_DIR) + "/kineto/tb_plugin_resnet50_torch1.9_v100";
  StatusOr<ProfileReportData> d = CollectReport(path);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->diagnosis.issues.empty());
  ASSERT_EQ(d->diagnosis.issues[0].type, IssueType::kInputStall);
  ASSERT_EQ(d->issue_rows.size(), std::min(d->diagnosis.issues.size(), kMaxReportIssues));
  const std::vector<EvidenceRow>& rows = d->issue_rows[0];
  ASSERT_EQ(rows.size(), 6u);
  for (size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k].kind, "host op");
    EXPECT_EQ(rows[k].step, "ProfilerStep#" + std::to_string(5 + k));
    EXPECT_NE(rows[k].name.find("DataLoader"), std::string::npos);
  }
  const std::string html = RenderProfileHtml(*d);
  EXPECT_NE(html.find("<details><summary>evidence rows (6 of 6)</summary>"), std::string::npos);
  EXPECT_EQ(html.find("id=\"kvlayout\""), std::string::npos);  // no KV-cache finding, no picture
  // The median (ProfilerStep#6, 175.2 ms: the 3rd of 6 by latency) and the
  // slowest step (#5, 187.9 ms) in detail, the critical path on its own lane.
  ASSERT_EQ(d->step_timelines.size(), 2u);
  EXPECT_NE(d->step_timelines[0].title.find("median step ProfilerStep#6"), std::string::npos) << d->step_timelines[0].title;
  EXPECT_NE(d->step_timelines[1].title.find("slowest step ProfilerStep#5"), std::string::npos) << d->step_timelines[1].title;
  for (const StepTimeline& tl : d->step_timelines) {
    EXPECT_EQ(tl.lanes.back(), "critical path");
    EXPECT_FALSE(tl.path.empty());
    EXPECT_FALSE(tl.findings.empty());  // the DataLoader rows and launch gaps of the findings
    for (const TimelineBar& b : tl.bars) EXPECT_LE(b.start_ns + b.dur_ns, tl.window_ns);
  }
  EXPECT_NE(html.find("class=\"steptl\""), std::string::npos);
}

TEST(ProfileHtml, EveryDrawnStepMarksItsFindingsAndLinksThem) {
  // HTA trace-diff control, six ProfilerSteps: the matmul_tiling finding is
  // the align1 cutlass GEMM, two of its 12 rows in every step. Both drawn
  // steps (median and slowest) mark that kernel's rows, not only the step the
  // first evidence rows fall in, and each mark links to its finding.
  const std::string path = std::string(PYPTO_FIXTURES_DIR) + "/kineto/hta_trace_diff_control_a100_2022";
  StatusOr<ProfileReportData> d = CollectReport(path);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  int tiling = -1;
  for (size_t k = 0; k < d->diagnosis.issues.size(); ++k)
    if (d->diagnosis.issues[k].type == IssueType::kMatmulTiling) tiling = int(k);
  ASSERT_GE(tiling, 0);
  ASSERT_EQ(d->step_timelines.size(), 2u);
  for (const StepTimeline& tl : d->step_timelines) {
    size_t marks = 0;
    for (const TimelineBar& b : tl.findings) {
      if (b.finding != tiling) continue;
      ++marks;
      EXPECT_NE(b.label.find("align1"), std::string::npos) << b.label;
    }
    EXPECT_EQ(marks, 2u) << tl.title;
  }
  const std::string html = RenderProfileHtml(*d);
  EXPECT_NE(html.find("id=\"finding-" + std::to_string(tiling) + "\""), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#finding-" + std::to_string(tiling) + "\"><rect class=\"tl-finding\""), std::string::npos);
  EXPECT_NE(html.find("On the timeline: <a href=\"#steptl-0\">median step"), std::string::npos);
  EXPECT_NE(html.find("<h3 id=\"steptl-1\">slowest step"), std::string::npos);
}

TEST(ProfileHtml, ThousandStepsAreGroupedNotCut) {
  // 1000 steps: 400 columns at most, so 3 consecutive steps per column (334
  // columns, the last holding step 999 alone); every step is in the chart and
  // the JSON; the Markdown lists 400 and says how many more.
  ProfileReportData d;
  for (int i = 0; i < 1000; ++i) d.steps.push_back(StepBar{std::to_string(i), "decode", 2'000'000, 1'500'000});
  d.steps_total = d.steps.size();
  const std::string html = RenderProfileHtml(d);
  EXPECT_NE(html.find("1000 steps, 3 per column (their mean); the JSON lists every step."), std::string::npos);
  EXPECT_NE(html.find("0..2 decode"), std::string::npos);
  EXPECT_NE(html.find("999 decode"), std::string::npos);
  EXPECT_EQ(html.find("First 400"), std::string::npos);
  EXPECT_NE(RenderProfileJson(d).find("\"label\": \"999\""), std::string::npos);
  EXPECT_NE(RenderProfileMarkdown(d).find("… 600 more steps (the JSON lists every step)."), std::string::npos);
}

TEST(ProfileHtml, AWholeWindowStepDrawsABoundedCriticalPath) {
  // A trace without ProfilerStep marks is one step over the whole window.
  // Here 6000 kernels run back to back with a 2 us gap on one stream and no
  // launches: each kernel is a critical-path segment of its own, so the path
  // has at least 6000 segments, more than kMaxTimelineBars (4000). The
  // timeline draws the first 4000, says how many more there are, and the page
  // stays small (before the cap, a 300 MB trace of this shape gave 70 MB).
  constexpr int kKernels = 6000;
  std::string json = "{\"traceEvents\": [\n";
  for (int i = 0; i < kKernels; ++i) {
    json += fmt::format("{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{}\", \"pid\": 0, \"tid\": 7, "
                        "\"ts\": {}, \"dur\": 8, \"args\": {{\"device\": 0, \"stream\": 7, \"correlation\": {}}}}},\n",
                        i % 3, 1000 + 10 * i, i + 1);
  }
  json += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {\"name\": \"GPU 0\"}}]}\n";
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pypto_whole_window_" + std::to_string(::getpid()) + ".json")).string();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
  }
  StatusOr<ProfileReportData> d = CollectReport(path);
  std::remove(path.c_str());
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_FALSE(d->step_timelines.empty());
  const StepTimeline& tl = d->step_timelines[0];
  EXPECT_EQ(tl.path.size(), kMaxTimelineBars);
  EXPECT_GE(tl.path.size() + tl.path_dropped, static_cast<size_t>(kKernels));
  const std::string html = RenderProfileHtml(*d);
  EXPECT_NE(html.find(fmt::format("{} more critical-path segments in the step not drawn (the first {} are).",
                                  tl.path_dropped, kMaxTimelineBars)),
            std::string::npos);
  EXPECT_LT(html.size(), 8u << 20) << "the page should stay a few MB";
}

TEST(ProfileHtml, RooflineDrawsTheLongestOfManyDistinctShapes) {
  // 1,000 GEMMs, each a shape of its own (continuous batching): 1,000 (kernel,
  // shape) groups of one task each. The chart draws kMaxRooflineOps of them:
  // the longest, ties by kernel name, then shape text. Expected from the
  // trace's own figures: time = the kernel's duration, FLOPs = 2·M·N·K with
  // M = 8, N = 64 and K from the op's Input Dims.
  constexpr int kOps = 1000;
  const std::string path = testing::WriteDistinctGemmTrace(kOps);
  ASSERT_FALSE(path.empty());
  StatusOr<ProfileReportData> d = CollectReport(path);
  std::remove(path.c_str());
  ASSERT_TRUE(d.ok()) << d.status().message();
  std::vector<testing::DistinctGemm> want = testing::DistinctGemms(kOps);
  std::sort(want.begin(), want.end(), [](const testing::DistinctGemm& a, const testing::DistinctGemm& b) {
    return std::tie(b.dur_us, a.kernel, a.dims) < std::tie(a.dur_us, b.kernel, b.dims);
  });
  ASSERT_EQ(d->roofline.size(), kMaxRooflineOps);
  EXPECT_EQ(d->roofline_tasks_without_costs, 0u);
  for (size_t i = 0; i < kMaxRooflineOps; ++i) {
    const RooflineOp& got = d->roofline[i];
    ASSERT_EQ(got.name, want[i].kernel) << i;
    ASSERT_EQ(got.shape, want[i].dims) << i;
    EXPECT_EQ(got.count, 1u) << i;
    EXPECT_EQ(got.time_ns, want[i].dur_us * 1000) << i;
    EXPECT_DOUBLE_EQ(got.flops, 2.0 * 8 * 64 * static_cast<double>(want[i].k)) << i;
    EXPECT_EQ(got.op_class, "matmul") << i;
  }
}

TEST(ProfileHtml, RooflineCostsTheTasksTheDiagnosisLeftOut) {
  // 150 GEMMs of shapes of their own in ProfilerSteps 0-2 of 50 each. A
  // diagnosis of step 1 costs that step's 50 kernels, and the session keeps
  // those costs for the roofline; the roofline costs the other 100 itself.
  // The chart must not depend on who costed what: all 150 groups (fewer than
  // kMaxRooflineOps) with time = the kernel's dur and FLOPs = 2·8·64·K, as
  // in RooflineDrawsTheLongestOfManyDistinctShapes, and the same chart as
  // the report of every step, where the diagnosis costs all 150.
  constexpr int kOps = 150, kOpsPerStep = 50;
  const std::string path = testing::WriteDistinctGemmTrace(kOps, kOpsPerStep);
  ASSERT_FALSE(path.empty());
  StatusOr<std::unique_ptr<ProfileSession>> session = ProfileSession::Open(path);
  StatusOr<std::unique_ptr<ProfileSession>> diagnosis_only = ProfileSession::Open(path);
  std::remove(path.c_str());
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_TRUE(diagnosis_only.ok()) << diagnosis_only.status().message();
  ASSERT_EQ((*session)->graph().Steps().size(), 3u);
  ReportOptions one_step;
  one_step.diagnose.step = 1;
  StatusOr<ProfileReportData> d = CollectProfileReport(**session, one_step);
  ASSERT_TRUE(d.ok()) << d.status().message();
  // The report took the costs its diagnosis kept.
  EXPECT_EQ((*session)->TakeDiagnosisTaskCosts(one_step.diagnose), nullptr);

  // What such a diagnosis costs: the kernels of step 1, ops 50-99, whose
  // kernels start at 100 + 20 i + 6 µs. Not kept unless asked.
  ASSERT_TRUE((*diagnosis_only)->Diagnosis(one_step.diagnose).ok());
  EXPECT_EQ((*diagnosis_only)->TakeDiagnosisTaskCosts(one_step.diagnose), nullptr);
  ReportOptions other_options = one_step;
  other_options.diagnose.min_issue_share = 0.5;
  ASSERT_TRUE((*diagnosis_only)->Diagnosis(other_options.diagnose, /*keep_task_costs=*/true).ok());
  const std::unique_ptr<TaskCostTable> diagnosed = (*diagnosis_only)->TakeDiagnosisTaskCosts(other_options.diagnose);
  ASSERT_NE(diagnosed, nullptr);
  const DeviceTaskTable& t = (*session)->profile().device_tasks;
  size_t costed = 0;
  for (uint32_t row = 0; row < t.size(); ++row) {
    if (!diagnosed->costed(row)) continue;
    ++costed;
    const int64_t op = (t.ts[row] / 1000 - 106) / 20;
    EXPECT_GE(op, kOpsPerStep) << row;
    EXPECT_LT(op, 2 * kOpsPerStep) << row;
  }
  EXPECT_EQ(costed, static_cast<size_t>(kOpsPerStep));

  std::vector<testing::DistinctGemm> want = testing::DistinctGemms(kOps);
  std::sort(want.begin(), want.end(), [](const testing::DistinctGemm& a, const testing::DistinctGemm& b) {
    return std::tie(b.dur_us, a.kernel, a.dims) < std::tie(a.dur_us, b.kernel, b.dims);
  });
  ASSERT_EQ(d->roofline.size(), static_cast<size_t>(kOps));
  EXPECT_EQ(d->roofline_tasks_without_costs, 0u);
  for (size_t i = 0; i < want.size(); ++i) {
    const RooflineOp& got = d->roofline[i];
    ASSERT_EQ(got.name, want[i].kernel) << i;
    ASSERT_EQ(got.shape, want[i].dims) << i;
    EXPECT_EQ(got.time_ns, want[i].dur_us * 1000) << i;
    EXPECT_DOUBLE_EQ(got.flops, 2.0 * 8 * 64 * static_cast<double>(want[i].k)) << i;
  }

  StatusOr<ProfileReportData> every_step = CollectProfileReport(**session, ReportOptions{});
  ASSERT_TRUE(every_step.ok()) << every_step.status().message();
  ASSERT_EQ(every_step->roofline.size(), d->roofline.size());
  for (size_t i = 0; i < d->roofline.size(); ++i) {
    const RooflineOp& a = every_step->roofline[i];
    const RooflineOp& b = d->roofline[i];
    EXPECT_EQ(std::tie(a.name, a.shape, a.op_class, a.bound, a.count, a.time_ns),
              std::tie(b.name, b.shape, b.op_class, b.bound, b.count, b.time_ns))
        << i;
    EXPECT_EQ(a.flops, b.flops) << i;
    EXPECT_EQ(a.bytes, b.bytes) << i;
  }
}

TEST(ProfileHtml, AKvCacheFindingBringsTheLayoutPicture) {
  // When the diagnosis has a KV-cache finding, the report carries the
  // picture of the cache the profile shows (here a BNSD cache of 4 KV heads
  // grown by cat), in its own section, inline (one self-contained file).
  OpShapes shapes;
  ASSERT_TRUE(ParseKinetoShapes("[[8, 4, 570, 128], [8, 4, 1, 128], []]", "", &shapes).ok());
  advisor::ModelConfig model;
  model.max_seq = 571;
  ProfileReportData d;
  d.kv_layout_svg = advisor::KVCacheLayoutOptimizer(model).GenerateLayoutPicture(ReadKvCacheCat(shapes)).svg;
  const std::string html = RenderProfileHtml(d);
  const size_t section = html.find("id=\"kvlayout\"");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\"", section), std::string::npos);
  EXPECT_NE(html.find("current: BNSD [batch, kv_heads, seq, head_dim], grown by torch.cat every step", section),
            std::string::npos);
}

// ------------------------------------------------------------------ SQLite

int64_t QueryInt(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db);
  int64_t v = -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

std::string QueryText(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  std::string v;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return v;
}

TEST(SqliteExport, FixtureReadBackMatchesTheModel) {
  const std::string path = std::string(PYPTO_FIXTURES_DIR) +
                           "/kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz";
  StatusOr<LoadedRun> run = LoadRunForCompare(path);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pypto_sqlite_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out.db").string();
  StatusOr<SqliteExportStats> stats = ExportSqlite(run->session->graph(), run->diagnosis, out, false);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  const Profile& p = run->session->profile();
  EXPECT_EQ(stats->host_ops, p.host_ops.size());
  EXPECT_EQ(stats->device_tasks, p.device_tasks.size());

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(out.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(QueryText(db, "SELECT value FROM meta WHERE key='schema_version'"), std::to_string(kSqliteSchemaVersion));
  EXPECT_EQ(QueryText(db, "SELECT value FROM meta WHERE key='profile.format'"), p.metadata.at("format"));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM host_ops"), int64_t(p.host_ops.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM device_tasks"), int64_t(p.device_tasks.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tracks"), int64_t(p.tracks.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM steps"), int64_t(run->session->graph().Steps().size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM issues"), int64_t(run->diagnosis->issues.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM attributes"), int64_t(p.attributes.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM strings"), int64_t(p.strings.size()));
  // Operators by kind and linked tasks agree with the graph.
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM host_ops WHERE kind='operator'"), int64_t(run->session->graph().OpCount()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM device_tasks WHERE link='nesting'"),
            int64_t(run->session->graph().stats().tasks_attributed_by_nesting));
  TimeNs dur_sum = 0;
  for (TimeNs d : p.device_tasks.dur) dur_sum += d;
  EXPECT_EQ(QueryInt(db, "SELECT coalesce(sum(dur),0) FROM device_tasks"), dur_sum);
  // Views resolve names; every task's operator exists.
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM device_tasks_v"), int64_t(p.device_tasks.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM device_tasks t LEFT JOIN host_ops h ON h.id = t.operator "
                         "WHERE t.operator IS NOT NULL AND h.id IS NULL"), 0);
  sqlite3_close(db);
  // An existing output is refused without --force and replaced with it.
  EXPECT_FALSE(ExportSqlite(run->session->graph(), run->diagnosis, out, false).ok());
  EXPECT_TRUE(ExportSqlite(run->session->graph(), nullptr, out, true).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pypto::report
