// Detector 2: attention_memory_bound — attention whose time is dominated by
// memory traffic (typically decode: one query token reads the whole KV cache).
//
// Memory share per task:
//   * Ascend PMU: aic_mte2_ratio (cube side of FlashAttention; bound at >= 0.8,
//     msprof-analyze ai_core_performance FA fwd rule) and aiv_mte2_ratio
//     (vector side; bound at >= 0.7, advisor vector rule); the share reported
//     is the larger ratio;
//   * else the roofline model: (modeled bytes / bandwidth) / measured, bound at
//     >= mem_bottleneck_ratio_threshold (0.7, the brief's HotspotDetector).
// Grouped by kernel / op type (decode shapes grow every step); a group is flagged when its
// time-weighted share reaches the threshold.
// Saving per task: roofline (model) measured − max(FLOPs/peak, bytes/bandwidth)
// (the gap to the bandwidth roofline; 0 when the kernel already streams at
// full bandwidth — then only fewer bytes help: smaller KV dtype, GQA, paged /
// fused kernels); Amdahl (PMU) measured × (share − threshold), the memory
// share brought down to the threshold.
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"

namespace pypto {
namespace {

using detectors::MeanAcc;

struct Group {
  std::string label, shape;
  std::set<std::string> shapes;
  std::vector<uint32_t> tasks;
  TimeNs total_ns = 0;
  MeanAcc aic, aiv, modeled;
  bool pmu = false;
  int decode = 0, prefill = 0;
  double bytes = 0;
};

class AttentionMemoryBound final : public Detector {
 public:
  std::string_view name() const override { return "attention_memory_bound"; }
  IssueType type() const override { return IssueType::kAttentionMemoryBound; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& t = p.device_tasks;
    const AttentionMemoryOptions& opt = ctx.options->attention_memory;
    const double bw = ctx.hardware->memory_bandwidth.value;
    std::map<std::string, Group> groups;
    uint64_t without_data = 0;
    for (uint32_t task : ctx.tasks) {
      if (detectors::TaskClass(ctx, task) != OpClass::kAttention || t.kind[task] != DeviceTaskKind::kKernel) continue;
      std::string label(ctx.TaskLabel(task));
      std::string shape = detectors::TaskShapeText(ctx, task);
      // Ascend kernel rows: one group per shape (PMU ratios differ by shape);
      // Kineto decode shapes grow every step: one group per kernel name.
      Group& g = groups[t.op_type(task) != kEmptyStr ? label + "\x1f" + shape : label];
      if (g.tasks.empty()) { g.label = label; g.shape = shape; }
      g.shapes.insert(shape);
      g.tasks.push_back(task);
      g.total_ns += t.dur[task];
      const double w = double(t.dur[task]);
      double aic = ctx.TaskAttribute(task, "aic_mte2_ratio");
      double aiv = ctx.TaskAttribute(task, "aiv_mte2_ratio");
      if (!std::isnan(aic) || !std::isnan(aiv)) g.pmu = true;
      g.aic.Add(aic, w);
      g.aiv.Add(aiv, w);
      const OpCost& c = (*ctx.task_costs)[task];
      if (ctx.hardware_known && bw > 0 && c.status == CostStatus::kOk && t.dur[task] > 0 && !std::isnan(c.bytes)) {
        g.modeled.Add(c.bytes / bw * 1e9 / double(t.dur[task]), w);
        g.bytes += c.bytes;
      } else if (std::isnan(aic) && std::isnan(aiv)) {
        ++without_data;
      }
      if (c.phase == AttentionPhase::kDecode) ++g.decode;
      if (c.phase == AttentionPhase::kPrefill) ++g.prefill;
    }
    for (auto& [key, g] : groups) {
      double share = std::nan("");
      bool bound = false;
      const double aic = g.aic.Mean(), aiv = g.aiv.Mean(), modeled = g.modeled.Mean();
      double threshold = opt.mem_bottleneck_ratio_threshold;
      if (g.pmu) {
        bool aic_bound = !std::isnan(aic) && aic >= opt.fa_aic_mte2_ratio;
        bool aiv_bound = !std::isnan(aiv) && aiv >= opt.aiv_mte2_ratio;
        bound = aic_bound || aiv_bound;
        share = std::isnan(aic) ? aiv : (std::isnan(aiv) ? aic : std::max(aic, aiv));
        threshold = aic_bound ? opt.fa_aic_mte2_ratio : opt.aiv_mte2_ratio;
      } else if (!std::isnan(modeled)) {
        share = modeled;
        bound = modeled >= opt.mem_bottleneck_ratio_threshold;
      }
      if (!bound) continue;
      Issue issue;
      issue.type = IssueType::kAttentionMemoryBound;
      issue.op_name = g.label;
      issue.op_type = std::string(p.Str(t.op_type(g.tasks[0])));
      if (issue.op_type.empty()) issue.op_type = OpClassName(OpClass::kAttention);
      issue.phase = g.decode > 0 && g.prefill == 0 ? "decode" : (g.prefill > 0 && g.decode == 0 ? "prefill" : "");
      issue.memory_ratio = std::min(1.0, share);
      issue.compute_ratio = g.pmu ? ctx.TaskAttribute(g.tasks[0], "aic_mac_ratio") : std::nan("");
      if (g.pmu) {
        MeanAcc mac;
        for (uint32_t task : g.tasks) mac.Add(ctx.TaskAttribute(task, "aic_mac_ratio"), double(t.dur[task]));
        issue.compute_ratio = mac.Mean();
      }
      issue.detail = g.pmu ? fmt::format("mte2 ratio {:.2f} >= {:.2f} (PMU)", share, threshold)
                           : fmt::format("modeled memory time {:.0f}% of measured >= {:.0f}%", share * 100,
                                         threshold * 100);
      for (const std::string& sh : g.shapes) detectors::AddShape(&issue, sh);
      for (uint32_t task : g.tasks) detectors::AddTaskEvidence(&issue, task, t.dur[task]);
      issue.affected_ns = g.total_ns;
      if (!std::isnan(aic)) detectors::AddMetric(&issue, "aic_mte2_ratio", aic, "ratio");
      if (!std::isnan(aiv)) detectors::AddMetric(&issue, "aiv_mte2_ratio", aiv, "ratio");
      if (!std::isnan(modeled)) {
        detectors::AddMetric(&issue, "modeled_memory_share", modeled, "ratio");
        detectors::AddMetric(&issue, "modeled_bytes", g.bytes, "B");
        detectors::AddMetric(&issue, "memory_bandwidth", bw, "B/s");
      }
      if (g.pmu) {
        issue.method = SavingMethod::kAmdahl;
        issue.saving_formula = fmt::format(
            "sum over {} tasks of measured x (mte2 ratio - {:.2f}): memory share brought down to the threshold",
            g.tasks.size(), threshold);
        for (uint32_t task : g.tasks) {
          double a = ctx.TaskAttribute(task, "aic_mte2_ratio"), v = ctx.TaskAttribute(task, "aiv_mte2_ratio");
          double r = std::isnan(a) ? v : (std::isnan(v) ? a : std::max(a, v));
          if (std::isnan(r) || r <= threshold) continue;
          issue.savings.push_back({SavingTargetKind::kDeviceTask, task,
                                   static_cast<TimeNs>(double(t.dur[task]) * (r - threshold))});
        }
      } else {
        issue.method = SavingMethod::kRoofline;
        issue.saving_formula = fmt::format(
            "sum over {} tasks of measured - max(FLOPs/peak, bytes/bandwidth); 0 where the kernel already runs at "
            "the bandwidth roofline (only fewer bytes help there)",
            g.tasks.size());
        for (uint32_t task : g.tasks) {
          const OpCost& c = (*ctx.task_costs)[task];
          if (c.status != CostStatus::kOk || std::isnan(c.roofline_ns)) continue;
          TimeNs target = static_cast<TimeNs>(c.roofline_ns);
          if (t.dur[task] > target) issue.savings.push_back({SavingTargetKind::kDeviceTask, task, t.dur[task] - target});
        }
      }
      out->issues.push_back(std::move(issue));
    }
    if (without_data > 0) {
      out->notes.push_back(fmt::format(
          "{} attention task(s) without PMU ratios and without shapes/bandwidth: memory share not known", without_data));
    }
  }
};

}  // namespace

const Detector& AttentionMemoryBoundDetector() {
  static const AttentionMemoryBound detector;
  return detector;
}

}  // namespace pypto
