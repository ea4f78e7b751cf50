// The diagnosis renderers show the model structure: layers, phases and the
// per-token (decode step) latency percentiles, in text, Markdown and JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/detector.h"
#include "report/diagnosis_report.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

TEST(DiagnosisRender, StructureInTextMarkdownAndJson) {
  Profile p = testing::BuildDecodeProfile(testing::DecodeSpec{});
  StatusOr<DiagnosticReport> r = Diagnose(p, testing::TestOptions());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const StructureSummary& s = r->structure;
  ASSERT_TRUE(s.available);
  EXPECT_EQ(s.layers, 4);             // 4 layers of norm, qkv, attention, o, norm, up, down
  EXPECT_EQ(s.decode_steps, 3u);      // attention S_q = 1 in every step
  EXPECT_EQ(s.prefill_steps, 0u);
  ASSERT_EQ(s.decode_latency.count, 3u);
  EXPECT_FALSE(std::isnan(s.decode_latency.p50_ms));
  EXPECT_LE(s.decode_latency.p50_ms, s.decode_latency.p90_ms);
  EXPECT_LE(s.decode_latency.p90_ms, s.decode_latency.p99_ms);

  const std::string text = report::RenderDiagnosisText(*r);
  EXPECT_NE(text.find("Model structure: 4 layers"), std::string::npos) << text;
  EXPECT_NE(text.find("0 prefill, 3 decode"), std::string::npos) << text;
  EXPECT_NE(text.find("Per-token latency (decode step, 3 steps): p50 "), std::string::npos) << text;

  const std::string md = report::RenderDiagnosisMarkdown(*r);
  EXPECT_NE(md.find("- Model structure: 4 layers"), std::string::npos) << md;
  EXPECT_NE(md.find("- Per-token latency (decode step, 3 steps): p50 "), std::string::npos) << md;

  const std::string json = report::RenderDiagnosisJson(*r);
  EXPECT_NE(json.find("\"structure\": {"), std::string::npos);
  EXPECT_NE(json.find("\"layers\": 4"), std::string::npos);
  EXPECT_NE(json.find("\"decode_steps\": 3"), std::string::npos);
  EXPECT_NE(json.find("\"per_token_latency\": {"), std::string::npos);
  EXPECT_NE(json.find("\"step_phases\": [\n      \"decode\""), std::string::npos) << json.substr(0, 1500);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

TEST(DiagnosisRender, DecodeShapesBecomeRangesNotOneLineEach) {
  // 400 decode steps whose attention shapes differ only in the KV length
  // (512 .. 911), then 3 rows of another skeleton: two lines, whatever the
  // number of steps.
  Evidence e;
  for (int kv = 512; kv < 912; ++kv)
    AddShapeToGroups(&e, "[[32,1," + std::to_string(kv) + "],[32," + std::to_string(kv) + ",128]]");
  for (int i = 0; i < 3; ++i) AddShapeToGroups(&e, "[[32,4096]]");
  ASSERT_EQ(e.shape_groups.size(), 2u);
  EXPECT_EQ(e.shape_groups[0].Text(), "[[32,1,512..911],[32,512..911,128]]");
  EXPECT_EQ(e.shape_groups[0].count, 400u);
  const std::string text = report::RenderShapeLines(e, "  ");
  EXPECT_EQ(text, "  shapes: [[32,1,512..911],[32,512..911,128]] (400 rows)\n  shapes: [[32,4096]] (3 rows)\n");
  // Past kMaxShapeGroups skeletons, rows are counted, not listed.
  for (size_t k = 0; k < kMaxShapeGroups; ++k) AddShapeToGroups(&e, std::string(k + 1, 'x') + "[1]");
  EXPECT_EQ(e.shape_groups.size(), kMaxShapeGroups);
  EXPECT_EQ(e.other_shapes, 2u);
  EXPECT_NE(report::RenderShapeLines(e, "").find("… 2 more rows of other shapes"), std::string::npos);
}

}  // namespace
}  // namespace pypto
