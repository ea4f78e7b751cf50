// (8) stream_sync: the host waits for the device inside a step (stream /
// device synchronisation, blocking copies behind `.item()`), so the device
// queue drains and the device idles until the host launches again.
//
// Sync points (diagnosis-rules §1.1 synchronize_stream, §3 cuda_api_sync, §4.4):
//   * host runtime calls named in GraphOptions::sync_runtime_names
//     (cudaStreamSynchronize, cudaDeviceSynchronize, aclrtSynchronizeStream …;
//     an "AscendCL@" style prefix is ignored);
//   (device-side waits such as cudaStreamWaitEvent excluded: they do not block the host);
//   * aten::_local_scalar_dense (the body of `.item()`) without a sync call
//     inside it: its device-to-host copy blocks the same way.
// Device idle caused: the idle gap of the device's busy timeline (union of its
// tasks) that contains the moment the sync returns, from the end of the last
// task before it to the start of the next task, up to the time the host sat
// blocked in the sync (what it could have spent queueing work ahead; the rest
// of the gap is other host work). A sync that returns while the device is
// busy (other streams) causes none.
// Blocking copies are sync points too: the synchronous copy APIs
// (cudaMemcpy, hipMemcpyWithStream, aclrtMemcpy …) and any copy to pageable
// host memory (cudaMemcpyAsync writing "Memcpy DtoH (Device -> Pageable)"
// returns only when the copy is done) — the graph's IsBlockingCall.
// A call inside which the device sat idle for most of the time was not
// waiting for this host thread's work: the device waited for something the
// trace does not show (a cross-stream event, another process). That idle is
// reported (affected when it is a tenth of the steps or more; never claimed
// as a saving: its cause is not in the trace).
// Issue per sync API when the idle it causes is > 0; the MPA co-occurrence
// ratio (sync calls / launch calls; > 0.5 flags ASCEND_LAUNCH_BLOCKING) is
// kept as a metric. Saving (measured): the idle gaps, claimed as step idle.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"
#include "graph/interval_union.h"

namespace pypto {
namespace {

// Ratio of sync calls to launch calls above which every launch is followed
// by a sync (ASCEND_LAUNCH_BLOCKING=1). Source: msprof-analyze
// synchronize_stream (synchronize.yaml) co-occurrence ratio > 0.5 (§1.1).
inline constexpr double kDefaultSyncLaunchRatio = 0.5;
// Share of a blocking call's time the device must sit idle inside it for that
// idle to count as waiting on work outside the trace. 0.5: a call that waits
// for queued work sees the device busy almost throughout (only other threads'
// launch gaps between kernels); seen: 463.0 of 463.1 ms idle inside one
// hipMemcpyWithStream on an MI300X decode step whose stream waited on an event.
inline constexpr double kIdleInsideCallShare = 0.5;
// That idle makes a finding (counts as affected time) only when it is at least
// this share of the analysed steps; below, the detail says it. 0.10: the
// free-time share msprof-analyze's step rule and host_bound start at.
inline constexpr double kIdleInsideMinStepShare = 0.10;

// Waits that order streams on the device without blocking the host (HTA
// critical path: cudaStreamWaitEvent is a GPU->GPU SYNC_DEPENDENCY, §4.4):
// not sync points here even though the graph lists them.
constexpr std::string_view kDeviceSideWaits[] = {"cudaStreamWaitEvent", "hipStreamWaitEvent", "aclrtStreamWaitEvent"};

std::string_view ApiName(std::string_view name) {
  size_t at = name.rfind('@');
  return at == std::string_view::npos ? name : name.substr(at + 1);
}

struct Interval {
  TimeNs start, end;
};

// Busy timeline of all devices together (tasks of the analysed steps), merged
// and ascending, as the pairs UncoveredLength reads.
struct BusyTimeline {
  std::vector<std::pair<TimeNs, TimeNs>> merged;
};

// Merged in place, in the one vector (a 1 M-task profile: 16 MB, where a
// copy for the merge and another as pairs were 48 MB at the diagnosis's peak).
// Intervals starting together merge whatever their order, so the sort need
// not order them.
BusyTimeline MergedBusyTimeline(const DiagnosisContext& ctx) {
  const DeviceTaskTable& d = ctx.profile->device_tasks;
  BusyTimeline timeline;
  std::vector<std::pair<TimeNs, TimeNs>>& busy = timeline.merged;
  busy.reserve(ctx.tasks.size());
  for (uint32_t t : ctx.tasks) busy.emplace_back(d.ts[t], d.ts[t] + std::max<TimeNs>(d.dur[t], 0));
  std::sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = 0;
  for (size_t i = 0; i < busy.size(); ++i) {
    if (kept > 0 && busy[i].first <= busy[kept - 1].second)
      busy[kept - 1].second = std::max(busy[kept - 1].second, busy[i].second);
    else
      busy[kept++] = busy[i];
  }
  busy.resize(kept);
  busy.shrink_to_fit();
  return timeline;
}

// Idle gap containing time `t`: [end of the busy interval before, start of the one after).
Interval IdleGapAt(const std::vector<std::pair<TimeNs, TimeNs>>& merged, TimeNs t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t,
                             [](TimeNs v, const std::pair<TimeNs, TimeNs>& iv) { return v < iv.first; });
  if (it == merged.begin() || it == merged.end()) return {0, 0};  // before the first / after the last task
  const std::pair<TimeNs, TimeNs>& before = *(it - 1);
  if (t < before.second) return {0, 0};  // device busy at t
  return {before.second, it->first};
}

// Per host op: 1 for a runtime / driver call in the steps that blocks the host.
std::vector<uint8_t> MarkSyncCalls(const DiagnosisContext& ctx) {
  const Profile& p = *ctx.profile;
  const HostOpTable& h = p.host_ops;
  const OperatorCallGraph& g = *ctx.graph;
  std::vector<uint8_t> is_sync(h.size(), 0);
  std::vector<std::string> names = g.options().sync_runtime_names;
  for (uint32_t op : ctx.host_ops) {
    if (h.kind[op] != HostOpKind::kRuntime && h.kind[op] != HostOpKind::kDriver) continue;
    std::string_view api = ApiName(p.Str(h.name[op]));
    if (std::find(std::begin(kDeviceSideWaits), std::end(kDeviceSideWaits), api) != std::end(kDeviceSideWaits))
      continue;
    if (std::find(names.begin(), names.end(), api) != names.end() || g.IsBlockingCall(op)) is_sync[op] = 1;
  }
  return is_sync;
}

struct SyncPoint {
  std::string api;
  uint32_t host_op;  // sync call / _local_scalar_dense op; UINT32_MAX for a device-only row
  uint32_t task;     // cuda_sync row or UINT32_MAX
  TimeNs ts, end;
};

// The sync calls in the steps, in host-op order; counts the launching calls into `launches`.
std::vector<SyncPoint> CollectSyncCalls(const DiagnosisContext& ctx, const std::vector<uint8_t>& is_sync,
                                        uint64_t& launches) {
  const Profile& p = *ctx.profile;
  const HostOpTable& h = p.host_ops;
  const OperatorCallGraph& g = *ctx.graph;
  std::vector<SyncPoint> points;
  for (uint32_t op : ctx.host_ops) {
    if ((h.kind[op] == HostOpKind::kRuntime || h.kind[op] == HostOpKind::kDriver) && !g.TasksLaunchedBy(op).empty())
      ++launches;
    if (is_sync[op]) points.push_back({std::string(ApiName(p.Str(h.name[op]))), op, UINT32_MAX, h.ts[op], h.ts[op] + h.dur[op]});
  }
  return points;
}

// cuda_sync rows: kept as evidence of the blocking call that made them;
// rows of device-side waits (wait_on_stream, cudaStreamWaitEvent) or
// without a launcher do not block the host and are not sync points.
void AttachSyncRows(const DiagnosisContext& ctx, const std::vector<uint8_t>& is_sync, std::vector<SyncPoint>& points) {
  const DeviceTaskTable& d = ctx.profile->device_tasks;
  std::map<uint32_t, uint32_t> sync_row_of;  // host op -> cuda_sync row
  for (uint32_t t = 0; t < d.size(); ++t) {
    if (d.kind[t] != DeviceTaskKind::kSync || !ctx.InWindow(d.ts[t])) continue;
    int32_t launcher = ctx.graph->LauncherOf(t);
    if (launcher >= 0 && is_sync[launcher]) sync_row_of.emplace(static_cast<uint32_t>(launcher), t);
  }
  for (SyncPoint& pt : points) {
    auto it = sync_row_of.find(pt.host_op);
    if (it != sync_row_of.end()) pt.task = it->second;
  }
}

// .item() (aten::_local_scalar_dense) without a recognised sync call inside.
void AddItemCallsWithoutSync(const DiagnosisContext& ctx, const std::vector<uint8_t>& is_sync,
                             std::vector<SyncPoint>& points) {
  const Profile& p = *ctx.profile;
  const HostOpTable& h = p.host_ops;
  const OperatorCallGraph& g = *ctx.graph;
  for (uint32_t op : ctx.host_ops) {
    if (h.kind[op] != HostOpKind::kOperator || p.Str(h.name[op]) != "aten::_local_scalar_dense") continue;
    bool has_sync = false;
    std::vector<uint32_t> stack(g.Children(op).begin(), g.Children(op).end());
    while (!stack.empty() && !has_sync) {
      uint32_t c = stack.back();
      stack.pop_back();
      has_sync |= is_sync[c] != 0;
      for (uint32_t cc : g.Children(c)) stack.push_back(cc);
    }
    if (!has_sync) points.push_back({"aten::_local_scalar_dense", op, UINT32_MAX, h.ts[op], h.ts[op] + h.dur[op]});
  }
}

// The sync points of one API and the device idle they cause.
struct SyncGroup {
  std::vector<const SyncPoint*> points;
  uint64_t stalls = 0;
  TimeNs idle = 0;
  TimeNs unblamed = 0;  // idle in the same gaps past the time blocked in the sync
  TimeNs call_ns = 0;
  TimeNs idle_inside = 0;     // device idle inside calls that mostly waited on untraced work
  uint64_t calls_idle_inside = 0;
  uint64_t copies = 0;        // calls that are blocking copies
  std::map<int, TimeNs> idle_by_step;
  std::map<std::string, uint64_t> callers;
};

void CountCallerAndCopy(const DiagnosisContext& ctx, const SyncPoint& pt, SyncGroup& grp) {
  if (pt.host_op == UINT32_MAX) return;
  const Profile& p = *ctx.profile;
  const OperatorCallGraph& g = *ctx.graph;
  int32_t caller = g.EnclosingOperator(pt.host_op);
  if (caller >= 0 && static_cast<uint32_t>(caller) != pt.host_op) ++grp.callers[std::string(p.Str(p.host_ops.name[caller]))];
  for (uint32_t t : g.TasksLaunchedBy(pt.host_op))
    if (p.device_tasks.kind[t] == DeviceTaskKind::kMemcpy) {
      ++grp.copies;
      break;
    }
}

// Idle inside the call before the gap its return ends in: counted when the
// device sat idle for most of the call (it waited on work the trace does not show).
void AddIdleInsideCall(const BusyTimeline& busy, const SyncPoint& pt, const Interval& gap, SyncGroup& grp) {
  const TimeNs inside_end = gap.end > gap.start ? std::min(pt.end, gap.start) : pt.end;
  if (inside_end <= pt.ts) return;
  const TimeNs inside = UncoveredLength(busy.merged, pt.ts, inside_end);
  if (double(inside) >= kIdleInsideCallShare * double(pt.end - pt.ts)) {
    grp.idle_inside += inside;
    ++grp.calls_idle_inside;
  }
}

// Blames the idle gap the sync returns in on it, once per gap (`claimed`:
// gaps already attributed; two syncs in one gap count once).
void AddIdleGap(const DiagnosisContext& ctx, const SyncPoint& pt, const Interval& gap,
                std::unordered_set<TimeNs>& claimed, SyncGroup& grp) {
  if (gap.end <= gap.start) return;
  if (!claimed.insert(gap.start).second) return;
  // The sync costs at most the time the host sat blocked in it: that is
  // the time it could have spent queueing work ahead. Idle beyond that
  // is the host's other work after the return (a DataLoader, pageable
  // copies: seen 877 ms of idle blamed on syncs that lasted 1.2 ms).
  const TimeNs blamed = std::min(gap.end - gap.start, std::max<TimeNs>(pt.end - pt.ts, 0));
  if (blamed <= 0) return;
  ++grp.stalls;
  grp.idle += blamed;
  grp.unblamed += (gap.end - gap.start) - blamed;
  int step = ctx.StepOf(gap.start);
  if (step >= 0) grp.idle_by_step[step] += blamed;
}

// The sync points grouped by API, with the device idle each group causes.
std::map<std::string, SyncGroup> GroupByApi(const DiagnosisContext& ctx, const BusyTimeline& busy,
                                            const std::vector<SyncPoint>& points) {
  std::map<std::string, SyncGroup> groups;
  std::unordered_set<TimeNs> claimed;  // starts of the gaps already blamed (a set: a long profile has millions of syncs)
  for (const SyncPoint& pt : points) {
    SyncGroup& grp = groups[pt.api];
    grp.points.push_back(&pt);
    grp.call_ns += pt.end - pt.ts;
    CountCallerAndCopy(ctx, pt, grp);
    const Interval gap = IdleGapAt(busy.merged, pt.end);
    AddIdleInsideCall(busy, pt, gap, grp);
    AddIdleGap(ctx, pt, gap, claimed, grp);
  }
  return groups;
}

// Ratio of sync points to launching calls, and the threshold above which it is flagged.
struct SyncLaunchRatio {
  double value;
  double threshold;
  bool flagged() const { return value > threshold; }
};

std::string TopCaller(const SyncGroup& grp) {
  std::string top_caller;
  uint64_t top_n = 0;
  for (const auto& [name, n] : grp.callers)
    if (n > top_n) top_caller = name, top_n = n;
  return top_caller;
}

std::string IssueDetail(const std::string& api, const SyncGroup& grp, const std::string& top_caller,
                        const SyncLaunchRatio& ratio) {
  std::string detail = fmt::format("{} {} call(s) in the steps; the device idled {} around {} of them",
                                   grp.points.size(), api, detectors::FormatUs(grp.idle), grp.stalls);
  if (grp.copies > 0)
    detail += fmt::format("; {} of them are blocking copies (synchronous, or to pageable host memory): "
                          "the host waits for all queued work and the copy", grp.copies);
  if (grp.idle_inside > 0)
    detail += fmt::format("; no task of the trace ran for {} inside {} call(s) while the host was blocked: "
                          "they waited for work the trace does not show (a cross-stream event, another "
                          "process, an untraced copy), not for this thread's queue; not claimed as a saving",
                          detectors::FormatUs(grp.idle_inside), grp.calls_idle_inside);
  if (!top_caller.empty()) detail += "; called from " + top_caller;
  if (grp.unblamed > 0)
    detail += fmt::format("; {} more idle in those gaps is host work after the sync returned",
                          detectors::FormatUs(grp.unblamed));
  if (ratio.flagged()) detail += fmt::format("; sync/launch ratio {:.2f} > {}", ratio.value, ratio.threshold);
  return detail;
}

void AddSyncMetrics(const SyncGroup& grp, double ratio, Issue* issue) {
  detectors::AddMetric(issue, "sync_calls", double(grp.points.size()), "count");
  detectors::AddMetric(issue, "stalls", double(grp.stalls), "count");
  detectors::AddMetric(issue, "device_idle_us", double(grp.idle) / 1000.0, "us");
  detectors::AddMetric(issue, "sync_call_time_us", double(grp.call_ns) / 1000.0, "us");
  detectors::AddMetric(issue, "idle_after_return_us", double(grp.unblamed) / 1000.0, "us");
  detectors::AddMetric(issue, "sync_launch_ratio", ratio, "ratio");
  detectors::AddMetric(issue, "blocking_copies", double(grp.copies), "count");
  detectors::AddMetric(issue, "device_idle_inside_calls_us", double(grp.idle_inside) / 1000.0, "us");
}

Issue SyncIssue(const DiagnosisContext& ctx, const std::string& api, const SyncGroup& grp, bool idle_inside_counts,
                const SyncLaunchRatio& ratio) {
  Issue issue;
  issue.type = IssueType::kStreamSync;
  issue.op_name = api;
  const std::string top_caller = TopCaller(grp);
  issue.op_type = top_caller.empty() ? "sync" : top_caller;
  issue.affected_ns = grp.idle + (idle_inside_counts ? grp.idle_inside : 0);
  issue.evidence.count = grp.points.size();
  issue.evidence.total_ns = grp.call_ns;
  for (const SyncPoint* pt : grp.points) {
    if (pt->host_op != UINT32_MAX && issue.evidence.host_ops.size() < kMaxEvidenceRows)
      issue.evidence.host_ops.push_back(pt->host_op);
    if (pt->task != UINT32_MAX && issue.evidence.tasks.size() < kMaxEvidenceRows) issue.evidence.tasks.push_back(pt->task);
  }
  for (const auto& [step, ns] : grp.idle_by_step)
    issue.savings.push_back({SavingTargetKind::kStepIdle, static_cast<uint32_t>(ctx.steps[step]), ns});
  issue.method = SavingMethod::kMeasuredGap;
  issue.saving_formula = fmt::format("device idle gaps that contain the return of {} of {} sync point(s), each "
                                     "up to the time the host was blocked in the sync", grp.stalls, grp.points.size());
  issue.detail = IssueDetail(api, grp, top_caller, ratio);
  AddSyncMetrics(grp, ratio.value, &issue);
  return issue;
}

// An issue for a group that causes device idle (or idle inside its calls that
// counts), else a note that its calls blocked the host for nothing the device lost.
void ReportGroup(const DiagnosisContext& ctx, const std::string& api, const SyncGroup& grp,
                 const SyncLaunchRatio& ratio, DetectorOutput* out) {
  const bool idle_inside_counts = ctx.ShareOfStep(grp.idle_inside) >= kIdleInsideMinStepShare;
  if (grp.idle <= 0 && !idle_inside_counts) {
    out->notes.push_back(fmt::format(
        "{} {} call(s) in the steps blocked the host {} in all: no device idle is theirs{}", grp.points.size(), api,
        detectors::FormatUs(grp.call_ns),
        ratio.flagged() ? fmt::format(" (sync/launch ratio {:.2f} > {}: check ASCEND_LAUNCH_BLOCKING / "
                                      "CUDA_LAUNCH_BLOCKING)", ratio.value, ratio.threshold)
                        : std::string()));
    return;
  }
  out->issues.push_back(SyncIssue(ctx, api, grp, idle_inside_counts, ratio));
}

class StreamSync final : public Detector {
 public:
  std::string_view name() const override { return "stream_sync"; }
  IssueType type() const override { return IssueType::kStreamSync; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const double ratio_threshold = ctx.options->Param("stream_sync.sync_launch_ratio", kDefaultSyncLaunchRatio);
    if (ctx.tasks.empty()) {
      out->notes.push_back("no device tasks in the analysed steps: sync stalls not measurable");
      return;
    }
    const std::vector<uint8_t> is_sync = MarkSyncCalls(ctx);
    uint64_t launches = 0;
    std::vector<SyncPoint> points = CollectSyncCalls(ctx, is_sync, launches);
    AttachSyncRows(ctx, is_sync, points);
    AddItemCallsWithoutSync(ctx, is_sync, points);
    if (points.empty()) return;  // before the timeline: a profile without host calls needs none
    const BusyTimeline busy = MergedBusyTimeline(ctx);

    const std::map<std::string, SyncGroup> groups = GroupByApi(ctx, busy, points);
    const SyncLaunchRatio ratio{launches > 0 ? double(points.size()) / double(launches) : 0, ratio_threshold};
    for (const auto& [api, grp] : groups) ReportGroup(ctx, api, grp, ratio, out);
  }
};

}  // namespace

const Detector& StreamSyncDetector() {
  static const StreamSync detector;
  return detector;
}

}  // namespace pypto
