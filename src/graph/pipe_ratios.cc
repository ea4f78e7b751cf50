#include "graph/pipe_ratios.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace pypto {

bool IsPipeRatioKey(std::string_view key) {
  constexpr std::string_view kSuffix = "_ratio";
  return key.size() > kSuffix.size() && key.substr(key.size() - kSuffix.size()) == kSuffix;
}

std::vector<PipeRatioAggregate> PipeRatiosByOpType(const Profile& profile) {
  const AttributeTable& attrs = profile.attributes;
  const DeviceTaskTable& tasks = profile.device_tasks;

  // Ratio keys get a dense index when first seen; a key id's slot says which
  // (decided once per distinct key: a kernel_details.csv has ~30 keys over
  // tens of millions of rows).
  constexpr int32_t kUndecided = -2, kNotRatio = -1;
  std::vector<int32_t> ratio_index;
  std::vector<StrId> ratio_keys;
  auto index_of = [&](StrId key) {
    if (key >= ratio_index.size()) ratio_index.resize(static_cast<size_t>(key) + 1, kUndecided);
    int32_t& slot = ratio_index[key];
    if (slot == kUndecided) {
      slot = IsPipeRatioKey(profile.Str(key)) ? static_cast<int32_t>(ratio_keys.size()) : kNotRatio;
      if (slot != kNotRatio) ratio_keys.push_back(key);
    }
    return slot;
  };
  struct Sum {
    double weighted = 0;
    double plain = 0;
    double weight = 0;
    uint64_t count = 0;
  };
  struct Group {
    uint64_t count = 0;
    TimeNs total_ns = 0;
    std::vector<Sum> sums;  // by ratio index; each sums its rows in row order
  };
  std::unordered_map<StrId, Group> groups;  // by op type string id
  std::vector<uint8_t> counted(tasks.size(), 0);

  // A run's rows share their task, so its op type and group are found once.
  for (size_t r = 0; r < attrs.run_count(); ++r) {
    const AttributeTable::OwnerRun run = attrs.run(r);
    if (run.kind != OwnerKind::kDeviceTask || run.owner >= tasks.size()) continue;
    const uint32_t task = run.owner;
    Group* group = nullptr;  // made at the task's first ratio, as the groups hold tasks that have one
    for (size_t i = run.begin; i < run.end; ++i) {
      const int32_t index = index_of(attrs.key(i));
      if (index == kNotRatio) continue;
      const double value = attrs.number(i);
      if (std::isnan(value)) continue;
      const TimeNs dur = std::max<TimeNs>(tasks.dur[task], 0);
      if (group == nullptr) {
        StrId op = tasks.op_type(task);
        if (op == kEmptyStr) op = tasks.name[task];
        group = &groups[op];
        if (!counted[task]) {
          counted[task] = 1;
          ++group->count;
          group->total_ns += dur;
        }
      }
      if (group->sums.size() <= static_cast<size_t>(index)) group->sums.resize(static_cast<size_t>(index) + 1);
      Sum& sum = group->sums[static_cast<size_t>(index)];
      sum.weighted += value * static_cast<double>(dur);
      sum.plain += value;
      sum.weight += static_cast<double>(dur);
      ++sum.count;
    }
  }

  std::vector<PipeRatioAggregate> out;
  out.reserve(groups.size());
  for (const auto& [op, group] : groups) {
    PipeRatioAggregate row;
    row.op_type = std::string(profile.Str(op));
    row.count = group.count;
    row.total_ns = group.total_ns;
    for (size_t index = 0; index < group.sums.size(); ++index) {
      const Sum& sum = group.sums[index];
      if (sum.count == 0) continue;  // a ratio of other op types only
      const double mean = sum.weight > 0 ? sum.weighted / sum.weight : sum.plain / static_cast<double>(sum.count);
      row.ratios.push_back({std::string(profile.Str(ratio_keys[index])), mean, sum.count});
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
