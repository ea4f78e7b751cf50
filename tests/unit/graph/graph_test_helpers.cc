#include "unit/graph/graph_test_helpers.h"

#include <string>

namespace pypto::testing {

uint32_t ProfileBuilder::Thread(std::string_view tid, std::string_view pid) {
  return profile.TrackFor(pid, tid, TrackKind::kHostThread);
}

uint32_t ProfileBuilder::Stream(int32_t device, int64_t stream) {
  return profile.DeviceTrack(std::to_string(device), std::to_string(stream), device, stream);
}

uint32_t ProfileBuilder::Op(uint32_t thread, std::string_view name, TimeNs ts, TimeNs dur, int64_t external_id,
                            HostOpKind kind) {
  HostOpRow row;
  row.name = profile.Intern(name);
  row.kind = kind;
  row.track = thread;
  row.ts = ts;
  row.dur = dur;
  row.external_id = external_id;
  return profile.host_ops.Add(row);
}

uint32_t ProfileBuilder::Annotation(uint32_t thread, std::string_view name, TimeNs ts, TimeNs dur,
                                    int64_t external_id) {
  return Op(thread, name, ts, dur, external_id, HostOpKind::kUserAnnotation);
}

uint32_t ProfileBuilder::Runtime(uint32_t thread, std::string_view name, TimeNs ts, TimeNs dur, int64_t correlation,
                                 int64_t external_id) {
  uint32_t row = Op(thread, name, ts, dur, external_id, HostOpKind::kRuntime);
  profile.host_ops.correlation.set(row, correlation);
  return row;
}

uint32_t ProfileBuilder::Task(uint32_t stream, std::string_view name, TimeNs ts, TimeNs dur, int64_t correlation,
                              DeviceTaskKind kind, int64_t external_id, std::string_view core_type) {
  DeviceTaskRow row;
  row.name = profile.Intern(name);
  row.kind = kind;
  row.track = stream;
  row.ts = ts;
  row.dur = dur;
  row.correlation = correlation;
  row.external_id = external_id;
  row.core_type = core_type.empty() ? kEmptyStr : profile.Intern(core_type);
  return profile.device_tasks.Add(row);
}

}  // namespace pypto::testing
