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
