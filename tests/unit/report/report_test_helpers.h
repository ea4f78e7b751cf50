// A small hand-built profile shared by the report tests: one host thread with
// a ProfilerStep#3 annotation, an operator, a launch call, and one kernel on
// stream 7 of device 0, at epoch times (so exact-µs printing matters).
#pragma once

#include <cstdint>

#include "model/profile.h"

namespace pypto::testing {

struct SampleProfile {
  // 2023-09-06 22:39:19.123456789 UTC in ns: the base of every time below.
  static constexpr int64_t kStart = 1694039959123456789;
  static constexpr int64_t kBaseWholeSecond = 1694039959000000000;
  static constexpr int64_t kCorrelation = 42;
  // Above 2^53: must be written as a string in args.
  static constexpr int64_t kHugeExternalId = (int64_t{1} << 60) + 1;

  Profile profile;
  uint32_t host_track = 0;
  uint32_t device_track = 0;
  uint32_t step_op = 0;
  uint32_t matmul_op = 0;
  uint32_t launch_op = 0;
  uint32_t kernel = 0;
};

// Fills a SampleProfile (Profile is not movable into a returned aggregate
// that the graph points at, so the caller owns the storage).
void BuildSampleProfile(SampleProfile* sample);

}  // namespace pypto::testing
