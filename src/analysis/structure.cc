#include "analysis/structure.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/cost_model.h"
#include "analysis/kv_cache_cat.h"
#include "analysis/op_class.h"
#include "analysis/shapes.h"
#include "analysis/statistics.h"

namespace pypto {

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kUnknown: return "unknown";
    case StepPhase::kPrefill: return "prefill";
    case StepPhase::kDecode: return "decode";
  }
  return "unknown";
}

const char* BlockKindName(BlockKind kind) {
  switch (kind) {
    case BlockKind::kNone: return "none";
    case BlockKind::kNorm: return "norm";
    case BlockKind::kAttention: return "attention";
    case BlockKind::kFfn: return "ffn";
    case BlockKind::kRope: return "rope";
    case BlockKind::kKvCacheUpdate: return "kv_cache_update";
    case BlockKind::kOther: return "other";
  }
  return "none";
}

LatencyStats ComputeLatencyStats(std::vector<TimeNs> d) {
  LatencyStats s;
  if (d.empty()) return s;
  std::sort(d.begin(), d.end());
  s.count = d.size();
  double sum = 0;
  for (TimeNs v : d) sum += static_cast<double>(v);
  std::vector<double> sorted(d.begin(), d.end());
  auto rank = [&](double p) { return NearestRankPercentile(sorted, p) / 1e6; };
  s.mean_ms = sum / static_cast<double>(d.size()) / 1e6;
  s.p50_ms = rank(50);
  s.p90_ms = rank(90);
  s.p99_ms = rank(99);
  s.min_ms = static_cast<double>(d.front()) / 1e6;
  s.max_ms = static_cast<double>(d.back()) / 1e6;
  return s;
}

// Whether symbol[i] == symbol[i + p] holds for `length` or more consecutive i.
// Such a run covers one of every length-th place, so only those are tried and
// a match there is widened to its run: about n / length reads where the full
// scan reads n.
bool HasMatchRun(const std::vector<StrId>& symbol, int64_t p, int64_t length) {
  const int64_t last = static_cast<int64_t>(symbol.size()) - p;  // places i with i + p < n
  if (length <= 0 || length > last) return length <= 0;
  for (int64_t i = length - 1; i < last; i += length) {
    if (symbol[i] != symbol[i + p]) continue;
    int64_t lo = i, hi = i;
    while (lo > 0 && hi - lo + 1 < length && symbol[lo - 1] == symbol[lo - 1 + p]) --lo;
    while (hi + 1 < last && hi - lo + 1 < length && symbol[hi + 1] == symbol[hi + 1 + p]) ++hi;
    if (hi - lo + 1 >= length) return true;
  }
  return false;
}

namespace {

struct SeqItem {
  bool task = true;
  uint32_t row = 0;
  StrId symbol = kEmptyStr;
  OpClass cls = OpClass::kOther;
  std::string_view sub;
};

bool IsComputeKernel(const Profile& p, const OpClassification& c, uint32_t t) {
  DeviceTaskKind k = p.device_tasks.kind[t];
  if (k != DeviceTaskKind::kKernel) return false;
  return c.task_class[t] != OpClass::kCommunication;
}

// Longest stretch of the sequence that repeats with period p; returns the best p.
struct PeriodResult {
  int32_t period = 0;
  int64_t start = 0;      // first index of the periodic region
  int64_t coverage = 0;   // length of the periodic region
};

// A transformer layer holds exactly one attention op (fused kernel, or the
// q·k bmm of an unfused one): when the sequence has attention, only units with
// one attention op qualify; among those the longest periodic stretch wins,
// ties going to the shorter period. Without attention, the longest stretch of
// a unit that has a GEMM wins.
PeriodResult FindPeriod(const std::vector<SeqItem>& seq, int32_t max_period) {
  PeriodResult best;
  const int64_t n = static_cast<int64_t>(seq.size());
  auto is_attn_head = [&](int64_t i) {
    return seq[i].cls == OpClass::kAttention && (seq[i].sub == "qk_bmm" || !IsUnfusedAttentionPart(seq[i].sub));
  };
  bool any_attention = false;
  for (int64_t i = 0; i < n; ++i) any_attention |= is_attn_head(i);
  int64_t pmax = std::min<int64_t>(max_period, n / kMinLayerRepeats);
  // The symbols alone, contiguous: the scan below compares n x max_period
  // pairs (a profile without steps is one long step), and reading them from
  // the 40-byte items was memory-bound.
  std::vector<StrId> symbol(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) symbol[i] = seq[i].symbol;
  for (int64_t p = 2; p <= pmax; ++p) {
    // A period is taken only with two full repeats (a run of p) and more
    // coverage than the best so far (a run of best.coverage - p + 1): without
    // such a run the full scan below cannot change the result. A profile
    // without steps is one step of every kernel, and this check makes the
    // periods after the layer's own nearly free.
    if (!HasMatchRun(symbol, p, std::max<int64_t>(p, best.coverage - p + 1))) continue;
    int64_t run = 0, best_run = 0, best_end = 0;
    for (int64_t i = 0; i + p < n; ++i) {
      if (symbol[i] == symbol[i + p]) {
        if (++run > best_run) { best_run = run; best_end = i; }
      } else {
        run = 0;
      }
    }
    if (best_run < p) continue;  // fewer than 2 full repeats
    int64_t start = best_end - best_run + 1;
    int attention = 0, gemm = 0;
    for (int64_t k = start; k < start + p; ++k) {
      attention += is_attn_head(k) ? 1 : 0;
      gemm += seq[k].cls == OpClass::kMatmul ? 1 : 0;
    }
    if (any_attention ? attention != 1 : gemm == 0) continue;
    int64_t coverage = best_run + p;
    if (coverage > best.coverage) {
      best.period = static_cast<int32_t>(p);
      best.coverage = coverage;
      best.start = start;
    }
  }
  return best;
}

void AssignRoles(LayerPattern* lp) {
  const size_t p = lp->classes.size();
  lp->roles.assign(p, BlockKind::kOther);
  int64_t last_attn = -1;
  for (size_t i = 0; i < p; ++i)
    if (lp->classes[i] == OpClass::kAttention) last_attn = static_cast<int64_t>(i);
  // The output projection: the first GEMM after the last attention op closes the attention block.
  int64_t o_proj = -1;
  for (size_t i = static_cast<size_t>(last_attn + 1); last_attn >= 0 && i < p; ++i)
    if (lp->classes[i] == OpClass::kMatmul) { o_proj = static_cast<int64_t>(i); break; }
  for (size_t i = 0; i < p; ++i) {
    OpClass c = lp->classes[i];
    BlockKind& r = lp->roles[i];
    if (c == OpClass::kNorm) r = BlockKind::kNorm;
    else if (c == OpClass::kRope) r = BlockKind::kRope;
    else if (lp->names[i].find("cache") != std::string::npos || lp->names[i].find("Cache") != std::string::npos ||
             lp->names[i].find("ScatterUpdate") != std::string::npos)
      r = BlockKind::kKvCacheUpdate;
    else if (last_attn < 0) r = c == OpClass::kMatmul || c == OpClass::kActivation ? BlockKind::kFfn : BlockKind::kOther;
    else if (static_cast<int64_t>(i) <= (o_proj >= 0 ? o_proj : last_attn)) r = BlockKind::kAttention;
    else r = BlockKind::kFfn;
  }
  for (size_t i = 0; i < p; ++i) {
    lp->has_attention |= lp->classes[i] == OpClass::kAttention;
    lp->has_matmul |= lp->classes[i] == OpClass::kMatmul;
    lp->has_norm |= lp->classes[i] == OpClass::kNorm;
    lp->has_rope |= lp->classes[i] == OpClass::kRope;
    lp->has_kv_cache_update |= lp->roles[i] == BlockKind::kKvCacheUpdate;
  }
}

// Steps still unknown whose KV cache grows by one token: an aten::cat inside
// the step of a cache and one new token (analysis/kv_cache_cat.h) is a decode
// step, whatever else the shapes leave open (no attention shapes recorded).
void DecideByKvCacheGrowth(const Profile& profile, const std::vector<StepInfo>& steps, ModelStructure* ms) {
  const HostOpTable& h = profile.host_ops;
  std::vector<uint32_t> cats;  // growing-cache cats, by start time
  for (uint32_t op = 0; op < h.size(); ++op)
    if (h.input_dims[op] != kEmptyStr && profile.Str(h.name[op]).ends_with("::cat")) cats.push_back(op);
  if (cats.empty()) return;
  std::sort(cats.begin(), cats.end(), [&](uint32_t a, uint32_t b) { return h.ts[a] < h.ts[b]; });
  for (StepStructure& ss : ms->steps) {
    if (ss.phase != StepPhase::kUnknown || ss.step >= steps.size()) continue;
    const TimeWindow window = steps[ss.step].cpu;
    auto it = std::lower_bound(cats.begin(), cats.end(), window.start,
                               [&](uint32_t op, TimeNs t) { return h.ts[op] < t; });
    for (; it != cats.end() && h.ts[*it] < window.end; ++it) {
      OpShapes shapes;
      if (!ParseHostOpShapes(profile.Str(h.input_dims[*it]), profile.Str(h.input_types[*it]), &shapes).ok()) continue;
      const std::optional<KvCacheCat> cat = ReadKvCacheCat(shapes);
      if (!cat || cat->fresh_len != 1) continue;
      ss.phase = StepPhase::kDecode;
      ss.phase_reason = fmt::format("KV cache cat adds 1 token to {} ({})", cat->cache_len, profile.Str(h.input_dims[*it]));
      ss.phase_rule = "KV cache grows by one";
      break;
    }
  }
}

// A profile with operator statistics only (Ascend op_statistic: no task rows,
// so no shapes): when every attention op type it counts is a decode kernel
// (IncreFlashAttention), its unknown steps are decode steps.
void DecideByOpStatistics(const Profile& profile, ModelStructure* ms) {
  constexpr std::string_view kPrefix = "op_statistic/";
  const AttributeTable& a = profile.attributes;
  std::string decode_type;
  bool other_attention = false;
  a.ForEachRowOf(OwnerKind::kDevice, [&](size_t i, uint32_t) {
    std::string_view key = profile.Str(a.key(i));
    if (!key.starts_with(kPrefix)) return;
    key.remove_prefix(kPrefix.size());
    const std::string_view op_type = key.substr(0, key.find('/'));
    const OpClassMatch match = MatchName(op_type);
    if (match.cls != OpClass::kAttention) return;
    if (match.sub_kind == "decode") decode_type = std::string(op_type);
    else other_attention = true;
  });
  if (decode_type.empty() || other_attention) return;
  for (StepStructure& ss : ms->steps) {
    if (ss.phase != StepPhase::kUnknown) continue;
    ss.phase = StepPhase::kDecode;
    ss.phase_reason = fmt::format("op_statistic counts {} (a decode attention kernel) and no other attention op", decode_type);
    ss.phase_rule = "op_statistic attention type";
  }
}

// The compute kernels of the device with most of them, which carries the
// model (one rank's view), in device order.
std::vector<uint32_t> ModelDeviceKernels(const Profile& profile, const OpClassification& classes) {
  const DeviceTaskTable& tasks = profile.device_tasks;
  std::map<int32_t, uint64_t> per_device;
  for (uint32_t t = 0; t < tasks.size(); ++t)
    if (IsComputeKernel(profile, classes, t)) ++per_device[profile.tracks.device[tasks.track[t]]];
  int32_t device = -1;
  uint64_t most = 0;
  for (auto [d, n] : per_device)
    if (n > most) { most = n; device = d; }
  std::vector<uint32_t> kernels;
  kernels.reserve(most);
  for (uint32_t t = 0; t < tasks.size(); ++t)
    if (IsComputeKernel(profile, classes, t) && profile.tracks.device[tasks.track[t]] == device) kernels.push_back(t);
  std::sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) {
    return tasks.ts[a] != tasks.ts[b] ? tasks.ts[a] < tasks.ts[b] : a < b;
  });
  return kernels;
}

struct AnchoredKernel {
  TimeNs at;       // the kernel's anchor (OperatorCallGraph::TaskAnchor)
  uint32_t order;  // place in the kernels in device order
};

// The kernels by (anchor, place in device order). Empty when that is the
// device order itself, as when every kernel is anchored at its own start (an
// Ascend CSV has no host side): 16 bytes a kernel that were a tenth of such
// a profile's peak.
std::vector<AnchoredKernel> KernelsByAnchor(const OperatorCallGraph& graph, const std::vector<uint32_t>& kernels) {
  bool device_order = true;
  for (size_t k = 1; k < kernels.size() && device_order; ++k)
    device_order = graph.TaskAnchor(kernels[k - 1]) <= graph.TaskAnchor(kernels[k]);
  if (device_order) return {};
  std::vector<AnchoredKernel> by_anchor(kernels.size());
  for (uint32_t k = 0; k < kernels.size(); ++k) by_anchor[k] = AnchoredKernel{graph.TaskAnchor(kernels[k]), k};
  std::sort(by_anchor.begin(), by_anchor.end(), [](const AnchoredKernel& a, const AnchoredKernel& b) {
    return a.at != b.at ? a.at < b.at : a.order < b.order;
  });
  return by_anchor;
}

// Operators sorted by start the same way, for the CPU-only fallback.
std::vector<uint32_t> OperatorsByStart(const HostOpTable& ops) {
  std::vector<uint32_t> ops_by_ts;
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops.kind[i] == HostOpKind::kOperator) ops_by_ts.push_back(i);
  std::sort(ops_by_ts.begin(), ops_by_ts.end(),
            [&](uint32_t a, uint32_t b) { return ops.ts[a] != ops.ts[b] ? ops.ts[a] < ops.ts[b] : a < b; });
  return ops_by_ts;
}

// What each step's analysis reads. A step's kernels are those anchored inside
// its CPU window, in device order. Found by binary search on the kernels
// sorted by anchor, not by a scan of every kernel per step: that scan made the
// analysis quadratic (844 steps x 500k kernels of a 166 MB kernel_details.csv:
// a third of `analyze`). The operators are searched the same way.
struct StepScan {
  const Profile& profile;
  const OperatorCallGraph& graph;
  const OpClassification& classes;
  const std::vector<StepInfo>& steps;
  const std::vector<uint32_t>& kernels;       // the model device's compute kernels, in device order
  std::vector<AnchoredKernel> by_anchor;      // the same kernels by anchor; empty: in device order
  // Operators by start, made on first use: only CPU-only profiles and steps
  // without kernels read them (sorting every operator of a 1 GB GPU trace for
  // nothing took 4 MB and tens of ms).
  const std::vector<uint32_t>& OperatorsByTs() const {
    if (!ops_by_ts) ops_by_ts = OperatorsByStart(profile.host_ops);
    return *ops_by_ts;
  }
  mutable std::optional<std::vector<uint32_t>> ops_by_ts;
};

// The step's kernels as a sequence (every kernel when the profile is one window).
std::vector<SeqItem> DeviceKernelSequence(const StepScan& scan, const StepInfo& step) {
  const DeviceTaskTable& tasks = scan.profile.device_tasks;
  std::vector<uint32_t> in_step;  // places in `kernels`
  if (scan.steps.size() > 1) {
    if (scan.by_anchor.empty()) {  // the kernels in device order are in anchor order
      auto before = [&](uint32_t t, TimeNs v) { return scan.graph.TaskAnchor(t) < v; };
      auto lo = std::lower_bound(scan.kernels.begin(), scan.kernels.end(), step.cpu.start, before);
      auto hi = std::lower_bound(lo, scan.kernels.end(), step.cpu.end, before);
      for (auto it = lo; it != hi; ++it) in_step.push_back(static_cast<uint32_t>(it - scan.kernels.begin()));
    } else {
      auto lo = std::lower_bound(scan.by_anchor.begin(), scan.by_anchor.end(), step.cpu.start,
                                 [](const AnchoredKernel& a, TimeNs v) { return a.at < v; });
      auto hi = std::lower_bound(lo, scan.by_anchor.end(), step.cpu.end,
                                 [](const AnchoredKernel& a, TimeNs v) { return a.at < v; });
      for (auto it = lo; it != hi; ++it) in_step.push_back(it->order);
      std::sort(in_step.begin(), in_step.end());
    }
  } else {
    in_step.resize(scan.kernels.size());
    for (uint32_t k = 0; k < scan.kernels.size(); ++k) in_step[k] = k;
  }
  std::vector<SeqItem> seq;
  for (uint32_t k : in_step) {
    const uint32_t t = scan.kernels[k];
    StrId op_type = tasks.op_type(t);
    seq.push_back(SeqItem{true, t, op_type != kEmptyStr ? op_type : tasks.name[t], scan.classes.task_class[t],
                          scan.classes.task_sub_kind[t]});
  }
  return seq;
}

// CPU-only: top-level operators of the step, views and allocations left out.
std::vector<SeqItem> TopLevelOperatorSequence(const StepScan& scan, const StepInfo& step) {
  const HostOpTable& ops = scan.profile.host_ops;
  std::vector<uint32_t> candidates;
  if (scan.steps.size() > 1) {
    const std::vector<uint32_t>& ops_by_ts = scan.OperatorsByTs();
    auto lo = std::lower_bound(ops_by_ts.begin(), ops_by_ts.end(), step.cpu.start,
                               [&](uint32_t i, TimeNs v) { return ops.ts[i] < v; });
    auto hi = std::lower_bound(lo, ops_by_ts.end(), step.cpu.end,
                               [&](uint32_t i, TimeNs v) { return ops.ts[i] < v; });
    candidates.assign(lo, hi);
    std::sort(candidates.begin(), candidates.end());  // row order, as the sort below has always seen them
  } else {
    candidates = scan.OperatorsByTs();
    std::sort(candidates.begin(), candidates.end());
  }
  std::vector<uint32_t> rows;
  for (uint32_t i : candidates) {
    int32_t parent = i < ops.parent.size() ? ops.parent[i] : kNoIndex;
    int32_t enc = parent >= 0 ? scan.graph.EnclosingOperator(static_cast<uint32_t>(parent)) : kNoIndex;
    if (enc >= 0 && ops.kind[enc] == HostOpKind::kOperator) continue;
    std::string_view sub = scan.classes.host_sub_kind[i];
    if (sub == "view" || sub == "alloc" || sub == "sync") continue;
    rows.push_back(i);
  }
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return ops.ts[a] < ops.ts[b]; });
  std::vector<SeqItem> seq;
  for (uint32_t i : rows)
    seq.push_back(SeqItem{false, i, ops.name[i], scan.classes.host_class[i], scan.classes.host_sub_kind[i]});
  return seq;
}

// Fills `lp` when the sequence repeats a unit with a GEMM or attention at least kMinLayerRepeats times.
void FindLayerPattern(const Profile& profile, const std::vector<SeqItem>& seq, int32_t max_period, LayerPattern* lp) {
  PeriodResult pr = FindPeriod(seq, max_period);
  if (pr.period <= 0) return;
  // Rotate the unit so that it starts at its first norm (pre-norm transformer layer start).
  int64_t rot = 0;
  for (int64_t k = 0; k < pr.period; ++k)
    if (seq[pr.start + k].cls == OpClass::kNorm) { rot = k; break; }
  int64_t first = pr.start + rot;
  int64_t layers = (pr.coverage - rot) / pr.period;
  bool useful = false;
  for (int64_t k = 0; k < pr.period; ++k) {
    OpClass c = seq[first + k].cls;
    useful |= c == OpClass::kMatmul || c == OpClass::kAttention;
  }
  if (!useful || layers < kMinLayerRepeats) return;
  lp->period = pr.period;
  lp->layers = static_cast<int32_t>(layers);
  lp->first_op = static_cast<int32_t>(first);
  lp->prologue_ops = static_cast<int32_t>(first);
  lp->epilogue_ops = static_cast<int32_t>(static_cast<int64_t>(seq.size()) - first - layers * pr.period);
  for (int64_t k = 0; k < pr.period; ++k) {
    const SeqItem& it = seq[first + k];
    lp->classes.push_back(it.cls);
    lp->names.emplace_back(profile.Str(it.symbol));
  }
  AssignRoles(lp);
}

// What an attention op says of the step: a decode kernel, or S_q / S_kv from
// its shapes; returns whether it settled the attention question.
bool ReadAttentionOp(const Profile& profile, const SeqItem& it, const CostInput& in, const HardwareSpec& none,
                     StepStructure* ss, std::string* attention_source) {
  if (it.sub == "decode") {
    ss->phase = StepPhase::kDecode;
    ss->phase_reason = fmt::format("decode attention kernel {}", profile.Str(it.symbol));
    ss->phase_rule = "decode attention kernel";
    return true;
  }
  if (it.sub == "qk_bmm" && in.has_shapes) {
    // Unfused attention: Q·K^T is a (batched) GEMM with M = S_q and N = S_kv.
    GemmDims g = InferGemmDims(in.name, in.sub_kind, in.shapes, in.has_outputs ? &in.outputs : nullptr);
    if (!g.ok) return false;
    ss->query_len = g.m;
    ss->kv_len = g.n;
    *attention_source = "unfused attention Q.K^T";
    return true;
  }
  OpCost c = EstimateCost(in, none);
  if (c.s_q > 0) {
    ss->query_len = c.s_q;
    ss->kv_len = c.s_kv;
    if (c.batch > 0) ss->batch = c.batch;
    return true;
  }
  if (it.sub == "paged") {
    ss->phase = StepPhase::kDecode;
    ss->phase_reason = fmt::format("paged attention kernel {} (decode path)", profile.Str(it.symbol));
    ss->phase_rule = "paged attention kernel";
    return true;
  }
  return false;
}

// Tokens of the step: the GEMM's rows (M x batch); returns whether the shapes gave them.
bool ReadGemmRows(const CostInput& in, StepStructure* ss) {
  GemmDims g = InferGemmDims(in.name, in.sub_kind, in.shapes, in.has_outputs ? &in.outputs : nullptr);
  if (!g.ok) return false;
  ss->tokens = g.m * g.batch;
  return true;
}

// Tokens and query length from the first GEMM / attention of layer 0 (else of
// the step), and the phase the query length implies.
void ReadTokensAndPhase(const StepScan& scan, const std::vector<SeqItem>& seq, StepStructure* ss) {
  int64_t from = ss->pattern.period > 0 ? ss->pattern.first_op : 0;
  int64_t to = ss->pattern.period > 0 ? from + ss->pattern.period : static_cast<int64_t>(seq.size());
  HardwareSpec none;
  bool attn_done = false, gemm_done = false;
  std::string attention_source = "attention";  // what gave S_q: a fused attention op or the unfused Q.K^T
  for (int64_t k = from; k < to && !(attn_done && gemm_done); ++k) {
    const SeqItem& it = seq[k];
    CostInput in = it.task ? CostInputForTask(scan.profile, scan.graph, scan.classes, it.row)
                           : CostInputForHostOp(scan.profile, scan.graph, scan.classes, it.row, none);
    if (!attn_done && it.cls == OpClass::kAttention)
      attn_done = ReadAttentionOp(scan.profile, it, in, none, ss, &attention_source);
    if (!gemm_done && it.cls == OpClass::kMatmul && in.has_shapes) gemm_done = ReadGemmRows(in, ss);
  }
  if (ss->query_len > 0) {
    ss->phase = ss->query_len == 1 ? StepPhase::kDecode : StepPhase::kPrefill;
    ss->phase_reason = fmt::format("{} S_q = {} (S_kv = {})", attention_source,
                                   ss->query_len, ss->kv_len);
    ss->phase_rule = attention_source + " S_q";
  }
}

StepStructure AnalyzeStep(const StepScan& scan, size_t si, const StructureOptions& options) {
  const StepInfo& step = scan.steps[si];
  StepStructure ss;
  ss.step = si;
  ss.latency_ns = step.latency_ns();
  std::vector<SeqItem> seq;
  if (scan.graph.stats().cpu_compute_tasks > 0) {
    // CPU-only profiles: the tasks are operators picked by their self time (call_graph.cc), which timing
    // noise moves between a parent and its children from one layer to the next (the demo's 6-layer
    // Llama read as 2 layers of 3); the top-level operators are the same in every layer. They are used
    // when they repeat; a profile wrapped in one record_function scope has a single top-level operator.
    std::vector<SeqItem> operators = TopLevelOperatorSequence(scan, step);
    LayerPattern pattern;
    FindLayerPattern(scan.profile, operators, options.max_period, &pattern);
    if (pattern.layers > 0) {
      ss.from_device_tasks = false;
      ss.ops = operators.size();
      ss.pattern = std::move(pattern);
      ReadTokensAndPhase(scan, operators, &ss);
      return ss;
    }
  }
  seq = DeviceKernelSequence(scan, step);
  if (seq.empty()) {
    ss.from_device_tasks = false;
    seq = TopLevelOperatorSequence(scan, step);
  }
  ss.ops = seq.size();
  FindLayerPattern(scan.profile, seq, options.max_period, &ss.pattern);
  ReadTokensAndPhase(scan, seq, &ss);
  return ss;
}

// Steps still unknown, from the relative token counts across steps: a step
// with prefill_token_ratio x the smallest step's GEMM rows is a prefill, one
// with the smallest a decode (when some step reaches that ratio).
void DecideByTokenRatio(const std::vector<int64_t>& step_tokens, const StructureOptions& options,
                        ModelStructure* ms) {
  int64_t min_tokens = -1, max_tokens = -1;
  for (int64_t t : step_tokens)
    if (t > 0) {
      min_tokens = min_tokens < 0 ? t : std::min(min_tokens, t);
      max_tokens = std::max(max_tokens, t);
    }
  if (!(min_tokens > 0 &&
        static_cast<double>(max_tokens) >= options.prefill_token_ratio * static_cast<double>(min_tokens)))
    return;
  for (StepStructure& ss : ms->steps) {
    if (ss.phase != StepPhase::kUnknown || ss.tokens <= 0) continue;
    double ratio = static_cast<double>(ss.tokens) / static_cast<double>(min_tokens);
    if (ratio >= options.prefill_token_ratio) {
      ss.phase = StepPhase::kPrefill;
      ss.phase_reason = fmt::format("GEMM rows {} = {:.1f} x the smallest step's {}", ss.tokens, ratio, min_tokens);
      ss.phase_rule = "GEMM rows ratio";
    } else if (ss.tokens == min_tokens) {
      ss.phase = StepPhase::kDecode;
      ss.phase_reason = fmt::format("GEMM rows {} = the smallest step's (a longer step has {})", ss.tokens, max_tokens);
      ss.phase_rule = "GEMM rows ratio";
    }
  }
}

// Layers: the most common count over steps, and the pattern of the first step that has it.
void PickCommonLayers(ModelStructure* ms) {
  std::map<int32_t, int> counts;
  for (const StepStructure& ss : ms->steps)
    if (ss.pattern.layers > 0) ++counts[ss.pattern.layers];
  int best = 0;
  for (auto [l, n] : counts)
    if (n > best) { best = n; ms->layers = l; }
  for (const StepStructure& ss : ms->steps)
    if (ss.pattern.layers == ms->layers && ms->layers > 0) { ms->layer = ss.pattern; break; }
  if (ms->layers == 0) ms->notes.push_back("no repeating layer found (fewer than 2 repeats of a unit with a GEMM or attention)");
}

// Decode and prefill step counts and latencies.
void SummarizePhases(const std::vector<StepInfo>& steps, ModelStructure* ms) {
  std::vector<TimeNs> decode, prefill;
  for (const StepStructure& ss : ms->steps) {
    if (ss.phase == StepPhase::kDecode) { ++ms->decode_steps; decode.push_back(ss.latency_ns); }
    if (ss.phase == StepPhase::kPrefill) { ++ms->prefill_steps; prefill.push_back(ss.latency_ns); }
  }
  ms->decode_latency = ComputeLatencyStats(decode);
  ms->prefill_latency = ComputeLatencyStats(prefill);
  if (steps.size() == 1 && steps[0].number < 0)
    ms->notes.push_back("the profile has no step marks: one window analysed; per-token latency needs one step per "
                        "generated token (ProfilerStep / step annotations)");
}

void AddKvCacheUpdate(ModelStructure* ms, bool is_task, uint32_t row, std::string how) {
  ++ms->kv_cache_update_count;
  if (ms->kv_cache_updates.size() < kMaxListedKvUpdates) ms->kv_cache_updates.push_back(KvCacheUpdate{is_task, row, std::move(how)});
}

// How a cat / index_copy host op writes a KV cache, by its input shapes; nothing when it does not.
std::optional<std::string> KvCacheWriteByShapes(const Profile& profile, uint32_t i, std::string_view sub) {
  const HostOpTable& ops = profile.host_ops;
  if (ops.input_dims[i] == kEmptyStr) return std::nullopt;
  OpShapes s;
  if (!ParseHostOpShapes(profile.Str(ops.input_dims[i]), profile.Str(ops.input_types[i]), &s).ok()) return std::nullopt;
  if (sub == "index_copy") {
    const TensorShape* target = s.tensor(0);
    if (target != nullptr && target->rank >= 3) return fmt::format("index_copy into a {}-D cache tensor", target->rank);
    return std::nullopt;
  }
  // cat(past, new) on one dim that is not the last (the rotary cat joins halves on dim -1).
  const TensorShape* a = s.tensor(0);
  const TensorShape* b = s.tensor(1);
  if (a == nullptr || b == nullptr || s.tensor_count() != 2 || a->rank != b->rank || a->rank < 3) return std::nullopt;
  int diff = -1, ndiff = 0;
  for (int d = 0; d < a->rank; ++d)
    if (a->dims[d] != b->dims[d]) { diff = d; ++ndiff; }
  if (ndiff == 1 && diff != a->rank - 1 && b->dims[diff] < a->dims[diff])
    return fmt::format("cat on dim {}: past {} + new {}", diff - a->rank, a->dims[diff], b->dims[diff]);
  return std::nullopt;
}

// KV-cache writes: named cache ops, and cat / index_copy onto a growing tensor.
void FindKvCacheUpdates(const Profile& profile, const OpClassification& classes, ModelStructure* ms) {
  const DeviceTaskTable& tasks = profile.device_tasks;
  const HostOpTable& ops = profile.host_ops;
  for (uint32_t t = 0; t < tasks.size(); ++t)
    if (classes.task_sub_kind[t] == "kv_cache_update" && classes.task_source[t] != ClassSource::kOperator)
      AddKvCacheUpdate(ms, true, t, fmt::format("kv cache op ({})", profile.Str(tasks.op_type(t) != kEmptyStr ? tasks.op_type(t) : tasks.name[t])));
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (ops.kind[i] != HostOpKind::kOperator) continue;
    std::string_view sub = classes.host_sub_kind[i];
    if (sub == "kv_cache_update") { AddKvCacheUpdate(ms, false, i, fmt::format("kv cache op ({})", profile.Str(ops.name[i]))); continue; }
    if (sub != "cat" && sub != "index_copy") continue;
    if (std::optional<std::string> how = KvCacheWriteByShapes(profile, i, sub)) AddKvCacheUpdate(ms, false, i, std::move(*how));
  }
}

}  // namespace

StatusOr<ModelStructure> AnalyzeStructure(const Profile& profile, const OperatorCallGraph& graph,
                                          const OpClassification& classes, const StructureOptions& options) {
  ModelStructure ms;
  ms.model_arch = options.model_arch;
  if (classes.task_class.size() != profile.device_tasks.size() || classes.host_class.size() != profile.host_ops.size())
    return InvalidArgumentError("structure: classification does not match the profile");

  const std::vector<uint32_t> kernels = ModelDeviceKernels(profile, classes);
  const StepScan scan{profile, graph, classes, graph.Steps(), kernels, KernelsByAnchor(graph, kernels),
                      std::nullopt};
  std::vector<int64_t> step_tokens(scan.steps.size(), -1);
  for (size_t si = 0; si < scan.steps.size(); ++si) {
    StepStructure ss = AnalyzeStep(scan, si, options);
    step_tokens[si] = ss.tokens;
    ms.steps.push_back(std::move(ss));
  }

  // Steps still unknown: what the KV cache and the statistics say, then the
  // relative token counts across steps.
  DecideByKvCacheGrowth(profile, scan.steps, &ms);
  DecideByOpStatistics(profile, &ms);
  DecideByTokenRatio(step_tokens, options, &ms);

  PickCommonLayers(&ms);
  SummarizePhases(scan.steps, &ms);
  FindKvCacheUpdates(profile, classes, &ms);
  return ms;
}

}  // namespace pypto
