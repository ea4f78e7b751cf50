// Merging the profiles of several ranks of one job into one Profile.
//
// Each rank's trace is imported on its own (importers fill an empty Profile
// and key tracks by the source's pid/tid, which repeat across ranks), then
// appended here. What the append keeps apart:
//   - tracks: the pid token gets a "rank N:" prefix, so two ranks' threads and
//     streams never share a timeline row;
//   - devices: ranks keep their device indices when no two ranks share one
//     (rank 0 on cuda:0, rank 1 on cuda:1 stay 0 and 1); when they collide
//     (every rank on cuda:0 of its own node) a one-device rank's device
//     becomes the rank number, other indices move to the next free index;
//     each device row gets a "rank" attribute;
//   - ids: correlation, external and flow ids are offset by the rank's slot,
//     because the call graph links launches to kernels by correlation id
//     across the whole profile;
//   - steps: a rank's steps carry its device (StepRow::device) when it has
//     one, its ProfilerStep#N annotations included, so that a step counts its
//     own rank's tasks only.
// Strings are re-interned; attributes follow their owners; data loss and notes
// are prefixed with the rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/profile.h"

namespace pypto {

// Ids of the appended rank `slot` (0-based position among the merged ranks)
// become id + slot * kRankIdStride. Kineto correlation and external ids are
// counters from 0 (CUPTI/roctracer and the profiler's own), far below 2^40 in
// any real trace; an id outside [0, kRankIdStride) is kept as written and
// counted as data loss ("rank id out of range"), since it may then collide.
inline constexpr int64_t kRankIdStride = int64_t{1} << 40;

// The step annotation torch's profiler writes (the graph's default
// GraphOptions::step_annotation_prefix), and the source of the step rows
// AppendRank makes of them.
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";
inline constexpr char kRankStepSource[] = "ProfilerStep annotation of the rank";

// Where one rank goes in the merged profile.
struct RankPlacement {
  int32_t rank = -1;     // job rank (distributedInfo.rank, the rank in the file name); -1 unknown
  int32_t slot = 0;      // 0-based place among the merged ranks (id offsets)
  std::string label;     // how notes name the rank's source ("sampled_rank-1.json.gz")
  // Ranks' device indices collide (every rank on cuda:0 of its own node): a
  // rank with one device gets device index = rank, so the ranks stay apart
  // and the index says which rank it is. Decided once for the whole job
  // (DevicesCollide) so that all ranks follow one rule.
  bool device_index_is_rank = false;
};

// True when two of the profiles use the same device index.
bool DevicesCollide(const std::vector<const Profile*>& ranks);

// Appends `from` (one rank's profile) to `into`.
void AppendRank(Profile* into, Profile&& from, const RankPlacement& placement);

}  // namespace pypto
