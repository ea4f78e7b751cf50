#include "analysis/op_class.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "hw/embedded_data.h"

namespace pypto {

namespace {
constexpr const char* kClassNames[kOpClassCount] = {"other",      "matmul",    "attention",   "norm",
                                                    "rope",       "activation", "elementwise", "softmax",
                                                    "reduction",  "embedding", "copy",        "communication",
                                                    "sampling"};

std::string Lower(std::string_view s) {
  std::string out(s.size(), '\0');
  for (size_t i = 0; i < s.size(); ++i) out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  return out;
}
}  // namespace

const char* OpClassName(OpClass cls) {
  size_t i = static_cast<size_t>(cls);
  return i < kOpClassCount ? kClassNames[i] : "other";
}

OpClass OpClassFromName(std::string_view name, bool* ok) {
  for (size_t i = 0; i < kOpClassCount; ++i)
    if (name == kClassNames[i]) {
      if (ok != nullptr) *ok = true;
      return static_cast<OpClass>(i);
    }
  if (ok != nullptr) *ok = false;
  return OpClass::kOther;
}

const char* ClassSourceName(ClassSource source) {
  switch (source) {
    case ClassSource::kNone: return "none";
    case ClassSource::kOpType: return "op_type";
    case ClassSource::kOwnName: return "own_name";
    case ClassSource::kTaskKind: return "task_kind";
    case ClassSource::kOperator: return "operator";
    case ClassSource::kSequence: return "sequence";
  }
  return "none";
}

// ------------------------------------------------------------------ classifier

struct OpClassifier::Compiled {
  std::unordered_map<std::string, int32_t> exact;         // first exact rule per pattern
  std::vector<std::pair<int32_t, std::regex>> regexes;    // rule index, compiled
  std::vector<int32_t> ordered;                           // non-exact rules in order
  std::deque<std::string> sub_kinds;                      // stable storage for string_views
  std::unordered_map<std::string, std::string_view> sub_index;
  std::vector<std::string_view> rule_sub;                 // per rule
};

OpClassifier::OpClassifier() : compiled_(new Compiled) {}
OpClassifier::~OpClassifier() { delete compiled_; }
OpClassifier::OpClassifier(OpClassifier&& o) noexcept : rules_(std::move(o.rules_)), compiled_(o.compiled_) {
  o.compiled_ = nullptr;
}
OpClassifier& OpClassifier::operator=(OpClassifier&& o) noexcept {
  if (this != &o) {
    delete compiled_;
    rules_ = std::move(o.rules_);
    compiled_ = o.compiled_;
    o.compiled_ = nullptr;
  }
  return *this;
}

std::string_view OpClassifier::InternSubKind(std::string_view s) const {
  if (s.empty() || compiled_ == nullptr) return {};
  auto it = compiled_->sub_index.find(std::string(s));
  if (it != compiled_->sub_index.end()) return it->second;
  compiled_->sub_kinds.emplace_back(s);
  std::string_view v = compiled_->sub_kinds.back();
  compiled_->sub_index.emplace(std::string(s), v);
  return v;
}

void OpClassifier::Compile() {
  if (compiled_ == nullptr) compiled_ = new Compiled;
  Compiled fresh;
  std::swap(fresh.sub_kinds, compiled_->sub_kinds);  // keep earlier views valid
  std::swap(fresh.sub_index, compiled_->sub_index);
  *compiled_ = std::move(fresh);
  compiled_->rule_sub.resize(rules_.size());
  for (size_t i = 0; i < rules_.size(); ++i) {
    const OpClassRule& r = rules_[i];
    compiled_->rule_sub[i] = InternSubKind(r.sub_kind);
    if (r.kind == MatchKind::kExact) {
      compiled_->exact.emplace(r.pattern, static_cast<int32_t>(i));
    } else {
      compiled_->ordered.push_back(static_cast<int32_t>(i));
      if (r.kind == MatchKind::kRegex)
        compiled_->regexes.emplace_back(static_cast<int32_t>(i),
                                        std::regex(r.pattern, std::regex::ECMAScript | std::regex::optimize));
    }
  }
}

StatusOr<OpClassifier> OpClassifier::Parse(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(json);
  simdjson::dom::element root;
  if (auto err = parser.parse(text).get(root))
    return InvalidArgumentError(fmt::format("{}: not valid JSON ({})", origin, simdjson::error_message(err)));
  simdjson::dom::array rules;
  if (root["rules"].get_array().get(rules)) return InvalidArgumentError(fmt::format("{}: missing array 'rules'", origin));
  OpClassifier out;
  size_t index = 0;
  for (simdjson::dom::element e : rules) {
    std::string where = fmt::format("{}: rules[{}]", origin, index++);
    simdjson::dom::object o;
    if (e.get_object().get(o)) return InvalidArgumentError(where + ": must be an object");
    std::string_view match, pattern, cls, sub, note;
    if (o["match"].get_string().get(match) || o["pattern"].get_string().get(pattern) || o["class"].get_string().get(cls))
      return InvalidArgumentError(where + ": needs string fields match, pattern, class");
    if (o["sub_kind"].get_string().get(sub)) sub = {};
    if (o["note"].get_string().get(note)) note = {};
    OpClassRule r;
    if (match == "exact") r.kind = MatchKind::kExact;
    else if (match == "prefix") r.kind = MatchKind::kPrefix;
    else if (match == "contains") r.kind = MatchKind::kContains;
    else if (match == "regex") r.kind = MatchKind::kRegex;
    else return InvalidArgumentError(fmt::format("{}: match '{}' is not exact/prefix/contains/regex", where, match));
    bool ok = false;
    r.cls = OpClassFromName(cls, &ok);
    if (!ok) return InvalidArgumentError(fmt::format("{}: unknown class '{}'", where, cls));
    r.pattern = r.kind == MatchKind::kRegex ? std::string(pattern) : Lower(pattern);
    if (r.pattern.empty()) return InvalidArgumentError(where + ": empty pattern");
    if (r.kind == MatchKind::kRegex) {
      try {
        std::regex test(r.pattern, std::regex::ECMAScript);
      } catch (const std::regex_error& err) {
        return InvalidArgumentError(fmt::format("{}: bad regex '{}': {}", where, r.pattern, err.what()));
      }
    }
    r.sub_kind = std::string(sub);
    r.note = std::string(note);
    bool g = false;
    if (o["generic"].get_bool().get(g)) g = false;
    r.generic = g;
    out.rules_.push_back(std::move(r));
  }
  out.Compile();
  return out;
}

void OpClassifier::Prepend(const OpClassifier& first) {
  std::vector<OpClassRule> merged = first.rules_;
  merged.insert(merged.end(), rules_.begin(), rules_.end());
  rules_ = std::move(merged);
  Compile();
}

namespace {
// Ascend task names are "aclnn<Api>_<Kernel>_<OpType>" (aclnnMm_CastAiCore_Cast):
// the last segment says what the task does.
std::string_view AscendOpTypeOfName(std::string_view lower) {
  if (lower.rfind("aclnn", 0) != 0) return {};
  size_t first = lower.find('_');
  size_t last = lower.rfind('_');
  if (first == std::string_view::npos || last == first || last + 1 >= lower.size()) return {};
  std::string_view tail = lower.substr(last + 1);
  // "..._FlashAttentionScore_varlen": the op type is the segment before a lower-case suffix.
  if (tail == "varlen" || tail == "tnd") {
    size_t prev = lower.rfind('_', last - 1);
    if (prev != std::string_view::npos && prev > first) return lower.substr(prev + 1, last - prev - 1);
  }
  return tail;
}
}  // namespace

OpClassMatch OpClassifier::Match(std::string_view name) const {
  OpClassMatch m;
  if (compiled_ == nullptr || name.empty()) return m;
  std::string lower = Lower(name);
  auto match_lower = [&](std::string_view s) -> int32_t {
    auto it = compiled_->exact.find(std::string(s));
    int32_t best = it == compiled_->exact.end() ? -1 : it->second;
    // Non-exact rules earlier than the exact hit still win (rule order is the contract).
    size_t ri = 0;
    for (int32_t idx : compiled_->ordered) {
      if (best >= 0 && idx > best) break;
      const OpClassRule& r = rules_[idx];
      bool hit = false;
      switch (r.kind) {
        case MatchKind::kPrefix: hit = s.substr(0, r.pattern.size()) == r.pattern; break;
        case MatchKind::kContains: hit = s.find(r.pattern) != std::string_view::npos; break;
        case MatchKind::kRegex: {
          while (ri < compiled_->regexes.size() && compiled_->regexes[ri].first < idx) ++ri;
          if (ri < compiled_->regexes.size() && compiled_->regexes[ri].first == idx) {
            std::string tmp(s);
            hit = std::regex_search(tmp, compiled_->regexes[ri].second);
          }
          break;
        }
        case MatchKind::kExact: break;
      }
      if (hit) return idx;
    }
    return best;
  };
  int32_t idx = -1;
  std::string_view op_type = AscendOpTypeOfName(lower);
  if (!op_type.empty()) idx = match_lower(op_type);
  if (idx < 0) idx = match_lower(lower);
  if (idx < 0) return m;
  m.rule = idx;
  m.cls = rules_[idx].cls;
  m.sub_kind = compiled_->rule_sub[idx];
  return m;
}

const OpClassifier& OpClassifier::Builtin() {
  static const OpClassifier* c = [] {
    auto parsed = Parse(EmbeddedData("op_classes.json"), "builtin op classes");
    return new OpClassifier(parsed.ok() ? std::move(parsed).value() : OpClassifier());
  }();
  return *c;
}

OpClass ClassifyName(std::string_view name) { return OpClassifier::Builtin().Match(name).cls; }
OpClassMatch MatchName(std::string_view name) { return OpClassifier::Builtin().Match(name); }

// ------------------------------------------------------------------ profile

namespace {

bool IsSpecific(OpClass c) {
  return c == OpClass::kNorm || c == OpClass::kRope || c == OpClass::kActivation || c == OpClass::kSoftmax ||
         c == OpClass::kEmbedding || c == OpClass::kSampling || c == OpClass::kAttention;
}

bool IsBusyKind(DeviceTaskKind k) { return k != DeviceTaskKind::kAnnotation && k != DeviceTaskKind::kSync; }

}  // namespace

uint16_t SubKindColumn::Id(std::string_view name) {
  if (name.empty()) return 0;
  // The same interned view (same bytes) is the common case; then equal text.
  for (size_t i = 1; i < names_.size(); ++i)
    if (names_[i].data() == name.data() && names_[i].size() == name.size()) return static_cast<uint16_t>(i);
  for (size_t i = 1; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<uint16_t>(i);
  // More distinct names than a uint16_t holds would need a user rule file
  // with 65535 sub-kinds: the extra ones read as none.
  if (names_.size() > UINT16_MAX) return 0;
  names_.push_back(name);
  return static_cast<uint16_t>(names_.size() - 1);
}

OpClassification ClassifyProfile(const Profile& profile, const OperatorCallGraph& graph,
                                 const OpClassifier& classifier) {
  OpClassification out;
  const HostOpTable& ops = profile.host_ops;
  const DeviceTaskTable& tasks = profile.device_tasks;
  out.host_class.assign(ops.size(), OpClass::kOther);
  out.host_sub_kind.assign(ops.size(), {});
  out.task_class.assign(tasks.size(), OpClass::kOther);
  out.task_sub_kind.assign(tasks.size(), {});
  out.task_source.assign(tasks.size(), ClassSource::kNone);

  // Names repeat: match each distinct string once.
  std::unordered_map<StrId, OpClassMatch> memo;
  auto match = [&](StrId id) -> const OpClassMatch& {
    auto it = memo.find(id);
    if (it != memo.end()) return it->second;
    return memo.emplace(id, classifier.Match(profile.Str(id))).first->second;
  };

  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops.kind[i] != HostOpKind::kOperator) continue;
    const OpClassMatch& m = match(ops.name[i]);
    out.host_class[i] = m.cls;
    out.host_sub_kind.set(i, m.sub_kind);
    ++out.host_counts[static_cast<size_t>(m.cls)];
  }

  for (size_t t = 0; t < tasks.size(); ++t) {
    OpClass cls = OpClass::kOther;
    std::string_view sub;
    ClassSource src = ClassSource::kNone;
    bool generic = false;
    StrId op_type = tasks.op_type(t);
    if (op_type != kEmptyStr) {
      const OpClassMatch& m = match(op_type);
      if (m.matched()) { cls = m.cls; sub = m.sub_kind; src = ClassSource::kOpType; generic = classifier.rules()[m.rule].generic; }
    }
    if (src == ClassSource::kNone) {
      const OpClassMatch& m = match(tasks.name[t]);
      if (m.matched()) { cls = m.cls; sub = m.sub_kind; src = ClassSource::kOwnName; generic = classifier.rules()[m.rule].generic; }
    }
    DeviceTaskKind kind = tasks.kind[t];
    if (src == ClassSource::kNone) {
      if (kind == DeviceTaskKind::kCommunication) {
        cls = OpClass::kCommunication; sub = classifier.InternSubKind("collective"); src = ClassSource::kTaskKind;
      } else if (kind == DeviceTaskKind::kMemcpy || kind == DeviceTaskKind::kMemset) {
        cls = OpClass::kCopy;
        sub = classifier.InternSubKind(kind == DeviceTaskKind::kMemcpy ? "memcpy" : "memset");
        src = ClassSource::kTaskKind;
      }
    }
    int32_t op = graph.OperatorOf(static_cast<uint32_t>(t));
    if (op >= 0 && static_cast<size_t>(op) < ops.size() && ops.kind[op] == HostOpKind::kOperator) {
      OpClass oc = out.host_class[op];
      bool inherit = (src == ClassSource::kNone && oc != OpClass::kOther) || (generic && IsSpecific(oc));
      if (inherit) {
        cls = oc;
        sub = out.host_sub_kind[op];
        src = ClassSource::kOperator;
      }
    }
    out.task_class[t] = cls;
    out.task_sub_kind.set(t, sub);
    out.task_source[t] = src;
    ++out.task_counts[static_cast<size_t>(cls)];
    if (IsBusyKind(kind)) out.task_time_ns[static_cast<size_t>(cls)] += tasks.dur[t];
  }

  // Unfused attention: matmul → (≤ kUnfusedAttentionMaxGapOps elementwise /
  // copy / other ops) → softmax → (≤ the same) → matmul,
  // on the same host thread (operators) or device stream (tasks).
  auto relabel = [&](std::vector<uint32_t>& order, std::vector<OpClass>& cls_col, SubKindColumn& sub_col,
                     std::vector<ClassSource>* src_col, bool count) -> uint64_t {
    uint64_t groups = 0;
    std::string_view qk = classifier.InternSubKind("qk_bmm");
    std::string_view sm = classifier.InternSubKind("scores_softmax");
    std::string_view pv = classifier.InternSubKind("pv_bmm");
    constexpr int kMaxGap = kUnfusedAttentionMaxGapOps;
    for (size_t i = 0; i < order.size(); ++i) {
      if (cls_col[order[i]] != OpClass::kSoftmax) continue;
      // previous matmul
      int64_t before = -1, after = -1;
      for (int64_t j = static_cast<int64_t>(i) - 1, gap = 0; j >= 0 && gap <= kMaxGap; --j, ++gap) {
        OpClass c = cls_col[order[j]];
        if (c == OpClass::kMatmul) { before = j; break; }
        if (c != OpClass::kElementwise && c != OpClass::kCopy && c != OpClass::kOther) break;
      }
      for (size_t j = i + 1, gap = 0; j < order.size() && gap <= kMaxGap; ++j, ++gap) {
        OpClass c = cls_col[order[j]];
        if (c == OpClass::kMatmul) { after = static_cast<int64_t>(j); break; }
        if (c != OpClass::kElementwise && c != OpClass::kCopy && c != OpClass::kOther) break;
      }
      if (before < 0 || after < 0) continue;
      uint32_t rows[3] = {order[before], order[i], order[after]};
      std::string_view subs[3] = {qk, sm, pv};
      for (int k = 0; k < 3; ++k) {
        if (count) --out.task_counts[static_cast<size_t>(cls_col[rows[k]])];
        else --out.host_counts[static_cast<size_t>(cls_col[rows[k]])];
        cls_col[rows[k]] = OpClass::kAttention;
        sub_col.set(rows[k], subs[k]);
        if (src_col != nullptr) (*src_col)[rows[k]] = ClassSource::kSequence;
        if (count) ++out.task_counts[static_cast<size_t>(OpClass::kAttention)];
        else ++out.host_counts[static_cast<size_t>(OpClass::kAttention)];
      }
      ++groups;
    }
    return groups;
  };
  uint64_t host_groups = 0;
  {
    // Top-level host operators per track in time order (aten::matmul, not the
    // aten::bmm inside it).
    std::vector<uint32_t> order;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops.kind[i] != HostOpKind::kOperator || out.host_class[i] == OpClass::kOther) continue;
      int32_t parent = ops.parent.size() == ops.size() ? ops.parent[i] : kNoIndex;
      int32_t enclosing = parent >= 0 ? graph.EnclosingOperator(static_cast<uint32_t>(parent)) : kNoIndex;
      if (enclosing >= 0 && ops.kind[enclosing] == HostOpKind::kOperator) continue;  // not top-level
      order.push_back(static_cast<uint32_t>(i));
    }
    // Skip view-only ops (no kernels) so they do not break sequences.
    order.erase(std::remove_if(order.begin(), order.end(),
                               [&](uint32_t i) { return out.host_sub_kind[i] == "view" || out.host_sub_kind[i] == "alloc"; }),
                order.end());
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return ops.track[a] != ops.track[b] ? ops.track[a] < ops.track[b] : ops.ts[a] < ops.ts[b];
    });
    host_groups = relabel(order, out.host_class, out.host_sub_kind, nullptr, false);
  }
  // Tasks run by an operator relabelled as unfused attention (the aten::bmm
  // CPU task inside aten::matmul, a GEMM kernel launched inside it) are parts
  // of that attention, not stand-alone GEMMs. A copy run inside the Q.K^T or
  // P.V matmul materialises its K or V operand (grouped-query heads expanded
  // by repeat_kv, a transposed K made contiguous): sub-kind kv_materialize, a
  // copy a fused attention kernel does not make (it reads K/V in place).
  const std::string_view kv_materialize = classifier.InternSubKind("kv_materialize");
  for (size_t t = 0; t < tasks.size(); ++t) {
    const OpClass c = out.task_class[t];
    const bool data_copy = c == OpClass::kCopy && out.task_sub_kind[t] != "view" && out.task_sub_kind[t] != "alloc";
    if (c != OpClass::kMatmul && c != OpClass::kSoftmax && !data_copy) continue;
    int32_t op = graph.OperatorOf(static_cast<uint32_t>(t));
    for (int hops = 0; op >= 0 && static_cast<size_t>(op) < ops.size() && hops < kMaxAttentionAncestorHops; ++hops) {
      if (ops.kind[op] == HostOpKind::kOperator && out.host_class[op] == OpClass::kAttention) {
        const std::string_view part = out.host_sub_kind[op];
        if (data_copy && part != "qk_bmm" && part != "pv_bmm") break;
        --out.task_counts[static_cast<size_t>(c)];
        ++out.task_counts[static_cast<size_t>(OpClass::kAttention)];
        out.task_class[t] = OpClass::kAttention;
        out.task_sub_kind.set(t, data_copy ? kv_materialize : part);
        out.task_source[t] = ClassSource::kSequence;
        break;
      }
      op = ops.parent.size() == ops.size() ? ops.parent[op] : kNoIndex;
    }
  }
  {
    std::vector<uint32_t> order;
    for (size_t t = 0; t < tasks.size(); ++t)
      if (tasks.kind[t] == DeviceTaskKind::kKernel && out.task_sub_kind[t] != "view" && out.task_sub_kind[t] != "alloc")
        order.push_back(static_cast<uint32_t>(t));
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return tasks.track[a] != tasks.track[b] ? tasks.track[a] < tasks.track[b] : tasks.ts[a] < tasks.ts[b];
    });
    // Time per class changes with the relabelling: recompute after.
    // Groups seen on either side (tasks of relabelled operators are already
    // attention, so the task pass finds only groups without host operators).
    const uint64_t task_groups = relabel(order, out.task_class, out.task_sub_kind, &out.task_source, true);
    out.unfused_attention_groups = std::max(host_groups, task_groups);
    out.task_time_ns.fill(0);
    for (size_t t = 0; t < tasks.size(); ++t)
      if (IsBusyKind(tasks.kind[t])) out.task_time_ns[static_cast<size_t>(out.task_class[t])] += tasks.dur[t];
  }
  return out;
}

}  // namespace pypto
