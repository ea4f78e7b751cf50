// Detector 2: attention_memory_bound — attention whose time is set by memory
// traffic (typically decode: one query token reads the whole KV cache) AND
// that leaves time on the table against the roofline of what it must read.
//
// A group (kernel / op type; Ascend: per shape) is reported when both hold:
//   1. memory share high:
//        * Ascend PMU: aic_mte2_ratio >= 0.8 (msprof-analyze ai_core_performance
//          FA fwd rule) or aiv_mte2_ratio >= 0.7 (advisor vector rule), or
//        * roofline of the shapes: memory time / (memory + compute time)
//          >= mem_bottleneck_ratio_threshold (0.7, the brief's HotspotDetector);
//   2. time to win: the roofline time of the bytes it must read is below
//      bandwidth_efficiency_floor (0.7) of the measured time, because
//        * the KV read is padded / over-long: bytes moved vs bytes needed — the
//          cache length S_kv read by consecutive decode steps grows r tokens
//          per step while decode appends S_q (one per sequence), so r× the live
//          cache is read (needed = Q + O + KV / r);
//        * unfused attention parts write and re-read the scores matrix (needed
//          bytes exclude it; a fused kernel keeps scores on chip);
//        * or the achieved bandwidth is simply well below the peak;
//        * or (PMU) the memory pipe is saturated while the shapes' roofline is
//          compute (prefill FA re-reading K/V tiles): the gap to that roofline.
// A kernel that streams what it must read near the bandwidth roofline (decode
// attention at 85 % of it) is healthy: only fewer bytes would help there.
// Saving per task (roofline): measured − max(needed bytes / bandwidth,
// needed FLOPs / peak). Without shapes or without a known bandwidth the time
// to win cannot be established: a note, no issue.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"
#include "hw/dtype.h"

namespace pypto {
namespace {

using detectors::MeanAcc;

struct Group {
  std::string label, shape;
  std::set<std::string> shapes;
  std::vector<uint32_t> tasks;
  TimeNs total_ns = 0;
  MeanAcc aic, aiv;
  bool pmu = false;
  int decode = 0, prefill = 0;
  int unfused = 0;
  int materialized = 0;  // kv_materialize copies among the unfused parts
  // Roofline figures over tasks with costs.
  double bytes = 0, needed_bytes = 0;
  double mem_ns = 0, flop_ns = 0, needed_ns = 0;
  double needed_mem_ns = 0, needed_flop_ns = 0;  // the two terms of the needed roofline
  TimeNs measured_with_costs = 0;
  double pad_ratio = 1.0;
};

// A copy of K or V made inside an unfused Q.K^T / P.V matmul (grouped-query
// heads expanded, a transposed K made contiguous; op_class.cc): a fused
// kernel reads K/V in place, so nothing of the copy is needed.
bool IsKvMaterialize(std::string_view sub) { return sub == "kv_materialize"; }

// Seconds to compute `flops` at `peak` FLOP/s; 0 for work without FLOPs (a
// copy), whose cost figures carry no peak.
double FlopSeconds(double flops, double peak) { return flops == 0 ? 0.0 : flops / peak; }

// Bytes of the scores matrix an unfused part writes or reads (0 for fused kernels).
double ScoresBytes(const CostFigures& c, std::string_view sub) {
  const double s = DTypeBytes(c.dtype) > 0 ? DTypeBytes(c.dtype) : 2.0;
  const double b = double(std::max<int64_t>(1, c.batch));
  if (sub == "qk_bmm") return s * b * double(c.m) * double(c.n);   // scores written [M, N]
  if (sub == "pv_bmm") return s * b * double(c.m) * double(c.k);   // scores read [M, K]
  if (sub == "scores_softmax") return c.bytes;                     // read + write of the scores
  return 0;
}

// Bytes and FLOPs the attention must spend: without the scores matrix for
// unfused parts; with the KV read divided by the padding ratio for a padded
// decode read (Q and O are read / written once either way).
std::pair<double, double> Needed(const CostFigures& c, std::string_view sub, double pad_ratio, bool decode) {
  if (IsKvMaterialize(sub)) return {0.0, 0.0};
  if (IsUnfusedAttentionPart(sub)) return {std::max(0.0, c.bytes - ScoresBytes(c, sub)), c.flops};
  if (pad_ratio > 1.0 && decode) {
    const double s = DTypeBytes(c.dtype) > 0 ? DTypeBytes(c.dtype) : 2.0;
    const double qo =
        2.0 * s * double(std::max<int64_t>(1, c.batch)) * double(c.heads) * double(c.s_q) * double(c.head_dim);
    return {qo + std::max(0.0, c.bytes - qo) / pad_ratio, c.flops / pad_ratio};
  }
  return {c.bytes, c.flops};
}

// What every step of one run reads, with the per-task tests they share.
struct AttentionRun {
  const DiagnosisContext& ctx;
  const Profile& p;
  const DeviceTaskTable& t;
  const AttentionMemoryOptions& opt;
  double bw;

  bool IsAttentionKernel(uint32_t task) const {
    return detectors::TaskClass(ctx, task) == OpClass::kAttention && t.kind[task] == DeviceTaskKind::kKernel;
  }
  bool RooflineOk(const CostFigures& c, uint32_t task) const {
    return ctx.hardware_known && bw > 0 && c.status == CostStatus::kOk && t.dur[task] > 0 && !std::isnan(c.bytes) &&
           !std::isnan(c.flops) && (c.flops == 0 || c.peak_flops > 0) && c.bandwidth > 0;
  }
  bool IsDecode(const CostFigures& c, uint32_t task) const {
    if (c.phase != AttentionPhase::kUnknown) return c.phase == AttentionPhase::kDecode;
    return detectors::StepPhaseOf(ctx, t.ts[task]) == StepPhase::kDecode;
  }
};

struct StepKv { int64_t s_kv = 0, s_q = 0; };
using KvByStep = std::map<int, StepKv>;

// Longest S_kv and S_q per step, per fused attention kernel label, over the decode tasks.
std::map<std::string, KvByStep> DecodeKvByLabel(const AttentionRun& run) {
  const DiagnosisContext& ctx = run.ctx;
  std::map<std::string, KvByStep> kv_by_label;
  for (uint32_t task : ctx.tasks) {
    if (!run.IsAttentionKernel(task)) continue;
    const CostFigures& c = (*ctx.task_costs)[task];
    if (!c.has_costs() || c.s_kv <= 0 || c.s_q <= 0 || !run.IsDecode(c, task)) continue;
    if (IsUnfusedAttentionPart(detectors::TaskSubKind(ctx, task))) continue;
    StepKv& s = kv_by_label[std::string(ctx.TaskLabel(task))][ctx.StepOf(run.t.ts[task])];
    s.s_kv = std::max(s.s_kv, c.s_kv);
    s.s_q = std::max(s.s_q, c.s_q);
  }
  return kv_by_label;
}

// Padding ratio r per label: S_kv grows by the same multiple of S_q between
// every two consecutive decode steps. A constant S_kv only gets a note.
std::map<std::string, double> KvPadRatios(const std::map<std::string, KvByStep>& kv_by_label, DetectorOutput* out) {
  std::map<std::string, double> pad_ratio;
  for (const auto& [label, by_step] : kv_by_label) {
    if (by_step.size() < 2) continue;
    std::set<int64_t> growth;
    int64_t s_q = 0;
    for (auto it = by_step.begin(), next = std::next(it); next != by_step.end(); ++it, ++next) {
      if (next->first != it->first + 1) continue;  // consecutive analysed steps only
      growth.insert(next->second.s_kv - it->second.s_kv);
      s_q = std::max({s_q, it->second.s_q, next->second.s_q});
    }
    if (growth.size() != 1 || s_q <= 0) continue;  // irregular (batching changes): no claim
    const int64_t g = *growth.begin();
    if (g > s_q && g % s_q == 0) pad_ratio[label] = double(g) / double(s_q);
    if (g == 0) {
      out->notes.push_back(fmt::format(
          "{}: KV length {} constant over {} decode steps (static / max-length cache?); the live length is not in "
          "the profile, padding not estimated",
          label, by_step.begin()->second.s_kv, by_step.size()));
    }
  }
  return pad_ratio;
}

// Adds one task's time, PMU ratios and roofline figures to its group.
void AddTaskToGroup(const AttentionRun& run, uint32_t task, Group& g, uint64_t* without_data) {
  const DiagnosisContext& ctx = run.ctx;
  const DeviceTaskTable& t = run.t;
  g.tasks.push_back(task);
  g.total_ns += t.dur[task];
  const double w = double(t.dur[task]);
  double aic = ctx.TaskAttribute(task, "aic_mte2_ratio");
  double aiv = ctx.TaskAttribute(task, "aiv_mte2_ratio");
  if (!std::isnan(aic) || !std::isnan(aiv)) g.pmu = true;
  g.aic.Add(aic, w);
  g.aiv.Add(aiv, w);
  const CostFigures& c = (*ctx.task_costs)[task];
  const std::string_view sub = detectors::TaskSubKind(ctx, task);
  if (run.RooflineOk(c, task)) {
    if (IsUnfusedAttentionPart(sub)) ++g.unfused;
    if (IsKvMaterialize(sub)) ++g.materialized;
    const auto [needed, needed_flops] = Needed(c, sub, g.pad_ratio, run.IsDecode(c, task));
    g.bytes += c.bytes;
    g.needed_bytes += needed;
    g.mem_ns += c.bytes / c.bandwidth * 1e9;
    g.flop_ns += FlopSeconds(c.flops, c.peak_flops) * 1e9;
    g.needed_ns += std::max(needed / c.bandwidth, FlopSeconds(needed_flops, c.peak_flops)) * 1e9;
    g.needed_mem_ns += needed / c.bandwidth * 1e9;
    g.needed_flop_ns += FlopSeconds(needed_flops, c.peak_flops) * 1e9;
    g.measured_with_costs += t.dur[task];
  } else if (std::isnan(aic) && std::isnan(aiv)) {
    ++*without_data;
  }
  if (run.IsDecode(c, task)) ++g.decode;
  else if (c.phase == AttentionPhase::kPrefill || detectors::StepPhaseOf(ctx, t.ts[task]) == StepPhase::kPrefill)
    ++g.prefill;
}

std::map<std::string, Group> GroupAttentionTasks(const AttentionRun& run, const std::map<std::string, double>& pad_ratio,
                                                 uint64_t* without_data) {
  const DiagnosisContext& ctx = run.ctx;
  std::map<std::string, Group> groups;
  for (uint32_t task : ctx.tasks) {
    if (!run.IsAttentionKernel(task)) continue;
    std::string label(ctx.TaskLabel(task));
    std::string shape = detectors::TaskShapeText(ctx, task);
    // Ascend kernel rows: one group per shape (PMU ratios differ by shape);
    // Kineto decode shapes grow every step: one group per kernel name.
    Group& g = groups[run.t.op_type(task) != kEmptyStr ? label + "\x1f" + shape : label];
    if (g.tasks.empty()) {
      g.label = label;
      g.shape = shape;
      auto pr = pad_ratio.find(label);
      if (pr != pad_ratio.end()) g.pad_ratio = pr->second;
    }
    g.shapes.insert(shape);
    AddTaskToGroup(run, task, g, without_data);
  }
  return groups;
}

// The figures a group is judged by.
struct GroupVerdict {
  double aic = 0, aiv = 0;  // time-weighted mean mte2 ratios (NaN without PMU)
  bool pmu_bound = false;
  double roofline_mem_share = 0;  // memory time / (memory + compute time) of the roofline
  double needed_eff = 0;          // roofline of what must be read and computed / measured
  double moved_eff = 0;           // achieved / peak bandwidth
  bool needed_memory_bound = false;
};

enum class GroupOutcome { kNotReported, kPmuBoundWithoutRoofline, kReport };

GroupOutcome JudgeGroup(const Group& g, const AttentionMemoryOptions& opt, GroupVerdict* v) {
  v->aic = g.aic.Mean();
  v->aiv = g.aiv.Mean();
  const bool aic_bound = !std::isnan(v->aic) && v->aic >= opt.fa_aic_mte2_ratio;
  const bool aiv_bound = !std::isnan(v->aiv) && v->aiv >= opt.aiv_mte2_ratio;
  v->pmu_bound = aic_bound || aiv_bound;
  const bool has_roofline = g.measured_with_costs > 0;
  v->roofline_mem_share =
      has_roofline && g.mem_ns + g.flop_ns > 0 ? g.mem_ns / (g.mem_ns + g.flop_ns) : std::nan("");
  const bool model_bound =
      !std::isnan(v->roofline_mem_share) && v->roofline_mem_share >= opt.mem_bottleneck_ratio_threshold;
  // Unfused parts (softmax, bmm) are memory traffic by construction of the fused alternative.
  if (!(v->pmu_bound || model_bound || g.unfused > 0)) return GroupOutcome::kNotReported;
  if (!has_roofline) return v->pmu_bound ? GroupOutcome::kPmuBoundWithoutRoofline : GroupOutcome::kNotReported;
  // Time to win: roofline of what must be read vs measured.
  v->needed_eff = g.needed_ns / double(g.measured_with_costs);
  v->moved_eff = g.mem_ns / double(g.measured_with_costs);
  if (v->needed_eff >= opt.bandwidth_efficiency_floor) return GroupOutcome::kNotReported;
  v->needed_memory_bound = g.needed_mem_ns >= g.needed_flop_ns;
  return GroupOutcome::kReport;
}

// Why the group reads more than it must, joined with "; ".
std::string WhyMoreThanNeeded(const Group& g, const GroupVerdict& v, const AttentionMemoryOptions& opt) {
  std::vector<std::string> reasons;
  if (g.pad_ratio > 1.0) {
    reasons.push_back(fmt::format("KV read {:.0f}x the live cache (S_kv grows {:.0f} tokens per decode step, "
                                  "decode appends 1 per sequence)",
                                  g.pad_ratio, g.pad_ratio));
  }
  if (g.materialized > 0) {
    reasons.push_back(fmt::format("{} copies of K/V made for the unfused matmuls (grouped-query heads expanded or a "
                                  "transposed K made contiguous); a fused kernel reads K/V in place",
                                  g.materialized));
  }
  if (g.unfused > g.materialized) reasons.push_back("unfused parts write and re-read the scores matrix");
  if (v.needed_memory_bound && v.moved_eff < opt.bandwidth_efficiency_floor) {
    reasons.push_back(fmt::format("achieved bandwidth {:.0f}% of peak", v.moved_eff * 100));
  }
  if (!v.needed_memory_bound && v.pmu_bound) {
    // The shapes' roofline is compute (prefill / long S_q) but the memory
    // pipe is saturated: data is moved more often than the roofline needs
    // (K/V tiles re-read per query block).
    reasons.push_back(fmt::format("achieved FLOP/s {:.0f}% of peak while the memory pipe is busy: operands "
                                  "re-read (tiling / block sizes)",
                                  g.needed_flop_ns / double(g.measured_with_costs) * 100));
  }
  std::string joined;
  for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
  return joined;
}

// The issue's identity, ratios and detail text.
Issue NewAttentionIssue(const AttentionRun& run, const Group& g, const GroupVerdict& v) {
  Issue issue;
  issue.type = IssueType::kAttentionMemoryBound;
  issue.op_name = g.label;
  issue.op_type = std::string(run.p.Str(run.t.op_type(g.tasks[0])));
  if (issue.op_type.empty()) issue.op_type = OpClassName(OpClass::kAttention);
  issue.phase = g.decode > 0 && g.prefill == 0 ? "decode" : (g.prefill > 0 && g.decode == 0 ? "prefill" : "");
  double share = v.moved_eff;
  if (g.pmu) share = std::isnan(v.aic) ? v.aiv : (std::isnan(v.aiv) ? v.aic : std::max(v.aic, v.aiv));
  issue.memory_ratio = std::min(1.0, share);
  if (g.pmu) {
    MeanAcc mac;
    for (uint32_t task : g.tasks) mac.Add(run.ctx.TaskAttribute(task, "aic_mac_ratio"), double(run.t.dur[task]));
    issue.compute_ratio = mac.Mean();
  }
  issue.detail = fmt::format("memory-bound ({}); roofline of what it must read and compute is {:.0f}% of measured < {:.0f}%: {}",
                             v.pmu_bound ? fmt::format("mte2 ratio {:.2f} (PMU)", share)
                                         : fmt::format("memory {:.0f}% of its roofline", v.roofline_mem_share * 100),
                             v.needed_eff * 100, run.opt.bandwidth_efficiency_floor * 100, WhyMoreThanNeeded(g, v, run.opt));
  return issue;
}

void AddEvidenceAndMetrics(const AttentionRun& run, const Group& g, const GroupVerdict& v, Issue* issue) {
  for (const std::string& sh : g.shapes) detectors::AddShape(issue, sh);
  for (uint32_t task : g.tasks) detectors::AddTaskEvidence(issue, task, run.t.dur[task]);
  issue->affected_ns = g.total_ns;
  if (!std::isnan(v.aic)) detectors::AddMetric(issue, "aic_mte2_ratio", v.aic, "ratio");
  if (!std::isnan(v.aiv)) detectors::AddMetric(issue, "aiv_mte2_ratio", v.aiv, "ratio");
  detectors::AddMetric(issue, "roofline_memory_share", v.roofline_mem_share, "ratio");
  detectors::AddMetric(issue, "modeled_memory_share", v.moved_eff, "ratio");
  detectors::AddMetric(issue, "modeled_bytes", g.bytes, "B");
  detectors::AddMetric(issue, "needed_bytes", g.needed_bytes, "B");
  detectors::AddMetric(issue, "needed_roofline_efficiency", v.needed_eff, "ratio");
  detectors::AddMetric(issue, "needed_roofline_bound", v.needed_memory_bound ? 1 : 0, "1 memory / 0 compute");
  if (g.pad_ratio > 1.0) detectors::AddMetric(issue, "kv_read_over_live", g.pad_ratio, "ratio");
  detectors::AddMetric(issue, "memory_bandwidth", run.bw, "B/s");
}

// Per task: measured − max(needed bytes / bandwidth, needed FLOPs / peak).
void AddRooflineSavings(const AttentionRun& run, const Group& g, Issue* issue) {
  const DeviceTaskTable& t = run.t;
  issue->method = SavingMethod::kRoofline;
  issue->saving_formula = fmt::format(
      "sum over {} tasks of measured - max(needed bytes / bandwidth, needed FLOPs / peak); needed = what the "
      "attention must read (padding and re-read scores excluded)",
      g.tasks.size());
  for (uint32_t task : g.tasks) {
    const CostFigures& c = (*run.ctx.task_costs)[task];
    if (!run.RooflineOk(c, task)) continue;
    const std::string_view sub = detectors::TaskSubKind(run.ctx, task);
    const auto [needed, needed_flops] = Needed(c, sub, g.pad_ratio, run.IsDecode(c, task));
    const TimeNs target =
        static_cast<TimeNs>(std::max(needed / c.bandwidth, FlopSeconds(needed_flops, c.peak_flops)) * 1e9);
    if (t.dur[task] > target) issue->savings.push_back({SavingTargetKind::kDeviceTask, task, t.dur[task] - target});
  }
}

void AddUnjudgedNotes(uint64_t without_data, uint64_t pmu_only, DetectorOutput* out) {
  if (without_data > 0) {
    out->notes.push_back(fmt::format(
        "{} attention task(s) without PMU ratios and without shapes/bandwidth: memory share not known", without_data));
  }
  if (pmu_only > 0) {
    out->notes.push_back(fmt::format(
        "{} attention group(s) memory-bound by PMU mte2 ratio but without shapes or a known bandwidth: the time "
        "to win against the bytes they must read is not known (not reported)",
        pmu_only));
  }
}

class AttentionMemoryBound final : public Detector {
 public:
  std::string_view name() const override { return "attention_memory_bound"; }
  IssueType type() const override { return IssueType::kAttentionMemoryBound; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const AttentionRun run{ctx, *ctx.profile, ctx.profile->device_tasks, ctx.options->attention_memory,
                           ctx.hardware->memory_bandwidth.value};
    const std::map<std::string, double> pad_ratio = KvPadRatios(DecodeKvByLabel(run), out);
    uint64_t without_data = 0, pmu_only = 0;
    const std::map<std::string, Group> groups = GroupAttentionTasks(run, pad_ratio, &without_data);
    for (const auto& [key, g] : groups) {
      GroupVerdict verdict;
      const GroupOutcome outcome = JudgeGroup(g, run.opt, &verdict);
      if (outcome == GroupOutcome::kPmuBoundWithoutRoofline) ++pmu_only;
      if (outcome != GroupOutcome::kReport) continue;
      Issue issue = NewAttentionIssue(run, g, verdict);
      AddEvidenceAndMetrics(run, g, verdict, &issue);
      AddRooflineSavings(run, g, &issue);
      out->issues.push_back(std::move(issue));
    }
    AddUnjudgedNotes(without_data, pmu_only, out);
  }
};

}  // namespace

const Detector& AttentionMemoryBoundDetector() {
  static const AttentionMemoryBound detector;
  return detector;
}

}  // namespace pypto
