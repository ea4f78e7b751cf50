// The operator call graph: what pypto knows about a profile once events are
// tied together. Built once from a Profile (any format: the graph only reads the
// model), it
//   1. nests host ops per thread (depth / parent columns of the profile),
//   2. links device tasks to the runtime call that launched them (correlation)
//      and to the operator they belong to (nesting, then External id),
//      marking CUDA/HIP graph replays,
//   3. finds steps (profile steps, ProfilerStep#N annotations, or the whole window),
//   4. measures device busy time (union of task intervals) per device, stream and
//      Ascend core type,
//   5. aggregates host ops (self/total time) and device tasks by name and kind,
//   6. computes the critical path of a step (HTA-style longest path over host op
//      spans, launch edges, stream order and sync edges).
// Everything here is linear (or n log n for one sort) in the number of events.
// The rules are described in docs/graph.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/defaulted_column.h"
#include "model/duration_column.h"
#include "model/profile.h"

namespace pypto {

// ------------------------------------------------------------------ options

// Host ops on one thread that overlap by at most this much are still nested:
// PyTorch >= 2.4 writes float µs with ns digits, and HTA's
// `round_down_time_stamps` (hta/common/trace.py; pytorch/pytorch#122425) shows
// that rounding to whole µs can shift a child's end up to 1 µs past its parent's.
inline constexpr TimeNs kDefaultNestingToleranceNs = 1000;

// Runtime calls whose device tasks are CUDA/HIP graph replays (reference
// kineto-format §7.4). Compared as exact names.
std::vector<std::string> DefaultGraphLaunchNames();
// Host runtime calls that block until device work finishes (CUDA, HIP, CANN
// AscendCL). Their end is a sync point in the critical path.
std::vector<std::string> DefaultSyncRuntimeNames();
// Framework operators that block the host until the device work before them
// is done: reading a device value on the host (`.item()`, `bool(t)`) or an
// output whose size depends on device data (`nonzero`). On a profile with
// device tasks they are sync calls like the runtime calls above, so the
// time they spend waiting is a sync wait, not host-bound work — the runtime
// call inside them (cudaStreamSynchronize, aclrtSynchronizeStream) is often
// missing from the trace (Ascend Level0/1, CPU-only activities).
std::vector<std::string> DefaultBlockingOperatorNames();
// Synchronous copies (cudaMemcpy, hipMemcpyWithStream, aclrtMemcpy): the call
// returns when the copy is done, so it first waits for the work queued before
// it on the stream. On the path they are sync calls: a 463 ms
// hipMemcpyWithStream behind a decode step's kernels is a sync wait, not
// launch overhead. (Not stream syncs for the stream_sync detector.)
std::vector<std::string> DefaultBlockingCopyRuntimeNames();

// CPU compute tasks (GraphOptions::cpu_ops_as_device_tasks): an operator with
// operators inside it is still the task when at least this share of its time
// is its own (unitless). Source: a majority rule — aten::mm spends ~99% in its
// own GEMM around a bookkeeping aten::resolve_conj, while aten::linear spends
// almost all of its time inside aten::addmm / aten::mm.
inline constexpr double kCpuTaskMinSelfShare = 0.5;

struct GraphOptions {
  TimeNs nesting_tolerance_ns = kDefaultNestingToleranceNs;
  std::vector<std::string> graph_launch_names = DefaultGraphLaunchNames();
  std::vector<std::string> sync_runtime_names = DefaultSyncRuntimeNames();
  std::vector<std::string> blocking_operator_names = DefaultBlockingOperatorNames();
  std::vector<std::string> blocking_copy_runtime_names = DefaultBlockingCopyRuntimeNames();
  // Prefix of the user annotations that bound a step; N is parsed after it.
  std::string step_annotation_prefix = "ProfilerStep#";
  // CPU-only profiles (no device task at all): the CPU is the device. Each
  // outermost operator doing its own work (no operator inside it, or at least
  // kCpuTaskMinSelfShare of its time its own: aten::mm under aten::linear)
  // becomes a compute task of a "cpu" device on a stream per host
  // thread, linked to that operator, so that busy time, op classes, the cost
  // models and the detectors see CPU execution as they see kernels.
  bool cpu_ops_as_device_tasks = true;
};

// ------------------------------------------------------------------ results

// Counters of what could not be linked or nested; front ends print them as
// data-loss / notes next to the importer's counters.
struct GraphStats {
  uint64_t cpu_compute_tasks = 0;        // tasks made from leaf CPU operators (GraphOptions::cpu_ops_as_device_tasks)
  uint64_t host_ops = 0;
  uint64_t device_tasks = 0;
  // Nesting.
  uint64_t rounding_overlaps = 0;     // ops overlapping a parent/sibling by ≤ tolerance: nested anyway (once per op)
  uint64_t partial_overlaps = 0;      // true partial overlaps on a thread: the op was made a root (its contents still nest in it)
  uint32_t max_depth = 0;
  // Device task -> runtime call (launcher).
  uint64_t tasks_linked_by_correlation = 0;  // task has a runtime/driver partner
  uint64_t tasks_with_unmatched_correlation = 0;  // has a correlation, no host partner (launched before the window)
  uint64_t tasks_without_correlation = 0;    // no correlation at all (e.g. Ascend tasks only)
  // Device task -> operator (attribution).
  uint64_t tasks_attributed_by_nesting = 0;      // launcher nested in an operator/annotation
  uint64_t tasks_attributed_by_external_id = 0;  // via External id (launcher not nested, or no launcher)
  uint64_t tasks_unattributed = 0;               // no operator: stay roots
  // CUDA/HIP graphs.
  uint64_t graph_launches = 0;         // graph launch runtime calls with >= 1 device task
  uint64_t graph_launched_tasks = 0;
  // Runtime calls.
  uint64_t runtime_calls = 0;                  // host ops of kind kRuntime or kDriver
  uint64_t runtime_calls_without_task = 0;     // with a correlation but no device task (sync, event record, …)
  uint64_t runtime_calls_without_operator = 0; // launching runtime calls with no operator by nesting nor External id
  uint64_t duplicate_correlations = 0;         // runtime calls sharing a correlation: the first wins
  // Critical path (counted per computation; see CriticalPath::dropped_nodes).
};

// Time range [start, end).
struct TimeWindow {
  TimeNs start = 0;
  TimeNs end = 0;
  TimeNs duration() const { return end > start ? end - start : 0; }
};

inline constexpr TimeNs kNoTime = kUnknownNs;  // "no such time" (e.g. a step without device tasks)

struct StepInfo {
  int64_t number = -1;          // N of ProfilerStep#N / Step Id; -1 for the whole window
  std::string name;             // "ProfilerStep#3", "whole window", "step 3"
  std::string source;           // "step table" (StepRow::source kept when set), "ProfilerStep annotation", "whole window"
  int32_t device = -1;          // per-device step rows (Ascend), else -1
  int32_t host_op = kNoIndex;   // the ProfilerStep#N annotation row, if any
  TimeWindow cpu;               // host span of the step
  TimeNs device_start = kNoTime;  // first start of a device task attributed to / overlapping the step
  TimeNs device_end = kNoTime;    // last end of those tasks
  uint64_t device_task_count = 0;
  // The profiler's own step time when the profile gives the step no span
  // (step_trace_time.csv alone: Computing + Communication(Not Overlapped) +
  // Free, msprof-analyze's step time), else kNoTime.
  TimeNs recorded_latency_ns = kNoTime;
  // When the host ran ahead (the previous step's device work still running at
  // this step's start): the end of that work, where this step's own time
  // begins (its latency is then the device's iteration period), else kNoTime.
  TimeNs period_start = kNoTime;
  // The step's own time: from the first start to the last end, host or
  // device, starting at period_start when the host ran ahead (so the spans of
  // consecutive steps of a device never overlap and their busy times never
  // count one task twice).
  TimeWindow span() const;
  // span()'s length; the recorded step time when the step has no span.
  TimeNs latency_ns() const;
};

// How a device task was tied to its operator.
enum class TaskLink : uint8_t {
  kNone,          // root: no launcher and no External id match
  kNesting,       // launcher (by correlation) nested in the operator
  kExternalId,    // External id equality (launcher not nested, or no launcher)
  kLauncherOnly,  // launcher found, but no enclosing operator nor External id match
};
const char* TaskLinkName(TaskLink link);

struct BusyTime {
  int32_t device = -1;
  uint32_t track = 0;          // stream track (StreamBusyTimes only)
  int64_t stream = -1;         // stream id (StreamBusyTimes only)
  std::string label;           // core type ("AI_CORE", …) for AiCoreUtilization
  uint64_t task_count = 0;
  TimeNs task_sum_ns = 0;      // sum of task durations (clipped to the window)
  TimeNs busy_ns = 0;          // union of task intervals (clipped to the window)
  TimeNs window_ns = 0;
  double utilization = 0;      // busy / window
  double share = 0;            // AiCoreUtilization: busy / busy of the whole device; else 0
};

struct HostOpAggregate {
  StrId name = kEmptyStr;
  HostOpKind kind = HostOpKind::kOther;
  uint64_t count = 0;
  TimeNs total_ns = 0;         // sum of durations
  TimeNs self_ns = 0;          // sum of self times
  TimeNs mean_ns = 0;          // total / count
  TimeNs device_ns = 0;        // sum of durations of device tasks attributed to these ops (self only)
};

struct DeviceTaskAggregate {
  StrId name = kEmptyStr;
  DeviceTaskKind kind = DeviceTaskKind::kOther;
  uint64_t count = 0;
  TimeNs total_ns = 0;
  TimeNs mean_ns = 0;
  TimeNs busy_ns = 0;          // union of the name's tasks per device, summed over devices
  double share_of_busy = 0;    // busy_ns / device busy time (sum over devices): at most 1
};

struct DeviceTaskKindTotal {
  DeviceTaskKind kind = DeviceTaskKind::kOther;
  uint64_t count = 0;
  TimeNs total_ns = 0;          // summed durations (overlapping tasks counted each)
  TimeNs busy_ns = 0;           // union of the kind's tasks per device, summed over devices
  double share_of_busy = 0;     // busy_ns / device busy time (sum over devices): at most 1
};

// ------------------------------------------------------------------ critical path

enum class PathSegmentKind : uint8_t {
  kHostBound,       // host op self time, host gaps between ops on a thread
  kLaunchOverhead,  // time inside a launch runtime call, and runtime start -> device task start
  kDeviceCompute,   // kernels (and other device work)
  kMemoryCopy,      // memcpy / memset tasks
  kCommunication,   // NCCL/RCCL/HCCL tasks
  kKernelGap,       // idle gap between consecutive tasks on one stream
  kSyncWait,        // host blocked in a sync call / device task end -> sync call end
};
inline constexpr size_t kPathSegmentKindCount = 7;
const char* PathSegmentKindName(PathSegmentKind kind);

struct PathSegment {
  PathSegmentKind kind = PathSegmentKind::kHostBound;
  int32_t host_op = kNoIndex;      // the op whose time this is (host segments, launch calls), else kNoIndex
  int32_t device_task = kNoIndex;  // the task (device, launch-delay, gap-before, sync segments), else kNoIndex
  TimeNs start = 0;
  TimeNs dur = 0;
};

struct CriticalPath {
  TimeWindow window;               // the step (or whole window) analysed
  TimeNs latency_ns = 0;           // sum of segment durations = path end - path start
  TimeNs path_start = 0;
  TimeNs path_end = 0;
  std::vector<PathSegment> segments;  // in time order, zero-length segments dropped (empty from ComputeCriticalPathTotals)
  uint64_t segment_count = 0;      // number of segments (also when the list was not kept)
  std::array<TimeNs, kPathSegmentKindCount> breakdown_ns{};  // indexed by PathSegmentKind
  uint64_t nodes = 0;
  uint64_t edges = 0;
  uint64_t dropped_nodes = 0;      // nodes in a dependency cycle (inconsistent times): skipped
  uint64_t skipped_edges = 0;      // edges going back in time beyond the tolerance (partial overlaps): left out
  uint64_t skewed_launches = 0;    // tasks starting before their launch call (host/device clock skew): launch edge left out
  TimeNs max_launch_skew_ns = 0;   // the largest of those (launch start - task start)
  uint64_t queued_tasks = 0;       // tasks queued behind device work: their launch is not on the path
};

// Most threads that compute per-step critical paths at once: 8, as for parsing
// (kMaxParseThreads, importers/common/parse_threads.h); steps are independent, each thread keeps
// per-row maps of the profile's size (4 bytes per host op and task).
inline constexpr size_t kMaxCriticalPathThreads = 8;

// ------------------------------------------------------------------ the graph

class OperatorCallGraph {
 public:
  // Nests host ops, links tasks and finds steps. Fills profile.host_ops.depth /
  // .parent and profile.device_tasks.launcher / .graph_launched (sizing them if
  // the importer left them empty). Keeps a pointer to `profile`: the profile
  // must outlive the graph and must not be moved while the graph is used.
  // Fails only on an inconsistent model (column sizes differ).
  static StatusOr<OperatorCallGraph> Build(Profile& profile, const GraphOptions& options = {});

  const Profile& profile() const { return *profile_; }
  const GraphStats& stats() const { return stats_; }
  const GraphOptions& options() const { return options_; }

  // ---- host ops
  // Number of host ops of kind kOperator (Python: get_op_count()); for
  // profiles without host operators (device-only Ascend exports), the number
  // of compute (kernel) tasks, one per operator launch.
  uint64_t OpCount() const;
  uint64_t get_op_count() const { return OpCount(); }
  // Host op counts indexed by HostOpKind, device task counts by DeviceTaskKind.
  std::array<uint64_t, 6> HostOpCountsByKind() const;
  std::array<uint64_t, 7> DeviceTaskCountsByKind() const;
  // Direct children of a host op (ts order); roots of a track are those with parent kNoIndex.
  std::span<const uint32_t> Children(uint32_t host_op) const;
  // dur − union of the children's intervals (≥ 0).
  TimeNs SelfTime(uint32_t host_op) const { return self_ns_[host_op]; }
  TimeNs TotalTime(uint32_t host_op) const;
  // Nearest ancestor (or the op itself) of kind kOperator, else of kind
  // kUserAnnotation, else kNoIndex.
  int32_t EnclosingOperator(uint32_t host_op) const;

  // ---- links
  // Device tasks attributed to this host op (directly, not via children).
  std::span<const uint32_t> TasksOfOp(uint32_t host_op) const;
  // Device tasks launched by this runtime/driver call (by correlation).
  std::span<const uint32_t> TasksLaunchedBy(uint32_t host_op) const;
  // Sum of durations of tasks attributed to the op (self) or to it and its descendants (total).
  TimeNs DeviceSelfTime(uint32_t host_op) const;
  TimeNs DeviceTotalTime(uint32_t host_op) const { return device_total_ns_[host_op]; }
  // Runtime/driver host op that launched the task, or kNoIndex.
  int32_t LauncherOf(uint32_t task) const;
  // The host call blocks until the device is done with what it queued: a
  // sync call, a synchronous copy, a copy to pageable host memory, a call
  // that made a cuda_sync row (and, with device tasks, aten::item and kin).
  bool IsBlockingCall(uint32_t host_op) const { return is_sync_call_[host_op] != 0; }
  // Operator (or user annotation) the task is attributed to, or kNoIndex.
  int32_t OperatorOf(uint32_t task) const { return task_operator_[task]; }
  TaskLink LinkOf(uint32_t task) const { return task_link_[task]; }
  // When a task's work was asked for: its launcher's start, else its
  // operator's start, else its own start (unlinked tasks overlap a step).
  TimeNs TaskAnchor(uint32_t task) const;
  bool IsGraphLaunched(uint32_t task) const;

  // ---- steps
  const std::vector<StepInfo>& Steps() const { return steps_; }
  // The whole profile: first start to last end over host ops and device tasks.
  TimeWindow WholeWindow() const { return whole_window_; }

  // ---- device busy time (kAnnotation and kSync tasks excluded)
  // Per device / per stream track / per (device, core type) union of task
  // intervals clipped to `window` (default: whole profile), sorted by device
  // then stream / label. Tasks without an Ascend core type are grouped under
  // their task kind name ("kernel", "memcpy", …).
  std::vector<BusyTime> DeviceBusyTimes(std::optional<TimeWindow> window = std::nullopt) const;
  std::vector<BusyTime> StreamBusyTimes(std::optional<TimeWindow> window = std::nullopt) const;
  std::vector<BusyTime> AiCoreUtilization(std::optional<TimeWindow> window = std::nullopt) const;
  std::vector<BusyTime> get_ai_core_utilization() const { return AiCoreUtilization(); }
  // One figure: the busy time of the compute units (kernel tasks: AI Core /
  // AI Vector / MIX cores, GPU kernels, CPU compute ops; not AI CPU, copies,
  // communication), union per device clipped to `window`, summed over devices
  // and divided by (devices with such tasks x window). In [0, 1]; 0 when none.
  double ComputeUnitUtilization(std::optional<TimeWindow> window = std::nullopt) const;
  // Sum over devices of the device busy time (whole profile).
  TimeNs TotalDeviceBusyNs() const { return total_device_busy_ns_; }

  // ---- aggregates (whole profile)
  // Host ops of `kind` grouped by name, sorted by self time (desc); `limit` 0 = all.
  std::vector<HostOpAggregate> TopHostOpsBySelfTime(size_t limit = 0,
                                                   HostOpKind kind = HostOpKind::kOperator) const;
  // Device tasks (kAnnotation/kSync excluded) grouped by (name, kind), by total time (desc).
  std::vector<DeviceTaskAggregate> TopDeviceTasksByTotalTime(size_t limit = 0) const;
  // One row per DeviceTaskKind present (annotation and sync included, with share 0).
  std::vector<DeviceTaskKindTotal> DeviceTaskKindTotals() const;

  // ---- critical path
  // Longest path through the dependency DAG of one step (index into Steps()),
  // or of the whole profile when `step` is empty. Error only for a bad index.
  StatusOr<CriticalPath> ComputeCriticalPath(std::optional<size_t> step = std::nullopt) const;
  StatusOr<CriticalPath> ComputeCriticalPath(TimeWindow window) const;
  // The same path without the segment list (latency, breakdown, counts filled;
  // `segments` empty): what a summary needs. A whole 1 GB trace's path has ~2 M
  // segments of 32 bytes, held next to the DAG at the peak.
  StatusOr<CriticalPath> ComputeCriticalPathTotals(std::optional<size_t> step = std::nullopt) const;
  // The same path with its first `max_segments` segments only (segment_count
  // still counts every one): what a drawing of it shows. The report draws
  // 4,000; a path over a whole 300 MB trace without steps has 600 k (19 MB).
  StatusOr<CriticalPath> ComputeCriticalPathHead(std::optional<size_t> step, size_t max_segments) const;
  // True when the profile has two or more steps with a span, and the steps of
  // each device (-1: host-side ProfilerStep#N) do not overlap: each is an
  // iteration with its own critical path (per device for per-device steps).
  bool HasSeparateHostSteps() const;
  // ComputeCriticalPathTotals(i) for every step i, in Steps() order. Steps
  // run on up to kMaxCriticalPathThreads threads, each holding one step's DAG,
  // so memory follows the largest step, not the profile.
  std::vector<CriticalPath> ComputeEveryStepCriticalPathTotals() const;
  // The same for the steps listed (indices into Steps(); an index out of range gives an empty path):
  // one builder per thread, reused across its steps, so what a builder caches per device (the host
  // tracks that launch onto it: a pass over every task) is computed once per thread, not per step.
  std::vector<CriticalPath> ComputeStepCriticalPathTotals(const std::vector<size_t>& steps) const;
  // Latency of ComputeCriticalPath(step) in ns (Python: get_critical_path_latency()).
  StatusOr<TimeNs> CriticalPathLatency(std::optional<size_t> step = std::nullopt) const;
  StatusOr<TimeNs> get_critical_path_latency(std::optional<size_t> step = std::nullopt) const {
    return CriticalPathLatency(step);
  }

  OperatorCallGraph(OperatorCallGraph&&) noexcept;
  OperatorCallGraph& operator=(OperatorCallGraph&&) noexcept;
  ~OperatorCallGraph();

 private:
  OperatorCallGraph();
  friend class CallGraphBuilder;  // call_graph.cc
  friend class CriticalPathBuilder;  // critical_path.cc

  StatusOr<CriticalPath> ComputeCriticalPathImpl(std::optional<size_t> step, size_t max_segments) const;
  StatusOr<CriticalPath> ComputeCriticalPathImpl(TimeWindow window, size_t max_segments, int32_t device = -1) const;
  // The latest end of task_by_device_ts_'s rows of one device up to `position`.
  TimeNs DeviceRunningEnd(size_t position) const;
  // Task rows sorted by (TaskAnchor, row).
  const std::vector<uint32_t>& TasksByAnchor() const {
    return anchor_order_is_device_order_ ? task_by_device_ts_ : task_by_anchor_;
  }
  // Rows of TasksByAnchor() whose anchor lies in [window.start, window.end).
  std::pair<uint32_t, uint32_t> StepTaskRange(TimeWindow window) const;

  Profile* profile_ = nullptr;
  GraphOptions options_;
  GraphStats stats_;
  TimeWindow whole_window_;
  TimeNs total_device_busy_ns_ = 0;
  std::vector<StepInfo> steps_;

  // Host ops.
  std::vector<uint32_t> host_by_track_ts_;   // host rows sorted by (track, ts, -dur); freed after the build
  std::vector<uint32_t> host_by_ts_;         // host rows sorted by (ts, -dur)
  std::vector<uint32_t> child_offsets_;      // CSR: children of op i = child_rows_[offsets[i]..offsets[i+1])
  std::vector<uint32_t> child_rows_;
  DurationColumn self_ns_;
  DurationColumn device_total_ns_;
  std::vector<uint8_t> is_sync_call_;        // host row is a sync runtime call
  std::vector<int32_t> nearest_operator_;    // EnclosingOperator() of each host row
  // Links.
  // No storage while no task is linked (an Ascend CSV, which has no host side).
  DefaultedColumn<int32_t, kNoIndex> task_operator_;
  DefaultedColumn<TaskLink, TaskLink::kNone> task_link_;
  std::vector<uint32_t> op_task_rows_;       // attributed task rows by (task_operator_, ts): GroupRange
  std::vector<uint32_t> launch_rows_;        // launched task rows by (launcher, ts): GroupRange
  std::vector<uint32_t> op_task_blocks_;     // GroupBlockIndex of op_task_rows_
  std::vector<uint32_t> launch_blocks_;      // GroupBlockIndex of launch_rows_
  // Device tasks.
  std::vector<uint32_t> task_by_track_ts_;   // busy task rows sorted by (track, ts)
  std::vector<uint32_t> task_by_device_ts_;  // busy task rows sorted by (device, ts)
  // Where each device's rows start in task_by_device_ts_ (one entry per device,
  // plus the end), and the latest end time of the device's rows up to each
  // position: a window's first overlapping row is a binary search away, so a
  // step's busy time costs its own rows, not the whole profile's.
  // The running end is kept as how far it lies past the row's own end: no
  // storage while no task ends before an earlier one on its device (an
  // Ascend device runs its tasks one after another).
  std::vector<size_t> device_group_begin_;
  DefaultedColumn<TimeNs, 0> device_running_end_beyond_;
  std::vector<uint32_t> task_by_core_ts_;    // busy task rows sorted by (device, core key, ts)
  std::vector<uint32_t> task_by_anchor_;     // TasksByAnchor(), unless that is task_by_device_ts_
  bool anchor_order_is_device_order_ = false;
  // Path totals already computed, by (window, device): a report asks for the
  // same steps' paths in its summary and again in its diagnosis (a whole
  // trace without steps is one step: 100 ms for 300 MB). Totals only: a few
  // hundred bytes each.
  struct PathTotalsCache;
  std::unique_ptr<PathTotalsCache> path_totals_cache_;
};

}  // namespace pypto
