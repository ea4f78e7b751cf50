#include "compare/compare.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/op_class.h"
#include "analysis/statistics.h"
#include "importers/detect.h"

namespace pypto {

// ------------------------------------------------------------------ names

const char* MatchLevelName(MatchLevel level) {
  switch (level) {
    case MatchLevel::kExact: return "exact";
    case MatchLevel::kNormalizedName: return "normalized_name";
    case MatchLevel::kClassShape: return "class_shape";
    case MatchLevel::kClassName: return "class_name";
    case MatchLevel::kClass: return "class";
    case MatchLevel::kBaselineOnly: return "baseline_only";
    case MatchLevel::kCandidateOnly: return "candidate_only";
  }
  return "unknown";
}

const char* IssueChangeName(IssueChange change) {
  switch (change) {
    case IssueChange::kResolved: return "resolved";
    case IssueChange::kRemaining: return "remaining";
    case IssueChange::kNew: return "new";
  }
  return "unknown";
}

std::string NormalizeKernelName(std::string_view name) {
  // 1. lower case, drop bracketed parts (template args, parameter lists).
  std::string s;
  s.reserve(name.size());
  int angle = 0, paren = 0;
  for (char c : name) {
    if (c == '<') { ++angle; continue; }
    if (c == '>' && angle > 0) { --angle; continue; }
    if (c == '(') { ++paren; continue; }
    if (c == ')' && paren > 0) { --paren; continue; }
    if (angle > 0 || paren > 0) continue;
    s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  // 2. hex ids, tile sizes and digit runs -> '#'; separators collapsed.
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '0' && i + 1 < s.size() && s[i + 1] == 'x' && i + 2 < s.size() &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      i += 2;
      while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) ++i;
      if (out.empty() || out.back() != '#') out.push_back('#');
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      // A digit run, possibly a tile size "128x256x64": one '#'.
      while (i < s.size()) {
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        if (i + 1 < s.size() && s[i] == 'x' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
          ++i;
          continue;
        }
        break;
      }
      if (out.empty() || out.back() != '#') out.push_back('#');
      continue;
    }
    if (c == ' ' || c == '_' || c == '-' || c == '.' || c == ',') {
      if (!out.empty() && out.back() != '_') out.push_back('_');
      ++i;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

// ------------------------------------------------------------------ statistics

namespace {

void MeanStd(const std::vector<double>& v, double* mean, double* stddev) {
  const double n = static_cast<double>(v.size());
  double m = 0;
  for (double x : v) m += x;
  m /= n;
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  *mean = m;
  *stddev = v.size() > 1 ? std::sqrt(ss / (n - 1)) : kNaN;
}

}  // namespace

SignificanceTest WelchTest(const std::vector<double>& baseline, const std::vector<double>& candidate, double alpha) {
  SignificanceTest r;
  r.alpha = alpha;
  r.n_baseline = baseline.size();
  r.n_candidate = candidate.size();
  if (!baseline.empty()) MeanStd(baseline, &r.mean_baseline, &r.stddev_baseline);
  if (!candidate.empty()) MeanStd(candidate, &r.mean_candidate, &r.stddev_candidate);
  if (!baseline.empty() && !candidate.empty()) {
    r.delta = r.mean_candidate - r.mean_baseline;
    r.relative_delta = r.mean_baseline != 0 ? r.delta / r.mean_baseline : kNaN;
  }
  if (baseline.size() < kMinSamplesForTest || candidate.size() < kMinSamplesForTest) {
    r.verdict = "not testable (fewer than 2 steps in a run)";
    return r;
  }
  r.testable = true;
  const double vb = r.stddev_baseline * r.stddev_baseline / double(baseline.size());
  const double vc = r.stddev_candidate * r.stddev_candidate / double(candidate.size());
  const double se2 = vb + vc;
  if (se2 <= 0) {
    // No spread in either run: the difference is exact.
    r.df = double(baseline.size() + candidate.size() - 2);
    r.ci_low = r.ci_high = r.delta;
    if (r.delta == 0) {
      r.t = 0;
      r.p_value = 1;
    } else {
      r.t = r.delta > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
      r.p_value = 0;
    }
  } else {
    const double se = std::sqrt(se2);
    r.t = r.delta / se;
    const double denom = (vb * vb) / double(baseline.size() - 1) + (vc * vc) / double(candidate.size() - 1);
    r.df = denom > 0 ? se2 * se2 / denom : double(baseline.size() + candidate.size() - 2);
    r.p_value = StudentTTwoSidedP(r.t, r.df);
    const double tq = StudentTTwoSidedQuantile(alpha, r.df);
    r.ci_low = r.delta - tq * se;
    r.ci_high = r.delta + tq * se;
  }
  r.significant = r.p_value < alpha;
  r.verdict = !r.significant ? "not significant" : (r.delta < 0 ? "faster" : "slower");
  return r;
}

PairedRatioTest PairedRatio(const std::vector<double>& baseline, const std::vector<double>& candidate, double alpha) {
  PairedRatioTest r;
  r.alpha = alpha;
  const size_t pairs = std::min(baseline.size(), candidate.size());
  std::vector<double> log_ratio;  // ln(baseline / candidate): > 0 when the candidate is faster
  log_ratio.reserve(pairs);
  double log_baseline_sum = 0, log_candidate_sum = 0;
  for (size_t i = 0; i < pairs; ++i) {
    const double a = baseline[i], b = candidate[i];
    if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) {
      ++r.rounds_dropped;
      continue;
    }
    log_ratio.push_back(std::log(a / b));
    log_baseline_sum += std::log(a);
    log_candidate_sum += std::log(b);
  }
  r.rounds = log_ratio.size();
  if (r.rounds > 0) {
    r.baseline_geomean = std::exp(log_baseline_sum / double(r.rounds));
    r.candidate_geomean = std::exp(log_candidate_sum / double(r.rounds));
  }
  if (r.rounds < kMinSamplesForTest) {
    r.verdict = "not testable (fewer than 2 rounds with both times > 0)";
    if (r.rounds == 1) r.speedup = std::exp(log_ratio[0]);
    return r;
  }
  r.testable = true;
  double mean = 0, sd = 0;
  MeanStd(log_ratio, &mean, &sd);
  r.speedup = std::exp(mean);
  const double df = double(r.rounds - 1);
  const double se = sd / std::sqrt(double(r.rounds));
  if (se <= 0) {
    // Every round gave the same ratio: it is exact.
    r.ci_low = r.ci_high = r.speedup;
    r.relative_half_width = 0;
    r.p_value = mean == 0 ? 1 : 0;
  } else {
    const double tq = StudentTTwoSidedQuantile(alpha, df);
    r.ci_low = std::exp(mean - tq * se);
    r.ci_high = std::exp(mean + tq * se);
    r.relative_half_width = (r.ci_high - r.ci_low) / 2 / r.speedup;
    r.p_value = StudentTTwoSidedP(mean / se, df);
  }
  r.significant = r.p_value < alpha;
  r.verdict = !r.significant ? "no significant change" : (mean > 0 ? "faster" : "slower");
  return r;
}

// ------------------------------------------------------------------ actions file

StatusOr<std::vector<AppliedAction>> ParseAppliedActions(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element doc;
  if (auto err = parser.parse(padded).get(doc); err)
    return InvalidArgumentError(std::string(origin) + ": not JSON: " + simdjson::error_message(err));
  simdjson::dom::array list;
  if (doc.is_array()) {
    list = doc.get_array().value_unsafe();
  } else if (doc.is_object()) {
    simdjson::dom::element a;
    if (doc["actions"].get(a) || !a.is_array())
      return InvalidArgumentError(std::string(origin) + ": expected an \"actions\" array");
    list = a.get_array().value_unsafe();
  } else {
    return InvalidArgumentError(std::string(origin) + ": expected an object or an array");
  }
  std::vector<AppliedAction> out;
  size_t index = 0;
  for (simdjson::dom::element e : list) {
    const std::string where = std::string(origin) + ": actions[" + std::to_string(index++) + "]";
    if (!e.is_object()) return InvalidArgumentError(where + ": not an object");
    AppliedAction a;
    auto text = [&](const char* key, std::string* dst) -> Status {
      simdjson::dom::element v;
      if (e[key].get(v)) return Status::Ok();
      if (!v.is_string()) return InvalidArgumentError(where + "." + key + ": expected a string");
      *dst = std::string(v.get_string().value_unsafe());
      return Status::Ok();
    };
    PYPTO_RETURN_IF_ERROR(text("id", &a.id));
    PYPTO_RETURN_IF_ERROR(text("description", &a.description));
    PYPTO_RETURN_IF_ERROR(text("issue_type", &a.issue_type));
    PYPTO_RETURN_IF_ERROR(text("target_op", &a.target_op));
    PYPTO_RETURN_IF_ERROR(text("target_class", &a.target_class));
    PYPTO_RETURN_IF_ERROR(text("source", &a.source));
    simdjson::dom::element v;
    if (!e["estimated_saved_ns"].get(v)) {
      if (!v.is_number()) return InvalidArgumentError(where + ".estimated_saved_ns: expected a number");
      const double d = v.get_double().value_unsafe();
      if (!(d >= 0) || d > 9e18) return InvalidArgumentError(where + ".estimated_saved_ns: out of range");
      a.estimated_saved_ns = static_cast<TimeNs>(d);
    }
    if (!e["estimate_steps"].get(v)) {
      if (!v.is_number()) return InvalidArgumentError(where + ".estimate_steps: expected a number");
      const double d = v.get_double().value_unsafe();
      if (!(d >= 0) || d > 1e12) return InvalidArgumentError(where + ".estimate_steps: out of range");
      a.estimate_steps = static_cast<uint64_t>(d);
    }
    if (!a.target_class.empty()) {
      bool ok = false;
      OpClassFromName(a.target_class, &ok);
      if (!ok) return InvalidArgumentError(where + ".target_class: unknown op class '" + a.target_class + "'");
    }
    if (a.source.empty()) a.source = "actions file";
    if (a.id.empty()) a.id = "action-" + std::to_string(index);
    out.push_back(std::move(a));
  }
  return out;
}

// ------------------------------------------------------------------ loading

namespace {
StatusOr<LoadedRun> DiagnoseRun(std::unique_ptr<ProfileSession> session, const DiagnoseOptions& diagnose) {
  LoadedRun run;
  run.session = std::move(session);
  PYPTO_ASSIGN_OR_RETURN(run.diagnosis, run.session->Diagnosis(diagnose));
  return run;
}
}  // namespace

StatusOr<LoadedRun> PrepareRunForCompare(Profile profile, const DiagnoseOptions& diagnose) {
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<ProfileSession> session, ProfileSession::FromProfile(std::move(profile)));
  return DiagnoseRun(std::move(session), diagnose);
}

StatusOr<LoadedRun> LoadRunForCompare(const std::string& path, const ImportOptions& import,
                                      const DiagnoseOptions& diagnose) {
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<ProfileSession> session, ProfileSession::Open(path, import));
  return DiagnoseRun(std::move(session), diagnose);
}

// ------------------------------------------------------------------ comparison

namespace {

// One op group of one run: (class, name, shape) with per-step times.
struct OpGroup {
  OpClass cls = OpClass::kOther;
  StrId name = kEmptyStr;
  StrId shape = kEmptyStr;
  std::string norm;                 // NormalizeKernelName(name)
  uint64_t count = 0;
  TimeNs total_ns = 0;
  std::vector<double> per_step;     // time per compared step
  bool matched = false;
  uint32_t merged = 1;              // groups merged into this one (class-level match)
};

struct GroupKey {
  uint8_t cls;
  StrId name;
  StrId shape;
  bool operator==(const GroupKey& o) const { return cls == o.cls && name == o.name && shape == o.shape; }
};
struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const {
    uint64_t h = (uint64_t(k.name) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(k.shape) * 0xC2B2AE3D27D4EB4Full) ^ k.cls;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

struct RunOps {
  std::vector<OpGroup> groups;
  std::array<std::vector<double>, kOpClassCount> class_per_step;
  std::array<uint64_t, kOpClassCount> class_count{};
  std::array<TimeNs, kOpClassCount> class_ns{};
  std::vector<double> total_per_step;  // op time per step (all classes)
};

bool HasComputeTasks(const Profile& p) {
  for (DeviceTaskKind k : p.device_tasks.kind)
    if (k != DeviceTaskKind::kAnnotation && k != DeviceTaskKind::kSync) return true;
  return false;
}

// Collects op groups over the compared steps (indices into graph.Steps()).
RunOps CollectOps(const OperatorCallGraph& graph, const OpClassification& classes, const std::vector<size_t>& steps,
                  RunSide* side) {
  const Profile& p = graph.profile();
  RunOps r;
  const size_t n = steps.size();
  for (auto& v : r.class_per_step) v.assign(n, 0.0);
  r.total_per_step.assign(n, 0.0);
  // Windows sorted by start, each with its position in `steps`.
  std::vector<std::pair<TimeWindow, size_t>> windows;
  for (size_t i = 0; i < n; ++i) windows.push_back({graph.Steps()[steps[i]].span(), i});
  std::sort(windows.begin(), windows.end(),
            [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
  auto step_of = [&](TimeNs t) -> int {
    auto it = std::upper_bound(windows.begin(), windows.end(), t,
                               [](TimeNs v, const auto& w) { return v < w.first.start; });
    // The latest window starting at or before t, if it still contains t.
    if (it == windows.begin()) return -1;
    --it;
    if (t < it->first.end) return static_cast<int>(it->second);
    return -1;
  };
  std::unordered_map<GroupKey, uint32_t, GroupKeyHash> index;
  auto add = [&](OpClass cls, StrId name, StrId shape, TimeNs dur, int step) {
    GroupKey key{static_cast<uint8_t>(cls), name, shape};
    auto [it, inserted] = index.try_emplace(key, static_cast<uint32_t>(r.groups.size()));
    if (inserted) {
      OpGroup g;
      g.cls = cls;
      g.name = name;
      g.shape = shape;
      g.per_step.assign(n, 0.0);
      r.groups.push_back(std::move(g));
    }
    OpGroup& g = r.groups[it->second];
    ++g.count;
    g.total_ns += dur;
    g.per_step[step] += double(dur);
    const size_t c = static_cast<size_t>(cls);
    r.class_per_step[c][step] += double(dur);
    ++r.class_count[c];
    r.class_ns[c] += dur;
    r.total_per_step[step] += double(dur);
    ++side->ops_counted;
    side->op_time_ns += dur;
  };
  side->device_ops = HasComputeTasks(p);
  if (side->device_ops) {
    const DeviceTaskTable& t = p.device_tasks;
    for (uint32_t row = 0; row < t.size(); ++row) {
      if (t.kind[row] == DeviceTaskKind::kAnnotation || t.kind[row] == DeviceTaskKind::kSync) continue;
      const int32_t launcher = graph.LauncherOf(row);
      const TimeNs anchor = launcher >= 0 ? p.host_ops.ts[launcher] : t.ts[row];
      int step = step_of(anchor);
      if (step < 0 && launcher >= 0) step = step_of(t.ts[row]);
      if (step < 0) { ++side->ops_outside_steps; continue; }
      StrId name = t.op_type(row);
      if (name == kEmptyStr) name = t.name[row];
      StrId shape = t.input_shapes(row);
      if (shape == kEmptyStr) {
        const int32_t op = graph.OperatorOf(row);
        if (op >= 0) shape = p.host_ops.input_dims[op];
      }
      add(classes.task_class[row], name, shape, t.dur[row], step);
    }
  } else {
    const HostOpTable& h = p.host_ops;
    for (uint32_t row = 0; row < h.size(); ++row) {
      if (h.kind[row] != HostOpKind::kOperator) continue;
      const int step = step_of(h.ts[row]);
      if (step < 0) { ++side->ops_outside_steps; continue; }
      add(classes.host_class[row], h.name[row], h.input_dims[row], graph.SelfTime(row), step);
    }
  }
  for (OpGroup& g : r.groups) g.norm = NormalizeKernelName(p.Str(g.name));
  return r;
}

// Compared steps: decode steps when both runs have at least two, else all steps.
std::vector<size_t> PickSteps(const OperatorCallGraph& graph, const ModelStructure* s, bool decode) {
  std::vector<size_t> out;
  for (size_t i = 0; i < graph.Steps().size(); ++i) {
    if (decode) {
      if (s && i < s->steps.size() && s->steps[i].phase == StepPhase::kDecode) out.push_back(i);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

size_t DecodeStepCount(const ModelStructure* s) {
  if (!s) return 0;
  size_t n = 0;
  for (const StepStructure& st : s->steps) n += st.phase == StepPhase::kDecode;
  return n;
}

// Matching: successive levels over the groups not matched yet; within a key,
// groups are paired by total time rank.
struct Pair {
  int32_t a = -1, b = -1;
  MatchLevel level = MatchLevel::kExact;
};

template <typename KeyFn>
void MatchLevelPass(std::vector<OpGroup>& A, std::vector<OpGroup>& B, MatchLevel level, KeyFn key,
                    std::vector<Pair>* pairs) {
  std::map<std::string, std::vector<int32_t>> ka, kb;
  for (int32_t i = 0; i < static_cast<int32_t>(A.size()); ++i)
    if (!A[i].matched) { std::string k; if (key(A[i], 0, &k)) ka[k].push_back(i); }
  for (int32_t i = 0; i < static_cast<int32_t>(B.size()); ++i)
    if (!B[i].matched) { std::string k; if (key(B[i], 1, &k)) kb[k].push_back(i); }
  for (auto& [k, la] : ka) {
    auto it = kb.find(k);
    if (it == kb.end()) continue;
    auto& lb = it->second;
    auto by_time = [](std::vector<OpGroup>& g) {
      return [&g](int32_t x, int32_t y) {
        if (g[x].total_ns != g[y].total_ns) return g[x].total_ns > g[y].total_ns;
        return x < y;
      };
    };
    std::sort(la.begin(), la.end(), by_time(A));
    std::sort(lb.begin(), lb.end(), by_time(B));
    for (size_t i = 0; i < std::min(la.size(), lb.size()); ++i) {
      A[la[i]].matched = B[lb[i]].matched = true;
      pairs->push_back(Pair{la[i], lb[i], level});
    }
  }
}

double SumVec(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

std::vector<double> AddVec(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] += b[i];
  return a;
}

// Issues keyed by type + normalised op name.
std::string IssueKey(const Issue& i) { return std::string(IssueTypeName(i.type)) + "|" + NormalizeKernelName(i.op_name); }

// Classes and structure of each run (0 = baseline, 1 = candidate). A run's
// session computed them already (CompareRun::classes/structure); a bare graph
// gets them computed here, owned by this struct: it is not copyable because
// class_of / structure may point into it.
struct RunAnalyses {
  OpClassification own_classes[2];
  std::optional<StatusOr<ModelStructure>> own_structure[2];
  const OpClassification* class_of[2] = {nullptr, nullptr};
  const ModelStructure* structure[2] = {nullptr, nullptr};

  RunAnalyses() = default;
  RunAnalyses(const RunAnalyses&) = delete;
  RunAnalyses& operator=(const RunAnalyses&) = delete;
};

void ResolveClassesAndStructure(const CompareRun* const runs[2], RunAnalyses* out, std::vector<std::string>* notes) {
  for (int r = 0; r < 2; ++r) {
    const OperatorCallGraph& g = *runs[r]->graph;
    out->class_of[r] = runs[r]->classes;
    if (!out->class_of[r]) {
      out->own_classes[r] = ClassifyProfile(g.profile(), g, OpClassifier::Builtin());
      out->class_of[r] = &out->own_classes[r];
    }
    const StatusOr<ModelStructure>* s = runs[r]->structure;
    if (!s) s = &out->own_structure[r].emplace(AnalyzeStructure(g.profile(), g, *out->class_of[r]));
    if (s->ok()) out->structure[r] = &s->value();
    else notes->push_back(std::string(r ? "candidate" : "baseline") + ": no structure (" + s->status().ToString() + ")");
  }
}

// The run's source, format, hardware and totals, from its diagnosis and graph.
void DescribeRun(const CompareRun& run, RunSide* side) {
  const OperatorCallGraph& g = *run.graph;
  const DiagnosticReport& d = *run.diagnosis;
  side->source_path = d.source_path;
  if (side->source_path.empty()) {
    auto it = g.profile().metadata.find("source_path");
    if (it != g.profile().metadata.end()) side->source_path = it->second;
  }
  side->format = d.format;
  side->hardware = d.hardware_name.empty() ? d.hardware_id : d.hardware_name;
  side->steps_total = g.Steps().size();
  side->issues = d.issues.size();
  side->estimated_combined_speedup = d.estimated_combined_speedup;
}

// Numbers and latencies of the compared steps (indices into graph.Steps()).
void RecordComparedSteps(const OperatorCallGraph& g, const std::vector<size_t>& steps, RunSide* side) {
  std::vector<TimeNs> lat;
  for (size_t i : steps) {
    side->compared_steps.push_back(g.Steps()[i].number);
    lat.push_back(g.Steps()[i].latency_ns());
    side->step_latency_ns.push_back(double(g.Steps()[i].latency_ns()));
  }
  side->latency = ComputeLatencyStats(lat);
}

// Run totals become per-step figures divided by the compared step counts (at
// least 1); an op group missing from one side counts there as all-zero steps.
struct StepBasis {
  double baseline_step_count = 1;
  double candidate_step_count = 1;
  std::vector<double> baseline_zeros;
  std::vector<double> candidate_zeros;
};

StepBasis MakeStepBasis(const std::vector<size_t>& baseline_steps, const std::vector<size_t>& candidate_steps) {
  StepBasis basis;
  basis.baseline_step_count = double(std::max<size_t>(baseline_steps.size(), 1));
  basis.candidate_step_count = double(std::max<size_t>(candidate_steps.size(), 1));
  basis.baseline_zeros.assign(baseline_steps.size(), 0.0);
  basis.candidate_zeros.assign(candidate_steps.size(), 0.0);
  return basis;
}

void CompareStepLatency(double alpha, ComparisonReport* rep) {
  rep->step_latency = WelchTest(rep->baseline.step_latency_ns, rep->candidate.step_latency_ns, alpha);
  if (rep->step_latency.mean_candidate > 0)
    rep->measured_speedup = rep->step_latency.mean_baseline / rep->step_latency.mean_candidate;
}

// Per op class present in either run, the largest per-step change first.
std::vector<ClassDelta> CompareClasses(const RunOps& base, const RunOps& cand, const StepBasis& basis, double alpha) {
  std::vector<ClassDelta> out;
  for (size_t c = 0; c < kOpClassCount; ++c) {
    if (base.class_count[c] == 0 && cand.class_count[c] == 0) continue;
    ClassDelta d;
    d.op_class = OpClassName(static_cast<OpClass>(c));
    d.baseline_count = base.class_count[c];
    d.candidate_count = cand.class_count[c];
    d.baseline_ns = base.class_ns[c];
    d.candidate_ns = cand.class_ns[c];
    d.baseline_per_step_ns = double(d.baseline_ns) / basis.baseline_step_count;
    d.candidate_per_step_ns = double(d.candidate_ns) / basis.candidate_step_count;
    d.delta_per_step_ns = d.candidate_per_step_ns - d.baseline_per_step_ns;
    d.test = WelchTest(base.class_per_step[c], cand.class_per_step[c], alpha);
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const ClassDelta& a, const ClassDelta& b) {
    if (std::fabs(a.delta_per_step_ns) != std::fabs(b.delta_per_step_ns))
      return std::fabs(a.delta_per_step_ns) > std::fabs(b.delta_per_step_ns);
    return a.op_class < b.op_class;
  });
  return out;
}

// The keyed levels, strictest first: exact, normalised name, class + shape, class + normalised name.
void MatchByKeyLevels(const Profile* const prof[2], std::vector<OpGroup>& A, std::vector<OpGroup>& B,
                      std::vector<Pair>* pairs) {
  auto cls_prefix = [](const OpGroup& g) { return std::to_string(int(g.cls)) + "\x1f"; };
  MatchLevelPass(A, B, MatchLevel::kExact, [&](const OpGroup& g, int side, std::string* k) {
    *k = cls_prefix(g) + std::string(prof[side]->Str(g.name)) + "\x1f" + std::string(prof[side]->Str(g.shape));
    return true;
  }, pairs);
  MatchLevelPass(A, B, MatchLevel::kNormalizedName, [&](const OpGroup& g, int side, std::string* k) {
    *k = cls_prefix(g) + g.norm + "\x1f" + std::string(prof[side]->Str(g.shape));
    return true;
  }, pairs);
  MatchLevelPass(A, B, MatchLevel::kClassShape, [&](const OpGroup& g, int side, std::string* k) {
    if (g.shape == kEmptyStr) return false;
    *k = cls_prefix(g) + std::string(prof[side]->Str(g.shape));
    return true;
  }, pairs);
  MatchLevelPass(A, B, MatchLevel::kClassName, [&](const OpGroup& g, int, std::string* k) {
    *k = cls_prefix(g) + g.norm;
    return true;
  }, pairs);
}

// Appends one group merging the groups `idx` of G (named after the one with
// the most time) and marks them matched; returns the new group's index.
int32_t MergeGroups(std::vector<OpGroup>& G, const std::vector<int32_t>& idx) {
  int32_t top = idx[0];
  for (int32_t i : idx) if (G[i].total_ns > G[top].total_ns) top = i;
  OpGroup m;
  m.cls = G[top].cls;
  m.name = G[top].name;
  m.shape = G[top].shape;
  m.norm = G[top].norm;
  m.per_step.assign(G[top].per_step.size(), 0.0);
  m.merged = static_cast<uint32_t>(idx.size());
  for (int32_t i : idx) {
    G[i].matched = true;
    m.count += G[i].count;
    m.total_ns += G[i].total_ns;
    for (size_t k = 0; k < m.per_step.size(); ++k) m.per_step[k] += G[i].per_step[k];
  }
  m.matched = true;
  G.push_back(std::move(m));
  return static_cast<int32_t>(G.size() - 1);
}

// Class level: the ops of a class still unmatched on both sides are merged
// per side into one group each and compared as a whole (e.g. eager
// attention's bmm/softmax kernels vs one fused kernel).
void MatchRemainingByClass(std::vector<OpGroup>& A, std::vector<OpGroup>& B, std::vector<Pair>* pairs) {
  for (size_t c = 0; c < kOpClassCount; ++c) {
    std::vector<int32_t> ua, ub;
    for (int32_t i = 0; i < static_cast<int32_t>(A.size()); ++i) if (!A[i].matched && size_t(A[i].cls) == c) ua.push_back(i);
    for (int32_t i = 0; i < static_cast<int32_t>(B.size()); ++i) if (!B[i].matched && size_t(B[i].cls) == c) ub.push_back(i);
    if (ua.empty() || ub.empty()) continue;
    const int32_t ma = MergeGroups(A, ua);
    const int32_t mb = MergeGroups(B, ub);
    pairs->push_back(Pair{ma, mb, MatchLevel::kClass});
  }
}

void AddUnmatched(const std::vector<OpGroup>& A, const std::vector<OpGroup>& B, std::vector<Pair>* pairs) {
  for (int32_t i = 0; i < static_cast<int32_t>(A.size()); ++i)
    if (!A[i].matched) pairs->push_back(Pair{i, -1, MatchLevel::kBaselineOnly});
  for (int32_t i = 0; i < static_cast<int32_t>(B.size()); ++i)
    if (!B[i].matched) pairs->push_back(Pair{-1, i, MatchLevel::kCandidateOnly});
}

// Pairs every op group of A (baseline) and B (candidate); class-level matches
// append merged groups to A and B.
std::vector<Pair> MatchOpGroups(const Profile& pa, const Profile& pb, std::vector<OpGroup>& A, std::vector<OpGroup>& B) {
  const Profile* prof[2] = {&pa, &pb};
  std::vector<Pair> pairs;
  MatchByKeyLevels(prof, A, B, &pairs);
  MatchRemainingByClass(A, B, &pairs);
  AddUnmatched(A, B, &pairs);
  return pairs;
}

// What the op-level comparisons share: both runs' groups, their pairs and the per-step basis.
struct MatchedOps {
  const std::vector<Pair>& pairs;
  const std::vector<OpGroup>& baseline;
  const std::vector<OpGroup>& candidate;
  const StepBasis& basis;

  const OpGroup* BaselineOf(const Pair& pr) const { return pr.a >= 0 ? &baseline[pr.a] : nullptr; }
  const OpGroup* CandidateOf(const Pair& pr) const { return pr.b >= 0 ? &candidate[pr.b] : nullptr; }
};

OpDelta MakeOpDelta(const MatchedOps& m, const Pair& pr, const Profile& pa, const Profile& pb, double alpha) {
  OpDelta d;
  d.match = pr.level;
  const OpGroup* ga = m.BaselineOf(pr);
  const OpGroup* gb = m.CandidateOf(pr);
  d.op_class = OpClassName(ga ? ga->cls : gb->cls);
  if (ga) {
    d.baseline_name = std::string(pa.Str(ga->name));
    d.baseline_shape = std::string(pa.Str(ga->shape));
    d.baseline_count = ga->count;
    d.baseline_ns = ga->total_ns;
    d.baseline_ops = ga->merged;
  }
  if (gb) {
    d.candidate_name = std::string(pb.Str(gb->name));
    d.candidate_shape = std::string(pb.Str(gb->shape));
    d.candidate_count = gb->count;
    d.candidate_ns = gb->total_ns;
    d.candidate_ops = gb->merged;
  }
  d.baseline_per_step_ns = double(d.baseline_ns) / m.basis.baseline_step_count;
  d.candidate_per_step_ns = double(d.candidate_ns) / m.basis.candidate_step_count;
  d.delta_per_step_ns = d.candidate_per_step_ns - d.baseline_per_step_ns;
  d.test = WelchTest(ga ? ga->per_step : m.basis.baseline_zeros, gb ? gb->per_step : m.basis.candidate_zeros, alpha);
  return d;
}

// One row per pair, the largest per-step change first; counts the pairs per match level.
void CompareMatchedOps(const MatchedOps& m, const Profile& pa, const Profile& pb, double alpha, ComparisonReport* rep) {
  for (const Pair& pr : m.pairs) {
    ++rep->match_counts[static_cast<size_t>(pr.level)];
    rep->ops.push_back(MakeOpDelta(m, pr, pa, pb, alpha));
  }
  std::sort(rep->ops.begin(), rep->ops.end(), [](const OpDelta& a, const OpDelta& b) {
    if (std::fabs(a.delta_per_step_ns) != std::fabs(b.delta_per_step_ns))
      return std::fabs(a.delta_per_step_ns) > std::fabs(b.delta_per_step_ns);
    if (a.baseline_ns + a.candidate_ns != b.baseline_ns + b.candidate_ns)
      return a.baseline_ns + a.candidate_ns > b.baseline_ns + b.candidate_ns;
    return std::tie(a.baseline_name, a.candidate_name, a.baseline_shape) <
           std::tie(b.baseline_name, b.candidate_name, b.baseline_shape);
  });
}

// Each run's issues by IssueKey; the first (most severe) issue of a key wins.
struct IssueIndex {
  std::map<std::string, const Issue*> baseline;
  std::map<std::string, const Issue*> candidate;
};

IssueIndex IndexIssues(const DiagnosticReport& da, const DiagnosticReport& dc) {
  IssueIndex index;
  for (const Issue& i : da.issues) index.baseline.emplace(IssueKey(i), &i);
  for (const Issue& i : dc.issues) index.candidate.emplace(IssueKey(i), &i);
  return index;
}

// Whether `issue` is the one its run keeps for its key.
bool WinsItsKey(std::map<std::string, const Issue*>& run_index, const Issue& issue) {
  return run_index[IssueKey(issue)] == &issue;
}

// A baseline issue: resolved, or remaining when the candidate has its key.
IssueDelta BaselineIssueDelta(const Issue& i, const std::map<std::string, const Issue*>& candidate_index) {
  IssueDelta d;
  d.type = IssueTypeName(i.type);
  d.op_name = i.op_name;
  d.baseline_severity = SeverityName(i.severity);
  d.baseline_affected_ns = i.affected_ns;
  d.baseline_saved_ns = i.saved_ns;
  auto it = candidate_index.find(IssueKey(i));
  if (it == candidate_index.end()) {
    d.change = IssueChange::kResolved;
  } else {
    d.change = IssueChange::kRemaining;
    d.candidate_severity = SeverityName(it->second->severity);
    d.candidate_affected_ns = it->second->affected_ns;
    d.candidate_saved_ns = it->second->saved_ns;
  }
  return d;
}

IssueDelta NewIssueDelta(const Issue& i) {
  IssueDelta d;
  d.change = IssueChange::kNew;
  d.type = IssueTypeName(i.type);
  d.op_name = i.op_name;
  d.candidate_severity = SeverityName(i.severity);
  d.candidate_affected_ns = i.affected_ns;
  d.candidate_saved_ns = i.saved_ns;
  return d;
}

// Resolved, then remaining, then new issues.
std::vector<IssueDelta> CompareIssues(const DiagnosticReport& da, const DiagnosticReport& dc, IssueIndex& index) {
  std::vector<IssueDelta> resolved, remaining, added;
  for (const Issue& i : da.issues) {
    if (!WinsItsKey(index.baseline, i)) continue;
    IssueDelta d = BaselineIssueDelta(i, index.candidate);
    (d.change == IssueChange::kResolved ? resolved : remaining).push_back(std::move(d));
  }
  for (const Issue& i : dc.issues) {
    if (!WinsItsKey(index.candidate, i) || index.baseline.count(IssueKey(i))) continue;
    added.push_back(NewIssueDelta(i));
  }
  std::vector<IssueDelta> out;
  for (auto* v : {&resolved, &remaining, &added}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

// The actions given, else (when allowed) every baseline issue the candidate
// no longer shows, with the diagnosis' estimated saving.
std::vector<AppliedAction> ActionsToMeasure(const CompareOptions& options, const DiagnosticReport& da,
                                            IssueIndex& index, std::vector<std::string>* notes) {
  std::vector<AppliedAction> actions = options.actions;
  if (!actions.empty() || !options.actions_from_resolved_issues) return actions;
  for (const Issue& i : da.issues) {
    if (!WinsItsKey(index.baseline, i) || index.candidate.count(IssueKey(i))) continue;
    AppliedAction a;
    a.id = std::string(IssueTypeName(i.type)) + (i.op_name.empty() ? "" : ":" + i.op_name);
    a.description = i.detail;
    a.issue_type = IssueTypeName(i.type);
    a.target_op = i.op_name;
    a.estimated_saved_ns = i.saved_ns;
    a.estimate_steps = da.steps.size();
    a.source = "baseline issue resolved in candidate";
    actions.push_back(std::move(a));
  }
  if (!actions.empty())
    notes->push_back("no applied actions given: the baseline issues absent from the candidate are taken as applied");
  return actions;
}

// Adds to vb / vc the per-step times of the pairs the action targets: by
// normalised op name (`target`), else by its class; returns the pairs hit.
uint64_t AddTargetedOpTimes(const AppliedAction& a, const std::string& target, const MatchedOps& m,
                            std::vector<double>* vb, std::vector<double>* vc) {
  bool cls_ok = false;
  const OpClass target_cls = a.target_class.empty() ? OpClass::kOther : OpClassFromName(a.target_class, &cls_ok);
  uint64_t hits = 0;
  for (const Pair& pr : m.pairs) {
    const OpGroup* ga = m.BaselineOf(pr);
    const OpGroup* gb = m.CandidateOf(pr);
    bool hit = false;
    if (!target.empty()) hit = (ga && ga->norm == target) || (gb && gb->norm == target);
    else if (cls_ok) hit = (ga ? ga->cls : gb->cls) == target_cls;
    if (!hit) continue;
    ++hits;
    if (ga) *vb = AddVec(std::move(*vb), ga->per_step);
    if (gb) *vc = AddVec(std::move(*vc), gb->per_step);
  }
  return hits;
}

const char* ActionVerdict(const ActionOutcome& o, double estimate_tolerance) {
  if (!o.test.testable) return "not testable";
  if (!o.test.significant) return "no measurable change";
  if (std::isnan(o.measured_over_estimated)) return o.measured_per_step_ns > 0 ? "saved (no estimate)" : "slower";
  if (std::fabs(o.measured_over_estimated - 1) <= estimate_tolerance) return "as estimated";
  return o.measured_over_estimated < 1 ? "below estimate" : "above estimate";
}

// Measured against estimated saving per step of one action: on the ops it
// targets, else on the step latency.
ActionOutcome MeasureAction(const AppliedAction& a, const MatchedOps& m, const ComparisonReport& rep,
                            size_t baseline_diagnosed_steps, const CompareOptions& options) {
  ActionOutcome o;
  o.action = a;
  const double est_steps = double(a.estimate_steps ? a.estimate_steps : std::max<size_t>(baseline_diagnosed_steps, 1));
  o.estimated_per_step_ns = double(a.estimated_saved_ns) / est_steps;
  const std::string target = NormalizeKernelName(a.target_op);
  std::vector<double> vb = m.basis.baseline_zeros, vc = m.basis.candidate_zeros;
  o.matched_ops = AddTargetedOpTimes(a, target, m, &vb, &vc);
  if (o.matched_ops > 0) {
    o.measured_on = !target.empty() ? "ops named " + a.target_op + " (" + std::to_string(o.matched_ops) + " matched)"
                                    : "class " + a.target_class + " (" + std::to_string(o.matched_ops) + " ops)";
  } else {
    o.measured_on = "step latency";
    vb = rep.baseline.step_latency_ns;
    vc = rep.candidate.step_latency_ns;
  }
  o.measured_per_step_ns = SumVec(vb) / m.basis.baseline_step_count - SumVec(vc) / m.basis.candidate_step_count;
  if (o.estimated_per_step_ns > 0) o.measured_over_estimated = o.measured_per_step_ns / o.estimated_per_step_ns;
  o.test = WelchTest(vb, vc, options.alpha);
  o.verdict = ActionVerdict(o, options.estimate_tolerance);
  return o;
}

}  // namespace

StatusOr<ComparisonReport> CompareProfiles(const CompareRun& baseline, const CompareRun& candidate,
                                           const CompareOptions& options) {
  if (!baseline.graph || !candidate.graph || !baseline.diagnosis || !candidate.diagnosis)
    return InvalidArgumentError("compare: a run lacks its graph or diagnosis");
  if (!(options.alpha > 0 && options.alpha < 1)) return InvalidArgumentError("compare: alpha must lie in (0, 1)");
  ComparisonReport rep;
  rep.alpha = options.alpha;
  const CompareRun* runs[2] = {&baseline, &candidate};
  RunSide* sides[2] = {&rep.baseline, &rep.candidate};

  RunAnalyses analyses;
  ResolveClassesAndStructure(runs, &analyses, &rep.notes);
  const bool decode = DecodeStepCount(analyses.structure[0]) >= kMinSamplesForTest &&
                      DecodeStepCount(analyses.structure[1]) >= kMinSamplesForTest;
  rep.step_basis = decode ? "decode steps" : "all steps";
  std::vector<size_t> steps[2];
  RunOps ops[2];
  for (int r = 0; r < 2; ++r) {
    const OperatorCallGraph& g = *runs[r]->graph;
    DescribeRun(*runs[r], sides[r]);
    steps[r] = PickSteps(g, analyses.structure[r], decode);
    RecordComparedSteps(g, steps[r], sides[r]);
    ops[r] = CollectOps(g, *analyses.class_of[r], steps[r], sides[r]);
  }
  if (rep.baseline.device_ops != rep.candidate.device_ops)
    rep.notes.push_back("one run has device tasks and the other only host operators: op deltas compare unlike times");
  const StepBasis basis = MakeStepBasis(steps[0], steps[1]);

  CompareStepLatency(options.alpha, &rep);
  rep.classes = CompareClasses(ops[0], ops[1], basis, options.alpha);

  const Profile& pa = baseline.graph->profile();
  const Profile& pb = candidate.graph->profile();
  const std::vector<Pair> pairs = MatchOpGroups(pa, pb, ops[0].groups, ops[1].groups);
  const MatchedOps matched{pairs, ops[0].groups, ops[1].groups, basis};
  CompareMatchedOps(matched, pa, pb, options.alpha, &rep);

  const DiagnosticReport& da = *baseline.diagnosis;
  IssueIndex issue_index = IndexIssues(da, *candidate.diagnosis);
  rep.issues = CompareIssues(da, *candidate.diagnosis, issue_index);
  for (const AppliedAction& a : ActionsToMeasure(options, da, issue_index, &rep.notes))
    rep.actions.push_back(MeasureAction(a, matched, rep, da.steps.size(), options));
  if (!decode)
    rep.notes.push_back("fewer than 2 decode steps in a run: per-step figures use all steps (prefill included)");
  return rep;
}

StatusOr<ComparisonReport> ProfileComparer::generate_comparison_report(const ImportOptions& import,
                                                                       const DiagnoseOptions& diagnose) const {
  StatusOr<LoadedRun> a = LoadRunForCompare(baseline_path_, import, diagnose);
  if (!a.ok()) return a.status();
  StatusOr<LoadedRun> b = LoadRunForCompare(optimized_path_, import, diagnose);
  if (!b.ok()) return b.status();
  return CompareProfiles(a->view(), b->view(), options_);
}

}  // namespace pypto
