// (6) aicpu_fallback: Ascend ops that run on the AI CPU instead of the AI Core.
//
// Rule (msprof-analyze computation/aicpu/aicpu_checker.py, aicpu_rules.yaml;
// diagnosis-rules §1.1): a task of Task Type AI_CPU lasting more than 20 µs.
// One issue per op type, with its count, time, input dtypes and the usual
// cause of the fallback when the op type or dtype shows it (§1.1: DOUBLE
// inputs have no AI Core kernel -> "use float"; dtypes outside the CANN
// whitelist -> "convert dtype"; ops with a data-dependent output shape such
// as NonZero / Unique only have AI CPU kernels).
// Saving (measured): the task time above the 20 µs threshold, i.e. what is
// left once the op runs as an AI Core kernel of the size MPA tolerates.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"

namespace pypto {
namespace {

// µs. Source: msprof-analyze aicpu_checker (AI_CPU tasks > 20 µs), §1.1.
inline constexpr double kDefaultAicpuMinDurationUs = 20.0;

// Op types whose output shape depends on the data (only AI CPU kernels exist
// in the CANN op lists; msprof-analyze docs/*/aicpu_operator_replacement_example.md
// replaces them on the host side or with fixed-shape ops).
bool DataDependentShapeOp(std::string_view op) {
  static const char* const kOps[] = {"NonZero", "Unique", "UniqueWithCounts", "MaskedSelect", "NonMaxSuppression",
                                     "Where", "UniqueConsecutive"};
  for (const char* o : kOps)
    if (op == o) return true;
  return false;
}

class AicpuFallback final : public Detector {
 public:
  std::string_view name() const override { return "aicpu_fallback"; }
  IssueType type() const override { return IssueType::kAicpuFallback; }
  // A fallback is a defect whatever its share (a Cast INT32->UINT64 of
  // 2 x 72 us fell under the 1 % cutoff): always listed, ranked by time.
  bool ListedAtAnyShare() const override { return true; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& d = p.device_tasks;
    const double min_us = ctx.options->Param("aicpu_fallback.min_duration_us", kDefaultAicpuMinDurationUs);
    const TimeNs min_ns = static_cast<TimeNs>(min_us * 1000.0);
    struct Group {
      std::vector<uint32_t> tasks;
      TimeNs total = 0;
      TimeNs saved = 0;
      uint64_t below = 0;  // AI_CPU tasks of this type at or under the threshold
      std::vector<std::string> dtypes;
    };
    std::map<std::string, Group> groups;
    uint64_t with_core_type = 0, aicpu_short = 0;
    for (uint32_t t : ctx.tasks) {
      if (d.core_type[t] == kEmptyStr) continue;
      ++with_core_type;
      if (p.Str(d.core_type[t]) != "AI_CPU") continue;
      std::string label(ctx.TaskLabel(t));
      Group& g = groups[label];
      if (d.dur[t] <= min_ns) {
        ++g.below;
        ++aicpu_short;
        continue;
      }
      g.tasks.push_back(t);
      g.total += d.dur[t];
      g.saved += d.dur[t] - min_ns;
      std::string dt(p.Str(d.input_types(t)));
      if (!dt.empty() && std::find(g.dtypes.begin(), g.dtypes.end(), dt) == g.dtypes.end() && g.dtypes.size() < 8)
        g.dtypes.push_back(dt);
    }
    if (with_core_type == 0) {
      out->notes.push_back("no Ascend core types (Task Type / Accelerator Core) in the analysed steps: AI CPU check skipped");
      return;
    }
    if (aicpu_short > 0)
      out->notes.push_back(fmt::format("{} AI_CPU task(s) at or under {} us not reported (msprof-analyze threshold)",
                                       aicpu_short, min_us));
    for (auto& [label, g] : groups) {
      if (g.tasks.empty()) continue;
      Issue issue;
      issue.type = IssueType::kAicpuFallback;
      issue.op_name = label;
      issue.op_type = label;
      issue.affected_ns = g.total;
      std::sort(g.tasks.begin(), g.tasks.end(), [&](uint32_t a, uint32_t b) { return d.ts[a] < d.ts[b]; });
      for (uint32_t t : g.tasks) {
        detectors::AddTaskEvidence(&issue, t, d.dur[t]);
        detectors::AddShape(&issue, detectors::TaskShapeText(ctx, t));
        issue.savings.push_back({SavingTargetKind::kDeviceTask, t, d.dur[t] - min_ns});
      }
      issue.method = SavingMethod::kMeasuredGap;
      issue.saving_formula = fmt::format("sum(duration - {} us) over {} AI_CPU task(s) longer than {} us", min_us,
                                         g.tasks.size(), min_us);
      bool has_double = false, has_int64 = false;
      for (const std::string& dt : g.dtypes) {
        std::string lower = detectors::LowerAscii(dt);
        has_double |= lower.find("double") != std::string::npos || lower.find("float64") != std::string::npos;
        has_int64 |= lower.find("int64") != std::string::npos;
      }
      std::string cause;
      if (DataDependentShapeOp(label)) cause = "data-dependent output shape (AI CPU kernel only)";
      else if (has_double) cause = "DOUBLE input (no AI Core kernel for float64)";
      else if (has_int64) cause = "INT64 input (dtype outside the AI Core whitelist for this op)";
      std::string dtypes;
      for (const std::string& dt : g.dtypes) dtypes += (dtypes.empty() ? "" : ", ") + dt;
      issue.detail = fmt::format("{} AI_CPU task(s) of {} over {} us, {} in total", g.tasks.size(), label, min_us,
                                 detectors::FormatUs(g.total));
      if (!dtypes.empty()) issue.detail += "; input dtypes " + dtypes;
      if (!cause.empty()) issue.detail += "; " + cause;
      detectors::AddMetric(&issue, "aicpu_tasks", double(g.tasks.size()), "count");
      detectors::AddMetric(&issue, "aicpu_time_us", double(g.total) / 1000.0, "us");
      detectors::AddMetric(&issue, "min_duration_us", min_us, "us");
      detectors::AddMetric(&issue, "short_aicpu_tasks", double(g.below), "count");
      detectors::AddMetric(&issue, "double_input", has_double ? 1 : 0, "bool");
      detectors::AddMetric(&issue, "data_dependent_shape_op", DataDependentShapeOp(label) ? 1 : 0, "bool");
      out->issues.push_back(std::move(issue));
    }
  }
};

}  // namespace

const Detector& AicpuFallbackDetector() {
  static const AicpuFallback detector;
  return detector;
}

}  // namespace pypto
