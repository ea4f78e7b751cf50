// (9) no_pipe_bound: long Ascend ops that saturate no pipe at all — neither
// the cube (mac), the vector unit, the scalar unit nor a memory transfer
// engine (MTE1/2/3) — i.e. the kernel's tiling / scheduling leaves every unit
// waiting (latency bound); remedy: AOE operator tuning (diagnosis-rules §6).
//
// Rule (msprof-analyze computation/bound/operator_bound_checker.py,
// config/config.ini operator_bound_ratio = 0.8; diagnosis-rules §1.1
// "Operator no bound"): task duration > 20 µs and none of the vec / mac /
// scalar / mte1 / mte2 / mte3 ratios is more than 0.8. Per task, on the
// PipeUtilization columns aic_{mac,scalar,mte1,mte2,mte3}_ratio and
// aiv_{vec,scalar,mte2,mte3}_ratio (MIX ops have both). Tasks without any
// ratio are not judged (counted in a note).
// One issue per op type. Saving (Amdahl): if the op became bound by its
// busiest pipe at the bound ratio, its time would shrink by the factor
// max_ratio / 0.8: saved = dur × (1 − max_ratio / 0.8) per task.
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"

namespace pypto {
namespace {

// µs. Source: operator_bound_checker _MIN_TASK_DURATION = 20 (§1.1).
inline constexpr double kDefaultNoPipeMinDurationUs = 20.0;
// Unitless. Source: msprof-analyze config.ini operator_bound_ratio = 0.8 (§1.1).
inline constexpr double kDefaultOperatorBoundRatio = 0.8;

// Every pipe the PMU columns report, fixpipe included (leaving it out
// overstated a saving 3.5x on a kernel busy in its fixpipe).
constexpr const char* kPipeRatios[] = {"aic_mac_ratio",  "aic_scalar_ratio", "aic_mte1_ratio",   "aic_mte2_ratio",
                                       "aic_mte3_ratio", "aic_fixpipe_ratio", "aiv_vec_ratio",   "aiv_scalar_ratio",
                                       "aiv_mte2_ratio", "aiv_mte3_ratio"};

// Pipes named in the detail, busiest first.
constexpr size_t kPipesShown = 3;

class NoPipeBound final : public Detector {
 public:
  std::string_view name() const override { return "no_pipe_bound"; }
  IssueType type() const override { return IssueType::kNoPipeBound; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& d = p.device_tasks;
    const double min_us = ctx.options->Param("no_pipe_bound.min_duration_us", kDefaultNoPipeMinDurationUs);
    const double bound = ctx.options->Param("no_pipe_bound.operator_bound_ratio", kDefaultOperatorBoundRatio);
    const TimeNs min_ns = static_cast<TimeNs>(min_us * 1000.0);
    if (!ctx.has_pmu) {
      out->notes.push_back("no PMU pipe ratios (aic_*/aiv_* PipeUtilization columns): check skipped");
      return;
    }
    constexpr size_t kPipes = std::size(kPipeRatios);
    std::array<StrId, kPipes> pipe_keys;
    for (size_t i = 0; i < kPipes; ++i) pipe_keys[i] = ctx.AttributeKey(kPipeRatios[i]);
    const StrId aic_mac = ctx.AttributeKey("aic_mac_ratio"), aiv_vec = ctx.AttributeKey("aiv_vec_ratio");
    const StrId aic_mte2 = ctx.AttributeKey("aic_mte2_ratio"), aiv_mte2 = ctx.AttributeKey("aiv_mte2_ratio");
    struct Group {
      std::vector<uint32_t> tasks;
      TimeNs total = 0;
      TimeNs saved = 0;
      detectors::MeanAcc max_ratio;
      std::string best_pipe;
      std::array<detectors::MeanAcc, kPipes> pipes;  // time-weighted mean of each reported pipe ratio
      std::vector<RowSaving> savings;
    };
    std::map<std::string, Group> groups;
    uint64_t long_without_ratios = 0;
    for (uint32_t t : ctx.tasks) {
      if (d.dur[t] <= min_ns) continue;
      const std::array<double, kPipes> ratios = ctx.TaskAttributes(t, pipe_keys);
      double max_r = -1;
      const char* max_key = nullptr;
      for (size_t i = 0; i < kPipes; ++i) {
        if (std::isnan(ratios[i])) continue;
        if (ratios[i] > max_r) max_r = ratios[i], max_key = kPipeRatios[i];
      }
      if (!max_key) {
        if (d.core_type[t] != kEmptyStr && p.Str(d.core_type[t]) != "AI_CPU") ++long_without_ratios;
        continue;
      }
      if (max_r > bound) continue;
      Group& g = groups[std::string(ctx.TaskLabel(t))];
      g.tasks.push_back(t);
      g.total += d.dur[t];
      g.max_ratio.Add(max_r, double(d.dur[t]));
      for (size_t i = 0; i < kPipes; ++i) g.pipes[i].Add(ratios[i], double(d.dur[t]));
      if (g.best_pipe.empty()) g.best_pipe = max_key;
      TimeNs s = static_cast<TimeNs>(double(d.dur[t]) * (1.0 - std::max(0.0, max_r) / bound));
      g.saved += s;
      g.savings.push_back({SavingTargetKind::kDeviceTask, t, s});
    }
    if (long_without_ratios > 0)
      out->notes.push_back(fmt::format("{} task(s) over {} us without pipe ratios were not judged", long_without_ratios,
                                       min_us));
    for (auto& [label, g] : groups) {
      Issue issue;
      issue.type = IssueType::kNoPipeBound;
      issue.op_name = label;
      issue.op_type = label;
      issue.affected_ns = g.total;
      std::sort(g.tasks.begin(), g.tasks.end(), [&](uint32_t a, uint32_t b) { return d.ts[a] < d.ts[b]; });
      for (uint32_t t : g.tasks) {
        detectors::AddTaskEvidence(&issue, t, d.dur[t]);
        detectors::AddShape(&issue, detectors::TaskShapeText(ctx, t));
      }
      issue.savings = std::move(g.savings);
      issue.method = SavingMethod::kAmdahl;
      issue.saving_formula = fmt::format("sum(dur x (1 - max pipe ratio / {})) over {} task(s)", bound, g.tasks.size());
      const double mean_max = g.max_ratio.Mean();
      // Memory / compute ratios of the op for the report columns.
      // A vector op's compute is its vector pipe, its memory the vector MTE2
      // (an AI_VECTOR_CORE row writes 0 in the aic_* columns).
      detectors::MeanAcc mac, mte2;
      for (uint32_t t : g.tasks) {
        const std::string_view core = p.Str(d.core_type[t]);
        const bool vector = core == "AI_VECTOR_CORE" || core == "MIX_AIV";
        double m = ctx.TaskAttribute(t, vector ? aiv_vec : aic_mac);
        if (std::isnan(m)) m = ctx.TaskAttribute(t, vector ? aic_mac : aiv_vec);
        mac.Add(m, double(d.dur[t]));
        double mm = ctx.TaskAttribute(t, vector ? aiv_mte2 : aic_mte2);
        if (std::isnan(mm)) mm = ctx.TaskAttribute(t, vector ? aic_mte2 : aiv_mte2);
        mte2.Add(mm, double(d.dur[t]));
      }
      issue.compute_ratio = mac.Mean();
      issue.memory_ratio = mte2.Mean();
      // The pipes it does use, busiest first (time-weighted means; pipes at 0 left out).
      std::vector<std::pair<double, std::string>> used;
      for (size_t i = 0; i < kPipes; ++i)
        if (const double mean = g.pipes[i].Mean(); !std::isnan(mean) && mean > 0) used.push_back({mean, kPipeRatios[i]});
      std::sort(used.rbegin(), used.rend());
      std::string pipes;
      for (size_t i = 0; i < used.size() && i < kPipesShown; ++i)
        pipes += fmt::format("{}{} {:.2f}", i ? ", " : "", used[i].second, used[i].first);
      issue.detail = fmt::format("{} task(s) of {} over {} us with no pipe ratio above {} (busiest pipe {:.2f} on "
                                 "average, time-weighted; pipes: {})", g.tasks.size(), label, min_us, bound, mean_max,
                                 pipes.empty() ? "none reported" : pipes);
      detectors::AddMetric(&issue, "tasks", double(g.tasks.size()), "count");
      detectors::AddMetric(&issue, "max_pipe_ratio", mean_max, "ratio");
      detectors::AddMetric(&issue, "operator_bound_ratio", bound, "ratio");
      detectors::AddMetric(&issue, "min_duration_us", min_us, "us");
      out->issues.push_back(std::move(issue));
    }
  }
};

}  // namespace

const Detector& NoPipeBoundDetector() {
  static const NoPipeBound detector;
  return detector;
}

}  // namespace pypto
