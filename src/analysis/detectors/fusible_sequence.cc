// (10) fusible_sequence: repeated sequences of short ops that one fused
// kernel replaces (the affinity APIs of msprof-analyze: rms_norm, rotary_mul,
// swiglu, fusion_attention, …).
//
// Rule (msprof-analyze schedule/fusion_ops/fusion_ops_analyzer.py,
// rules/timeline_fusion_ops.yaml; diagnosis-rules §1.3): the aten op names of
// the trace, `aten::` removed, are joined in time order as `-name-` tokens and
// each pattern is searched with a regex. Here the tokens are the top-level
// aten operators of each host thread in the analysed steps (children such as
// aten::bmm under aten::matmul are not tokens, so a pattern sees the calls the
// model code makes), and a pattern must match whole tokens (it is matched
// token by token: TokenSequencePattern). Single-op
// patterns (gelu) are not sequences.
// Optimizer rules (`<Optimizer>.step` -> torch_npu.optim.NpuFused<Optimizer>,
// Ascend only): each `Optimizer.step#SGD.step` range of the analysed steps is
// an occurrence; its wall time is affected, and the device idle inside it (the
// per-parameter dispatch a fused optimizer's few kernels over flattened
// buffers does not have) is the saving.
// An issue per fused API whose sequences repeat more than 5 times (the
// repetition rule of the fusible-operator checker, fusible_operator.yaml, §1.1).
// Figures per occurrence: kernels, kernel time, device span and the idle time
// inside it, host launch time (the launch calls of all kernels but one).
// Saving (measured): the device idle between the kernels of each occurrence,
// which one kernel does not have; the launch time saved is a metric.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"
#include "analysis/detectors/token_sequence_pattern.h"
#include "graph/interval_union.h"

namespace pypto {
namespace {

// Occurrences needed: more than this many. Source: msprof-analyze
// fusible_operator.yaml, sequences repeated > 5 times (§1.1).
inline constexpr double kDefaultMinRepeatsExclusive = 5;

struct FusionPattern {
  const char* key;        // issue op_type
  const char* fused_api;  // issue op_name on Ascend
  const char* since_cann;
  const char* regex;      // over "-name-" tokens (aten:: removed)
};

// The fused op to name on CUDA / ROCm / CPU, by pattern key: what the
// installed torch offers (or torch.compile, which fuses the chain).
struct PortableApi {
  const char* key;
  const char* api;
};
const PortableApi kPortableApis[] = {
    {"rms_norm", "torch.nn.functional.rms_norm"},
    {"rotary_mul", "a fused rotary embedding (torch.compile)"},
    {"swiglu", "a fused SwiGLU (torch.compile)"},
    {"fusion_attention", "torch.nn.functional.scaled_dot_product_attention"},
    {"geglu", "a fused GeGLU (torch.compile)"},
    {"group_norm_silu", "a fused GroupNorm + SiLU (torch.compile)"},
    {"addmm", "torch.addmm"},
    {"add_layer_norm", "a fused add + layer_norm (torch.compile)"},
    {"scaled_masked_softmax", "torch.nn.functional.scaled_dot_product_attention"},
    {"confusion_transpose", "a view instead of transpose + contiguous"},
};

// The op to name for `pattern` on the profile's hardware.
std::string FusedApiFor(const DiagnosisContext& ctx, const FusionPattern& pattern) {
  if (ctx.hardware->family == HardwareFamily::kAscend) return pattern.fused_api;
  for (const PortableApi& p : kPortableApis)
    if (std::string_view(p.key) == pattern.key) return p.api;
  return pattern.fused_api;
}

// diagnosis-rules §1.3 (timeline_fusion_ops.yaml), patterns as written there.
// Optimizers torch_npu ships fused (diagnosis-rules §1.3, timeline_fusion_ops.yaml).
constexpr std::string_view kNpuFusedOptimizers[] = {"AdamW",   "SGD",      "Adadelta",  "Lamb", "AdamP",
                                                    "BertAdam", "RMSprop", "RMSpropTF", "Adam"};

const FusionPattern kPatterns[] = {
    {"rms_norm", "torch_npu.npu_rms_norm", "7.0.0", "(pow-){0,1}(mean-){0,1}(add-){0,1}rsqrt-mul(-type_as){0,1}"},
    {"rotary_mul", "torch_npu.npu_rotary_mul", "7.0.RC1", "(chunk-)neg-cat(-mul){0,2}-add"},
    {"rotary_mul", "torch_npu.npu_rotary_mul", "7.0.RC1", "(slice-)neg-cat(-mul){0,2}-add"},
    {"swiglu", "torch_npu.npu_swiglu", "7.0.0", "(slice|chunk)-silu-mul"},
    {"swiglu", "torch_npu.npu_swiglu", "7.0.0", "(slice|chunk)-mul-silu"},
    {"swiglu", "torch_npu.npu_swiglu", "7.0.0", "(slice|chunk)-sigmoid-mul-mul"},
    {"swiglu", "torch_npu.npu_swiglu", "7.0.0", "(slice|chunk)-mul-sigmoid-mul"},
    {"swiglu", "torch_npu.npu_swiglu", "7.0.0", "(slice|chunk)-mul-mul-sigmoid"},
    {"fusion_attention", "torch_npu.npu_fusion_attention", "7.0.RC1",
     "matmul(-add){0,1}(-mul){0,1}(-masked_fill_){0,1}-softmax(-dropout){0,1}-matmul"},
    {"fusion_attention", "torch_npu.npu_fusion_attention", "7.0.RC1",
     "matmul(-add){0,1}(-mul){0,1}(-add){0,1}-softmax(-dropout){0,1}-matmul"},
    {"geglu", "torch_npu.npu_geglu", "8.0.RC1", "(slice|chunk)-gelu-mul"},
    {"geglu", "torch_npu.npu_geglu", "8.0.RC1", "(slice|chunk)-mul-gelu"},
    {"group_norm_silu", "torch_npu.npu_group_norm_silu", "8.0.RC1", "group_norm-silu"},
    {"addmm", "torch.addmm", "8.0.RC1", "mul-mul-add"},
    {"add_layer_norm", "torch_npu.npu_add_layer_norm", "8.0.RC1", "add-layer_norm"},
    {"scaled_masked_softmax", "torch_npu.npu_scaled_masked_softmax", "6.3.RC2", "softmax(-mul){0,1}-(masked_fill_)"},
    {"scaled_masked_softmax", "torch_npu.npu_scaled_masked_softmax", "6.3.RC2", "softmax(-mul){0,1}-(add)"},
    {"confusion_transpose", "torch_npu.npu_confusion_transpose", "6.3.RC2",
     "(permute|transpose)(-contiguous){0,1}-(reshape|view)"},
    {"confusion_transpose", "torch_npu.npu_confusion_transpose", "6.3.RC2",
     "(reshape|view)(-contiguous){0,1}-(permute|transpose)"},
    {"moe_token_permute", "mindspeed.ops.npu_moe_token_permute", "8.0.RC3", "argsort-argsort-index_select"},
    {"moe_token_unpermute", "mindspeed.ops.npu_moe_token_unpermute", "8.0.RC3", "index_select-mul-reduce_sum"},
};

// The patterns, read once (each is checked to be a sequence of whole tokens
// by TokenSequencePattern::Parse; a unit test reads every one).
const std::vector<std::optional<detectors::TokenSequencePattern>>& ParsedPatterns() {
  static const std::vector<std::optional<detectors::TokenSequencePattern>> parsed = [] {
    std::vector<std::optional<detectors::TokenSequencePattern>> v;
    for (const FusionPattern& pat : kPatterns) v.push_back(detectors::TokenSequencePattern::Parse(pat.regex));
    return v;
  }();
  return parsed;
}

// The tokens of a text "-tok-tok-…-", read in place: token i runs from
// starts[i] to the '-' before the next one (the last, to the final '-').
class TextTokens {
 public:
  TextTokens(const std::string& text, const std::vector<size_t>& starts) : text_(text), starts_(starts) {}
  size_t size() const { return starts_.size(); }
  std::string_view operator[](size_t i) const {
    const size_t end = (i + 1 < starts_.size() ? starts_[i + 1] : text_.size()) - 1;
    return std::string_view(text_).substr(starts_[i], end - starts_[i]);
  }
  size_t start(size_t i) const { return starts_[i]; }

 private:
  const std::string& text_;
  const std::vector<size_t>& starts_;
};

// Calls found(first, count) for each match of `pattern` in `tokens`, left to
// right and not overlapping: what std::sregex_iterator finds with the
// pattern's regex on the text "-tok-tok-…-" (each match starts at a '-').
template <typename Found>
void ForEachTokenMatch(const TextTokens& tokens, const detectors::TokenSequencePattern& pattern, Found found) {
  for (size_t i = 0; i < tokens.size();) {
    const std::optional<size_t> count = pattern.MatchAt(tokens, i);
    if (count && *count > 0) {
      found(i, *count);
      i += *count;  // the next search starts where this match ended
    } else {
      ++i;
    }
  }
}

class FusibleSequence final : public Detector {
 public:
  std::string_view name() const override { return "fusible_sequence"; }
  IssueType type() const override { return IssueType::kFusibleSequence; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const HostOpTable& h = p.host_ops;
    const DeviceTaskTable& d = p.device_tasks;
    const OperatorCallGraph& g = *ctx.graph;
    const double min_repeats = ctx.options->Param("fusible_sequence.min_repeats_exclusive", kDefaultMinRepeatsExclusive);
    if (ctx.hardware->family == HardwareFamily::kAscend) RunFusedOptimizers(ctx, out);

    // Token strings per thread: "-name-name-…-", with the op of each token.
    struct Stream {
      std::string text;
      std::vector<size_t> token_start;  // offset of each token's first char
      std::vector<uint32_t> ops;
    };
    std::map<uint32_t, Stream> streams;
    uint64_t tokens = 0;
    // Whether a name is an aten operator's, decided once per distinct name (a
    // whole trace asks it for every operator and each of its ancestors).
    std::vector<int8_t> aten_name(p.strings.size(), -1);
    auto is_aten = [&](StrId id) {
      if (id >= aten_name.size()) return p.Str(id).starts_with("aten::");
      if (aten_name[id] < 0) aten_name[id] = p.Str(id).starts_with("aten::") ? 1 : 0;
      return aten_name[id] == 1;
    };
    for (uint32_t op : ctx.host_ops) {  // sorted by (track, ts)
      if (h.kind[op] != HostOpKind::kOperator || !is_aten(h.name[op])) continue;
      std::string_view name = p.Str(h.name[op]);
      int32_t parent = h.parent.empty() ? kNoIndex : h.parent[op];
      bool top = true;
      for (int32_t a = parent; a >= 0; a = h.parent[a])
        if (h.kind[a] == HostOpKind::kOperator && is_aten(h.name[a])) { top = false; break; }
      if (!top) continue;
      Stream& s = streams[h.track[op]];
      if (s.text.empty()) s.text = "-";
      s.token_start.push_back(s.text.size());
      s.ops.push_back(op);
      s.text.append(name.substr(6));
      s.text.push_back('-');
      ++tokens;
    }
    if (tokens == 0) {
      out->notes.push_back("no aten operators on the host in the analysed steps: affinity-API patterns not checked");
      return;
    }

    struct Occurrence {
      uint32_t first_op, last_op;
      std::vector<uint32_t> ops;
    };
    struct Group {
      const FusionPattern* pattern = nullptr;
      std::vector<Occurrence> occ;
      std::map<std::string, uint64_t> sequences;  // matched text -> count
    };
    std::map<std::string, Group> groups;
    const std::vector<std::optional<detectors::TokenSequencePattern>>& parsed = ParsedPatterns();
    for (auto& stream_entry : streams) {
      Stream& s = stream_entry.second;  // not a structured binding: clang 14 cannot capture one in a lambda
      // The text's tokens: what lies between its '-'. They are the ops'
      // names unless a name has a '-' in it: then it is two tokens, as it is
      // to the rule's regex, and the tokens' starts are found apart.
      std::vector<size_t> split_starts;
      if (static_cast<size_t>(std::count(s.text.begin(), s.text.end(), '-')) != s.ops.size() + 1) {
        for (size_t from = 1; from < s.text.size(); from = s.text.find('-', from) + 1) split_starts.push_back(from);
      }
      const TextTokens pieces(s.text, split_starts.empty() ? s.token_start : split_starts);
      std::map<std::string, std::vector<uint8_t>> taken;
      for (size_t pi = 0; pi < std::size(kPatterns); ++pi) {
        const FusionPattern& pat = kPatterns[pi];
        if (!parsed[pi]) continue;
        std::vector<uint8_t>& tk = taken[pat.key];
        if (tk.empty()) tk.assign(s.ops.size(), 0);
        ForEachTokenMatch(pieces, *parsed[pi], [&](size_t first_piece, size_t piece_count) {
          const size_t begin = pieces.start(first_piece);
          const size_t last = first_piece + piece_count - 1;
          const size_t end = pieces.start(last) + pieces[last].size();
          auto lo = std::lower_bound(s.token_start.begin(), s.token_start.end(), begin) - s.token_start.begin();
          auto hi = std::lower_bound(s.token_start.begin(), s.token_start.end(), end) - s.token_start.begin();
          if (lo >= static_cast<long>(s.ops.size()) || hi <= lo) return;
          bool clash = false;
          for (long i = lo; i < hi; ++i) clash |= tk[i] != 0;
          if (clash) return;
          Occurrence o;
          for (long i = lo; i < hi; ++i) {
            tk[i] = 1;
            o.ops.push_back(s.ops[i]);
          }
          o.first_op = o.ops.front();
          o.last_op = o.ops.back();
          Group& grp = groups[pat.key];
          grp.pattern = &pat;
          grp.occ.push_back(std::move(o));
          ++grp.sequences[s.text.substr(begin, end - begin)];
        });
      }
    }

    // Device tasks of an op and its descendants.
    auto tasks_of = [&](uint32_t op, std::vector<uint32_t>* outv) {
      std::vector<uint32_t> stack = {op};
      while (!stack.empty()) {
        uint32_t o = stack.back();
        stack.pop_back();
        for (uint32_t t : g.TasksOfOp(o))
          if (d.kind[t] != DeviceTaskKind::kAnnotation && d.kind[t] != DeviceTaskKind::kSync) outv->push_back(t);
        for (uint32_t c : g.Children(o)) stack.push_back(c);
      }
    };

    for (auto& [key, grp] : groups) {
      if (double(grp.occ.size()) <= min_repeats) {
        out->notes.push_back(fmt::format("{} sequence(s) for {} (not more than {}: not reported)", grp.occ.size(),
                                         FusedApiFor(ctx, *grp.pattern), min_repeats));
        continue;
      }
      Issue issue;
      issue.type = IssueType::kFusibleSequence;
      issue.op_name = FusedApiFor(ctx, *grp.pattern);
      issue.op_type = key;
      // What the profile ran: the most frequent matched sequence.
      {
        uint64_t most = 0;
        for (const auto& [seq, n] : grp.sequences)
          if (n > most) most = n, issue.profile_op_name = seq;
      }
      TimeNs exec = 0, wall = 0, idle = 0, launch = 0;
      uint64_t kernels = 0;
      std::map<int, TimeNs> idle_by_step;
      for (const Occurrence& o : grp.occ) {
        std::vector<uint32_t> ts;
        for (uint32_t op : o.ops) tasks_of(op, &ts);
        std::sort(ts.begin(), ts.end(), [&](uint32_t a, uint32_t b) { return d.ts[a] < d.ts[b]; });
        kernels += ts.size();
        if (issue.evidence.host_ops.size() < kMaxEvidenceRows) issue.evidence.host_ops.push_back(o.first_op);
        wall += h.ts[o.last_op] + h.dur[o.last_op] - h.ts[o.first_op];
        TimeNs occ_idle = 0, cursor = kUnknownNs;
        for (size_t i = 0; i < ts.size(); ++i) {
          const uint32_t t = ts[i];
          exec += d.dur[t];
          if (issue.evidence.tasks.size() < kMaxEvidenceRows) issue.evidence.tasks.push_back(t);
          if (cursor != kUnknownNs && d.ts[t] > cursor) occ_idle += d.ts[t] - cursor;
          cursor = cursor == kUnknownNs ? d.ts[t] + d.dur[t] : std::max(cursor, d.ts[t] + d.dur[t]);
          if (i > 0) {
            int32_t l = g.LauncherOf(t);
            if (l >= 0) launch += h.dur[l];
          }
        }
        idle += occ_idle;
        if (!ts.empty() && occ_idle > 0) {
          int step = ctx.StepOf(d.ts[ts.front()]);
          if (step >= 0) idle_by_step[step] += occ_idle;
        }
      }
      issue.affected_ns = exec + idle;
      issue.evidence.count = grp.occ.size();
      issue.evidence.total_ns = exec;
      for (const auto& [step, ns] : idle_by_step)
        issue.savings.push_back({SavingTargetKind::kStepIdle, static_cast<uint32_t>(ctx.steps[step]), ns});
      issue.method = SavingMethod::kMeasuredGap;
      issue.saving_formula = fmt::format("device idle between the kernels of {} sequence(s)", grp.occ.size());
      std::string seqs;
      size_t listed = 0;
      for (const auto& [seq, n] : grp.sequences) {
        if (listed++ == 3) break;
        seqs += (seqs.empty() ? "" : ", ") + fmt::format("{} x{}", seq, n);
      }
      issue.detail = fmt::format("{} sequence(s) {} ({} kernels, {} kernel time, {} idle inside); fused API {}",
                                 grp.occ.size(), seqs, kernels, detectors::FormatUs(exec), detectors::FormatUs(idle),
                                 issue.op_name);
      if (ctx.hardware->family == HardwareFamily::kAscend)
        issue.detail += fmt::format(" (CANN >= {})", grp.pattern->since_cann);
      detectors::AddMetric(&issue, "occurrences", double(grp.occ.size()), "count");
      detectors::AddMetric(&issue, "kernels", double(kernels), "count");
      detectors::AddMetric(&issue, "kernel_time_us", double(exec) / 1000.0, "us");
      detectors::AddMetric(&issue, "idle_inside_us", double(idle) / 1000.0, "us");
      detectors::AddMetric(&issue, "host_wall_us", double(wall) / 1000.0, "us");
      detectors::AddMetric(&issue, "launch_time_saved_us", double(launch) / 1000.0, "us");
      out->issues.push_back(std::move(issue));
    }
  }

 private:
  static void RunFusedOptimizers(const DiagnosisContext& ctx, DetectorOutput* out) {
    const Profile& p = *ctx.profile;
    const OperatorCallGraph& g = *ctx.graph;
    const HostOpTable& h = p.host_ops;
    const DeviceTaskTable& d = p.device_tasks;
    constexpr std::string_view kPrefix = "Optimizer.step#";
    std::map<std::string, std::vector<uint32_t>> steps_by_optimizer;
    for (uint32_t op : ctx.host_ops) {
      const std::string_view name = p.Str(h.name[op]);
      if (!name.starts_with(kPrefix) || !name.ends_with(".step")) continue;
      const std::string_view optimizer = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 5);
      if (std::find(std::begin(kNpuFusedOptimizers), std::end(kNpuFusedOptimizers), optimizer) ==
          std::end(kNpuFusedOptimizers))
        continue;  // NpuFused* already, or one torch_npu does not fuse
      steps_by_optimizer[std::string(optimizer)].push_back(op);
    }
    if (steps_by_optimizer.empty()) return;
    // Device busy intervals (all devices), to measure the idle inside a range.
    const std::vector<std::pair<TimeNs, TimeNs>> merged = detectors::BusyIntervals(ctx);
    for (const auto& [optimizer, ops] : steps_by_optimizer) {
      Issue issue;
      issue.type = IssueType::kFusibleSequence;
      issue.op_name = "torch_npu.optim.NpuFused" + optimizer;
      issue.op_type = "fused_optimizer";
      issue.profile_op_name = std::string(kPrefix) + optimizer + ".step";
      TimeNs wall = 0, idle = 0, footprint = 0, exec = 0;
      uint64_t kernels = 0;
      std::map<int, TimeNs> idle_by_step;
      for (uint32_t op : ops) {
        // The device footprint of the step: from its first to its last kernel
        // (the host may run ahead, so the kernels can start after the range).
        std::vector<uint32_t> launched;
        std::vector<uint32_t> stack = {op};
        while (!stack.empty()) {
          const uint32_t o = stack.back();
          stack.pop_back();
          for (uint32_t t : g.TasksOfOp(o))
            if (d.kind[t] != DeviceTaskKind::kAnnotation && d.kind[t] != DeviceTaskKind::kSync) launched.push_back(t);
          for (uint32_t c : g.Children(o)) stack.push_back(c);
        }
        TimeNs start = h.ts[op], end = h.ts[op] + std::max<TimeNs>(h.dur[op], 0);
        wall += end - start;
        if (!launched.empty()) {
          start = end = d.ts[launched.front()];
          for (uint32_t t : launched) {
            start = std::min(start, d.ts[t]);
            end = std::max(end, d.ts[t] + std::max<TimeNs>(d.dur[t], 0));
            exec += std::max<TimeNs>(d.dur[t], 0);
          }
          kernels += launched.size();
        }
        footprint += end - start;
        const TimeNs in = merged.empty() ? 0 : UncoveredLength(merged, start, end);
        idle += in;
        const int step = ctx.StepOf(start);
        if (step >= 0 && in > 0) idle_by_step[step] += in;
        if (issue.evidence.host_ops.size() < kMaxEvidenceRows) issue.evidence.host_ops.push_back(op);
      }
      // Without launch links the host range stands for the footprint.
      issue.affected_ns = footprint;
      issue.evidence.count = ops.size();
      issue.evidence.total_ns = kernels > 0 ? exec : wall;
      for (const auto& [step, ns] : idle_by_step)
        issue.savings.push_back({SavingTargetKind::kStepIdle, static_cast<uint32_t>(ctx.steps[step]), ns});
      issue.method = merged.empty() ? SavingMethod::kNone : SavingMethod::kMeasuredGap;
      issue.saving_formula = "device idle between the optimizer step's kernels (per-parameter dispatch a fused "
                             "optimizer's few kernels over flattened buffers do not have)";
      issue.detail =
          kernels > 0
              ? fmt::format("{} {}{}.step range(s) ({} on the host) launch {} kernels spanning {} on the device, {} of "
                            "it idle between them; fused API {} (CANN >= 6.3.RC2)",
                            ops.size(), kPrefix, optimizer, detectors::FormatUs(wall), kernels,
                            detectors::FormatUs(footprint), detectors::FormatUs(idle), issue.op_name)
              : fmt::format("{} {}{}.step range(s) take {} on the host (no launch links to its kernels), the device "
                            "idle {} of it; fused API {} (CANN >= 6.3.RC2)",
                            ops.size(), kPrefix, optimizer, detectors::FormatUs(wall), detectors::FormatUs(idle),
                            issue.op_name);
      detectors::AddMetric(&issue, "kernels", double(kernels), "count");
      detectors::AddMetric(&issue, "occurrences", double(ops.size()), "count");
      detectors::AddMetric(&issue, "host_wall_us", double(wall) / 1000.0, "us");
      detectors::AddMetric(&issue, "idle_inside_us", double(idle) / 1000.0, "us");
      out->issues.push_back(std::move(issue));
    }
  }
};

}  // namespace

std::vector<std::string_view> detectors::FusionRulePatterns() {
  std::vector<std::string_view> texts;
  for (const FusionPattern& pat : kPatterns) texts.emplace_back(pat.regex);
  return texts;
}

const Detector& FusibleSequenceDetector() {
  static const FusibleSequence detector;
  return detector;
}

}  // namespace pypto
