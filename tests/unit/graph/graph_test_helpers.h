// A few-line way to build Profiles by hand for graph tests.
#pragma once

#include <string>
#include <string_view>

#include "model/profile.h"

namespace pypto::testing {

// Times are ns. Tracks are created on demand.
class ProfileBuilder {
 public:
  Profile profile;

  uint32_t Thread(std::string_view tid = "1", std::string_view pid = "100");
  uint32_t Stream(int32_t device, int64_t stream);

  uint32_t Op(uint32_t thread, std::string_view name, TimeNs ts, TimeNs dur, int64_t external_id = kNoId,
              HostOpKind kind = HostOpKind::kOperator);
  uint32_t Annotation(uint32_t thread, std::string_view name, TimeNs ts, TimeNs dur, int64_t external_id = kNoId);
  uint32_t Runtime(uint32_t thread, std::string_view name, TimeNs ts, TimeNs dur, int64_t correlation,
                   int64_t external_id = kNoId);
  uint32_t Task(uint32_t stream, std::string_view name, TimeNs ts, TimeNs dur, int64_t correlation = kNoId,
                DeviceTaskKind kind = DeviceTaskKind::kKernel, int64_t external_id = kNoId,
                std::string_view core_type = "");
  uint32_t Kernel(uint32_t stream, std::string_view name, TimeNs ts, TimeNs dur, int64_t correlation = kNoId) {
    return Task(stream, name, ts, dur, correlation);
  }
};

}  // namespace pypto::testing
