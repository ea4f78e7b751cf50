// Detector 2 (attention_memory_bound) on the synthetic decode profile: decode
// attention is reported when it is memory-bound AND leaves time against the
// roofline of what it must read; one streaming near the bandwidth is healthy.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

const Issue* RunCase(double share, DiagnosticReport* r) {
  testing::DecodeSpec s;
  s.attention_memory_share = share;
  Profile p = testing::BuildDecodeProfile(s);
  DiagnoseOptions o = testing::TestOptions();
  o.only = {"attention_memory_bound"};
  *r = *Diagnose(p, o);
  for (const Issue& i : r->issues)
    if (i.type == IssueType::kAttentionMemoryBound) return &i;
  return nullptr;
}

double MetricOf(const Issue& i, const char* name) {
  for (const Metric& m : i.evidence.metrics)
    if (m.name == name) return m.value;
  return std::nan("");
}

TEST(AttentionMemoryBound, DecodeAttentionWellBelowBandwidthIsFound) {
  DiagnosticReport r;
  const Issue* i = RunCase(0.3, &r);  // reads its KV cache at 30% of the H100's bandwidth
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->op_name, "flash_fwd_splitkv_kernel");
  EXPECT_EQ(i->phase, "decode");
  EXPECT_NEAR(i->memory_ratio, 0.3, 0.03);
  EXPECT_EQ(i->evidence.count, 12u);  // 4 layers x 3 steps, one group per kernel name
  EXPECT_NE(i->detail.find("achieved bandwidth 30% of peak"), std::string::npos) << i->detail;
  // Decode attention: the memory term is (almost) all of its roofline.
  EXPECT_GT(MetricOf(*i, "roofline_memory_share"), 0.9);
  // Saving = measured - roofline of the bytes read = measured x (1 - 0.3).
  EXPECT_EQ(i->method, SavingMethod::kRoofline);
  EXPECT_NEAR(double(i->saved_ns) / double(i->affected_ns), 0.7, 0.02);
}

TEST(AttentionMemoryBound, StreamingNearTheBandwidthRooflineIsNotAnIssue) {
  DiagnosticReport r;
  EXPECT_EQ(RunCase(0.85, &r), nullptr);  // the healthy default
  EXPECT_EQ(RunCase(0.9, &r), nullptr);
  EXPECT_EQ(RunCase(0.75, &r), nullptr);  // above the 0.7 floor
}

TEST(AttentionMemoryBound, SavingAndSeverityTrackStrength) {
  DiagnosticReport rw, rs;
  const Issue* w = RunCase(0.5, &rw);
  const Issue* s = RunCase(0.15, &rs);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_GT(s->saved_ns, w->saved_ns);
  EXPECT_GT(s->affected_share, w->affected_share);
  EXPECT_GE(s->severity, w->severity);
}

// A CPU-only eager decode attention as transformers runs it with grouped-query
// heads (2 KV heads shared by 8 query heads): the Q.K^T and P.V aten::matmul
// each copy their expanded K or V (reshape -> clone -> copy_) before the
// aten::bmm; a softmax sits between them. `copy_outside` adds a contiguous copy
// of the cache run before the matmul (the model's own code, not the matmul's).
Profile EagerGqaDecodeProfile(bool copy_outside) {
  Profile p;
  const uint32_t thread = p.TrackFor("100", "1", TrackKind::kHostThread);
  p.metadata["format"] = "synthetic";
  auto op = [&](const char* name, TimeNs ts_us, TimeNs dur_us, const char* dims, const char* types) {
    HostOpRow o;
    o.name = p.Intern(name);
    o.category = p.Intern("cpu_op");
    o.kind = HostOpKind::kOperator;
    o.track = thread;
    o.ts = ts_us * 1000;
    o.dur = dur_us * 1000;
    o.input_dims = p.Intern(dims);
    o.input_types = p.Intern(types);
    p.host_ops.Add(o);
  };
  const char* f2 = "[\"float\", \"float\"]";
  const char* f3 = "[\"float\", \"float\", \"Scalar\"]";
  for (int step = 0; step < 2; ++step) {
    const TimeNs t = 1000 + step * 2000;  // µs
    HostOpRow s;
    s.name = p.Intern("ProfilerStep#" + std::to_string(step));
    s.category = p.Intern("user_annotation");
    s.kind = HostOpKind::kUserAnnotation;
    s.track = thread;
    s.ts = t * 1000;
    s.dur = 1500 * 1000;
    p.host_ops.Add(s);
    TimeNs at = t + 10;
    if (copy_outside) {
      op("aten::contiguous", at, 100, "[[1, 2, 128, 64]]", "[\"float\"]");
      op("aten::clone", at + 2, 96, "[[1, 2, 128, 64]]", "[\"float\"]");
      op("aten::copy_", at + 4, 90, "[[1, 2, 128, 64], [1, 2, 128, 64]]", f3);
      at += 110;
    }
    // Q.K^T: K [1, 8, 64, 128] materialised from the 2 KV heads (140 µs copy), then the bmm (100 µs).
    op("aten::matmul", at, 300, "[[1, 8, 1, 64], [1, 8, 64, 128]]", f2);
    op("aten::reshape", at + 5, 150, "[[1, 8, 64, 128], []]", "[\"float\", \"\"]");
    op("aten::clone", at + 7, 146, "[[1, 8, 64, 128], []]", "[\"float\", \"Scalar\"]");
    op("aten::copy_", at + 9, 140, "[[1, 8, 64, 128], [1, 8, 64, 128], []]", f3);
    op("aten::bmm", at + 180, 100, "[[8, 1, 64], [8, 64, 128]]", f2);
    op("aten::softmax", at + 320, 30, "[[1, 8, 1, 128], [], []]", "[\"float\", \"Scalar\", \"\"]");
    // P.V: V [1, 8, 128, 64] materialised (120 µs copy), then the bmm (80 µs).
    op("aten::matmul", at + 370, 250, "[[1, 8, 1, 128], [1, 8, 128, 64]]", f2);
    op("aten::reshape", at + 375, 130, "[[1, 8, 128, 64], []]", "[\"float\", \"\"]");
    op("aten::clone", at + 377, 126, "[[1, 8, 128, 64], []]", "[\"float\", \"Scalar\"]");
    op("aten::copy_", at + 379, 120, "[[1, 8, 128, 64], [1, 8, 128, 64], []]", f3);
    op("aten::bmm", at + 530, 80, "[[8, 1, 128], [8, 128, 64]]", f2);
  }
  return p;
}

// The attention_memory_bound finding on the K/V copies of EagerGqaDecodeProfile (nullptr without one).
std::optional<Issue> CopyFinding(bool copy_outside) {
  Profile p = EagerGqaDecodeProfile(copy_outside);
  DiagnoseOptions o = testing::TestOptions();
  o.only = {"attention_memory_bound"};
  o.min_issue_share = 0;
  auto r = Diagnose(p, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return std::nullopt;
  for (const Issue& i : r->issues)
    if (i.type == IssueType::kAttentionMemoryBound && i.op_name == "aten::copy_") return i;
  return std::nullopt;
}

TEST(AttentionMemoryBound, KvCopiesInsideTheUnfusedMatmulsAreSavedWhole) {
  const std::optional<Issue> copies = CopyFinding(/*copy_outside=*/false);
  ASSERT_TRUE(copies.has_value());
  // Two steps x (140 µs K copy + 120 µs V copy) = 520 µs; a fused kernel makes none of them, so the
  // whole time is the saving (needed bytes 0).
  EXPECT_EQ(copies->evidence.count, 4u);
  EXPECT_EQ(copies->affected_ns, 520'000);
  EXPECT_EQ(copies->saved_ns, 520'000);
  EXPECT_NE(copies->detail.find("4 copies of K/V made for the unfused matmuls"), std::string::npos) << copies->detail;
  EXPECT_EQ(copies->detail.find("scores matrix"), std::string::npos) << copies->detail;
}

TEST(AttentionMemoryBound, ACopyBeforeTheMatmulIsNotTheAttentions) {
  // The model's own contiguous copy (90 µs a step) runs before the Q.K^T matmul, outside it: a fused
  // kernel would still be fed by it, so it is not credited to the attention.
  const std::optional<Issue> copies = CopyFinding(/*copy_outside=*/true);
  ASSERT_TRUE(copies.has_value());
  EXPECT_EQ(copies->evidence.count, 4u);
  EXPECT_EQ(copies->affected_ns, 520'000);
}

}  // namespace
}  // namespace pypto
