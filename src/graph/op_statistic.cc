#include "graph/op_statistic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>

namespace pypto {

std::vector<OpStatisticRow> OpStatisticRows(const Profile& profile) {
  constexpr std::string_view kPrefix = "op_statistic/";
  const AttributeTable& a = profile.attributes;
  std::map<std::tuple<int32_t, std::string, std::string>, OpStatisticRow> rows;
  a.ForEachRowOf(OwnerKind::kDevice, [&](size_t i, uint32_t owner) {
    const std::string_view key = profile.Str(a.key(i));
    if (!key.starts_with(kPrefix)) return;
    // "<OP Type>/<Core Type>/<column>", split from the end (an op type may hold '/').
    const std::string_view rest = key.substr(kPrefix.size());
    const size_t column_at = rest.rfind('/');
    if (column_at == std::string_view::npos || column_at == 0) return;
    const size_t core_at = rest.rfind('/', column_at - 1);
    if (core_at == std::string_view::npos) return;
    const std::string op(rest.substr(0, core_at));
    const std::string core(rest.substr(core_at + 1, column_at - core_at - 1));
    const std::string_view column = rest.substr(column_at + 1);
    const double value = a.number(i);
    if (std::isnan(value)) return;
    const int32_t device = owner < profile.devices.size() ? profile.devices.rows[owner].index : -1;
    OpStatisticRow& row = rows[{device, op, core}];
    row.device = device;
    row.op_type = op;
    row.core_type = core;
    if (column == "Count") row.count = value;
    else if (column == "Total Time(us)") row.total_us = value;
    else if (column == "Min Time(us)") row.min_us = value;
    else if (column == "Avg Time(us)") row.avg_us = value;
    else if (column == "Max Time(us)") row.max_us = value;
    else if (column == "Ratio(%)") row.ratio_percent = value;
  });
  std::vector<OpStatisticRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::sort(out.begin(), out.end(), [](const OpStatisticRow& x, const OpStatisticRow& y) {
    if (x.device != y.device) return x.device < y.device;
    if (x.total_us != y.total_us) return x.total_us > y.total_us;
    return std::tie(x.op_type, x.core_type) < std::tie(y.op_type, y.core_type);
  });
  return out;
}

}  // namespace pypto
