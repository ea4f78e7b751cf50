#include "graph/pipe_ratios.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace pypto {

bool IsPipeRatioKey(std::string_view key) {
  constexpr std::string_view kSuffix = "_ratio";
  return key.size() > kSuffix.size() && key.substr(key.size() - kSuffix.size()) == kSuffix;
}

std::vector<PipeRatioAggregate> PipeRatiosByOpType(const Profile& profile) {
  const AttributeTable& attrs = profile.attributes;
  const DeviceTaskTable& tasks = profile.device_tasks;

  // Which keys are ratios (decided once per distinct key id).
  std::unordered_map<StrId, bool> is_ratio;
  struct Sum {
    double weighted = 0;
    double plain = 0;
    double weight = 0;
    uint64_t count = 0;
  };
  struct Group {
    uint64_t count = 0;
    TimeNs total_ns = 0;
    std::map<StrId, Sum> sums;
  };
  std::unordered_map<StrId, Group> groups;  // by op type string id
  std::vector<uint8_t> counted(tasks.size(), 0);

  attrs.ForEachRow([&](size_t i, OwnerKind kind, uint32_t task) {
    if (kind != OwnerKind::kDeviceTask) return;
    const double value = attrs.number(i);
    if (std::isnan(value)) return;
    auto [it, inserted] = is_ratio.try_emplace(attrs.key(i), false);
    if (inserted) it->second = IsPipeRatioKey(profile.Str(attrs.key(i)));
    if (!it->second) return;
    if (task >= tasks.size()) return;
    StrId op = tasks.op_type(task);
    if (op == kEmptyStr) op = tasks.name[task];
    Group& group = groups[op];
    const TimeNs dur = std::max<TimeNs>(tasks.dur[task], 0);
    if (!counted[task]) {
      counted[task] = 1;
      ++group.count;
      group.total_ns += dur;
    }
    Sum& sum = group.sums[attrs.key(i)];
    sum.weighted += value * static_cast<double>(dur);
    sum.plain += value;
    sum.weight += static_cast<double>(dur);
    ++sum.count;
  });

  std::vector<PipeRatioAggregate> out;
  out.reserve(groups.size());
  for (const auto& [op, group] : groups) {
    PipeRatioAggregate row;
    row.op_type = std::string(profile.Str(op));
    row.count = group.count;
    row.total_ns = group.total_ns;
    for (const auto& [key, sum] : group.sums) {
      const double mean = sum.weight > 0 ? sum.weighted / sum.weight : sum.plain / static_cast<double>(sum.count);
      row.ratios.push_back({std::string(profile.Str(key)), mean, sum.count});
    }
    std::sort(row.ratios.begin(), row.ratios.end(),
              [](const PipeRatioMean& a, const PipeRatioMean& b) { return a.key < b.key; });
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const PipeRatioAggregate& a, const PipeRatioAggregate& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.op_type < b.op_type;
  });
  return out;
}

}  // namespace pypto
