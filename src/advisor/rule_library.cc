#include "advisor/rule_library.h"

#include <algorithm>
#include <set>

#include <simdjson.h>

#include "hw/embedded_data.h"

namespace pypto::advisor {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr const char* kBackendNames[kBackendCount] = {"ascend", "cuda", "rocm", "cpu"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status Bad(std::string_view file, std::string_view where, std::string_view what) {
  return InvalidArgumentError(std::string(file) + ": " + std::string(where) + ": " + std::string(what));
}

// Optional string member; error when present but not a string.
Status GetString(object o, std::string_view key, std::string_view file, std::string_view where, std::string* out,
                 bool required) {
  element e;
  if (o[key].get(e)) {
    if (required) return Bad(file, where, "missing \"" + std::string(key) + "\"");
    return Status::Ok();
  }
  std::string_view v;
  if (e.get_string().get(v)) return Bad(file, where, "\"" + std::string(key) + "\" is not a string");
  *out = std::string(v);
  return Status::Ok();
}

Status GetStringList(object o, std::string_view key, std::string_view file, std::string_view where,
                     std::vector<std::string>* out, bool lower) {
  element e;
  if (o[key].get(e)) return Status::Ok();
  array a;
  if (e.get_array().get(a)) return Bad(file, where, "\"" + std::string(key) + "\" is not a list");
  for (element x : a) {
    std::string_view v;
    if (x.get_string().get(v)) return Bad(file, where, "\"" + std::string(key) + "\" holds a non-string");
    out->push_back(lower ? Lower(v) : std::string(v));
  }
  return Status::Ok();
}

Status ParseBackends(object o, std::string_view key, std::string_view file, std::string_view where,
                     std::vector<Backend>* out) {
  std::vector<std::string> names;
  PYPTO_RETURN_IF_ERROR(GetStringList(o, key, file, where, &names, true));
  for (const std::string& n : names) {
    Backend b;
    if (!BackendFromName(n, &b)) return Bad(file, where, "unknown backend \"" + n + "\"");
    out->push_back(b);
  }
  return Status::Ok();
}

Status ParseGain(object o, std::string_view file, std::string_view where, GainModel* gain) {
  std::string basis;
  PYPTO_RETURN_IF_ERROR(GetString(o, "basis", file, where, &basis, true));
  if (basis == "issue_saving") gain->basis = GainBasis::kIssueSaving;
  else if (basis == "affected_fraction") gain->basis = GainBasis::kAffectedFraction;
  else if (basis == "measured_gap") gain->basis = GainBasis::kMeasuredGap;
  else if (basis == "none") gain->basis = GainBasis::kNone;
  else return Bad(file, where, "unknown gain basis \"" + basis + "\"");
  double fraction = 1.0;
  element e;
  if (!o["fraction"].get(e)) {
    if (e.get_double().get(fraction) && e.is_int64()) fraction = double(int64_t(e.get_int64()));
    if (!(fraction > 0 && fraction <= 1)) return Bad(file, where, "gain fraction outside (0, 1]");
  } else if (gain->basis == GainBasis::kAffectedFraction) {
    return Bad(file, where, "affected_fraction needs \"fraction\"");
  }
  gain->fraction = fraction;
  PYPTO_RETURN_IF_ERROR(GetString(o, "metric", file, where, &gain->metric, gain->basis == GainBasis::kMeasuredGap));
  PYPTO_RETURN_IF_ERROR(GetString(o, "source", file, where, &gain->source, true));
  if (gain->source.empty()) return Bad(file, where, "gain \"source\" is empty: every figure needs its source");
  return Status::Ok();
}

Status ParseMatch(object mo, std::string_view file, const std::string& mw, RuleMatch* m) {
  PYPTO_RETURN_IF_ERROR(GetStringList(mo, "workloads", file, mw, &m->workloads, true));
  PYPTO_RETURN_IF_ERROR(GetStringList(mo, "archs", file, mw, &m->archs, true));
  PYPTO_RETURN_IF_ERROR(GetStringList(mo, "phases", file, mw, &m->phases, true));
  PYPTO_RETURN_IF_ERROR(GetStringList(mo, "dtypes", file, mw, &m->dtypes, true));
  PYPTO_RETURN_IF_ERROR(GetStringList(mo, "op_types", file, mw, &m->op_types, true));
  for (const std::string& p : m->phases)
    if (p != "prefill" && p != "decode" && p != "unknown") return Bad(file, mw, "unknown phase \"" + p + "\"");
  for (const std::string& w : m->workloads)
    if (w != "training" && w != "inference" && w != "unknown") return Bad(file, mw, "unknown workload \"" + w + "\"");
  int64_t v;
  if (!mo["head_dim_multiple_of"].get_int64().get(v)) m->head_dim_multiple_of = v;
  if (!mo["head_dim_not_multiple_of"].get_int64().get(v)) m->head_dim_not_multiple_of = v;
  object bounds;
  if (!mo["metrics_at_most"].get_object().get(bounds)) {
    for (auto field : bounds) {
      std::string_view key = field.key;
      double bound = 0;
      if (field.value.get_double().get(bound))
        return Bad(file, mw, "metrics_at_most \"" + std::string(key) + "\" is not a number");
      m->metrics_at_most.emplace_back(std::string(key), bound);
    }
  }
  return Status::Ok();
}

Status ParseAction(object o, std::string_view file, const std::string& where, RuleAction* a) {
  PYPTO_RETURN_IF_ERROR(GetString(o, "id", file, where, &a->id, true));
  const std::string at = where + " action " + a->id;
  std::string kind;
  PYPTO_RETURN_IF_ERROR(GetString(o, "kind", file, at, &kind, true));
  if (kind == "code") a->kind = ActionKind::kCode;
  else if (kind == "env") a->kind = ActionKind::kEnv;
  else if (kind == "config") a->kind = ActionKind::kConfig;
  else if (kind == "command") a->kind = ActionKind::kCommand;
  else return Bad(file, at, "unknown action kind \"" + kind + "\"");
  PYPTO_RETURN_IF_ERROR(GetString(o, "description", file, at, &a->description, true));
  PYPTO_RETURN_IF_ERROR(GetString(o, "action", file, at, &a->action, true));
  PYPTO_RETURN_IF_ERROR(GetString(o, "prerequisite", file, at, &a->prerequisite, true));
  PYPTO_RETURN_IF_ERROR(GetString(o, "artifact", file, at, &a->artifact, false));
  if (!a->artifact.empty() && a->artifact != "tiling_config" && a->artifact != "kv_cache_patch" &&
      a->artifact != "norm_fusion_plan")
    return Bad(file, at, "unknown artifact \"" + a->artifact + "\"");
  if (a->action.empty() || a->description.empty()) return Bad(file, at, "empty description or action");
  object when;
  if (!o["when"].get_object().get(when)) PYPTO_RETURN_IF_ERROR(ParseMatch(when, file, at + " when", &a->when));
  object g;
  if (o["gain"].get_object().get(g)) return Bad(file, at, "missing \"gain\" object");
  return ParseGain(g, file, at + " gain", &a->gain);
}

}  // namespace

const char* BackendName(Backend backend) { return kBackendNames[size_t(backend)]; }

bool BackendFromName(std::string_view name, Backend* backend) {
  const std::string n = Lower(name);
  for (size_t i = 0; i < kBackendCount; ++i)
    if (n == kBackendNames[i]) { *backend = Backend(i); return true; }
  if (n == "npu") { *backend = Backend::kAscend; return true; }
  if (n == "hip") { *backend = Backend::kRocm; return true; }
  return false;
}

const char* GainBasisName(GainBasis basis) {
  switch (basis) {
    case GainBasis::kIssueSaving: return "issue_saving";
    case GainBasis::kAffectedFraction: return "affected_fraction";
    case GainBasis::kMeasuredGap: return "measured_gap";
    case GainBasis::kNone: return "none";
  }
  return "none";
}

const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kCode: return "code";
    case ActionKind::kEnv: return "env";
    case ActionKind::kConfig: return "config";
    case ActionKind::kCommand: return "command";
  }
  return "code";
}

int RuleMatch::Specificity() const {
  return int(!workloads.empty()) + int(!archs.empty()) + int(!phases.empty()) + int(!dtypes.empty()) + int(!op_types.empty()) +
         int(head_dim_multiple_of > 0) + int(head_dim_not_multiple_of > 0) + int(metrics_at_most.size());
}

std::vector<const Rule*> RuleLibrary::RulesFor(IssueType type, Backend backend) const {
  std::vector<const Rule*> out;
  for (const Rule& r : rules)
    if (r.issue_type == type && std::find(r.backends.begin(), r.backends.end(), backend) != r.backends.end())
      out.push_back(&r);
  return out;
}

const Rule* RuleLibrary::FindRule(std::string_view id) const {
  for (const Rule& r : rules)
    if (r.id == id) return &r;
  return nullptr;
}

Status ParseRuleFile(std::string_view json, std::string_view name, RuleLibrary* library) {
  if (json.empty()) return NotFoundError(std::string(name) + ": rule file missing or empty");
  simdjson::dom::parser parser;
  element root;
  if (auto err = parser.parse(json.data(), json.size()).get(root))
    return Bad(name, "JSON", simdjson::error_message(err));
  object top;
  if (root.get_object().get(top)) return Bad(name, "top level", "not an object");
  std::string schema, type_name;
  PYPTO_RETURN_IF_ERROR(GetString(top, "schema", name, "top level", &schema, true));
  if (schema != kRuleSchema) return Bad(name, "schema", "expected " + std::string(kRuleSchema) + ", got " + schema);
  PYPTO_RETURN_IF_ERROR(GetString(top, "issue_type", name, "top level", &type_name, true));
  IssueType type;
  if (!IssueTypeFromName(type_name, &type)) return Bad(name, "issue_type", "unknown issue type \"" + type_name + "\"");
  std::vector<Backend> applies;
  PYPTO_RETURN_IF_ERROR(ParseBackends(top, "applies_to", name, "applies_to", &applies));
  if (applies.empty()) return Bad(name, "applies_to", "empty");
  library->applies_to[size_t(type)] = applies;
  array rules;
  if (top["rules"].get_array().get(rules)) return Bad(name, "top level", "missing \"rules\" list");
  size_t order = 0;
  for (element re : rules) {
    object ro;
    if (re.get_object().get(ro)) return Bad(name, "rules", "an entry is not an object");
    Rule rule;
    rule.issue_type = type;
    rule.order = order++;
    PYPTO_RETURN_IF_ERROR(GetString(ro, "id", name, "rule", &rule.id, true));
    const std::string where = "rule " + rule.id;
    if (library->FindRule(rule.id)) return Bad(name, where, "duplicate rule id");
    if (rule.id.rfind(type_name + ".", 0) != 0) return Bad(name, where, "id must start with \"" + type_name + ".\"");
    PYPTO_RETURN_IF_ERROR(ParseBackends(ro, "backends", name, where, &rule.backends));
    if (rule.backends.empty()) return Bad(name, where, "no backends");
    for (Backend b : rule.backends)
      if (std::find(applies.begin(), applies.end(), b) == applies.end())
        return Bad(name, where, std::string("backend ") + BackendName(b) + " not in applies_to");
    PYPTO_RETURN_IF_ERROR(GetString(ro, "title", name, where, &rule.title, true));
    PYPTO_RETURN_IF_ERROR(GetStringList(ro, "sources", name, where, &rule.sources, false));
    if (rule.sources.empty()) return Bad(name, where, "no sources: every rule cites where it comes from");
    object mo;
    if (!ro["match"].get_object().get(mo)) PYPTO_RETURN_IF_ERROR(ParseMatch(mo, name, where + " match", &rule.match));
    array actions;
    if (ro["actions"].get_array().get(actions)) return Bad(name, where, "missing \"actions\" list");
    std::set<std::string> ids;
    for (element ae : actions) {
      object ao;
      if (ae.get_object().get(ao)) return Bad(name, where, "an action is not an object");
      RuleAction action;
      PYPTO_RETURN_IF_ERROR(ParseAction(ao, name, where, &action));
      if (!ids.insert(action.id).second) return Bad(name, where, "duplicate action id " + action.id);
      rule.actions.push_back(std::move(action));
    }
    if (rule.actions.empty()) return Bad(name, where, "no actions");
    library->rules.push_back(std::move(rule));
  }
  library->files.push_back(std::string(name));
  return Status::Ok();
}

StatusOr<const RuleLibrary*> BuiltinRuleLibrary() {
  static const StatusOr<RuleLibrary>* parsed = [] {
    RuleLibrary library;
    for (size_t i = 0; i < kIssueTypeCount; ++i) {
      const std::string file = std::string("advisor/rules/") + IssueTypeName(IssueType(i)) + ".json";
      Status s = ParseRuleFile(EmbeddedData(file), file, &library);
      if (!s.ok()) return new StatusOr<RuleLibrary>(s);
    }
    return new StatusOr<RuleLibrary>(std::move(library));
  }();
  if (!parsed->ok()) return parsed->status();
  return &parsed->value();
}

}  // namespace pypto::advisor
