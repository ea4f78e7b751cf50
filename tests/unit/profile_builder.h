// A hand-made profile for tests, in the shape of a real case.
#pragma once

#include <string>
#include <string_view>

#include "model/profile.h"

namespace pypto::testing {

// Hand-made profiles in the shape of a real case, times in µs: one host
// thread and the device streams a test asks for.
struct ProfileBuilder {
  Profile p;
  uint32_t thread = p.TrackFor("1", "1", TrackKind::kHostThread);

  uint32_t Stream(int64_t stream, int64_t device = 0) {
    return p.DeviceTrack(std::to_string(device), std::to_string(stream), device, stream);
  }
  uint32_t Host(std::string_view name, HostOpKind kind, TimeNs ts_us, TimeNs dur_us, int64_t correlation = kNoId) {
    HostOpRow row;
    row.name = p.Intern(name);
    row.kind = kind;
    row.track = thread;
    row.ts = ts_us * 1000;
    row.dur = dur_us * 1000;
    row.correlation = correlation;
    return p.host_ops.Add(row);
  }
  uint32_t Task(uint32_t track, std::string_view name, DeviceTaskKind kind, TimeNs ts_us, TimeNs dur_us,
                int64_t correlation = kNoId, int64_t bytes = -1) {
    DeviceTaskRow row;
    row.name = p.Intern(name);
    row.kind = kind;
    row.track = track;
    row.ts = ts_us * 1000;
    row.dur = dur_us * 1000;
    row.correlation = correlation;
    row.bytes = bytes;
    return p.device_tasks.Add(row);
  }
};

}  // namespace pypto::testing
