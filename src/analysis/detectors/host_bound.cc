// Detector 5: host_bound — the device waits for the host.
//   * Device idle share of each analysed step: Ascend step_trace_time Free /
//     step (msprof-analyze overall summary) when the step row has it, else
//     1 − busy / step window with busy = union of the device's task intervals
//     (the busiest device of the step). Flagged when the idle share over the
//     analysed steps exceeds free_share_threshold (0.10).
//   * Idle gaps between the device's busy intervals are split with HTA's
//     idle-time categories (§4.2): host wait (the launching runtime call began
//     after the device went idle, or no launch information: Ascend), others
//     (launch issued earlier: event/stream waits); gaps above
//     max_launch_gap_us (1500 µs) are not launch latency.
//   * Evidence: the critical path's host + launch share (HTA bound_by cpu_bound /
//     launch overhead); above critical_path_host_share (0.5) it is named in the detail.
// Saving (measured_gap): each host-wait gap minus a 1 µs residual (kTaskGap on
// the task after the gap); idle before the first / after the last task of a
// step is not claimed (it may be data loading or synchronisation).
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "analysis/detectors/detector_util.h"

namespace pypto {
namespace {

// Device idle can be put on the host: there are host events, or step_trace Free figures.
bool IdleAttributable(const DiagnosisContext& ctx) {
  if (!ctx.host_ops.empty()) return true;
  for (const StepRow& row : ctx.profile->steps.rows)
    if (row.free != kUnknownNs) return true;
  return false;
}

class HostBound final : public Detector {
 public:
  std::string_view name() const override { return "host_bound"; }
  IssueType type() const override { return IssueType::kHostBound; }
  // Run reads every step's path once it has tasks and idle it can attribute.
  bool ReadsStepPaths(const DiagnosisContext& ctx) const override {
    return !ctx.tasks.empty() && IdleAttributable(ctx);
  }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& t = p.device_tasks;
    const HostBoundOptions& opt = ctx.options->host_bound;
    if (ctx.tasks.empty()) {
      out->notes.push_back("no device tasks in the analysed steps: device idle time not measurable");
      return;
    }
    if (!IdleAttributable(ctx)) {
      out->notes.push_back("no host events and no step_trace Free: device idle time not attributable to the host");
      return;
    }
    const TimeNs max_gap = static_cast<TimeNs>(opt.max_launch_gap_us * 1000);
    TimeNs window_ns = 0, idle_ns = 0, host_wait_ns = 0, other_gap_ns = 0;
    uint64_t host_wait_gaps = 0;
    bool from_free = false;
    Issue issue;
    // Tasks by (device, ts).
    std::vector<uint32_t> rows = ctx.tasks;
    auto device_of = [&](uint32_t r) { return p.tracks.device[t.track[r]]; };
    std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
      return std::make_tuple(device_of(a), t.ts[a], a) < std::make_tuple(device_of(b), t.ts[b], b);
    });
    for (size_t s = 0; s < ctx.step_windows.size(); ++s) {
      const TimeWindow w = ctx.step_windows[s];
      // Busiest device of the step.
      TimeNs busy = 0;
      int32_t device = -1;
      for (const BusyTime& b : ctx.graph->DeviceBusyTimes(w)) {
        if (b.busy_ns > busy) { busy = b.busy_ns; device = b.device; }
      }
      TimeNs step_ns = w.duration();
      TimeNs idle = std::max<TimeNs>(0, step_ns - busy);
      if (s < ctx.steps.size()) {
        const StepInfo& st = ctx.graph->Steps()[ctx.steps[s]];
        for (const StepRow& row : p.steps.rows) {
          if (row.number == st.number && row.free != kUnknownNs && row.dur > 0 && (row.device == st.device)) {
            step_ns = row.dur;
            idle = row.free;
            from_free = true;
            break;
          }
        }
      }
      window_ns += step_ns;
      idle_ns += idle;
      // Gaps between busy intervals of that device within the window: its rows
      // starting in the window, found by binary search on (device, ts).
      TimeNs busy_end = kNoTime;
      auto first = std::lower_bound(rows.begin(), rows.end(), std::make_pair(device, w.start),
                                    [&](uint32_t r, const std::pair<int32_t, TimeNs>& key) {
                                      return std::make_pair(device_of(r), t.ts[r]) < key;
                                    });
      for (auto it = first; it != rows.end() && device_of(*it) == device && t.ts[*it] < w.end; ++it) {
        const uint32_t r = *it;
        if (busy_end != kNoTime && t.ts[r] > busy_end) {
          TimeNs gap = t.ts[r] - busy_end;
          int32_t launcher = ctx.graph->LauncherOf(r);
          bool host_wait = gap <= max_gap && (launcher < 0 || p.host_ops.ts[launcher] >= busy_end - gap / 2);
          if (host_wait) {
            host_wait_ns += gap;
            ++host_wait_gaps;
            if (gap > detectors::kResidualKernelGapNs)
              issue.savings.push_back({SavingTargetKind::kTaskGap, r, gap - detectors::kResidualKernelGapNs});
            if (issue.evidence.tasks.size() < kMaxEvidenceRows) issue.evidence.tasks.push_back(r);
          } else {
            other_gap_ns += gap;
          }
        }
        busy_end = busy_end == kNoTime ? t.ts[r] + t.dur[r] : std::max(busy_end, t.ts[r] + t.dur[r]);
      }
    }
    const double idle_share = window_ns > 0 ? double(idle_ns) / double(window_ns) : 0;
    double cp_host_share = std::nan("");
    {
      TimeNs host = 0, total = 0;
      for (size_t k = 0; k < ctx.steps.size(); ++k) {
        const CriticalPath& cp = ctx.StepPath(k);
        host += cp.breakdown_ns[size_t(PathSegmentKind::kHostBound)] +
                cp.breakdown_ns[size_t(PathSegmentKind::kLaunchOverhead)];
        total += cp.latency_ns;
      }
      if (total > 0) cp_host_share = double(host) / double(total);
    }
    if (idle_share <= opt.free_share_threshold) return;
    // With launch information, idle that no launch explains (before the first
    // task, blocking copies, event waits) is not the host being slow to
    // dispatch: the issue stands on the launch-bound gaps alone.
    if (!from_free && host_wait_gaps == 0) {
      out->notes.push_back(fmt::format(
          "device idle {:.0f}% of the step, but no gap between kernels waits for a launch (idle before the first "
          "task, in blocking copies or event waits): not reported as host-bound", idle_share * 100));
      return;
    }
    issue.type = IssueType::kHostBound;
    issue.op_name = "";
    issue.op_type = "";
    issue.compute_ratio = 1.0 - idle_share;
    // Step_trace Free is the profiler's own host-bound measure; otherwise only
    // the launch-bound gaps are evidence of it.
    issue.affected_ns = from_free ? idle_ns : host_wait_ns;
    issue.evidence.count = host_wait_gaps;
    issue.evidence.total_ns = host_wait_ns;
    detectors::AddMetric(&issue, "device_idle_share", idle_share, "ratio");
    detectors::AddMetric(&issue, "device_idle_ns", double(idle_ns), "ns");
    detectors::AddMetric(&issue, "host_wait_gap_ns", double(host_wait_ns), "ns");
    detectors::AddMetric(&issue, "host_wait_gaps", double(host_wait_gaps), "count");
    detectors::AddMetric(&issue, "other_gap_ns", double(other_gap_ns), "ns");
    detectors::AddMetric(&issue, "critical_path_host_share", cp_host_share, "ratio");
    issue.detail = fmt::format("device idle {:.0f}% of the step ({}) > {:.0f}%; {} launch-bound gaps total {:.1f} us",
                               idle_share * 100, from_free ? "step_trace_time Free" : "1 - busy/step",
                               opt.free_share_threshold * 100, host_wait_gaps, double(host_wait_ns) / 1e3);
    if (!std::isnan(cp_host_share) && cp_host_share > opt.critical_path_host_share) {
      issue.detail += fmt::format("; critical path {:.0f}% host/launch", cp_host_share * 100);
    }
    issue.method = SavingMethod::kMeasuredGap;
    issue.saving_formula = "sum of host-wait gaps between kernels minus a 1 us residual each (graph capture / faster dispatch)";
    out->issues.push_back(std::move(issue));
  }
};

}  // namespace

const Detector& HostBoundDetector() {
  static const HostBound detector;
  return detector;
}

}  // namespace pypto
