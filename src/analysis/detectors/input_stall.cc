// (12) input_stall: the device waits for its input.
//
//   * DataLoader stalls: the host sits in the DataLoader's `__next__`
//     (`enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`, the range
//     torch.profiler records around each fetch) while the device has nothing to
//     run. Affected and saved: the device idle inside those ranges (the union
//     of all devices' tasks taken out of each range; on a profile without device
//     tasks the whole range, since the compute thread waits). Loader workers
//     prefetching while the device computes hide that idle (HTA / the
//     TensorBoard plugin's "DataLoader" step-time category, diagnosis-rules §2).
//   * Pageable copies: copies whose row says the host side is pageable memory
//     (Kineto `Memcpy HtoD (Pageable -> Device)`, `Memcpy DtoH (Device ->
//     Pageable)`). The driver stages them through a pinned bounce buffer, the
//     host blocks for the whole copy and the copy cannot overlap compute
//     (CUDA C++ Best Practices Guide, "Pinned Memory"; the TensorBoard plugin's
//     "Memcpy" category). Affected: the wall time the copies cover. Saved: the
//     part of it with no kernel running beside it, which a pinned buffer copied
//     with non_blocking=True a step ahead overlaps with compute.
// One issue per kind. Both only count rows inside the analysed steps; a copy
// outside every step (a model's one-time upload) is not a per-step cost.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"
#include "graph/interval_union.h"

namespace pypto {
namespace {

bool IsDataLoaderFetch(std::string_view name) {
  return name.find("DataLoader") != std::string_view::npos && name.find("__next__") != std::string_view::npos;
}

// "HtoD" / "DtoH" / "" from a copy's name.
std::string_view CopyDirection(std::string_view name) {
  if (name.find("HtoD") != std::string_view::npos) return "HtoD";
  if (name.find("DtoH") != std::string_view::npos) return "DtoH";
  return "";
}

class InputStall final : public Detector {
 public:
  std::string_view name() const override { return "input_stall"; }
  IssueType type() const override { return IssueType::kInputStall; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    RunDataLoader(ctx, out);
    RunPageableCopies(ctx, out);
  }

 private:
  static void RunDataLoader(const DiagnosisContext& ctx, DetectorOutput* out) {
    const Profile& p = *ctx.profile;
    const HostOpTable& h = p.host_ops;
    // Outermost fetch ranges per thread (a python_function frame of the same
    // fetch nested inside counts once).
    std::vector<uint32_t> fetches;
    for (uint32_t op : ctx.host_ops) {
      if (h.kind[op] != HostOpKind::kOperator && h.kind[op] != HostOpKind::kUserAnnotation &&
          h.kind[op] != HostOpKind::kPython)
        continue;
      if (IsDataLoaderFetch(p.Str(h.name[op]))) fetches.push_back(op);
    }
    if (fetches.empty()) return;
    std::sort(fetches.begin(), fetches.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(h.track[a], h.ts[a]) < std::make_pair(h.track[b], h.ts[b]);
    });
    const std::vector<std::pair<TimeNs, TimeNs>> busy = detectors::BusyIntervals(ctx);
    Issue issue;
    issue.type = IssueType::kInputStall;
    issue.op_name = "DataLoader __next__";
    issue.op_type = "dataloader";
    TimeNs fetch_ns = 0, idle_ns = 0;
    uint64_t count = 0;
    std::map<int, TimeNs> idle_by_step;
    uint64_t single_process = 0, multi_process = 0;
    uint32_t last_track = UINT32_MAX;
    TimeNs last_end = kNoTime;
    for (uint32_t op : fetches) {
      const TimeNs start = h.ts[op], end = h.ts[op] + std::max<TimeNs>(h.dur[op], 0);
      if (h.track[op] == last_track && last_end != kNoTime && end <= last_end) continue;  // nested frame
      last_track = h.track[op];
      last_end = end;
      ++count;
      fetch_ns += end - start;
      const std::string_view fetch_name = p.Str(h.name[op]);
      single_process += fetch_name.find("_SingleProcess") != std::string_view::npos;
      multi_process += fetch_name.find("_MultiProcessing") != std::string_view::npos;
      const TimeNs idle = busy.empty() ? end - start : UncoveredLength(busy, start, end);
      idle_ns += idle;
      const int step = ctx.StepOf(start);
      if (step >= 0 && idle > 0) idle_by_step[step] += idle;
      if (issue.evidence.host_ops.size() < kMaxEvidenceRows) issue.evidence.host_ops.push_back(op);
    }
    if (idle_ns <= 0) {
      out->notes.push_back(fmt::format("{} DataLoader fetch(es) took {} while the device stayed busy: not a stall",
                                       count, detectors::FormatUs(fetch_ns)));
      return;
    }
    issue.affected_ns = idle_ns;
    issue.evidence.count = count;
    issue.evidence.total_ns = fetch_ns;
    for (const auto& [step, ns] : idle_by_step)
      issue.savings.push_back({SavingTargetKind::kStepIdle, static_cast<uint32_t>(ctx.steps[step]), ns});
    issue.method = SavingMethod::kMeasuredGap;
    issue.saving_formula = busy.empty() ? "time in DataLoader __next__ (no device: the compute thread waits for it)"
                                        : "device idle while the host is in DataLoader __next__ (prefetching workers "
                                          "hide it behind compute)";
    issue.detail = fmt::format(
        "{} DataLoader fetch(es) in the steps take {} ({} each on average); the device idles {} of it ({:.0f}%)",
        count, detectors::FormatUs(fetch_ns), detectors::FormatUs(fetch_ns / TimeNs(count)),
        detectors::FormatUs(idle_ns), fetch_ns > 0 ? 100.0 * double(idle_ns) / double(fetch_ns) : 0.0);
    // Which iterator the ranges name says whether loader workers exist at all.
    if (single_process > 0 && multi_process == 0)
      issue.detail += "; single-process loader (num_workers=0): batches are prepared on the training/serving thread";
    else if (multi_process > 0 && single_process == 0)
      issue.detail += "; worker processes are on but do not keep up: more workers, a larger prefetch_factor or a "
                      "lighter per-sample transform";
    detectors::AddMetric(&issue, "fetches", double(count), "count");
    detectors::AddMetric(&issue, "fetch_time_us", double(fetch_ns) / 1e3, "us");
    detectors::AddMetric(&issue, "device_idle_us", double(idle_ns) / 1e3, "us");
    out->issues.push_back(std::move(issue));
  }

  static void RunPageableCopies(const DiagnosisContext& ctx, DetectorOutput* out) {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& d = p.device_tasks;
    std::vector<uint32_t> copies;
    uint64_t outside = 0;
    TimeNs outside_ns = 0;
    for (uint32_t t = 0; t < d.size(); ++t) {
      if (d.kind[t] != DeviceTaskKind::kMemcpy || p.Str(d.name[t]).find("Pageable") == std::string_view::npos)
        continue;
      if (ctx.InWindow(d.ts[t])) copies.push_back(t);
      else ++outside, outside_ns += std::max<TimeNs>(d.dur[t], 0);
    }
    if (outside > 0)
      out->notes.push_back(fmt::format("{} pageable-memory copies ({}) lie outside the analysed steps (a one-time "
                                       "upload): not a per-step cost", outside, detectors::FormatUs(outside_ns)));
    if (copies.empty()) return;
    std::sort(copies.begin(), copies.end(), [&](uint32_t a, uint32_t b) { return d.ts[a] < d.ts[b]; });
    const std::vector<std::pair<TimeNs, TimeNs>> kernels = detectors::BusyIntervals(ctx, /*kernels_only=*/true);
    Issue issue;
    issue.type = IssueType::kInputStall;
    issue.op_name = "pageable memcpy";
    issue.op_type = "memcpy";
    std::map<std::string_view, uint64_t> by_direction;
    std::vector<std::pair<TimeNs, TimeNs>> spans;
    TimeNs exposed_ns = 0, copy_ns = 0;
    int64_t bytes = 0;
    TimeNs bytes_time_ns = 0;  // time of the copies whose size is known
    std::map<int, TimeNs> exposed_by_step;
    TimeNs covered_until = kNoTime;
    for (uint32_t t : copies) {
      const TimeNs start = d.ts[t], end = d.ts[t] + std::max<TimeNs>(d.dur[t], 0);
      spans.emplace_back(start, end);
      copy_ns += end - start;
      ++by_direction[CopyDirection(p.Str(d.name[t]))];
      if (d.bytes[t] > 0) bytes += d.bytes[t], bytes_time_ns += end - start;
      // Exposed: not beside a kernel, and not already counted (copies on two streams overlapping).
      const TimeNs from = covered_until == kNoTime ? start : std::max(start, covered_until);
      const TimeNs exposed = UncoveredLength(kernels, from, end);
      if (end > from && exposed > 0) {
        exposed_ns += exposed;
        const int step = ctx.StepOf(start);
        if (step >= 0) exposed_by_step[step] += exposed;
      }
      covered_until = covered_until == kNoTime ? end : std::max(covered_until, end);
      if (issue.evidence.tasks.size() < kMaxEvidenceRows) issue.evidence.tasks.push_back(t);
    }
    issue.affected_ns = IntervalUnionLength(std::move(spans));
    issue.evidence.count = copies.size();
    issue.evidence.total_ns = copy_ns;
    for (const auto& [step, ns] : exposed_by_step)
      issue.savings.push_back({SavingTargetKind::kStepIdle, static_cast<uint32_t>(ctx.steps[step]), ns});
    issue.method = SavingMethod::kMeasuredGap;
    issue.saving_formula = "copy time with no kernel running beside it (a pinned buffer copied with non_blocking=True "
                           "ahead of use overlaps it with compute)";
    std::string directions;
    for (const auto& [dir, n] : by_direction)
      directions += fmt::format("{}{} {}", directions.empty() ? "" : ", ", n, dir.empty() ? "other" : dir);
    issue.detail = fmt::format("{} copies from or to pageable host memory in the steps ({}), {} in all, {} with no "
                               "kernel beside them",
                               copies.size(), directions, detectors::FormatUs(copy_ns), detectors::FormatUs(exposed_ns));
    if (bytes > 0 && bytes_time_ns > 0) {
      const double gbps = double(bytes) / double(bytes_time_ns);  // bytes per ns = GB/s
      issue.detail += fmt::format("; {:.1f} MB at {:.1f} GB/s", double(bytes) / 1e6, gbps);
      detectors::AddMetric(&issue, "bytes", double(bytes), "B");
      detectors::AddMetric(&issue, "bandwidth_gbps", gbps, "GB/s");
    }
    detectors::AddMetric(&issue, "copies", double(copies.size()), "count");
    detectors::AddMetric(&issue, "copy_time_us", double(copy_ns) / 1e3, "us");
    detectors::AddMetric(&issue, "exposed_us", double(exposed_ns) / 1e3, "us");
    out->issues.push_back(std::move(issue));
  }
};

}  // namespace

const Detector& InputStallDetector() {
  static const InputStall detector;
  return detector;
}

}  // namespace pypto
