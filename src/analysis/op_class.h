// Semantic op classes: what an aten op, a CANN op type or a CUDA/ROCm kernel
// name does in an LLM (matmul, attention, norm, rope, …). The rules are data
// (data/op_classes.json, embedded at build time; a user file can prepend
// rules): an ordered list of (match kind, pattern, class, sub-kind); the first
// matching rule wins. Matching is case-insensitive.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "graph/call_graph.h"
#include "model/profile.h"

namespace pypto {

enum class OpClass : uint8_t {
  kOther = 0,       // nothing matched (or a host op that is not an operator)
  kMatmul,          // mm, addmm, linear, bmm, matmul, MatMulV2, GroupedMatmul, gemm/cutlass/Cijk_ kernels, conv
  kAttention,       // fused attention (flash, paged, SDPA, FIA/IFA) and unfused parts (sub-kinds qk_bmm/scores_softmax/pv_bmm)
  kNorm,            // layer_norm, rms_norm, RmsNorm, AddRmsNorm, group_norm …
  kRope,            // rotary embedding (RotaryMul, ApplyRotaryPosEmb, rotary kernels)
  kActivation,      // silu, gelu, SwiGlu, swish, relu …
  kElementwise,     // add, mul, pow, rsqrt, where, fill …
  kSoftmax,         // softmax not recognised as part of attention
  kReduction,       // mean, sum, max, norm reductions, cumsum …
  kEmbedding,       // embedding lookups, index_select on a vocab table
  kCopy,            // copy / layout: transpose, contiguous, clone, cat, cast, index_copy, copy_, memcpy, memset, KV cache writes
  kCommunication,   // NCCL / RCCL / HCCL collectives and point-to-point
  kSampling,        // topk, multinomial, argmax, sort, sampling kernels
};
inline constexpr size_t kOpClassCount = 13;
const char* OpClassName(OpClass cls);                 // "matmul", "attention", …
// Parses the names OpClassName returns; kOther (ok=false) otherwise.
OpClass OpClassFromName(std::string_view name, bool* ok = nullptr);

enum class MatchKind : uint8_t { kExact, kPrefix, kContains, kRegex };

struct OpClassRule {
  MatchKind kind = MatchKind::kExact;
  std::string pattern;       // lower-case for exact/prefix/contains
  OpClass cls = OpClass::kOther;
  std::string sub_kind;      // "gemm", "bmm", "flash", "paged", "decode", "rms_norm", "kv_cache_update", "cast", …
  std::string note;          // where the name was seen / why
  bool generic = false;      // a generic kernel (elementwise_kernel, reduce_kernel, copy): a task matched
                             // by it takes its operator's class when that class is specific (norm, rope, …)
};

// Result of matching one name.
struct OpClassMatch {
  OpClass cls = OpClass::kOther;
  std::string_view sub_kind;  // points into the classifier's storage ("" when none)
  int32_t rule = -1;          // index of the matching rule, -1 = no rule matched
  bool matched() const { return rule >= 0; }
};

class OpClassifier {
 public:
  // The rules built into pypto (data/op_classes.json), parsed once.
  static const OpClassifier& Builtin();
  // Parses rules from JSON text ({"rules":[{"match":"prefix","pattern":"aten::mm",
  // "class":"matmul","sub_kind":"gemm"}, …]}); bad regexes are errors naming the rule.
  static StatusOr<OpClassifier> Parse(std::string_view json, std::string_view origin);
  // Rules of `first` are tried before this classifier's rules (user overrides).
  void Prepend(const OpClassifier& first);

  OpClassMatch Match(std::string_view name) const;
  const std::vector<OpClassRule>& rules() const { return rules_; }
  // Interns a sub-kind name in this classifier (stable string_view).
  std::string_view InternSubKind(std::string_view s) const;

  OpClassifier();
  ~OpClassifier();
  OpClassifier(OpClassifier&&) noexcept;
  OpClassifier& operator=(OpClassifier&&) noexcept;

 private:
  struct Compiled;
  void Compile();
  std::vector<OpClassRule> rules_;
  Compiled* compiled_ = nullptr;  // exact-name hash map + compiled regexes
};

// Classifies one name with the builtin rules.
OpClass ClassifyName(std::string_view name);
OpClassMatch MatchName(std::string_view name);

// Where a device task's class came from.
enum class ClassSource : uint8_t {
  kNone,          // nothing known: kOther
  kOpType,        // Ascend OP Type (exact CANN op type)
  kOwnName,       // the task's own (kernel) name
  kTaskKind,      // the task kind (memcpy/memset → copy, communication → communication)
  kOperator,      // inherited from the operator the task is attributed to
  kSequence,      // refined by context (unfused attention bmm → softmax → bmm)
};
const char* ClassSourceName(ClassSource source);

// A column of sub-kind names, 2 bytes a row: the few dozen distinct names are
// kept once. As string_views (16 bytes a row) the two sub-kind columns were
// ~90 MB of a 4.5 M-op profile's diagnosis. Names are views into the
// classifier's storage (OpClassifier::InternSubKind) or static text.
class SubKindColumn {
 public:
  std::string_view operator[](size_t row) const { return names_[ids_[row]]; }
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  void assign(size_t rows, std::string_view name) { ids_.assign(rows, Id(name)); }
  void set(size_t row, std::string_view name) { ids_[row] = Id(name); }

 private:
  uint16_t Id(std::string_view name);
  std::vector<std::string_view> names_{std::string_view()};
  std::vector<uint16_t> ids_;
};

// Classes of every host op and device task of one profile (columns indexed by row).
struct OpClassification {
  std::vector<OpClass> host_class;
  SubKindColumn host_sub_kind;
  std::vector<OpClass> task_class;
  SubKindColumn task_sub_kind;
  std::vector<ClassSource> task_source;
  // Counts by class (indexed by OpClass).
  std::array<uint64_t, kOpClassCount> host_counts{};
  std::array<uint64_t, kOpClassCount> task_counts{};
  std::array<TimeNs, kOpClassCount> task_time_ns{};  // sum of task durations per class (annotation/sync excluded)
  uint64_t unfused_attention_groups = 0;  // bmm → softmax → bmm triples re-labelled as attention
};

// Unfused attention (matmul → softmax → matmul relabelled as attention): ops
// allowed between the matmuls and the softmax (unitless count). Source: eager
// attention of transformers and hand-written decoders puts a scale, a mask
// built in place (ones/tril/bitwise_not/masked_fill or slice+add) and casts
// there: up to 5 ops observed on Llama-style models; 8 leaves room for a
// dropout and a dtype round trip while a softmax between two matmuls stays
// specific.
inline constexpr int kUnfusedAttentionMaxGapOps = 8;
// How far up the operator nesting a task's attention ancestor is looked for
// (levels). Source: aten::matmul -> aten::bmm (CPU), or -> aten::bmm ->
// cudaLaunchKernel (GPU) is 1-3 levels; 8 bounds the walk on deep stacks.
inline constexpr int kMaxAttentionAncestorHops = 8;

// The sub-kinds of an unfused attention's parts (ClassifyProfile), which a fused
// attention kernel replaces as a whole.
inline bool IsUnfusedAttentionPart(std::string_view sub) {
  return sub == "qk_bmm" || sub == "scores_softmax" || sub == "pv_bmm" || sub == "kv_materialize";
}

// Host ops of kind kOperator are classified by name (others stay kOther).
// Device tasks: Ascend op type, else own name, else task kind, else the class
// of their operator (OperatorOf). Unfused attention (a matmul/bmm followed by
// softmax then a matmul/bmm, within a few ops on the same thread/stream) is
// re-labelled kAttention with sub-kinds qk_bmm / scores_softmax / pv_bmm; copy
// tasks run inside the qk/pv matmul operator become kAttention / kv_materialize.
OpClassification ClassifyProfile(const Profile& profile, const OperatorCallGraph& graph,
                                 const OpClassifier& classifier = OpClassifier::Builtin());

}  // namespace pypto
