// Issue names, severity, ordering and the combination of savings.
#include "analysis/diagnostic_report.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace pypto {

namespace {
constexpr const char* kIssueTypeNames[kIssueTypeCount] = {
#define PYPTO_ISSUE_TYPE_NAME(Name, id, what) #id,
    PYPTO_ISSUE_TYPES(PYPTO_ISSUE_TYPE_NAME)
#undef PYPTO_ISSUE_TYPE_NAME
};
}  // namespace

const char* IssueTypeName(IssueType type) {
  size_t i = static_cast<size_t>(type);
  return i < kIssueTypeCount ? kIssueTypeNames[i] : "unknown";
}

bool IssueTypeFromName(std::string_view name, IssueType* type) {
  for (size_t i = 0; i < kIssueTypeCount; ++i) {
    if (name == kIssueTypeNames[i]) {
      if (type) *type = static_cast<IssueType>(i);
      return true;
    }
  }
  return false;
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kHigh: return "high";
    case Severity::kMedium: return "medium";
    case Severity::kLow: return "low";
  }
  return "low";
}

Severity SeverityForShare(double share, const SeverityThresholds& thresholds) {
  if (!(share == share)) return Severity::kLow;  // NaN
  if (share >= thresholds.high_share) return Severity::kHigh;
  if (share >= thresholds.medium_share) return Severity::kMedium;
  return Severity::kLow;
}

const char* SavingMethodName(SavingMethod method) {
  switch (method) {
    case SavingMethod::kNone: return "none";
    case SavingMethod::kRoofline: return "roofline";
    case SavingMethod::kMeasuredGap: return "measured_gap";
    case SavingMethod::kAmdahl: return "amdahl";
  }
  return "none";
}

const char* SavingTargetKindName(SavingTargetKind kind) {
  switch (kind) {
    case SavingTargetKind::kDeviceTask: return "device_task";
    case SavingTargetKind::kHostOp: return "host_op";
    case SavingTargetKind::kStepIdle: return "step_idle";
    case SavingTargetKind::kTaskGap: return "task_gap";
  }
  return "device_task";
}

namespace {
uint64_t FirstRow(const Issue& issue) {
  if (!issue.evidence.tasks.empty()) return issue.evidence.tasks.front();
  if (!issue.evidence.host_ops.empty()) return (uint64_t{1} << 40) + issue.evidence.host_ops.front();
  return ~uint64_t{0};
}
}  // namespace

bool IssueBefore(const Issue& a, const Issue& b) {
  if (a.severity != b.severity) return a.severity > b.severity;
  if (a.saved_ns != b.saved_ns) return a.saved_ns > b.saved_ns;
  if (a.type != b.type) return a.type < b.type;
  if (a.op_name != b.op_name) return a.op_name < b.op_name;
  if (a.affected_ns != b.affected_ns) return a.affected_ns > b.affected_ns;
  return FirstRow(a) < FirstRow(b);
}

void SortIssues(std::vector<Issue>* issues) { std::stable_sort(issues->begin(), issues->end(), IssueBefore); }

namespace {

// Splits a shape text into its skeleton ('#' per number) and its numbers.
void SplitShape(std::string_view shape, std::string* skeleton, std::vector<int64_t>* numbers) {
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] >= '0' && shape[i] <= '9') {
      int64_t v = 0;
      while (i < shape.size() && shape[i] >= '0' && shape[i] <= '9') {
        v = v > (INT64_MAX - 9) / 10 ? INT64_MAX : v * 10 + (shape[i] - '0');
        ++i;
      }
      skeleton->push_back('#');
      numbers->push_back(v);
    } else {
      skeleton->push_back(shape[i++]);
    }
  }
}

}  // namespace

std::string ShapeGroup::Text() const {
  std::string out;
  size_t k = 0;
  for (char c : skeleton) {
    if (c != '#' || k >= low.size()) { out.push_back(c); continue; }
    out += low[k] == high[k] ? std::to_string(low[k]) : std::to_string(low[k]) + ".." + std::to_string(high[k]);
    ++k;
  }
  return out;
}

void AddShapeToGroups(Evidence* evidence, std::string_view shape) {
  if (shape.empty()) return;
  std::string skeleton;
  std::vector<int64_t> numbers;
  SplitShape(shape, &skeleton, &numbers);
  for (ShapeGroup& g : evidence->shape_groups) {
    if (g.skeleton != skeleton) continue;
    for (size_t k = 0; k < numbers.size(); ++k) {
      g.low[k] = std::min(g.low[k], numbers[k]);
      g.high[k] = std::max(g.high[k], numbers[k]);
    }
    ++g.count;
    return;
  }
  if (evidence->shape_groups.size() >= kMaxShapeGroups) {
    ++evidence->other_shapes;
    return;
  }
  evidence->shape_groups.push_back({std::move(skeleton), numbers, numbers, 1});
}

CombinedSaving CombineSavings(const std::vector<Issue>& issues, TimeNs step_time_ns) {
  CombinedSaving out;
  std::map<std::pair<SavingTargetKind, uint32_t>, TimeNs> best;
  for (const Issue& issue : issues) {
    for (const RowSaving& s : issue.savings) {
      if (s.saved_ns <= 0) continue;
      out.claimed_ns += s.saved_ns;
      TimeNs& slot = best[{s.kind, s.row}];
      slot = std::max(slot, s.saved_ns);
    }
  }
  for (const auto& [key, ns] : best) out.saved_ns += ns;
  if (step_time_ns <= 0) {
    out.speedup = 1.0;
    return out;
  }
  // Never claim the whole step: keep at least 1% of it (a fix cannot make a step free).
  out.saved_ns = std::min(out.saved_ns, step_time_ns - step_time_ns / 100);
  out.speedup = double(step_time_ns) / double(step_time_ns - out.saved_ns);
  return out;
}

}  // namespace pypto
