#include "analysis/cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace pypto {

const char* CostStatusName(CostStatus status) {
  switch (status) {
    case CostStatus::kOk: return "ok";
    case CostStatus::kNoShapes: return "no_shapes";
    case CostStatus::kBadShapes: return "bad_shapes";
    case CostStatus::kUnsupported: return "unsupported";
    case CostStatus::kNoDuration: return "no_duration";
  }
  return "unsupported";
}

const char* BoundName(Bound bound) {
  switch (bound) {
    case Bound::kUnknown: return "unknown";
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
  }
  return "unknown";
}

const char* AttentionPhaseName(AttentionPhase phase) {
  switch (phase) {
    case AttentionPhase::kUnknown: return "unknown";
    case AttentionPhase::kPrefill: return "prefill";
    case AttentionPhase::kDecode: return "decode";
  }
  return "unknown";
}

namespace {

bool Contains(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && std::tolower(static_cast<unsigned char>(hay[i + k])) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

// Sets `note` to the formatted text, unless notes are skipped (then the
// arguments are not formatted: CostNotes).
template <typename... Args>
void WriteNote(CostNotes notes, std::string& note, fmt::format_string<Args...> format, Args&&... args) {
  if (notes == CostNotes::kWrite) note = fmt::format(format, std::forward<Args>(args)...);
}

std::string Dims(const TensorShape& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i) s += (i ? "," : "") + std::to_string(t.dims[i]);
  return s + "]";
}

int64_t Prod(const TensorShape& t, int from, int to) {  // dims [from, to)
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= std::max<int64_t>(t.dims[i], 0);
  return p;
}

double SumBytes(const OpShapes& s) {
  double b = 0;
  for (int i = 0; i < s.count; ++i)
    if (s.inputs[i].present) b += s.inputs[i].bytes();
  return b;
}

bool AllDtypesKnown(const OpShapes& s) {
  for (int i = 0; i < s.count; ++i)
    if (s.inputs[i].present && s.inputs[i].dtype == DType::kUnknown) return false;
  return true;
}

// Which present tensors are the GEMM operands: aten::addmm/baddbmm/addbmm carry
// the bias first; everything else has A, B first.
void GemmOperands(std::string_view name, const OpShapes& shapes, const TensorShape** a, const TensorShape** b) {
  bool bias_first = Contains(name, "addmm") || Contains(name, "baddbmm") || Contains(name, "addbmm");
  if (bias_first && Contains(name, "aten::") && shapes.tensor_count() >= 3) {
    *a = shapes.tensor(1);
    *b = shapes.tensor(2);
  } else {
    *a = shapes.tensor(0);
    *b = shapes.tensor(1);
  }
}

}  // namespace

GemmDims InferGemmDims(std::string_view name, std::string_view sub_kind, const OpShapes& shapes, const OpShapes* outputs,
                       CostNotes notes) {
  GemmDims g;
  const TensorShape* a = nullptr;
  const TensorShape* b = nullptr;
  GemmOperands(name, shapes, &a, &b);
  if (a == nullptr || b == nullptr || a->rank < 1 || b->rank < 1) {
    g.note = "fewer than two tensor inputs";
    return g;
  }
  const bool aten = Contains(name, "aten::") || Contains(name, "::");
  const bool linear = Contains(name, "linear");
  if (aten) {
    // PyTorch semantics are exact: no transpose ambiguity.
    if (linear) {  // input [..., K], weight [N, K]
      if (b->rank != 2 || a->dim(-1) != b->dim(1)) {
        WriteNote(notes, g.note, "linear: input {} and weight {} do not share K", Dims(*a), Dims(*b));
        return g;
      }
      g.m = Prod(*a, 0, a->rank - 1);
      g.k = a->dim(-1);
      g.n = b->dim(0);
      WriteNote(notes, g.note, "linear: M = rows of input {}, K = its last dim, N = weight {} rows", Dims(*a), Dims(*b));
    } else {
      if (a->rank == 1 && b->rank == 1) {  // dot
        g.m = 1; g.n = 1; g.k = a->dim(0);
      } else if (b->rank == 1) {  // mv
        g.m = Prod(*a, 0, a->rank - 1); g.k = a->dim(-1); g.n = 1;
      } else {
        int64_t ka = a->dim(-1), kb = b->dim(-2);
        if (ka != kb) {
          WriteNote(notes, g.note, "A {} and B {}: A's last dim != B's second-to-last", Dims(*a), Dims(*b));
          return g;
        }
        g.k = ka;
        g.n = b->dim(-1);
        if (b->rank == 2) {  // [..., M, K] x [K, N]: batch folds into M
          g.m = Prod(*a, 0, a->rank - 1);
        } else {
          g.m = a->rank >= 2 ? a->dim(-2) : 1;
          int64_t ba = a->rank > 2 ? Prod(*a, 0, a->rank - 2) : 1;
          int64_t bb = Prod(*b, 0, b->rank - 2);
          g.batch = std::max(ba, bb);  // broadcast
        }
      }
      WriteNote(notes, g.note, "A {} x B {}", Dims(*a), Dims(*b));
    }
    g.ok = g.m > 0 && g.n > 0 && g.k > 0;
    return g;
  }

  // CANN MatMul*/BatchMatMul*/GroupedMatmul: transpose flags are not in the
  // profile. Outputs (when given) fix M and N; else K is the dim A and B share.
  if (sub_kind == "grouped") {
    g.note = "grouped GEMM: group sizes are a tensor, not in the shapes";
    return g;
  }
  int ra = a->rank, rb = b->rank;
  int64_t a0 = a->dim(-2), a1 = a->dim(-1), b0 = b->dim(-2), b1 = b->dim(-1);
  if (ra < 2 || rb < 2) {
    WriteNote(notes, g.note, "A {} / B {}: rank < 2", Dims(*a), Dims(*b));
    return g;
  }
  int64_t batch = std::max(ra > 2 ? Prod(*a, 0, ra - 2) : 1, rb > 2 ? Prod(*b, 0, rb - 2) : 1);
  const TensorShape* out = (outputs != nullptr) ? outputs->tensor(0) : nullptr;
  struct Cand { int64_t m, k, n; const char* how; };
  Cand cands[4] = {{a0, a1, b1, "A x B"}, {a0, a1, b0, "A x B^T"}, {a1, a0, b1, "A^T x B"}, {a1, a0, b0, "A^T x B^T"}};
  bool k_ok[4] = {a1 == b0, a1 == b1, a0 == b0, a0 == b1};
  if (out != nullptr && out->rank >= 2) {
    int64_t om = out->dim(-2), on = out->dim(-1);
    for (int i = 0; i < 4; ++i)
      if (k_ok[i] && cands[i].m == om && cands[i].n == on) {
        g.m = om; g.n = on; g.k = cands[i].k; g.batch = batch;
        g.ok = true;
        WriteNote(notes, g.note, "A {}, B {}, output {}: {} (M, N from the output, K shared by A and B)", Dims(*a), Dims(*b),
                             Dims(*out), cands[i].how);
        return g;
      }
    WriteNote(notes, g.note, "A {}, B {}, output {}: no transpose combination gives the output with a shared K",
                         Dims(*a), Dims(*b), Dims(*out));
    return g;
  }
  int first = -1, n_ok = 0;
  for (int i = 0; i < 4; ++i)
    if (k_ok[i]) { if (first < 0) first = i; ++n_ok; }
  if (first < 0) {
    WriteNote(notes, g.note, "A {} and B {} share no dimension: K cannot be inferred", Dims(*a), Dims(*b));
    return g;
  }
  g.m = cands[first].m; g.k = cands[first].k; g.n = cands[first].n; g.batch = batch;
  g.ok = true;
  WriteNote(notes, g.note, "A {}, B {}: {}{}", Dims(*a), Dims(*b), cands[first].how,
                       n_ok > 1 ? " (transpose flags unknown; several orientations fit, FLOPs may differ)" : "");
  // FLOPs depend on the orientation only through M·N·K when candidates differ.
  if (n_ok > 1) {
    for (int i = 0; i < 4; ++i)
      if (k_ok[i] && cands[i].m * cands[i].n * cands[i].k != g.m * g.n * g.k) {
        g.note += "; alternatives differ in M·N·K";
        break;
      }
  }
  return g;
}

namespace {

struct AttnDims {
  int64_t b = 0, h = 0, sq = 0, skv = 0, d = 0, hkv = 0;
  bool ok = false;
  bool paged = false;  // KV read from a block cache: its tensors' sizes are the whole cache, not the read
  std::string note;
};

// Paged (block-table) decode attention: vLLM paged_attention_v1/v2 and ROCm
// paged_attention take query [num_seqs, heads, head_dim], a key cache
// [num_blocks, kv_heads, head_dim/x, block_size, x], a value cache
// [num_blocks, kv_heads, head_dim, block_size] and block_tables
// [num_seqs, max_blocks]; the flash / CANN layouts keep the cache as
// [num_blocks, block_size, kv_heads, head_dim] (or BnNBsD [num_blocks,
// kv_heads, block_size, head_dim]). The live lengths (seq_lens, context
// lengths) are values, not shapes: the KV length read is taken as its upper
// bound max_blocks x block_size, so the bytes (and the roofline floor) are
// never understated.
AttnDims InferPagedAttention(const OpShapes& s, CostNotes notes) {
  AttnDims r;
  r.paged = true;
  const TensorShape* q = nullptr;
  const TensorShape* cache = nullptr;
  const TensorShape* table = nullptr;
  for (int i = 0; i < s.tensor_count(); ++i) {
    const TensorShape* t = s.tensor(i);
    if (t == nullptr) continue;
    if (q == nullptr && t->rank == 3) { q = t; continue; }
    // Per-sequence scratch of paged_attention_v2 (tmp_out [seqs, heads, partitions, D]) is not the cache.
    const bool per_sequence = q != nullptr && t->dim(0) == q->dim(0) && t->dim(1) == q->dim(1);
    if (q != nullptr && cache == nullptr && t->rank >= 4 && !per_sequence) { cache = t; continue; }
    if (q != nullptr && cache != nullptr && table == nullptr && t->rank == 2 && t->dim(0) == q->dim(0)) table = t;
  }
  if (q == nullptr || cache == nullptr || table == nullptr) {
    r.note = "paged attention: query [seqs, heads, head_dim], a block cache and a block table [seqs, blocks] not all "
             "in the shapes";
    return r;
  }
  r.b = q->dim(0);
  r.h = q->dim(1);
  r.d = q->dim(2);
  r.sq = 1;
  int64_t block_size = 0;
  if (cache->rank == 5) {  // vLLM key cache [blocks, kv_heads, head_dim/x, block_size, x]
    r.hkv = cache->dim(1);
    block_size = cache->dim(3);
  } else if (cache->dim(3) == r.d) {  // [blocks, block_size, kv_heads, D] or [blocks, kv_heads, block_size, D]
    const int64_t a = cache->dim(1), b = cache->dim(2);
    const bool a_heads = a > 0 && r.h % a == 0, b_heads = b > 0 && r.h % b == 0;
    // The KV head count divides the query head count (GQA); when both do, block sizes (16..128) are the larger.
    const bool kv_heads_first = a_heads && (!b_heads || a < b);
    r.hkv = kv_heads_first ? a : b;
    block_size = kv_heads_first ? b : a;
  } else if (cache->dim(2) == r.d) {  // vLLM value cache [blocks, kv_heads, head_dim, block_size]
    r.hkv = cache->dim(1);
    block_size = cache->dim(3);
  }
  if (block_size <= 0 || r.hkv <= 0) {
    WriteNote(notes, r.note, "paged attention: cache {} does not fit query {}", Dims(*cache), Dims(*q));
    return r;
  }
  r.skv = table->dim(1) * block_size;
  WriteNote(notes, r.note, "paged: query {}, cache {}, block table {}: S_kv <= {} blocks x {} = {} (seq_lens are values: "
                       "an upper bound)", Dims(*q), Dims(*cache), Dims(*table), table->dim(1), block_size, r.skv);
  r.ok = r.b > 0 && r.h > 0 && r.d > 0 && r.skv > 0;
  return r;
}

AttnDims InferAttention(std::string_view name, std::string_view sub_kind, const CostInput& in, CostNotes notes) {
  AttnDims r;
  const OpShapes& s = in.shapes;
  const TensorShape* q = s.tensor(0);
  const TensorShape* k = s.tensor(1);
  if (q == nullptr || k == nullptr) {
    r.note = "attention: query/key shapes missing";
    return r;
  }
  if (sub_kind == "paged" || Contains(name, "paged")) return InferPagedAttention(s, notes);
  const bool aten = Contains(name, "aten::");
  if (aten) {
    if (q->rank != 4 || k->rank != 4) {
      WriteNote(notes, r.note, "attention: query {} / key {} are not 4-D", Dims(*q), Dims(*k));
      return r;
    }
    // _flash_attention_forward / _efficient_attention_forward take [B, S, H, D];
    // SDPA ops take [B, H, S, D].
    bool bshd = Contains(name, "_flash_attention_forward") || Contains(name, "_efficient_attention_forward");
    r.b = q->dim(0);
    r.d = q->dim(3);
    r.sq = bshd ? q->dim(1) : q->dim(2);
    r.h = bshd ? q->dim(2) : q->dim(1);
    r.skv = bshd ? k->dim(1) : k->dim(2);
    r.hkv = bshd ? k->dim(2) : k->dim(1);
    WriteNote(notes, r.note, "query {} key {} ({} layout)", Dims(*q), Dims(*k), bshd ? "BSND" : "BNSD");
    r.ok = r.b > 0 && r.h > 0 && r.sq > 0 && r.skv > 0 && r.d > 0;
    return r;
  }
  // CANN FlashAttentionScore / PromptFlashAttention / IncreFlashAttention / FIA.
  // Output 0 of FlashAttentionScore is softmax_max [B, N, S_q, 8]: it fixes B, N, S_q.
  const TensorShape* smax = (in.has_outputs && in.outputs.tensor(0) && in.outputs.tensor(0)->rank == 4 &&
                             in.outputs.tensor(0)->dim(3) == 8)
                                ? in.outputs.tensor(0)
                                : nullptr;
  if (q->rank == 3) {
    // BSH or SBH (H = N·D).
    int64_t hq = q->dim(2), hk = k->dim(2);
    if (smax != nullptr) {
      int64_t B = smax->dim(0), N = smax->dim(1), S = smax->dim(2);
      // B == S (decode with batch 1) fits both layouts for the query: the key decides.
      bool bsh = q->dim(0) == B && q->dim(1) == S && k->dim(0) == B;
      bool sbh = q->dim(1) == B && q->dim(0) == S && k->dim(1) == B;
      if (bsh && (!sbh || k->dim(1) != B)) { r.sq = S; r.b = B; r.skv = k->dim(1); r.note = "BSH"; }
      else if (sbh) { r.sq = S; r.b = B; r.skv = k->dim(0); r.note = "SBH"; }
      else {
        WriteNote(notes, r.note, "query {} does not fit softmax_max {}", Dims(*q), Dims(*smax));
        return r;
      }
      r.h = N;
      r.d = N > 0 ? hq / N : 0;
      r.hkv = r.d > 0 ? hk / r.d : 0;
      WriteNote(notes, r.note, "query {} key {} layout {} (B, N, S_q from softmax_max {})", Dims(*q), Dims(*k), r.note,
                           Dims(*smax));
    } else {
      // The attention mask ([S_q, S_kv], [1|B, 1|N, S_q, S_kv]) fixes the
      // sequence length: a query [8192, 2, 640] with a [1, 1, 8192, 8192]
      // mask is SBH (S = 8192, B = 2), not BSH with B = 8192 and S = 2 (read
      // that way, a 49 TFLOP/s FlashAttentionScore looked memory-bound).
      int64_t mask_sq = 0;
      for (int i = 3; i < s.tensor_count(); ++i) {
        const TensorShape* m = s.tensor(i);
        if (m != nullptr && m->rank >= 2 && m->dim(m->rank - 1) > 1 && m->dim(m->rank - 2) > 1) {
          mask_sq = m->dim(m->rank - 2);
          break;
        }
      }
      const bool sbh = mask_sq > 0 && q->dim(0) == mask_sq && q->dim(1) != mask_sq;
      bool decode = sub_kind == "decode";
      if (sbh) {
        r.b = q->dim(1); r.sq = q->dim(0); r.skv = k->dim(0);
      } else {
        // Else the torch_npu default BSH (input_layout="BSH").
        r.b = q->dim(0); r.sq = decode ? 1 : q->dim(1); r.skv = k->dim(1);
      }
      // Heads unknown, but FLOPs need only N·D = H.
      r.h = 1; r.d = hq; r.hkv = 1;
      if (notes == CostNotes::kWrite)
        r.note = sbh ? fmt::format("query {} key {} read as SBH (the attention mask gives S = {})", Dims(*q), Dims(*k),
                                 mask_sq)
                   : fmt::format("query {} key {} read as BSH (torch_npu default layout; no softmax_max output or "
                                 "attention mask to check)", Dims(*q), Dims(*k));
    }
  } else if (q->rank == 4) {
    // BNSD (default for 4-D) or BSND when the output says N is dim 2.
    bool bsnd = smax != nullptr && q->dim(2) == smax->dim(1) && q->dim(1) == smax->dim(2);
    r.b = q->dim(0);
    r.h = bsnd ? q->dim(2) : q->dim(1);
    r.sq = bsnd ? q->dim(1) : q->dim(2);
    r.d = q->dim(3);
    r.hkv = bsnd ? k->dim(2) : k->dim(1);
    r.skv = bsnd ? k->dim(1) : k->dim(2);
    WriteNote(notes, r.note, "query {} key {} read as {}", Dims(*q), Dims(*k), bsnd ? "BSND" : "BNSD");
  } else {
    WriteNote(notes, r.note, "attention: query {} has rank {}", Dims(*q), q->rank);
    return r;
  }
  r.ok = r.b > 0 && r.h > 0 && r.sq > 0 && r.skv > 0 && r.d > 0;
  return r;
}

}  // namespace

OpCost EstimateCost(const CostInput& in, const HardwareSpec& hw, CostNotes notes) {
  OpCost c;
  c.cls = in.cls;
  c.sub_kind = in.sub_kind;
  c.unit = (in.cls == OpClass::kMatmul || in.cls == OpClass::kAttention) ? ComputeUnit::kMatrix : ComputeUnit::kVector;
  c.measured_ns = in.measured_ns;
  c.dtype = in.shapes.first_dtype();
  auto fail = [&](CostStatus st, std::string note) {
    c.status = st;
    if (notes == CostNotes::kWrite) c.note = std::move(note);
    return c;
  };
  switch (in.cls) {
    case OpClass::kOther: case OpClass::kCommunication: case OpClass::kSampling:
      return fail(CostStatus::kUnsupported,
                  notes == CostNotes::kWrite ? fmt::format("no cost model for class {}", OpClassName(in.cls)) : "");
    default: break;
  }
  if (in.cls == OpClass::kMatmul && in.sub_kind == "conv")
    return fail(CostStatus::kUnsupported, "no cost model for convolutions");
  if (in.cls == OpClass::kCopy && (in.sub_kind == "view" || in.sub_kind == "alloc"))
    return fail(CostStatus::kUnsupported, "view/allocation op: no data moved by itself");
  if (!in.has_shapes || in.shapes.tensor_count() == 0)
    return fail(CostStatus::kNoShapes, in.shape_source.empty() ? "no input shapes" : in.shape_source);
  const bool know_dtypes = AllDtypesKnown(in.shapes);
  const double s = DTypeBytes(c.dtype);

  const TensorShape* x = in.shapes.tensor(0);
  const TensorShape* out0 = in.has_outputs ? in.outputs.tensor(0) : nullptr;
  double out_bytes = in.has_outputs ? SumBytes(in.outputs) : kNaN;
  std::string how;
  switch (in.cls) {
    case OpClass::kMatmul: {
      if (in.sub_kind == "splitk_reduce") return fail(CostStatus::kUnsupported, "split-K reduction: part of a GEMM");
      GemmDims g = InferGemmDims(in.name, in.sub_kind, in.shapes, in.has_outputs ? &in.outputs : nullptr, notes);
      if (!g.ok) return fail(CostStatus::kBadShapes, notes == CostNotes::kWrite ? "GEMM: " + g.note : "");
      c.batch = g.batch; c.m = g.m; c.n = g.n; c.k = g.k;
      c.flops = 2.0 * g.batch * g.m * g.n * g.k;
      c.bytes = s * g.batch * (static_cast<double>(g.m) * g.k + static_cast<double>(g.k) * g.n + static_cast<double>(g.m) * g.n);
      WriteNote(notes, how, "GEMM 2·B·M·N·K with B={} M={} N={} K={} ({}); bytes s·B·(MK+KN+MN) lower bound", g.batch, g.m,
                        g.n, g.k, g.note);
      break;
    }
    case OpClass::kAttention: {
      if (in.sub_kind == "qk_bmm" || in.sub_kind == "pv_bmm") {
        GemmDims g = InferGemmDims(in.name, in.sub_kind, in.shapes, in.has_outputs ? &in.outputs : nullptr, notes);
        if (!g.ok)
          return fail(CostStatus::kBadShapes, notes == CostNotes::kWrite ? "unfused attention bmm: " + g.note : "");
        c.batch = g.batch; c.m = g.m; c.n = g.n; c.k = g.k;
        c.flops = 2.0 * g.batch * g.m * g.n * g.k;
        c.bytes = s * g.batch * (static_cast<double>(g.m) * g.k + static_cast<double>(g.k) * g.n + static_cast<double>(g.m) * g.n);
        WriteNote(notes, how, "unfused attention {}: GEMM B={} M={} N={} K={}", in.sub_kind, g.batch, g.m, g.n, g.k);
        break;
      }
      if (in.sub_kind == "scores_softmax") {
        double n = static_cast<double>(x->elements());
        c.m = x->elements();
        c.flops = kSoftmaxFlopsPerElement * n;
        c.bytes = 2.0 * x->bytes();
        WriteNote(notes, how, "scores softmax {} elements x {} FLOP", c.m, kSoftmaxFlopsPerElement);
        break;
      }
      if (in.sub_kind == "kv_materialize") {
        // A copy of K or V inside the unfused attention matmul: costed as the copy it is.
        c.flops = 0;
        double read = x->bytes();
        double written = !std::isnan(out_bytes) ? out_bytes : read;
        c.m = x->elements();
        c.bytes = read + written;
        WriteNote(notes, how, "K/V materialised for the unfused attention: read {:.0f} B + write {:.0f} B", read, written);
        break;
      }
      if (in.sub_kind == "flash_grad")
        return fail(CostStatus::kUnsupported, "attention backward: no cost model (inference tool)");
      AttnDims a = InferAttention(in.name, in.sub_kind, in, notes);
      if (!a.ok) return fail(CostStatus::kBadShapes, a.note);
      c.batch = a.b; c.heads = a.h; c.s_q = a.sq; c.s_kv = a.skv; c.head_dim = a.d;
      c.phase = a.sq == 1 ? AttentionPhase::kDecode : AttentionPhase::kPrefill;
      c.flops = 4.0 * a.b * a.h * static_cast<double>(a.sq) * a.skv * a.d;
      double hkv = a.hkv > 0 ? a.hkv : a.h;
      double q_bytes = s * a.b * a.h * static_cast<double>(a.sq) * a.d;
      double kv_bytes = 2.0 * s * a.b * hkv * static_cast<double>(a.skv) * a.d;
      // K and V as given: their element counts are the bytes read whatever the
      // head split (a 3-D BSH key without a head count would otherwise be
      // taken with the query's hidden size: GQA keys are smaller).
      const TensorShape* key = in.shapes.tensor(1);
      const TensorShape* value = in.shapes.tensor(2);
      if (!a.paged && key && value && key->rank >= 3 && value->rank >= 3 && key->elements() > 0 &&
          value->elements() > 0) {
        kv_bytes = s * static_cast<double>(key->elements() + value->elements());
      }
      c.bytes = 2.0 * q_bytes + kv_bytes;  // Q read + O written + K, V read
      WriteNote(notes, how, "attention 4·B·H·S_q·S_kv·D with B={} H={} S_q={} S_kv={} D={} ({}; causal masking not "
                        "subtracted); bytes Q+O+K+V{}",
                        a.b, a.h, a.sq, a.skv, a.d, a.note, c.phase == AttentionPhase::kDecode ? " (KV cache read)" : "");
      break;
    }
    case OpClass::kNorm: case OpClass::kRope: case OpClass::kActivation: case OpClass::kElementwise:
    case OpClass::kSoftmax: case OpClass::kReduction: {
      double per = in.cls == OpClass::kNorm        ? kNormFlopsPerElement
                   : in.cls == OpClass::kRope      ? kRopeFlopsPerElement
                   : in.cls == OpClass::kSoftmax   ? kSoftmaxFlopsPerElement
                   : in.cls == OpClass::kReduction ? kReductionFlopsPerElement
                   : in.sub_kind == "swiglu"       ? kSwigluFlopsPerElement
                                                   : kElementwiseFlopsPerElement;
      // Elements: the largest input (broadcast operands are smaller); SwiGLU counts output elements.
      int64_t n = 0;
      for (int i = 0; i < in.shapes.count; ++i)
        if (in.shapes.inputs[i].present) n = std::max(n, in.shapes.inputs[i].elements());
      if (in.sub_kind == "swiglu") n = out0 != nullptr ? out0->elements() : n / 2;
      c.m = n;
      c.flops = per * static_cast<double>(n);
      double inputs = SumBytes(in.shapes);
      double written = !std::isnan(out_bytes) ? out_bytes
                       : in.cls == OpClass::kReduction ? 0.0
                       : in.sub_kind == "swiglu"        ? x->bytes() / 2
                                                        : x->bytes();
      c.bytes = inputs + written;
      WriteNote(notes, how, "{} elements x {} FLOP/element; bytes = inputs {:.0f} + outputs {:.0f}{}", n, per, inputs, written,
                        std::isnan(out_bytes) ? " (output assumed like input 0)" : "");
      break;
    }
    case OpClass::kCopy: case OpClass::kEmbedding: {
      c.flops = 0;
      if (in.cls == OpClass::kEmbedding) {
        const TensorShape* w = in.shapes.tensor(0);
        const TensorShape* idx = in.shapes.tensor(1);
        if (w == nullptr || idx == nullptr || w->rank != 2) return fail(CostStatus::kBadShapes, "embedding: weight/indices shapes");
        double row = static_cast<double>(w->dim(1)) * DTypeBytes(w->dtype);
        c.m = idx->elements();
        c.bytes = 2.0 * row * static_cast<double>(idx->elements()) + idx->bytes();
        WriteNote(notes, how, "embedding: {} rows of {:.0f} B read and written", c.m, row);
      } else {
        double inputs = (in.sub_kind == "cat" || in.shapes.tensor_count() == 1) ? SumBytes(in.shapes) : x->bytes();
        double written = !std::isnan(out_bytes) ? out_bytes : inputs;
        c.m = x->elements();
        c.bytes = inputs + written;
        WriteNote(notes, how, "copy/layout: read {:.0f} B + write {:.0f} B{}", inputs, written,
                          std::isnan(out_bytes) ? " (write assumed = read)" : "");
      }
      break;
    }
    default:
      return fail(CostStatus::kUnsupported, "no cost model");
  }
  if (!know_dtypes || s <= 0)
    return fail(CostStatus::kBadShapes,
                notes == CostNotes::kWrite ? "input dtypes unknown: bytes not computable (" + how + ")" : "");
  c.intensity = c.bytes > 0 ? c.flops / c.bytes : kNaN;

  // Roofline.
  const PeakFlops* used = nullptr;
  double peak = c.flops > 0 ? hw.PeakForOp(c.unit, c.dtype, &used) : 0;
  double bw = hw.memory_bandwidth.value;
  if (used != nullptr) {
    c.peak_flops = peak;
    if (notes == CostNotes::kWrite) {
      c.peak_note = fmt::format("{} {} {} {:.4g} TFLOP/s{} ({})", hw.id, ComputeUnitName(used->unit),
                                DTypeName(used->dtype), peak / 1e12, used->marks.empty() ? "" : " [" + used->marks + "]",
                                used->source);
      if (used->unit != c.unit || used->dtype != c.dtype)
        c.peak_note += fmt::format("; fallback for {} {}", ComputeUnitName(c.unit), DTypeName(c.dtype));
    }
  }
  if (bw > 0) c.bandwidth = bw;
  double t_c = (c.flops > 0 && peak > 0) ? c.flops / peak : (c.flops == 0 ? 0.0 : kNaN);
  double t_m = bw > 0 ? c.bytes / bw : kNaN;
  if (!std::isnan(t_c) && !std::isnan(t_m)) {
    c.roofline_ns = std::max(t_c, t_m) * 1e9;
    c.bound = t_c >= t_m ? Bound::kCompute : Bound::kMemory;
  } else {
    if (notes == CostNotes::kWrite)
      how += "; roofline not computed: " + std::string(std::isnan(t_m) ? "bandwidth unknown" : "peak unknown") + " for " +
             hw.id;
  }
  c.note = how;
  if (in.measured_ns <= 0) {
    c.status = CostStatus::kNoDuration;
    return c;
  }
  c.status = CostStatus::kOk;
  double sec = static_cast<double>(in.measured_ns) * 1e-9;
  c.achieved_flops = c.flops / sec;
  c.achieved_bandwidth = c.bytes / sec;
  if (!std::isnan(c.peak_flops) && c.peak_flops > 0) c.compute_efficiency = c.achieved_flops / c.peak_flops;
  if (!std::isnan(c.bandwidth) && c.bandwidth > 0) c.bandwidth_efficiency = c.achieved_bandwidth / c.bandwidth;
  if (!std::isnan(c.roofline_ns)) c.efficiency = c.roofline_ns / static_cast<double>(in.measured_ns);
  return c;
}

// ------------------------------------------------------------------ profile helpers

namespace {

bool IsBusyTask(DeviceTaskKind k) { return k != DeviceTaskKind::kAnnotation && k != DeviceTaskKind::kSync; }

// The operator whose shapes a task of class `task_cls` may take: none (op -1)
// without an attributed operator. Operator shapes describe the operator's
// work: they are the task's only when the task does that work (same class),
// or is the operator's only busy kernel (same_work).
struct TaskOperator {
  int32_t op = -1;
  OpClass cls = OpClass::kOther;
  size_t busy_tasks = 0;
  bool same_work = false;
};
TaskOperator OperatorOfTask(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
                            uint32_t task, OpClass task_cls) {
  TaskOperator to;
  const int32_t op = graph.OperatorOf(task);
  if (op < 0 || profile.host_ops.kind[op] != HostOpKind::kOperator) return to;
  to.op = op;
  for (uint32_t k : graph.TasksOfOp(static_cast<uint32_t>(op))) to.busy_tasks += IsBusyTask(profile.device_tasks.kind[k]) ? 1 : 0;
  to.cls = static_cast<size_t>(op) < classes.host_class.size() ? classes.host_class[op] : OpClass::kOther;
  to.same_work = to.cls == task_cls || to.busy_tasks <= 1;
  return to;
}

void FillFromHostOp(const Profile& p, uint32_t op, CostInput* in, CostNotes notes) {
  StrId dims = p.host_ops.input_dims[op];
  if (dims == kEmptyStr) {
    WriteNote(notes, in->shape_source, "operator {} has no Input Dims (record_shapes off?)", p.Str(p.host_ops.name[op]));
    return;
  }
  Status st = ParseHostOpShapes(p.Str(dims), p.Str(p.host_ops.input_types[op]), &in->shapes);
  if (!st.ok()) {
    in->shape_source = st.message();
    return;
  }
  in->has_shapes = true;
  WriteNote(notes, in->shape_source, "operator {} Input Dims", p.Str(p.host_ops.name[op]));
}

}  // namespace

CostInput CostInputForTask(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
                           uint32_t task, CostNotes notes) {
  CostInput in;
  const DeviceTaskTable& t = profile.device_tasks;
  in.cls = task < classes.task_class.size() ? classes.task_class[task] : OpClass::kOther;
  in.sub_kind = task < classes.task_sub_kind.size() ? classes.task_sub_kind[task] : std::string_view();
  in.measured_ns = t.dur[task];
  StrId op_type = t.op_type(task);
  in.name = profile.Str(op_type != kEmptyStr ? op_type : t.name[task]);
  StrId shapes = t.input_shapes(task);
  if (shapes != kEmptyStr) {
    Status st = ParseAscendShapes(profile.Str(shapes), profile.Str(t.input_types(task)), &in.shapes);
    if (st.ok()) {
      in.has_shapes = in.shapes.tensor_count() > 0;
      // Tiled storage formats (FRACTAL_NZ …) give the stored shape: decoded to the logical one.
      const int decoded = DecodeStorageFormats(profile.Str(t.input_formats(task)), &in.shapes);
      in.shape_source = !in.has_shapes ? "task Input Shapes list no tensor (scalars / empty)"
                        : decoded > 0  ? "task Input Shapes (tiled Input Formats decoded)"
                                       : "task Input Shapes";
      StrId outs = t.output_shapes(task);
      if (outs != kEmptyStr && ParseAscendShapes(profile.Str(outs), profile.Str(t.output_types(task)), &in.outputs).ok()) {
        in.has_outputs = in.outputs.tensor_count() > 0;
        DecodeStorageFormats(profile.Str(t.output_formats(task)), &in.outputs);
      }
    } else {
      in.shape_source = st.message();
    }
    if (in.has_shapes) {
      in.shape_origin = CostInput::ShapeOrigin::kTaskDetail;
      return in;
    }
  }
  const TaskOperator source = OperatorOfTask(profile, graph, classes, task, in.cls);
  const int32_t op = source.op;
  const OpClass op_cls = source.cls;
  if (op < 0) {
    if (in.shape_source.empty())
      in.shape_source = graph.IsGraphLaunched(task) ? "graph-replayed kernel: no operator, no shapes"
                                                    : "task has no shapes and no operator";
    return in;
  }
  if (!source.same_work) {
    WriteNote(notes, in.shape_source, "operator {} has {} kernels and this one ({}) does not do its {} work: its shapes "
                                  "are not this kernel's",
                                  profile.Str(profile.host_ops.name[op]), source.busy_tasks, OpClassName(in.cls),
                                  OpClassName(op_cls));
    return in;
  }
  // The operator's name decides the GEMM operand order (aten::addmm) and attention layout.
  in.name = profile.Str(profile.host_ops.name[op]);
  if (op_cls == in.cls && static_cast<size_t>(op) < classes.host_sub_kind.size() && !classes.host_sub_kind[op].empty())
    in.sub_kind = classes.host_sub_kind[op];
  FillFromHostOp(profile, static_cast<uint32_t>(op), &in, notes);
  in.shape_origin = CostInput::ShapeOrigin::kOperator;
  return in;
}

CostInput CostInputForHostOp(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
                             uint32_t host_op, const HardwareSpec& hw) {
  CostInput in;
  in.cls = host_op < classes.host_class.size() ? classes.host_class[host_op] : OpClass::kOther;
  in.sub_kind = host_op < classes.host_sub_kind.size() ? classes.host_sub_kind[host_op] : std::string_view();
  in.name = profile.Str(profile.host_ops.name[host_op]);
  TimeNs dev = graph.DeviceTotalTime(host_op);
  if (dev > 0) in.measured_ns = dev;
  else if (hw.family == HardwareFamily::kCpu) in.measured_ns = profile.host_ops.dur[host_op];
  FillFromHostOp(profile, host_op, &in, CostNotes::kWrite);
  return in;
}

OpCost EstimateTaskCost(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
                        const HardwareSpec& hw, uint32_t task) {
  return EstimateCost(CostInputForTask(profile, graph, classes, task), hw);
}

OpCost EstimateHostOpCost(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
                          const HardwareSpec& hw, uint32_t host_op) {
  return EstimateCost(CostInputForHostOp(profile, graph, classes, host_op, hw), hw);
}

std::vector<ClassCostSummary> SummarizeCosts(const Profile& profile, const OperatorCallGraph& graph,
                                             const OpClassification& classes, const HardwareSpec& hw) {
  std::vector<ClassCostSummary> out(kOpClassCount);
  for (size_t i = 0; i < kOpClassCount; ++i) out[i].cls = static_cast<OpClass>(i);
  const DeviceTaskTable& t = profile.device_tasks;
  for (uint32_t k = 0; k < t.size(); ++k) {
    if (!IsBusyTask(t.kind[k])) continue;
    ClassCostSummary& s = out[static_cast<size_t>(classes.task_class[k])];
    ++s.tasks;
    s.measured_ns += t.dur[k];
    OpCost c = EstimateTaskCost(profile, graph, classes, hw, k);
    if (c.status != CostStatus::kOk || std::isnan(c.roofline_ns)) continue;
    ++s.tasks_with_costs;
    s.measured_with_costs_ns += t.dur[k];
    s.flops += c.flops;
    s.bytes += c.bytes;
    s.roofline_ns += c.roofline_ns;
  }
  for (ClassCostSummary& s : out)
    if (s.measured_with_costs_ns > 0) s.efficiency = s.roofline_ns / static_cast<double>(s.measured_with_costs_ns);
  out.erase(std::remove_if(out.begin(), out.end(), [](const ClassCostSummary& s) { return s.tasks == 0; }), out.end());
  return out;
}


// ------------------------------------------------------------ TaskCostTable
namespace {
bool SameNumber(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The fields of a shared set (TaskCostTable::SharedFigures), compared on
// either struct: sub_kind by identity, NaN equal to NaN.
template <class A, class B>
bool SameShapePart(const A& a, const B& b) {
  return a.status == b.status && a.cls == b.cls && a.sub_kind.data() == b.sub_kind.data() &&
         a.sub_kind.size() == b.sub_kind.size() && a.dtype == b.dtype && a.unit == b.unit && a.batch == b.batch &&
         a.m == b.m && a.n == b.n && a.k == b.k && a.heads == b.heads && a.s_q == b.s_q && a.s_kv == b.s_kv &&
         a.head_dim == b.head_dim && a.phase == b.phase && SameNumber(a.flops, b.flops) &&
         SameNumber(a.bytes, b.bytes) && SameNumber(a.intensity, b.intensity) &&
         SameNumber(a.peak_flops, b.peak_flops) && SameNumber(a.bandwidth, b.bandwidth) &&
         SameNumber(a.roofline_ns, b.roofline_ns) && a.bound == b.bound;
}

// Every field but measured_ns.
bool SameFiguresButTime(const CostFigures& a, const CostFigures& b) {
  return SameShapePart(a, b) && SameNumber(a.achieved_flops, b.achieved_flops) &&
         SameNumber(a.achieved_bandwidth, b.achieved_bandwidth) && SameNumber(a.compute_efficiency, b.compute_efficiency) &&
         SameNumber(a.bandwidth_efficiency, b.bandwidth_efficiency) && SameNumber(a.efficiency, b.efficiency);
}

// The figures without what the measured time makes of them: the key of a shared set.
CostFigures ShapeFigures(CostFigures f) {
  f.measured_ns = -1;
  if (f.has_costs()) f.status = CostStatus::kNoDuration;
  f.achieved_flops = f.achieved_bandwidth = f.compute_efficiency = f.bandwidth_efficiency = f.efficiency = kNaN;
  return f;
}

// A shared set's figures for a task measured at `measured_ns`, computed as
// EstimateCost computes them.
CostFigures WithMeasuredTime(CostFigures f, TimeNs measured_ns) {
  f.measured_ns = measured_ns;
  if (!f.has_costs() || measured_ns <= 0) return f;
  f.status = CostStatus::kOk;
  const double sec = static_cast<double>(measured_ns) * 1e-9;
  f.achieved_flops = f.flops / sec;
  f.achieved_bandwidth = f.bytes / sec;
  if (!std::isnan(f.peak_flops) && f.peak_flops > 0) f.compute_efficiency = f.achieved_flops / f.peak_flops;
  if (!std::isnan(f.bandwidth) && f.bandwidth > 0) f.bandwidth_efficiency = f.achieved_bandwidth / f.bandwidth;
  if (!std::isnan(f.roofline_ns)) f.efficiency = f.roofline_ns / static_cast<double>(measured_ns);
  return f;
}

size_t HashNumber(double v) { return std::isnan(v) ? 0x7ff8u : std::hash<double>{}(v); }
}  // namespace

namespace {
TaskCostTable::SharedFigures ToShared(const CostFigures& f) {
  return {.status = f.status, .cls = f.cls, .dtype = f.dtype, .unit = f.unit, .phase = f.phase, .bound = f.bound,
          .sub_kind = f.sub_kind, .batch = f.batch, .m = f.m, .n = f.n, .k = f.k, .heads = f.heads, .s_q = f.s_q,
          .s_kv = f.s_kv, .head_dim = f.head_dim, .flops = f.flops, .bytes = f.bytes, .intensity = f.intensity,
          .peak_flops = f.peak_flops, .bandwidth = f.bandwidth, .roofline_ns = f.roofline_ns};
}

// The figures of ShapeFigures back: the measured part unset.
CostFigures FromShared(const TaskCostTable::SharedFigures& s) {
  return {.status = s.status, .cls = s.cls, .sub_kind = s.sub_kind, .dtype = s.dtype, .unit = s.unit,
          .batch = s.batch, .m = s.m, .n = s.n, .k = s.k, .heads = s.heads, .s_q = s.s_q, .s_kv = s.s_kv,
          .head_dim = s.head_dim, .phase = s.phase, .flops = s.flops, .bytes = s.bytes, .intensity = s.intensity,
          .peak_flops = s.peak_flops, .bandwidth = s.bandwidth, .roofline_ns = s.roofline_ns, .bound = s.bound};
}
}  // namespace

size_t TaskCostTable::SetRefHash::operator()(const SharedFigures& f) const {
  size_t h = 0;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<size_t>(f.status));
  mix(static_cast<size_t>(f.cls));
  mix(std::hash<const void*>{}(f.sub_kind.data()));
  mix(static_cast<size_t>(f.dtype));
  for (int64_t v : {f.batch, f.m, f.n, f.k, f.heads, f.s_q, f.s_kv, f.head_dim}) mix(std::hash<int64_t>{}(v));
  for (double v : {f.flops, f.bytes, f.peak_flops, f.bandwidth, f.roofline_ns}) mix(HashNumber(v));
  return h;
}

bool TaskCostTable::SetRefEqual::operator()(const SharedFigures& a, const SharedFigures& b) const {
  return SameShapePart(a, b);
}

void TaskCostTable::Reset(size_t tasks, const std::vector<TimeNs>* durations) {
  durations_ = durations;
  slot_.assign(tasks, 0);
  whole_.clear();
  shared_index_.clear();
  shared_chunks_.clear();
  shared_count_ = 0;
}

TaskCostTable::SetRef TaskCostTable::SharedSet(const SharedFigures& key) {
  std::lock_guard<std::mutex> lock(shared_mutex_);
  if (auto it = shared_index_.find(key); it != shared_index_.end()) return *it;
  if (shared_count_ % kSharedChunk == 0) shared_chunks_.push_back(std::make_unique_for_overwrite<SharedFigures[]>(kSharedChunk));
  SharedFigures& kept = shared_chunks_.back()[shared_count_ % kSharedChunk];
  kept = key;
  const SetRef added{&kept, static_cast<int32_t>(shared_count_++)};
  shared_index_.insert(added);
  return added;
}

void TaskCostTable::Batch::Add(uint32_t task, CostFigures figures) {
  const bool time_is_duration = task < table_->durations_->size() && figures.measured_ns == (*table_->durations_)[task];
  int32_t set = -1;
  if (time_is_duration) {
    const CostFigures shape = ShapeFigures(figures);
    // Shared only when reading the set back gives these very figures.
    if (SameFiguresButTime(WithMeasuredTime(shape, figures.measured_ns), figures)) {
      const SharedFigures key = ToShared(shape);
      auto it = seen_.find(key);
      if (it == seen_.end()) it = seen_.insert(table_->SharedSet(key)).first;
      set = it->id;
    }
  }
  if (set >= 0) shared_.emplace_back(task, static_cast<uint32_t>(set));
  else whole_.emplace_back(task, std::move(figures));
}

void TaskCostTable::Merge(Batch&& batch) {
  for (const auto& [task, set] : batch.shared_) slot_[task] = set | kShared;
  for (auto& [task, figures] : batch.whole_) {
    whole_.push_back(std::move(figures));
    slot_[task] = static_cast<uint32_t>(whole_.size());
  }
  batch.shared_.clear();
  batch.whole_.clear();
}

CostFigures TaskCostTable::operator[](size_t task) const {
  const uint32_t slot = slot_[task];
  if (slot == 0) return CostFigures{};
  if ((slot & kShared) == 0) return whole_[slot - 1];
  return WithMeasuredTime(FromShared(shared_set(slot & ~kShared)), (*durations_)[task]);
}

size_t TaskCostMemo::KeyHash::operator()(const Key& k) const {
  size_t h = std::hash<const void*>{}(k.sub_kind) ^ (static_cast<size_t>(k.cls) << 1) ^ (k.sub_kind_size << 9) ^
             (static_cast<size_t>(k.origin) << 17);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (StrId id : k.ids) mix(std::hash<StrId>{}(id));
  mix(std::hash<const void*>{}(k.op_sub_kind));
  mix(static_cast<size_t>(k.op_cls) | (static_cast<size_t>(k.same_work) << 8));
  return h;
}

std::optional<TaskCostMemo::Key> TaskCostMemo::KeyOf(uint32_t task) const {
  const DeviceTaskTable& t = profile_.device_tasks;
  Key key{};
  key.cls = task < classes_.task_class.size() ? classes_.task_class[task] : OpClass::kOther;
  const std::string_view sub_kind = task < classes_.task_sub_kind.size() ? classes_.task_sub_kind[task] : std::string_view();
  key.sub_kind = sub_kind.data();
  key.sub_kind_size = sub_kind.size();
  const StrId op_type = t.op_type(task);
  const StrId task_name = op_type != kEmptyStr ? op_type : t.name[task];
  if (t.input_shapes(task) != kEmptyStr) {  // the detail row may give the shapes
    key.origin = CostInput::ShapeOrigin::kTaskDetail;
    key.ids = {task_name, t.input_shapes(task), t.input_types(task), t.input_formats(task), t.output_shapes(task),
               t.output_types(task), t.output_formats(task)};
    return key;
  }
  // The operator's shapes, as CostInputForTask takes them: its operator, whether
  // the task does the operator's work (its class, or the operator's only busy task).
  const TaskOperator source = OperatorOfTask(profile_, graph_, classes_, task, key.cls);
  if (source.op < 0) return std::nullopt;
  const auto op_row = static_cast<size_t>(source.op);
  key.origin = CostInput::ShapeOrigin::kOperator;
  key.op_cls = source.cls;
  const std::string_view op_sub = op_row < classes_.host_sub_kind.size() ? classes_.host_sub_kind[op_row] : std::string_view();
  key.op_sub_kind = op_sub.data();
  key.op_sub_kind_size = op_sub.size();
  key.same_work = source.same_work;
  const HostOpTable& h = profile_.host_ops;
  key.ids = {task_name, h.name[op_row], h.input_dims[op_row], h.input_types[op_row], kEmptyStr, kEmptyStr, kEmptyStr};
  return key;
}

void TaskCostMemo::Remember(const Key& key, const TaskCostTable::SharedFigures& set) {
  if (recent_.size() >= kMaxMemoShapes) {
    older_ = std::move(recent_);
    recent_.clear();
  }
  recent_.emplace(key, set);
}

CostFigures TaskCostMemo::Figures(uint32_t task) {
  const DeviceTaskTable& t = profile_.device_tasks;
  const std::optional<Key> key = KeyOf(task);
  if (key) {
    if (auto it = recent_.find(*key); it != recent_.end()) return WithMeasuredTime(FromShared(it->second), t.dur[task]);
    if (auto it = older_.find(*key); it != older_.end()) {
      const TaskCostTable::SharedFigures set = it->second;
      older_.erase(it);
      Remember(*key, set);
      return WithMeasuredTime(FromShared(set), t.dur[task]);
    }
  }
  const CostInput in = CostInputForTask(profile_, graph_, classes_, task, CostNotes::kSkip);
  CostFigures figures = EstimateCost(in, hw_, CostNotes::kSkip);
  // Kept only when the figures came from the source the key names.
  if (key && in.shape_origin == key->origin && figures.measured_ns == t.dur[task]) {
    CostFigures set = ShapeFigures(figures);
    if (SameFiguresButTime(WithMeasuredTime(set, figures.measured_ns), figures)) Remember(*key, ToShared(set));
  }
  return figures;
}

}  // namespace pypto
