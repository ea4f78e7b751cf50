#include "importers/common/staged_rows.h"

namespace pypto::staged_rows {
namespace {
// dst += f(src[i]) for every element, one resize then a plain loop.
template <typename T, typename F>
void AppendMapped(std::vector<T>& dst, const std::vector<T>& src, F f) {
  const size_t base = dst.size();
  dst.resize(base + src.size());
  for (size_t i = 0; i < src.size(); ++i) dst[base + i] = f(src[i]);
}
template <typename T>
void AppendAll(std::vector<T>& dst, const std::vector<T>& src) {
  dst.insert(dst.end(), src.begin(), src.end());
}
// IdColumn, DefaultedColumn: the column appends itself.
template <typename Column>
void AppendAll(Column& dst, const Column& src) {
  dst.Append(src);
}
// The columns host ops and device tasks both have.
template <typename Table, typename S, typename T>
void AppendTimedRows(Table& dst, const Table& src, S s, T t) {
  AppendMapped(dst.name, src.name, s);
  AppendMapped(dst.category, src.category, s);
  AppendAll(dst.kind, src.kind);
  AppendMapped(dst.track, src.track, t);
  AppendAll(dst.ts, src.ts);
  AppendAll(dst.dur, src.dur);
  AppendAll(dst.correlation, src.correlation);
  AppendAll(dst.external_id, src.external_id);
}
}  // namespace

void ExtendStringRemap(const Profile& from, Profile* to, std::vector<StrId>* remap) {
  for (StrId id = static_cast<StrId>(remap->size()); id < from.strings.size(); ++id)
    remap->push_back(to->Intern(from.Str(id)));
}

void Append(const Profile& from, const std::vector<StrId>& strings, const std::vector<uint32_t>& tracks,
            Profile* to) {
  auto s = [&](StrId id) { return strings[id]; };
  auto t = [&](uint32_t local) { return tracks[local]; };
  const uint32_t host_base = static_cast<uint32_t>(to->host_ops.size());
  const uint32_t task_base = static_cast<uint32_t>(to->device_tasks.size());
  {
    const HostOpTable& a = from.host_ops;
    HostOpTable& b = to->host_ops;
    AppendTimedRows(b, a, s, t);
    AppendAll(b.depth, a.depth);
    AppendAll(b.parent, a.parent);
    AppendMapped(b.input_dims, a.input_dims, s);
    AppendMapped(b.input_types, a.input_types, s);
    AppendAll(b.sequence_number, a.sequence_number);
  }
  {
    const DeviceTaskTable& a = from.device_tasks;
    DeviceTaskTable& b = to->device_tasks;
    AppendTimedRows(b, a, s, t);
    b.launch_dims.reserve(b.launch_dims.size() + a.launch_dims.size());
    for (size_t i = 0; i < a.launch_dims.size(); ++i)
      b.launch_dims.push_back(b.launch_dims_table.IdOf(a.launch_dims_table[a.launch_dims[i]]));
    AppendAll(b.bytes, a.bytes);
    AppendMapped(b.core_type, a.core_type, s);
    AppendAll(b.graph_launched, a.graph_launched);
    AppendAll(b.launcher, a.launcher);
    // The chunk's detail rows, their strings mapped, found or added among the profile's.
    const DeviceTaskDetailTable& x = a.details;
    std::vector<int32_t> detail_row(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
      DeviceTaskDetailTable::Facts facts = x.Get(k);
      for (StrId* id : {&facts.op_type, &facts.input_shapes, &facts.input_types, &facts.input_formats,
                        &facts.output_shapes, &facts.output_types, &facts.output_formats})
        *id = s(*id);
      detail_row[k] = b.details.RowOf(facts);
    }
    AppendMapped(b.detail, a.detail, [&](int32_t d) { return d < 0 ? d : detail_row[d]; });
  }
  {
    to->attributes.AppendFrom(from.attributes, &strings, [&](OwnerKind kind, uint32_t owner) {
      if (kind == OwnerKind::kHostOp) return owner + host_base;
      return kind == OwnerKind::kDeviceTask ? owner + task_base : owner;
    });
  }
  {
    const FlowTable& a = from.flows;
    FlowTable& b = to->flows;
    AppendAll(b.id, a.id);
    AppendMapped(b.category, a.category, s);
    AppendAll(b.phase, a.phase);
    AppendMapped(b.track, a.track, t);
    AppendAll(b.ts, a.ts);
  }
  to->counters.Append(from.counters, [&](StrId name, uint32_t track) { return std::make_pair(s(name), t(track)); });
  for (const auto& [reason, entry] : from.data_loss) to->CountLoss(entry.kind, reason, entry.first_location, entry.count);
}

void Clear(Profile* from) {
  auto clear = [](auto&... v) { (v.clear(), ...); };
  HostOpTable& h = from->host_ops;
  clear(h.name, h.category, h.kind, h.track, h.ts, h.dur, h.depth, h.parent, h.input_dims, h.input_types,
        h.correlation, h.external_id, h.sequence_number);
  DeviceTaskTable& d = from->device_tasks;
  clear(d.name, d.category, d.kind, d.track, d.ts, d.dur, d.correlation, d.external_id, d.launch_dims, d.bytes,
        d.core_type, d.graph_launched, d.launcher, d.detail);
  d.launch_dims_table.Clear();
  d.details.Clear();
  from->attributes.Clear();
  clear(from->flows.id, from->flows.category, from->flows.phase, from->flows.track, from->flows.ts);
  from->counters.Clear();
  from->data_loss.clear();
}

}  // namespace pypto::staged_rows
