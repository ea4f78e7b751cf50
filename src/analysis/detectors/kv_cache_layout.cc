// Detector 3: kv_cache_layout — the KV cache is rewritten every step instead
// of being read in place by the attention kernel:
//   (a) cache grown by `cat` (aten::cat of the cache and the new token(s) along
//       one dim, feeding attention): every step copies the whole cache, so the
//       traffic grows quadratically with the generated length;
//   (b) layout mismatch: a transpose/permute followed by a contiguous copy
//       (aten::contiguous / clone / copy_) of a rank >= 3 tensor at least as
//       large as the query, feeding attention (BSND cache, BNSD kernel or the
//       reverse);
//   (c) Ascend kernels Transpose / TransData / ConcatD right before an
//       attention kernel on the same stream (diagnosis-rules §5.1 symptoms).
// "Feeding" = within feed_window_ops top-level operators (tasks for (c)) before
// the attention op on the same thread (stream).
// Bytes moved needlessly: (a) read + write of the old cache part = 2 × cache
// bytes per call; (b)/(c) read + write of the copied tensor = 2 × its bytes.
// Saving (measured_gap): the device time of those ops (host time on CPU-only
// profiles) × the needless share of their bytes (cat: cache / (cache + new);
// copies: all of it); claimed on the host op (a, b) or task (c).
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"
#include "analysis/kv_cache_cat.h"
#include "analysis/shapes.h"

namespace pypto {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool IsAttentionOp(const DiagnosisContext& ctx, uint32_t op) {
  if (detectors::HostClass(ctx, op) == OpClass::kAttention) return true;
  std::string n = detectors::LowerAscii(ctx.profile->Str(ctx.profile->host_ops.name[op]));
  return n.find("attention") != std::string::npos;
}
bool IsCopyName(std::string_view n) {
  return EndsWith(n, "::contiguous") || EndsWith(n, "::clone") || EndsWith(n, "::copy_");
}
bool IsTransposeName(std::string_view n) {
  return EndsWith(n, "::transpose") || EndsWith(n, "::permute") || EndsWith(n, "::t") ||
         EndsWith(n, "::swapaxes");
}

struct Finding {
  std::vector<uint32_t> ops;      // host ops (a, b) or tasks (c)
  TimeNs time_ns = 0;
  double bytes = 0;               // needless bytes, total
  bool bytes_known = true;
  std::vector<TimeNs> saved;      // per op
  int64_t min_len = -1, max_len = -1;
  std::set<std::string> shapes;
  // The cache tensor's layout, from a rank-4 cat: the dim it grows along
  // (1: [B, S, N, D] token-major, BSND; 2: [B, N, S, D] head-major, BNSD),
  // its KV heads and head_dim; -1 when not seen.
  int seq_dim = -1;
  int64_t kv_heads = -1, head_dim = -1;
};

class KvCacheLayout final : public Detector {
 public:
  std::string_view name() const override { return "kv_cache_layout"; }
  IssueType type() const override { return IssueType::kKvCacheLayout; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const HostOpTable& h = p.host_ops;
    const int window = ctx.options->kv_cache_layout.feed_window_ops;
    Finding cat, copy, kernels;
    std::set<uint32_t> used;
    bool any_shapes = false;
    bool any_attention = false;
    // Per track: sequence of top-level operators.
    std::vector<uint32_t> seq;
    auto flush = [&]() {
      for (size_t j = 0; j < seq.size(); ++j) {
        if (!IsAttentionOp(ctx, seq[j])) continue;
        any_attention = true;
        OpShapes att;
        int64_t q_elems = 0;
        if (ParseHostOpShapes(p.Str(h.input_dims[seq[j]]), p.Str(h.input_types[seq[j]]), &att).ok() && att.tensor(0))
          q_elems = att.tensor(0)->elements();
        for (size_t back = 1; back <= size_t(window) && back <= j; ++back) {
          uint32_t op = seq[j - back];
          if (used.count(op)) continue;
          std::string n = detectors::LowerAscii(p.Str(h.name[op]));
          OpShapes s;
          bool parsed = h.input_dims[op] != kEmptyStr &&
                        ParseHostOpShapes(p.Str(h.input_dims[op]), p.Str(h.input_types[op]), &s).ok();
          if (parsed) any_shapes = true;
          if (EndsWith(n, "::cat") && parsed) CheckCat(ctx, op, s, &cat, &used);
          else if (IsCopyName(n) && parsed) {
            // A transpose/permute shortly before the copy.
            bool transposed = false;
            for (size_t b2 = 1; b2 <= 3 && back + b2 <= j; ++b2) {
              if (IsTransposeName(detectors::LowerAscii(p.Str(h.name[seq[j - back - b2]])))) transposed = true;
            }
            const TensorShape* t0 = s.tensor(0);
            if (!transposed || !t0 || t0->rank < 3 || t0->elements() < q_elems) continue;
            used.insert(op);
            TimeNs time = Time(ctx, op);
            copy.ops.push_back(op);
            copy.time_ns += time;
            double b = t0->bytes();
            if (b <= 0) copy.bytes_known = false;
            copy.bytes += 2 * b;
            copy.saved.push_back(time);
            copy.shapes.insert(std::string(p.Str(h.input_dims[op])));
          }
        }
      }
      seq.clear();
    };
    int64_t track = -1;
    for (uint32_t op : ctx.host_ops) {
      if (int64_t(h.track[op]) != track) { flush(); track = h.track[op]; }
      if (detectors::IsTopOperator(ctx, op)) seq.push_back(op);
    }
    flush();
    KernelLevel(ctx, window, &kernels);

    const double steps = std::max<size_t>(1, ctx.step_windows.size());
    auto emit = [&](Finding& f, const char* op_name, const char* what, bool tasks, const char* formula) {
      if (f.ops.empty()) return;
      Issue issue;
      issue.type = IssueType::kKvCacheLayout;
      issue.op_name = op_name[0] ? op_name : std::string(ctx.TaskLabel(f.ops[0]));
      issue.op_type = OpClassName(OpClass::kCopy);
      for (size_t i = 0; i < f.ops.size(); ++i) {
        if (tasks) detectors::AddTaskEvidence(&issue, f.ops[i], p.device_tasks.dur[f.ops[i]]);
        else {
          if (issue.evidence.host_ops.size() < kMaxEvidenceRows) issue.evidence.host_ops.push_back(f.ops[i]);
          ++issue.evidence.count;
        }
        if (f.saved[i] > 0)
          issue.savings.push_back({tasks ? SavingTargetKind::kDeviceTask : SavingTargetKind::kHostOp, f.ops[i], f.saved[i]});
      }
      issue.evidence.total_ns = f.time_ns;
      for (const std::string& s : f.shapes) detectors::AddShape(&issue, s);
      issue.affected_ns = f.time_ns;
      double per_step = f.bytes_known ? f.bytes / steps : std::nan("");
      detectors::AddMetric(&issue, "needless_bytes_per_step", per_step, "B");
      detectors::AddMetric(&issue, "needless_bytes_total", f.bytes_known ? f.bytes : std::nan(""), "B");
      detectors::AddMetric(&issue, "calls", double(f.ops.size()), "count");
      if (f.seq_dim > 0) {
        // Read by the advisor's layout picture: the layout the cache really has.
        detectors::AddMetric(&issue, "cache_seq_dim", double(f.seq_dim), "index");
        detectors::AddMetric(&issue, "cache_kv_heads", double(f.kv_heads), "count");
        detectors::AddMetric(&issue, "cache_head_dim", double(f.head_dim), "elements");
      }
      if (f.min_len >= 0) {
        detectors::AddMetric(&issue, "cache_len_min", double(f.min_len), "tokens");
        detectors::AddMetric(&issue, "cache_len_max", double(f.max_len), "tokens");
      }
      issue.detail = fmt::format("{}: {} calls feeding attention, {} per step", what, f.ops.size(),
                                 f.bytes_known ? fmt::format("{:.3g} B", per_step) : std::string("bytes unknown"));
      if (f.max_len > f.min_len && f.min_len >= 0)
        issue.detail += fmt::format("; cache grows {} -> {} (traffic quadratic in length)", f.min_len, f.max_len);
      if (f.seq_dim > 0)
        issue.detail += fmt::format("; the cache is {} ({} KV heads, head_dim {})",
                                    f.seq_dim == 2 ? "BNSD [batch, kv_heads, seq, head_dim]" : "BSND [batch, seq, kv_heads, head_dim]",
                                    f.kv_heads, f.head_dim);
      issue.method = SavingMethod::kMeasuredGap;
      issue.saving_formula = formula;
      out->issues.push_back(std::move(issue));
    };
    emit(cat, "aten::cat", "KV cache grown by cat", false,
         "sum of each cat's device time x cache / (cache + new): only the new tokens must be written");
    emit(copy, "aten::contiguous", "K/V transposed and copied", false,
         "sum of the copies' device time: a kernel reading the cache layout directly needs none");
    emit(kernels, "", "layout kernels before attention", true,
         "sum of the layout kernels' time: an attention layout matching the cache needs none");
    if (!any_attention && !ctx.host_ops.empty()) {
      out->notes.push_back("no attention operator (fused attention, SDPA, or matmul -> softmax -> matmul) among the "
                           "host operators: cat/copy patterns feeding attention not checked");
    } else if (!any_shapes && !ctx.host_ops.empty() && cat.ops.empty() && copy.ops.empty()) {
      out->notes.push_back("no Input Dims on host ops (record_shapes off?): cat/copy patterns not checked");
    }
    out->notes.push_back("Input Strides are not read: non-unit inner strides are not checked");
  }

 private:
  static TimeNs Time(const DiagnosisContext& ctx, uint32_t op) {
    TimeNs dev = ctx.graph->DeviceTotalTime(op);
    return dev > 0 ? dev : (ctx.profile->device_tasks.size() == 0 ? ctx.profile->host_ops.dur[op] : 0);
  }

  static void CheckCat(const DiagnosisContext& ctx, uint32_t op, const OpShapes& s, Finding* f,
                       std::set<uint32_t>* used) {
    const std::optional<KvCacheCat> c = ReadKvCacheCat(s);
    if (!c) return;
    used->insert(op);
    TimeNs time = Time(ctx, op);
    if (c->cache_bytes <= 0) f->bytes_known = false;
    f->ops.push_back(op);
    f->time_ns += time;
    f->bytes += 2 * c->cache_bytes;
    double share = double(c->cache_len) / double(c->cache_len + c->fresh_len);
    f->saved.push_back(static_cast<TimeNs>(double(time) * share));
    if (c->bnsd() || c->bsnd()) {
      f->seq_dim = c->grow_dim;
      f->kv_heads = c->kv_heads;
      f->head_dim = c->head_dim;
    }
    f->min_len = f->min_len < 0 ? c->cache_len : std::min(f->min_len, c->cache_len);
    f->max_len = std::max(f->max_len, c->cache_len);
    f->shapes.insert(std::string(ctx.profile->Str(ctx.profile->host_ops.input_dims[op])));
  }

  // (c): Ascend layout kernels on the stream right before attention kernels.
  static void KernelLevel(const DiagnosisContext& ctx, int window, Finding* f) {
    const DeviceTaskTable& t = ctx.profile->device_tasks;
    std::set<uint32_t> used;
    for (size_t i = 0; i < ctx.tasks.size(); ++i) {
      uint32_t att = ctx.tasks[i];
      if (detectors::TaskClass(ctx, att) != OpClass::kAttention || t.op_type(att) == kEmptyStr) continue;
      for (size_t back = 1; back <= size_t(window) && back <= i; ++back) {
        uint32_t task = ctx.tasks[i - back];
        if (t.track[task] != t.track[att]) break;
        std::string type = detectors::LowerAscii(ctx.profile->Str(t.op_type(task)));
        if (type != "transpose" && type != "transposed" && type != "transdata" && type != "concatd" &&
            type != "concat") continue;
        if (!used.insert(task).second) continue;
        OpShapes s;
        double b = 0;
        if (ParseAscendShapes(ctx.profile->Str(t.input_shapes(task)), ctx.profile->Str(t.input_types(task)), &s).ok() &&
            s.tensor(0))
          b = s.tensor(0)->bytes();
        if (b <= 0) f->bytes_known = false;
        f->ops.push_back(task);
        f->time_ns += t.dur[task];
        f->bytes += 2 * b;
        f->saved.push_back(t.dur[task]);
        f->shapes.insert(std::string(ctx.profile->Str(t.input_shapes(task))));
      }
    }
  }
};

}  // namespace

const Detector& KvCacheLayoutDetector() {
  static const KvCacheLayout detector;
  return detector;
}

}  // namespace pypto
