// Detector 1: matmul_tiling — GEMMs below the tiling utilisation threshold of
// what their roofline allows, with a cause visible in the shapes or launch
// configuration.
//
// Each group of tasks with the same (op type / kernel name, input shapes,
// dtype) is first judged against its own roofline bound:
//   * memory-bound by the roofline of its shapes (decode: small M, the weights
//     are streamed once): utilisation = roofline efficiency, i.e. achieved
//     bandwidth over the bandwidth — a low aic_mac_ratio is expected there
//     (the cube waits for HBM) and is no evidence of bad tiling;
//   * compute-bound (or no shapes) on Ascend with PMU: time-weighted mean
//     aic_mac_ratio (the cube's busy share; msprof-analyze legacy advisor:
//     < 0.6 red, < 0.8 yellow);
//   * else roofline efficiency of the shapes (achieved FLOP/s over the peak).
// Only a group below utilization_threshold (0.6) is then searched for a cause:
//   * Ascend: M, N or K not a multiple of the 16-element fractal; an input's
//     inner axis not a multiple of 256 elements (advisor cube affinity, 512 B
//     for FP16); Block Dim not a multiple of the AI-core count (advisor
//     block_dim_checker; MIX_AIC: Mix Block Dim vs the vector-core count);
//   * GPU: N or K not a multiple of the tensor-core MMA granule (8 FP16/BF16, 16 INT8).
// Groups judged by PMU whose aic_mte2_ratio says mte2-bound (>= 0.95,
// advisor ai_core_performance) are skipped: their limit is memory traffic.
// A group with no visible cause is still reported when it is far below what
// tuned kernels reach on a large shape (utilisation < 0.3, every GEMM dim
// >= 1024 or both attention lengths >= 1024): "under-utilised, no cause
// visible", so a material loss is not hidden behind the missing cause.
// Compute-bound fused attention (FlashAttentionScore, SDPA flash kernels) is
// judged the same way against its FLOP roofline (4·B·N·S_q·S_kv·D); its causes
// are the FlashAttention affinity rules (head_dim and sequence lengths
// multiples of 128, diagnosis-rules §1.2). Memory-bound attention is
// attention_memory_bound's.
// Saving per task: roofline (with shapes) measured − roofline_ns / threshold;
// Amdahl (PMU only) measured × (1 − mac_ratio / threshold).
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"

namespace pypto {
namespace {

using detectors::MeanAcc;

// aic_mte2_ratio at or above which a cube op is mte2-bound. Source:
// msprof-analyze ai_core_performance (aicore_performance.yaml) mte2 threshold 0.95.
constexpr double kMte2BoundRatio = 0.95;
// Achieved above this multiple of the roofline means shapes/duration/peak do
// not agree (unitless); the FLOP figure is then not used as evidence.
constexpr double kImpossibleEfficiency = 1.05;
// A group is memory-bound when more than this share of its costed tasks have
// bytes / bandwidth > FLOPs / peak (unitless; a simple majority).
constexpr double kMemoryBoundMajority = 0.5;
// Utilisation under which a group is reported without a visible cause
// (unitless). Source: FlashAttention-2 (Dao, 2023) reaches 50-73 % of the
// A100 peak in the forward pass and tuned GEMMs 70-90 %; under 0.3 on a large
// shape is well below what a tuned kernel reaches (half the 0.6 red line).
constexpr double kCauselessUtilization = 0.3;
// A GEMM dim / attention length from which a shape is "large" (elements):
// 1024 x 1024 outputs are 64 tiles of 128 x 128, several per core on 20-132
// core chips, and K >= 1024 amortises the pipeline fill.
constexpr int64_t kLargeShapeDim = 1024;
// FlashAttention affinity: head_dim and sequence lengths multiples of 128
// (elements). Source: diagnosis-rules §1.2 (msprof-analyze FA affinity).
constexpr int64_t kFlashAttentionAlignment = 128;

// What a group's causes and messages read of its first costed task's figures
// (73 of CostFigures' 208 bytes: there is a group per distinct shape).
struct GroupCost {
  int64_t m = 0, n = 0, k = 0, heads = 0, s_q = 0, s_kv = 0, head_dim = 0;
  double peak_flops = 0;
  DType dtype = DType::kUnknown;
  static GroupCost Of(const CostFigures& c) { return {c.m, c.n, c.k, c.heads, c.s_q, c.s_kv, c.head_dim, c.peak_flops, c.dtype}; }
};

struct Group {
  std::string_view label;  // views into the group's key (a map node's key does not move)
  std::string_view shape;
  std::string core_type;
  std::vector<uint32_t> tasks;
  TimeNs total_ns = 0;
  MeanAcc mac, mte2, eff;
  double flops = 0, roofline_ns = 0;
  TimeNs measured_with_costs = 0;
  int memory_bound = 0;
  int costed = 0;
  int impossible = 0;
  int decode = 0, prefill = 0;
  GroupCost cost;     // first task with costs
  bool has_cost = false;
  // The input shapes are those of tasks[0], parsed again for the groups whose
  // causes are asked (a parsed OpShapes is ~870 bytes: with 10^5 distinct
  // shapes, kept per group, it was most of this detector's 15 MB).
  int32_t block_dim = -1, mix_block_dim = -1;
  bool attention = false;  // a fused attention kernel judged against its FLOP roofline
};

bool LargeShape(const Group& g) {
  if (!g.has_cost) return false;
  if (g.attention) return g.cost.s_q >= kLargeShapeDim && g.cost.s_kv >= kLargeShapeDim;
  return g.cost.m >= kLargeShapeDim && g.cost.n >= kLargeShapeDim && g.cost.k >= kLargeShapeDim;
}

// What every step of one run reads.
struct MatmulRun {
  const DiagnosisContext& ctx;
  const Profile& p;
  const DeviceTaskTable& t;
  const MatmulTilingOptions& opt;
  // PMU ratio keys, resolved once (DiagnosisContext::AttributeKey).
  StrId aic_mac = ctx.AttributeKey("aic_mac_ratio");
  StrId aic_mte2 = ctx.AttributeKey("aic_mte2_ratio");
};

// Fused attention that its shapes make compute-bound; unfused parts
// (bmm / softmax) and memory-bound attention are judged elsewhere.
bool IsComputeBoundFusedAttention(const DiagnosisContext& ctx, uint32_t task, OpClass cls, const CostFigures& cost) {
  const std::string_view sub = detectors::TaskSubKind(ctx, task);
  const bool unfused_part = IsUnfusedAttentionPart(sub);
  return cls == OpClass::kAttention && !unfused_part && cost.status == CostStatus::kOk && cost.bound == Bound::kCompute;
}

// The group's fixed facts, taken from its first task.
void InitGroup(const MatmulRun& run, uint32_t task, bool attention, std::string_view label, std::string_view shape,
               Group& g) {
  g.attention = attention;
  g.label = label;
  g.shape = shape;
  g.core_type = std::string(run.p.Str(run.t.core_type[task]));
  g.block_dim = run.t.block_dim(task);
  g.mix_block_dim = run.t.mix_block_dim(task);
}

// Adds one task's time, PMU ratios, roofline figures and step phase to its group.
void AddTaskToGroup(const MatmulRun& run, uint32_t task, const CostFigures& cost, Group& g) {
  const DiagnosisContext& ctx = run.ctx;
  const DeviceTaskTable& t = run.t;
  g.tasks.push_back(task);
  g.total_ns += t.dur[task];
  double w = double(t.dur[task]);
  g.mac.Add(ctx.TaskAttribute(task, run.aic_mac), w);
  g.mte2.Add(ctx.TaskAttribute(task, run.aic_mte2), w);
  if (ctx.hardware_known && cost.status == CostStatus::kOk && cost.measured_ns > 0 && !std::isnan(cost.roofline_ns)) {
    if (!g.has_cost) { g.cost = GroupCost::Of(cost); g.has_cost = true; }
    // A task faster than its roofline is counted, and nothing else of it (its step phase neither).
    if (cost.efficiency > kImpossibleEfficiency) { ++g.impossible; return; }
    g.flops += cost.flops;
    g.roofline_ns += cost.roofline_ns;
    g.measured_with_costs += cost.measured_ns;
    ++g.costed;
    if (cost.bound == Bound::kMemory) ++g.memory_bound;
  }
  switch (detectors::StepPhaseOf(ctx, t.ts[task])) {
    case StepPhase::kDecode: ++g.decode; break;
    case StepPhase::kPrefill: ++g.prefill; break;
    default: break;
  }
}

// Kernel tasks of GEMMs and compute-bound fused attention, grouped by (label, shapes, dtype).
// The group of each task is found by its label's and shape's string ids and
// its dtype: the same ids are the same texts, so the group's text key is
// built once per distinct triple, not per task (three strings a task, with
// the key lookups, were a third of this detector on a 1 M-row
// kernel_details.csv: 73 -> 48 ms).
std::map<std::string, Group> GroupGemmTasks(const MatmulRun& run) {
  const DiagnosisContext& ctx = run.ctx;
  std::map<std::string, Group> groups;
  std::map<std::tuple<StrId, StrId, DType>, Group*> group_of_ids;
  for (uint32_t task : ctx.tasks) {
    const OpClass cls = detectors::TaskClass(ctx, task);
    if (run.t.kind[task] != DeviceTaskKind::kKernel) continue;
    const CostFigures& cost = (*ctx.task_costs)[task];
    const bool attention = IsComputeBoundFusedAttention(ctx, task, cls, cost);
    if (cls != OpClass::kMatmul && !attention) continue;
    const StrId label_id = ctx.TaskLabelId(task), shape_id = detectors::TaskShapeId(ctx, task);
    Group*& known = group_of_ids[{label_id, shape_id, cost.dtype}];
    if (known == nullptr) {
      const std::string_view label = run.p.Str(label_id), shape = run.p.Str(shape_id);
      std::string key = std::string(label) + "\x1f" + std::string(shape) + "\x1f" + std::string(DTypeName(cost.dtype));
      const auto [it, added] = groups.try_emplace(std::move(key));
      known = &it->second;
      if (added) {
        const std::string_view kept = it->first;
        InitGroup(run, task, attention, kept.substr(0, label.size()), kept.substr(label.size() + 1, shape.size()),
                  *known);
      }
    }
    AddTaskToGroup(run, task, cost, *known);
  }
  return groups;
}

// A group's utilisation, judged against its own roofline bound.
struct Utilization {
  double mac = 0, mte2 = 0;  // time-weighted mean PMU ratios (NaN without PMU)
  double eff = 0;            // roofline efficiency (NaN without costs)
  bool memory_bound = false;
  bool from_pmu = false;  // util is aic_mac_ratio, else roofline efficiency
  double util = 0;
};

// True when the group is under the threshold and not left to memory-bound checks.
bool UnderUtilized(const MatmulRun& run, const Group& g, Utilization* u) {
  u->mac = g.mac.Mean();
  u->mte2 = g.mte2.Mean();
  u->eff = g.measured_with_costs > 0 ? g.roofline_ns / double(g.measured_with_costs) : std::nan("");
  u->memory_bound = g.costed > 0 && double(g.memory_bound) > kMemoryBoundMajority * double(g.costed);
  u->from_pmu = !std::isnan(u->mac) && !(u->memory_bound && !std::isnan(u->eff));
  if (u->from_pmu) u->util = u->mac;
  else if (!std::isnan(u->eff)) u->util = u->eff;
  else return false;  // nothing measured about this group
  if (u->util >= run.opt.utilization_threshold) return false;
  if (u->from_pmu && !std::isnan(u->mte2) && u->mte2 >= kMte2BoundRatio) return false;
  // Attention whose memory pipe is saturated is attention_memory_bound's (MPA FA rule).
  if (g.attention && !std::isnan(u->mte2) && u->mte2 >= run.ctx.options->attention_memory.fa_aic_mte2_ratio) return false;
  return true;
}

std::string LargeShapeWithoutCause(const Group& g) {
  return g.attention
             ? fmt::format("a large shape (S_q={}, S_kv={}, head_dim={}) far below what tuned kernels "
                           "reach, no alignment cause visible",
                           g.cost.s_q, g.cost.s_kv,
                           g.cost.heads > 1 && g.cost.head_dim > 0 ? std::to_string(g.cost.head_dim)
                                                                   : "? (heads not in the shapes)")
             : fmt::format("a large shape (M={}, N={}, K={}) far below what tuned kernels reach, no "
                           "shape or block-dim cause visible",
                           g.cost.m, g.cost.n, g.cost.k);
}

// The issue's identity, ratios and detail text.
Issue NewTilingIssue(const MatmulRun& run, const Group& g, const Utilization& u,
                     const std::vector<std::string>& causes) {
  const DeviceTaskTable& t = run.t;
  Issue issue;
  issue.type = IssueType::kMatmulTiling;
  issue.op_name = std::string(g.label);
  issue.op_type = g.has_cost ? OpClassName(g.attention ? OpClass::kAttention : OpClass::kMatmul) : std::string(g.label);
  if (t.op_type(g.tasks[0]) != kEmptyStr) issue.op_type = std::string(run.p.Str(t.op_type(g.tasks[0])));
  issue.compute_ratio = u.util;
  issue.memory_ratio = u.mte2;
  issue.phase = g.decode > 0 && g.prefill == 0 ? "decode" : (g.prefill > 0 && g.decode == 0 ? "prefill" : "");
  std::string joined;
  for (const std::string& c : causes) joined += (joined.empty() ? "" : "; ") + c;
  issue.detail = fmt::format("{} {:.2f} < {:.2f}{}; {}", u.from_pmu ? "aic_mac_ratio" : "roofline efficiency", u.util,
                             run.opt.utilization_threshold,
                             u.from_pmu ? "" : (u.memory_bound ? " (memory-bound: achieved bandwidth vs bandwidth)"
                                                               : " (compute-bound: achieved FLOP/s vs peak)"),
                             joined);
  // The figures behind a roofline verdict, in the text too (a reader checks
  // them against the rows): FLOPs of one call, achieved and peak FLOP/s.
  if (!std::isnan(u.eff) && g.has_cost && g.measured_with_costs > 0 && g.costed > 0) {
    const double achieved = g.flops / (double(g.measured_with_costs) * 1e-9);
    issue.detail += fmt::format("; {:.3g} FLOP per call at {:.1f} TFLOP/s achieved of {:.1f} TFLOP/s peak",
                                g.flops / double(g.costed), achieved / 1e12, g.cost.peak_flops / 1e12);
  }
  return issue;
}

void AddEvidenceAndMetrics(const MatmulRun& run, const Group& g, const Utilization& u, bool causeless, Issue* issue) {
  detectors::AddShape(issue, g.shape);
  for (uint32_t task : g.tasks) detectors::AddTaskEvidence(issue, task, run.t.dur[task]);
  issue->affected_ns = g.total_ns;
  if (u.from_pmu) detectors::AddMetric(issue, "aic_mac_ratio", u.mac, "ratio");
  if (!std::isnan(u.mte2)) detectors::AddMetric(issue, "aic_mte2_ratio", u.mte2, "ratio");
  if (u.from_pmu) {
    detectors::AddMetric(issue, "pmu_level",
                         u.mac < run.opt.mac_ratio_red ? 2 : (u.mac < run.opt.mac_ratio_yellow ? 1 : 0),
                         "0 green / 1 yellow / 2 red");
  }
  if (!std::isnan(u.eff)) {
    detectors::AddMetric(issue, "roofline_efficiency", u.eff, "ratio");
    detectors::AddMetric(issue, "achieved_flops", g.flops / (double(g.measured_with_costs) * 1e-9), "FLOP/s");
  }
  if (g.has_cost) {
    detectors::AddMetric(issue, "peak_flops", g.cost.peak_flops, "FLOP/s");
    if (g.attention) {
      detectors::AddMetric(issue, "s_q", double(g.cost.s_q), "elements");
      detectors::AddMetric(issue, "s_kv", double(g.cost.s_kv), "elements");
    } else {
      detectors::AddMetric(issue, "m", double(g.cost.m), "elements");
      detectors::AddMetric(issue, "n", double(g.cost.n), "elements");
      detectors::AddMetric(issue, "k", double(g.cost.k), "elements");
    }
  }
  if (g.impossible > 0) {
    detectors::AddMetric(issue, "tasks_faster_than_roofline", double(g.impossible), "count");
  }
  if (g.block_dim > 0) detectors::AddMetric(issue, "block_dim", g.block_dim, "count");
  detectors::AddMetric(issue, "cause_visible", causeless ? 0 : 1, "1 yes / 0 no");
  if (g.costed > 0) detectors::AddMetric(issue, "memory_bound", u.memory_bound ? 1 : 0, "1 memory / 0 compute (roofline)");
}

// PMU only: measured × (1 − mac_ratio / threshold) per task.
void AddAmdahlSavings(const MatmulRun& run, const Group& g, Issue* issue) {
  const double threshold = run.opt.utilization_threshold;
  issue->method = SavingMethod::kAmdahl;
  issue->saving_formula = fmt::format(
      "sum over {} tasks of measured x (1 - aic_mac_ratio / {:.2f}): cube busy share raised to the threshold",
      g.tasks.size(), threshold);
  for (uint32_t task : g.tasks) {
    double r = run.ctx.TaskAttribute(task, run.aic_mac);
    if (std::isnan(r) || r >= threshold) continue;
    TimeNs s = static_cast<TimeNs>(double(run.t.dur[task]) * (1.0 - r / threshold));
    if (s > 0) issue->savings.push_back({SavingTargetKind::kDeviceTask, task, s});
  }
}

// With shapes: measured − roofline_ns / threshold per task.
void AddRooflineSavings(const MatmulRun& run, const Group& g, Issue* issue) {
  const DeviceTaskTable& t = run.t;
  const double threshold = run.opt.utilization_threshold;
  issue->method = SavingMethod::kRoofline;
  issue->saving_formula = fmt::format("sum over {} tasks of measured - roofline({}/peak, bytes/bandwidth) / {:.2f}",
                                      g.tasks.size(), g.attention ? "4*B*N*S_q*S_kv*D" : "2MNK", threshold);
  for (uint32_t task : g.tasks) {
    const CostFigures& c = (*run.ctx.task_costs)[task];
    if (c.status != CostStatus::kOk || std::isnan(c.roofline_ns) || c.efficiency > kImpossibleEfficiency) continue;
    TimeNs target = static_cast<TimeNs>(c.roofline_ns / threshold);
    if (t.dur[task] > target) issue->savings.push_back({SavingTargetKind::kDeviceTask, task, t.dur[task] - target});
  }
}

void AddRunNotes(const DiagnosisContext& ctx, uint64_t below_without_cause, uint64_t impossible_groups, bool no_groups,
                 DetectorOutput* out) {
  if (below_without_cause > 0) {
    out->notes.push_back(fmt::format(
        "{} matmul group(s) below the utilisation threshold without a shape or block-dim cause (not reported)",
        below_without_cause));
  }
  if (impossible_groups > 0) {
    out->notes.push_back(fmt::format(
        "{} matmul group(s) ran faster than the roofline of their shapes on {} (shapes, durations or peak "
        "inconsistent): their FLOP figures were not used",
        impossible_groups, ctx.hardware->id));
  }
  if (!ctx.hardware_known && !ctx.has_pmu && !no_groups) {
    out->notes.push_back("no peak FLOP/s and no PMU ratios: matmul utilisation not checked");
  }
}

class MatmulTiling final : public Detector {
 public:
  std::string_view name() const override { return "matmul_tiling"; }
  IssueType type() const override { return IssueType::kMatmulTiling; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const MatmulRun run{ctx, *ctx.profile, ctx.profile->device_tasks, ctx.options->matmul_tiling};
    const std::map<std::string, Group> groups = GroupGemmTasks(run);
    uint64_t below_without_cause = 0, impossible_groups = 0;
    for (const auto& [key, g] : groups) {
      if (g.impossible > 0) ++impossible_groups;
      Utilization u;
      if (!UnderUtilized(run, g, &u)) continue;
      std::vector<std::string> causes = g.attention ? AttentionCauses(g) : Causes(ctx, g);
      const bool causeless = causes.empty();
      if (causeless) {
        if (u.util >= kCauselessUtilization || !LargeShape(g)) { ++below_without_cause; continue; }
        causes.push_back(LargeShapeWithoutCause(g));
      }
      Issue issue = NewTilingIssue(run, g, u, causes);
      AddEvidenceAndMetrics(run, g, u, causeless, &issue);
      if (u.from_pmu) AddAmdahlSavings(run, g, &issue);
      else AddRooflineSavings(run, g, &issue);
      out->issues.push_back(std::move(issue));
    }
    AddRunNotes(ctx, below_without_cause, impossible_groups, groups.empty(), out);
  }

 private:
  // FlashAttention affinity: lengths the kernel tiles by 128 (diagnosis-rules §1.2).
  static std::vector<std::string> AttentionCauses(const Group& g) {
    std::vector<std::string> causes;
    if (!g.has_cost) return causes;
    if (g.cost.heads > 1 && g.cost.head_dim > 0 && g.cost.head_dim % kFlashAttentionAlignment != 0)
      causes.push_back(fmt::format("head_dim={} not a multiple of {}", g.cost.head_dim, kFlashAttentionAlignment));
    if (g.cost.s_kv > 0 && g.cost.s_kv % kFlashAttentionAlignment != 0)
      causes.push_back(fmt::format("S_kv={} not a multiple of {}", g.cost.s_kv, kFlashAttentionAlignment));
    if (g.cost.s_q > 1 && g.cost.s_q % kFlashAttentionAlignment != 0)
      causes.push_back(fmt::format("S_q={} not a multiple of {}", g.cost.s_q, kFlashAttentionAlignment));
    return causes;
  }

  static std::vector<std::string> Causes(const DiagnosisContext& ctx, const Group& g) {
    std::vector<std::string> causes;
    const HardwareSpec& hw = *ctx.hardware;
    const bool ascend = hw.family == HardwareFamily::kAscend;
    if (g.has_cost && g.cost.m > 0) {
      const int64_t dims[3] = {g.cost.m, g.cost.n, g.cost.k};
      const char* names[3] = {"M", "N", "K"};
      if (ascend && hw.fractal_elems > 0) {
        for (int i = 0; i < 3; ++i) {
          if (dims[i] % hw.fractal_elems != 0) {
            causes.push_back(fmt::format("{}={} not a multiple of the {}-element fractal", names[i], dims[i],
                                         hw.fractal_elems));
          }
        }
      } else if (!ascend && hw.mma_dim_multiple > 0) {
        int mult = (g.cost.dtype == DType::kInt8 && hw.mma_dim_multiple_int8 > 0) ? hw.mma_dim_multiple_int8
                                                                                 : hw.mma_dim_multiple;
        for (int i = 1; i < 3; ++i) {
          if (dims[i] % mult != 0) {
            causes.push_back(fmt::format("{}={} not a multiple of the {}-element MMA granule", names[i], dims[i], mult));
          }
        }
      }
    }
    if (ascend && hw.inner_axis_multiple_elems > 0) {
      const CostInput in = CostInputForTask(*ctx.profile, *ctx.graph, *ctx.classes, g.tasks[0]);
      for (int i = 0; i < 2 && in.has_shapes; ++i) {
        const TensorShape* s = in.shapes.tensor(i);
        if (!s || s->rank < 2) continue;
        int64_t inner = s->dim(-1);
        if (inner > 0 && inner % hw.inner_axis_multiple_elems != 0) {
          causes.push_back(fmt::format("input {} inner axis {} not a multiple of {} elements", i, inner,
                                       hw.inner_axis_multiple_elems));
        }
      }
    }
    if (ascend && g.block_dim > 0) {
      const bool mix = g.core_type.rfind("MIX", 0) == 0;
      int cores = hw.matrix_cores;
      if (g.core_type == "AI_VECTOR_CORE" || g.core_type == "MIX_AIV") cores = hw.vector_cores;
      if (cores > 0 && g.block_dim % cores != 0) {
        causes.push_back(fmt::format("block dim {} not a multiple of {} cores", g.block_dim, cores));
      }
      if (mix && g.core_type == "MIX_AIC" && g.mix_block_dim > 0 && hw.vector_cores > 0 &&
          g.mix_block_dim % hw.vector_cores != 0) {
        causes.push_back(
            fmt::format("mix block dim {} not a multiple of {} vector cores", g.mix_block_dim, hw.vector_cores));
      }
    }
    return causes;
  }
};

}  // namespace

const Detector& MatmulTilingDetector() {
  static const MatmulTiling detector;
  return detector;
}

}  // namespace pypto
