// Detector 4: norm_launch_overhead — LayerNorm / RMSNorm whose launch or
// dispatch gaps rival their execution:
//   (a) fused norm kernels (op class norm), grouped by name: never a finding
//       (there is nothing left to fuse; the gaps before them are host_bound's
//       dispatch idle); a note when the launch-attributable idle gaps before
//       them (detector_util.h LaunchAttributableGap) sum to >=
//       gap_to_exec_ratio × their execution;
//   (b) unfused RMSNorm chains: on one stream, [pow|square|mean|reduce|add|cast]{1,5}
//       → rsqrt → mul{1,2} (msprof-analyze affinity rule for npu_rms_norm:
//       `(pow){0,1}-(mean){0,1}-(add){0,1}-rsqrt-mul-(type_as){0,1}`, with at
//       least one mean/pow/square before the rsqrt so a lone rsqrt·mul is not
//       taken for a norm); flagged when the chain's gaps reach the ratio or its
//       kernels are all short (< short_kernel_us).
// Saving (measured_gap): (b) the gaps inside the chain (kTaskGap) + the execution of all but the longest
// kernel (kDeviceTask): one fused kernel ≈ one pass over the activations.
#include <map>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"
#include "model/kernel_name.h"

namespace pypto {
namespace {

constexpr int kMaxChainPrefix = 5;

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool IsPrefixSym(const std::string& s) {
  return Contains(s, "pow") || Contains(s, "square") || Contains(s, "mean") || Contains(s, "reduce") ||
         Contains(s, "add") || Contains(s, "cast") || Contains(s, "to_copy");
}
bool IsLayerOrRmsNorm(const DiagnosisContext& ctx, uint32_t task) {
  std::string sub(detectors::TaskSubKind(ctx, task));
  std::string n = detectors::LowerAscii(ctx.TaskLabel(task));
  return Contains(sub, "rms") || Contains(sub, "layer") || Contains(n, "rms") || Contains(n, "layer_norm") ||
         Contains(n, "layernorm");
}
bool IsStatSym(const std::string& s) {
  return Contains(s, "pow") || Contains(s, "square") || Contains(s, "mean") || Contains(s, "reduce");
}

class NormLaunchOverhead final : public Detector {
 public:
  std::string_view name() const override { return "norm_launch_overhead"; }
  IssueType type() const override { return IssueType::kNormLaunchOverhead; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const DeviceTaskTable& t = ctx.profile->device_tasks;
    const NormLaunchOptions& opt = ctx.options->norm_launch;
    const TimeNs max_gap = static_cast<TimeNs>(ctx.options->host_bound.max_launch_gap_us * 1000);
    const TimeNs short_ns = static_cast<TimeNs>(opt.short_kernel_us * 1000);
    detectors::StreamGaps gaps = detectors::ComputeStreamGaps(ctx);

    // (a) fused norm kernels.
    struct Group { std::vector<size_t> idx; TimeNs exec = 0, gap = 0; };
    std::map<std::string, Group> groups;
    for (size_t i = 0; i < ctx.tasks.size(); ++i) {
      uint32_t task = ctx.tasks[i];
      if (detectors::TaskClass(ctx, task) != OpClass::kNorm || t.kind[task] != DeviceTaskKind::kKernel) continue;
      if (!IsLayerOrRmsNorm(ctx, task)) continue;  // batch/group norm are not this pattern
      Group& g = groups[std::string(ctx.TaskLabel(task))];
      g.idx.push_back(i);
      g.exec += t.dur[task];
      g.gap += detectors::LaunchAttributableGap(ctx, gaps, i, max_gap);
    }
    // A norm that already runs as one fused kernel has nothing left to fuse:
    // gaps before it are dispatch idle, which host_bound measures and claims
    // (seen: aclnn RmsNorm and layer_norm_grad_input_kernel flagged for their
    // launch gaps, a second claim on host_bound's idle). A note, no finding.
    for (auto& [label, g] : groups) {
      if (g.exec <= 0 || double(g.gap) < opt.gap_to_exec_ratio * double(g.exec)) continue;
      out->notes.push_back(fmt::format(
          "{} {} kernel(s) are already fused norms; the {:.1f} us of launch gaps before each ({:.2f} x their "
          "execution) is dispatch idle, counted by host_bound",
          g.idx.size(), ShortKernelName(label), double(g.gap) / 1e3 / g.idx.size(), double(g.gap) / double(g.exec)));
    }

    // (b) unfused chains.
    Issue chain_issue;
    TimeNs chain_exec = 0, chain_gap = 0;
    uint64_t chains = 0;
    // Whether a symbol holds "rsqrt", judged once per symbol id (a lowered
    // copy of every task's symbol was a third of this detector on a 1 M-row
    // kernel_details.csv: 56 -> 37 ms).
    std::unordered_map<StrId, bool> rsqrt_of_symbol;
    for (size_t r = 0; r < ctx.tasks.size(); ++r) {
      uint32_t rs = ctx.tasks[r];
      const auto [known, added] = rsqrt_of_symbol.try_emplace(detectors::TaskSymbolId(ctx, rs), false);
      if (added) known->second = Contains(detectors::TaskSymbol(ctx, rs), "rsqrt");
      if (!known->second) continue;
      size_t first = r;
      bool stat = false;
      for (int k = 0; k < kMaxChainPrefix && first > 0 && gaps.HasPrevious(first); ++k) {
        std::string ps = detectors::TaskSymbol(ctx, ctx.tasks[first - 1]);
        if (!IsPrefixSym(ps) || Contains(ps, "rsqrt")) break;
        stat = stat || IsStatSym(ps);
        --first;
      }
      size_t last = r;
      for (int k = 0; k < 2 && last + 1 < ctx.tasks.size() && gaps.HasPrevious(last + 1); ++k) {
        if (!Contains(detectors::TaskSymbol(ctx, ctx.tasks[last + 1]), "mul")) break;
        ++last;
      }
      if (!stat || last == r) continue;
      TimeNs exec = 0, gap = 0, longest = 0, maxdur = 0;
      bool all_short = true;
      for (size_t i = first; i <= last; ++i) {
        uint32_t task = ctx.tasks[i];
        exec += t.dur[task];
        if (t.dur[task] >= short_ns) all_short = false;
        if (t.dur[task] > maxdur) { maxdur = t.dur[task]; longest = static_cast<TimeNs>(i); }
        if (i > first) gap += detectors::LaunchAttributableGap(ctx, gaps, i, max_gap);
      }
      if (!(all_short || double(gap) >= opt.gap_to_exec_ratio * double(exec))) { r = last; continue; }
      ++chains;
      chain_exec += exec;
      chain_gap += gap;
      for (size_t i = first; i <= last; ++i) {
        uint32_t task = ctx.tasks[i];
        detectors::AddTaskEvidence(&chain_issue, task, t.dur[task]);
        if (static_cast<TimeNs>(i) != longest) chain_issue.savings.push_back({SavingTargetKind::kDeviceTask, task, t.dur[task]});
        if (i > first) {
          TimeNs g = detectors::LaunchAttributableGap(ctx, gaps, i, max_gap);
          if (g > 0) chain_issue.savings.push_back({SavingTargetKind::kTaskGap, task, g});
        }
      }
      if (chain_issue.evidence.shapes.empty()) detectors::AddShape(&chain_issue, detectors::TaskShapeText(ctx, ctx.tasks[first]));
      r = last;
    }
    if (chains > 0) {
      chain_issue.type = IssueType::kNormLaunchOverhead;
      chain_issue.op_name = "rms_norm (unfused: pow/mean/add/rsqrt/mul)";
      chain_issue.op_type = OpClassName(OpClass::kNorm);
      chain_issue.affected_ns = chain_exec + chain_gap;
      chain_issue.compute_ratio = double(chain_exec) / double(std::max<TimeNs>(1, chain_exec + chain_gap));
      AddFigures(&chain_issue, chain_exec, chain_gap, chains);
      chain_issue.evidence.count = chain_issue.evidence.count;  // kernels
      detectors::AddMetric(&chain_issue, "chains", double(chains), "count");
      chain_issue.detail = fmt::format("{} unfused RMSNorm chains, {:.1f} kernels each, {:.1f} us execution + {:.1f} us gaps per chain",
                                       chains, double(chain_issue.evidence.count) / chains, double(chain_exec) / 1e3 / chains,
                                       double(chain_gap) / 1e3 / chains);
      chain_issue.method = SavingMethod::kMeasuredGap;
      chain_issue.saving_formula =
          "per chain: gaps between its kernels + execution of all but its longest kernel (one fused kernel, one pass)";
      out->issues.push_back(std::move(chain_issue));
    }
  }

 private:
  static void AddFigures(Issue* issue, TimeNs exec, TimeNs gap, size_t n) {
    detectors::AddMetric(issue, "execution_ns", double(exec), "ns");
    detectors::AddMetric(issue, "launch_gap_ns", double(gap), "ns");
    detectors::AddMetric(issue, "gap_to_exec_ratio", exec > 0 ? double(gap) / double(exec) : std::nan(""), "ratio");
    detectors::AddMetric(issue, "mean_execution_us", double(exec) / 1e3 / double(std::max<size_t>(1, n)), "us");
  }
};

}  // namespace

const Detector& NormLaunchOverheadDetector() {
  static const NormLaunchOverhead detector;
  return detector;
}

}  // namespace pypto
