#include "model/profile_merge.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <vector>

namespace pypto {
namespace {

// Device indices of `profile`: device rows and the devices of its stream tracks.
std::set<int32_t> DeviceIndices(const Profile& profile) {
  std::set<int32_t> out;
  for (const DeviceRow& row : profile.devices.rows) out.insert(row.index);
  for (size_t t = 0; t < profile.tracks.size(); ++t)
    if (profile.tracks.device[t] >= 0) out.insert(profile.tracks.device[t]);
  return out;
}

// Where each of the rank's device indices goes in the merged profile (see the header).
std::map<int32_t, int32_t> DeviceMapping(const std::set<int32_t>& used, const std::set<int32_t>& rank_devices,
                                         const RankPlacement& placement) {
  std::map<int32_t, int32_t> map;
  std::set<int32_t> taken = used;
  if (placement.device_index_is_rank && rank_devices.size() == 1 && placement.rank >= 0 &&
      !taken.count(placement.rank)) {
    map[*rank_devices.begin()] = placement.rank;
    return map;
  }
  for (int32_t d : rank_devices) {
    if (!taken.count(d)) {
      map[d] = d;
      taken.insert(d);
      continue;
    }
    const int32_t next = *taken.rbegin() + 1;
    map[d] = next;
    taken.insert(next);
  }
  return map;
}

}  // namespace

bool DevicesCollide(const std::vector<const Profile*>& ranks) {
  std::set<int32_t> seen;
  for (const Profile* p : ranks)
    for (int32_t d : DeviceIndices(*p))
      if (!seen.insert(d).second) return true;
  return false;
}

void AppendRank(Profile* into, Profile&& from, const RankPlacement& placement) {
  const int32_t rank = placement.rank, slot = placement.slot;
  const std::string& label = placement.label;
  const std::string rank_text = rank >= 0 ? std::to_string(rank) : "?";
  const std::map<int32_t, int32_t> device_map = DeviceMapping(DeviceIndices(*into), DeviceIndices(from), placement);
  auto device_of = [&](int32_t d) {
    auto it = device_map.find(d);
    return d < 0 || it == device_map.end() ? d : it->second;
  };

  // Strings: re-interned once each, on first use.
  std::vector<StrId> string_map(from.strings.size(), kEmptyStr);
  std::vector<uint8_t> mapped(from.strings.size(), 0);
  auto str = [&](StrId id) -> StrId {
    if (id == kEmptyStr || id >= string_map.size()) return kEmptyStr;
    if (!mapped[id]) {
      string_map[id] = into->Intern(from.Str(id));
      mapped[id] = 1;
    }
    return string_map[id];
  };
  uint64_t ids_out_of_range = 0;
  auto id_of = [&](int64_t id) -> int64_t {
    if (id == kNoId) return id;
    if (id < 0 || id >= kRankIdStride) {
      ++ids_out_of_range;
      return id;
    }
    return id + static_cast<int64_t>(slot) * kRankIdStride;
  };

  // Tracks.
  const std::string pid_prefix = "rank " + rank_text + ":";
  std::vector<uint32_t> track_map(from.tracks.size());
  for (size_t t = 0; t < from.tracks.size(); ++t) {
    const std::string pid = pid_prefix + std::string(from.Str(from.tracks.pid_token[t]));
    const std::string_view tid = from.Str(from.tracks.tid_token[t]);
    uint32_t row = from.tracks.kind[t] == TrackKind::kDeviceStream
                       ? into->DeviceTrack(pid, tid, device_of(from.tracks.device[t]), from.tracks.stream[t])
                       : into->TrackFor(pid, tid, from.tracks.kind[t]);
    if (from.tracks.kind[t] != TrackKind::kDeviceStream) into->tracks.device[row] = device_of(from.tracks.device[t]);
    into->tracks.name[row] = str(from.tracks.name[t]);
    const std::string process = std::string(from.Str(from.tracks.process_name[t]));
    into->tracks.process_name[row] = into->Intern("rank " + rank_text + (process.empty() ? "" : " " + process));
    track_map[t] = row;
  }

  // Host ops.
  const HostOpTable& h = from.host_ops;
  const uint32_t host_base = static_cast<uint32_t>(into->host_ops.size());
  into->host_ops.Reserve(into->host_ops.size() + h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    HostOpRow r;
    r.name = str(h.name[i]);
    r.category = str(h.category[i]);
    r.kind = h.kind[i];
    r.track = track_map[h.track[i]];
    r.ts = h.ts[i];
    r.dur = h.dur[i];
    r.input_dims = str(h.input_dims[i]);
    r.input_types = str(h.input_types[i]);
    r.correlation = id_of(h.correlation[i]);
    r.external_id = id_of(h.external_id[i]);
    r.sequence_number = h.sequence_number[i];
    into->host_ops.Add(r);
  }

  // Device tasks.
  const DeviceTaskTable& d = from.device_tasks;
  const uint32_t task_base = static_cast<uint32_t>(into->device_tasks.size());
  into->device_tasks.Reserve(into->device_tasks.size() + d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    DeviceTaskRow r;
    r.name = str(d.name[i]);
    r.category = str(d.category[i]);
    r.kind = d.kind[i];
    r.track = track_map[d.track[i]];
    r.ts = d.ts[i];
    r.dur = d.dur[i];
    r.correlation = id_of(d.correlation[i]);
    r.external_id = id_of(d.external_id[i]);
    std::copy(d.grid[i].begin(), d.grid[i].end(), r.grid);
    std::copy(d.block[i].begin(), d.block[i].end(), r.block);
    r.bytes = d.bytes[i];
    r.core_type = str(d.core_type[i]);
    r.block_dim = d.block_dim(i);
    r.mix_block_dim = d.mix_block_dim(i);
    r.op_type = str(d.op_type(i));
    r.input_shapes = str(d.input_shapes(i));
    r.input_types = str(d.input_types(i));
    r.input_formats = str(d.input_formats(i));
    r.output_shapes = str(d.output_shapes(i));
    r.output_types = str(d.output_types(i));
    r.output_formats = str(d.output_formats(i));
    r.graph_launched = d.graph_launched[i] != 0;
    into->device_tasks.Add(r);
  }

  // Devices: rows keyed by their (remapped) index; a device two ranks share keeps one row.
  std::vector<uint32_t> device_row_map(from.devices.size());
  for (size_t i = 0; i < from.devices.size(); ++i) {
    DeviceRow row = from.devices.rows[i];
    row.index = device_of(row.index);
    row.name = str(row.name);
    auto& rows = into->devices.rows;
    auto it = std::find_if(rows.begin(), rows.end(), [&](const DeviceRow& r) { return r.index == row.index; });
    if (it == rows.end()) {
      rows.push_back(row);
      it = rows.end() - 1;
    }
    device_row_map[i] = static_cast<uint32_t>(it - rows.begin());
  }
  // Each device row of the rank names it.
  const StrId rank_key = into->Intern("rank");
  const StrId rank_value = into->Intern(rank_text);
  std::set<uint32_t> rank_rows(device_row_map.begin(), device_row_map.end());
  for (uint32_t row : rank_rows)
    into->attributes.Add(OwnerKind::kDevice, row, rank_key, rank_value,
                         rank >= 0 ? static_cast<double>(rank) : std::numeric_limits<double>::quiet_NaN());

  // Steps. The rank's ProfilerStep#N annotations become step rows of its
  // device: the ranks' steps repeat the same numbers over the same wall time,
  // so a step must count only its own rank's tasks (the graph's per-device
  // step rows do; annotation steps would count every rank's).
  const uint32_t step_base = static_cast<uint32_t>(into->steps.size());
  const int32_t only_device = device_map.size() == 1 ? device_map.begin()->second : -1;
  for (StepRow row : from.steps.rows) {
    row.name = str(row.name);
    row.source = str(row.source);
    row.device = row.device >= 0 ? device_of(row.device) : only_device;
    into->steps.rows.push_back(row);
  }
  if (from.steps.rows.empty() && only_device >= 0) {
    const StrId source = into->Intern(kRankStepSource);
    for (size_t i = 0; i < h.size(); ++i) {
      if (h.kind[i] != HostOpKind::kUserAnnotation && h.kind[i] != HostOpKind::kOperator) continue;
      const std::string_view name = from.Str(h.name[i]);
      if (!name.starts_with(kProfilerStepPrefix)) continue;
      const std::string_view digits = name.substr(kProfilerStepPrefix.size());
      int64_t number = -1;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
      if (ec != std::errc() || end != digits.data() + digits.size()) continue;
      StepRow row;
      row.number = number;
      row.name = str(h.name[i]);
      row.source = source;
      row.ts = h.ts[i];
      row.dur = std::max<TimeNs>(h.dur[i], 0);
      row.device = only_device;
      into->steps.rows.push_back(row);
    }
  }

  // Attributes, flows, counters.
  const AttributeTable& a = from.attributes;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t owner = a.owner[i];
    switch (a.owner_kind[i]) {
      case OwnerKind::kHostOp: owner += host_base; break;
      case OwnerKind::kDeviceTask: owner += task_base; break;
      case OwnerKind::kTrack: owner = owner < track_map.size() ? track_map[owner] : owner; break;
      case OwnerKind::kDevice: owner = owner < device_row_map.size() ? device_row_map[owner] : owner; break;
      case OwnerKind::kStep: owner += step_base; break;
    }
    into->attributes.Add(a.owner_kind[i], owner, str(a.key[i]), str(a.text[i]), a.number[i]);
  }
  const FlowTable& f = from.flows;
  for (size_t i = 0; i < f.size(); ++i) {
    const uint64_t id = f.id[i] < static_cast<uint64_t>(kRankIdStride)
                            ? f.id[i] + static_cast<uint64_t>(slot) * static_cast<uint64_t>(kRankIdStride)
                            : f.id[i];
    into->flows.Add(id, str(f.category[i]), f.phase[i], track_map[f.track[i]], f.ts[i]);
  }
  const CounterTable& c = from.counters;
  for (size_t i = 0; i < c.size(); ++i) into->counters.Add(str(c.name[i]), track_map[c.track[i]], c.ts[i], c.value[i]);

  // What the import said.
  for (auto& [key, value] : from.metadata) into->metadata.try_emplace(key, value);
  into->metadata["rank" + rank_text + ".source_path"] = label;
  for (auto& [reason, entry] : from.data_loss) into->CountLoss(entry.kind, reason, entry.first_location, entry.count);
  if (ids_out_of_range > 0)
    into->CountLoss(LossKind::kLinkLost, "multi-rank: rank id out of range (may link across ranks)", label, ids_out_of_range);
  for (std::string& note : from.notes) into->notes.push_back("rank " + rank_text + ": " + note);
  for (std::string& file : from.source_files) into->source_files.push_back(std::move(file));
}

}  // namespace pypto
