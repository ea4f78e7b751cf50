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

// The rank's string ids in `into`: each string is re-interned once, on first use.
class StringRemap {
 public:
  StringRemap(Profile* into, const Profile& from)
      : into_(into), from_(from), string_map_(from.strings.size(), kEmptyStr), mapped_(from.strings.size(), 0) {}

  StrId operator()(StrId id) {
    if (id == kEmptyStr || id >= string_map_.size()) return kEmptyStr;
    if (!mapped_[id]) {
      string_map_[id] = into_->Intern(from_.Str(id));
      mapped_[id] = 1;
    }
    return string_map_[id];
  }

 private:
  Profile* into_;
  const Profile& from_;
  std::vector<StrId> string_map_;
  std::vector<uint8_t> mapped_;
};

// What the steps of one AppendRank share: where the rank's rows, ids and
// strings go in `into`. The row maps and bases are filled as the tables are appended.
struct RankMerge {
  RankMerge(Profile* into_profile, Profile& from_profile, const RankPlacement& placement)
      : into(into_profile),
        from(from_profile),
        rank(placement.rank),
        slot(placement.slot),
        rank_text(rank >= 0 ? std::to_string(rank) : "?"),
        device_map(DeviceMapping(DeviceIndices(*into), DeviceIndices(from), placement)),
        str(into, from) {}

  int32_t DeviceOf(int32_t d) const {
    auto it = device_map.find(d);
    return d < 0 || it == device_map.end() ? d : it->second;
  }
  // Correlation / external id moved into the rank's slot; out-of-range ids are kept and counted.
  int64_t IdOf(int64_t id) {
    if (id == kNoId) return id;
    if (id < 0 || id >= kRankIdStride) {
      ++ids_out_of_range;
      return id;
    }
    return id + static_cast<int64_t>(slot) * kRankIdStride;
  }

  Profile* into;
  Profile& from;
  const int32_t rank, slot;
  const std::string rank_text;
  const std::map<int32_t, int32_t> device_map;
  StringRemap str;
  uint64_t ids_out_of_range = 0;
  std::vector<uint32_t> track_map;       // rank's track -> merged track
  std::vector<uint32_t> device_row_map;  // rank's device row -> merged device row
  uint32_t host_base = 0, task_base = 0, step_base = 0;
};

void AppendTracks(RankMerge& m) {
  Profile* into = m.into;
  const TrackTable& tracks = m.from.tracks;
  const std::string pid_prefix = "rank " + m.rank_text + ":";
  m.track_map.resize(tracks.size());
  for (size_t t = 0; t < tracks.size(); ++t) {
    const std::string pid = pid_prefix + std::string(m.from.Str(tracks.pid_token[t]));
    const std::string_view tid = m.from.Str(tracks.tid_token[t]);
    uint32_t row = tracks.kind[t] == TrackKind::kDeviceStream
                       ? into->DeviceTrack(pid, tid, m.DeviceOf(tracks.device[t]), tracks.stream[t])
                       : into->TrackFor(pid, tid, tracks.kind[t]);
    if (tracks.kind[t] != TrackKind::kDeviceStream) into->tracks.device[row] = m.DeviceOf(tracks.device[t]);
    into->tracks.name[row] = m.str(tracks.name[t]);
    const std::string process = std::string(m.from.Str(tracks.process_name[t]));
    into->tracks.process_name[row] = into->Intern("rank " + m.rank_text + (process.empty() ? "" : " " + process));
    m.track_map[t] = row;
  }
}

void AppendHostOps(RankMerge& m) {
  Profile* into = m.into;
  const HostOpTable& h = m.from.host_ops;
  m.host_base = static_cast<uint32_t>(into->host_ops.size());
  into->host_ops.Reserve(into->host_ops.size() + h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    HostOpRow r;
    r.name = m.str(h.name[i]);
    r.category = m.str(h.category[i]);
    r.kind = h.kind[i];
    r.track = m.track_map[h.track[i]];
    r.ts = h.ts[i];
    r.dur = h.dur[i];
    r.input_dims = m.str(h.input_dims[i]);
    r.input_types = m.str(h.input_types[i]);
    r.correlation = m.IdOf(h.correlation[i]);
    r.external_id = m.IdOf(h.external_id[i]);
    r.sequence_number = h.sequence_number[i];
    into->host_ops.Add(r);
  }
}

void AppendDeviceTasks(RankMerge& m) {
  Profile* into = m.into;
  const DeviceTaskTable& d = m.from.device_tasks;
  m.task_base = static_cast<uint32_t>(into->device_tasks.size());
  into->device_tasks.Reserve(into->device_tasks.size() + d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    DeviceTaskRow r;
    r.name = m.str(d.name[i]);
    r.category = m.str(d.category[i]);
    r.kind = d.kind[i];
    r.track = m.track_map[d.track[i]];
    r.ts = d.ts[i];
    r.dur = d.dur[i];
    r.correlation = m.IdOf(d.correlation[i]);
    r.external_id = m.IdOf(d.external_id[i]);
    std::copy(d.grid(i).begin(), d.grid(i).end(), r.grid);
    std::copy(d.block(i).begin(), d.block(i).end(), r.block);
    r.bytes = d.bytes[i];
    r.core_type = m.str(d.core_type[i]);
    r.block_dim = d.block_dim(i);
    r.mix_block_dim = d.mix_block_dim(i);
    r.op_type = m.str(d.op_type(i));
    r.input_shapes = m.str(d.input_shapes(i));
    r.input_types = m.str(d.input_types(i));
    r.input_formats = m.str(d.input_formats(i));
    r.output_shapes = m.str(d.output_shapes(i));
    r.output_types = m.str(d.output_types(i));
    r.output_formats = m.str(d.output_formats(i));
    r.graph_launched = d.graph_launched[i] != 0;
    into->device_tasks.Add(r);
  }
}

// Device rows keyed by their (remapped) index; a device two ranks share keeps one row.
void AppendDevices(RankMerge& m) {
  const DeviceTable& devices = m.from.devices;
  m.device_row_map.resize(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    DeviceRow row = devices.rows[i];
    row.index = m.DeviceOf(row.index);
    row.name = m.str(row.name);
    auto& rows = m.into->devices.rows;
    auto it = std::find_if(rows.begin(), rows.end(), [&](const DeviceRow& r) { return r.index == row.index; });
    if (it == rows.end()) {
      rows.push_back(row);
      it = rows.end() - 1;
    }
    m.device_row_map[i] = static_cast<uint32_t>(it - rows.begin());
  }
}

// Each device row of the rank names it.
void TagDevicesWithRank(RankMerge& m) {
  Profile* into = m.into;
  const StrId rank_key = into->Intern("rank");
  const StrId rank_value = into->Intern(m.rank_text);
  std::set<uint32_t> rank_rows(m.device_row_map.begin(), m.device_row_map.end());
  for (uint32_t row : rank_rows)
    into->attributes.Add(OwnerKind::kDevice, row, rank_key, rank_value,
                         m.rank >= 0 ? static_cast<double>(m.rank) : std::numeric_limits<double>::quiet_NaN());
}

// Step rows from the rank's ProfilerStep#N host annotations, on its only device.
void AppendProfilerStepAnnotations(RankMerge& m, int32_t only_device) {
  Profile* into = m.into;
  const HostOpTable& h = m.from.host_ops;
  const StrId source = into->Intern(kRankStepSource);
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.kind[i] != HostOpKind::kUserAnnotation && h.kind[i] != HostOpKind::kOperator) continue;
    const std::string_view name = m.from.Str(h.name[i]);
    if (!name.starts_with(kProfilerStepPrefix)) continue;
    const std::string_view digits = name.substr(kProfilerStepPrefix.size());
    int64_t number = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (ec != std::errc() || end != digits.data() + digits.size()) continue;
    StepRow row;
    row.number = number;
    row.name = m.str(h.name[i]);
    row.source = source;
    row.ts = h.ts[i];
    row.dur = std::max<TimeNs>(h.dur[i], 0);
    row.device = only_device;
    into->steps.rows.push_back(row);
  }
}

// The rank's steps become step rows of its device: the ranks' steps repeat
// the same numbers over the same wall time, so a step must count only its own
// rank's tasks (the graph's per-device step rows do; annotation steps would
// count every rank's).
void AppendSteps(RankMerge& m) {
  m.step_base = static_cast<uint32_t>(m.into->steps.size());
  const int32_t only_device = m.device_map.size() == 1 ? m.device_map.begin()->second : -1;
  for (StepRow row : m.from.steps.rows) {
    row.name = m.str(row.name);
    row.source = m.str(row.source);
    row.device = row.device >= 0 ? m.DeviceOf(row.device) : only_device;
    m.into->steps.rows.push_back(row);
  }
  if (m.from.steps.rows.empty() && only_device >= 0) AppendProfilerStepAnnotations(m, only_device);
}

// Attributes follow their owners to the owners' merged rows.
void AppendAttributes(RankMerge& m) {
  const AttributeTable& a = m.from.attributes;
  a.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    switch (kind) {
      case OwnerKind::kHostOp: owner += m.host_base; break;
      case OwnerKind::kDeviceTask: owner += m.task_base; break;
      case OwnerKind::kTrack: owner = owner < m.track_map.size() ? m.track_map[owner] : owner; break;
      case OwnerKind::kDevice: owner = owner < m.device_row_map.size() ? m.device_row_map[owner] : owner; break;
      case OwnerKind::kStep: owner += m.step_base; break;
    }
    m.into->attributes.Add(kind, owner, m.str(a.key(i)), m.str(a.text(i)), a.number(i), a.number_text_form(i));
  });
}

void AppendFlows(RankMerge& m) {
  const FlowTable& f = m.from.flows;
  for (size_t i = 0; i < f.size(); ++i) {
    const uint64_t id = f.id[i] < static_cast<uint64_t>(kRankIdStride)
                            ? f.id[i] + static_cast<uint64_t>(m.slot) * static_cast<uint64_t>(kRankIdStride)
                            : f.id[i];
    m.into->flows.Add(id, m.str(f.category[i]), f.phase[i], m.track_map[f.track[i]], f.ts[i]);
  }
}

void AppendCounters(RankMerge& m) {
  m.into->counters.Append(m.from.counters,
                          [&](StrId name, uint32_t track) { return std::make_pair(m.str(name), m.track_map[track]); });
}

// What the import said: metadata, data loss, notes and source files.
void AppendImportReport(RankMerge& m, const std::string& label) {
  Profile* into = m.into;
  Profile& from = m.from;
  for (auto& [key, value] : from.metadata) into->metadata.try_emplace(key, value);
  into->metadata["rank" + m.rank_text + ".source_path"] = label;
  for (auto& [reason, entry] : from.data_loss) into->CountLoss(entry.kind, reason, entry.first_location, entry.count);
  if (m.ids_out_of_range > 0)
    into->CountLoss(LossKind::kLinkLost, "multi-rank: rank id out of range (may link across ranks)", label,
                    m.ids_out_of_range);
  for (std::string& note : from.notes) into->notes.push_back("rank " + m.rank_text + ": " + note);
  for (std::string& file : from.source_files) into->source_files.push_back(std::move(file));
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
  RankMerge m(into, from, placement);
  AppendTracks(m);
  AppendHostOps(m);
  AppendDeviceTasks(m);
  AppendDevices(m);
  TagDevicesWithRank(m);
  AppendSteps(m);
  AppendAttributes(m);
  AppendFlows(m);
  AppendCounters(m);
  AppendImportReport(m, placement.label);
}

}  // namespace pypto
