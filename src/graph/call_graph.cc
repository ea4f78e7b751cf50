// Building the operator call graph: nesting, links, steps, busy time and
// aggregates. The critical path lives in critical_path.cc. Rules: docs/graph.md.
#include "graph/call_graph.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/free_memory.h"
#include "graph/graph_internal.h"
#include "model/phase_timer.h"

namespace pypto {

namespace {
constexpr TimeNs kNsPerDay = 86'400'000'000'000;
// The longest span of one profile's times: 30 days. Real profiles span seconds
// to hours; a longer span means corrupt times or clocks mixed in one file. The
// bound keeps sums of task durations within a window far below int64
// (2^63 ns / 30 days: over 3500 tasks as long as the window).
constexpr TimeNs kMaxProfileSpanNs = 30 * kNsPerDay;
}  // namespace

std::vector<std::string> DefaultGraphLaunchNames() {
  // CUDA runtime + driver and HIP spellings (reference kineto-format §7.4).
  return {"cudaGraphLaunch", "cudaGraphLaunch_v10000", "cuGraphLaunch", "hipGraphLaunch"};
}

std::vector<std::string> DefaultSyncRuntimeNames() {
  // CUDA runtime/driver, HIP, and CANN AscendCL blocking calls; HTA's critical
  // path treats the same CUDA calls as sync points (hta/analyzers/critical_path_analysis.py).
  return {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
          "cudaStreamWaitEvent",   "cuCtxSynchronize",      "cuStreamSynchronize",
          "cuEventSynchronize",    "hipDeviceSynchronize",  "hipStreamSynchronize",
          "hipEventSynchronize",   "aclrtSynchronizeStream", "aclrtSynchronizeDevice",
          "aclrtSynchronizeEvent", "aclrtSynchronizeStreamWithTimeout"};
}

std::vector<std::string> DefaultBlockingOperatorNames() {
  // aten::item calls aten::_local_scalar_dense (a D2H copy of one value, then a
  // stream sync); bool(t) is aten::is_nonzero; nonzero must know its output size.
  return {"aten::item", "aten::_local_scalar_dense", "aten::is_nonzero", "aten::nonzero"};
}

std::vector<std::string> DefaultBlockingCopyRuntimeNames() {
  // The synchronous copy APIs of CUDA (runtime and driver), HIP and AscendCL;
  // their *Async forms return at once and are not listed.
  return {"cudaMemcpy",      "cudaMemcpy2D",        "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoD_v2",
          "hipMemcpy",       "hipMemcpyWithStream", "hipMemcpy2D",     "hipMemcpyDtoH",   "aclrtMemcpy",
          "aclrtMemcpy2d"};
}

const char* TaskLinkName(TaskLink link) {
  switch (link) {
    case TaskLink::kNone: return "none";
    case TaskLink::kNesting: return "nesting";
    case TaskLink::kExternalId: return "external id";
    case TaskLink::kLauncherOnly: return "launcher only";
  }
  return "?";
}

TimeWindow StepInfo::span() const {
  TimeNs start = cpu.start;
  TimeNs end = cpu.end;
  if (device_start != kNoTime) {
    if (cpu.duration() == 0) {  // no host span: the device span alone
      start = device_start;
      end = device_end;
    } else {
      start = std::min(start, device_start);
      end = std::max(end, device_end);
    }
  }
  if (period_start != kNoTime) start = std::max(start, period_start);
  return {start, std::max(start, end)};
}

TimeNs StepInfo::latency_ns() const {
  const TimeWindow w = span();
  if (w.duration() == 0 && recorded_latency_ns != kNoTime) return std::max<TimeNs>(recorded_latency_ns, 0);
  return w.duration();
}

namespace {

bool IsRuntimeKind(HostOpKind kind) { return kind == HostOpKind::kRuntime || kind == HostOpKind::kDriver; }

// Busy time counts device work only: annotations (device projection of
// ProfilerStep#N) and sync rows are not work.
bool CountsAsBusy(DeviceTaskKind kind) {
  return kind != DeviceTaskKind::kAnnotation && kind != DeviceTaskKind::kSync;
}

// For each group of busy tasks (`group_of(task)`: a name, a kind) and each
// device, the length of the union of the group's tasks on that device:
// `emit(group, busy_ns)` once per (group, device). Tasks of one group nest
// and overlap (a collective's span and its HCCL sub-tasks, one kernel on
// concurrent streams), so their union, not their sum, is their busy time.
// `busy_by_device_ts`: the busy tasks sorted by (device, ts), as the graph
// keeps them; `group_of` returns a value below `group_count`. The tasks are
// put in (group, device, ts) order by counting them into their groups in
// that order (two passes over the tasks; a comparison sort of every task by
// the three keys took 80-100 ms of a 1 GB trace's ~300 ms summary).
template <typename GroupOf, typename Emit>
void ForEachUnionPerDevice(const Profile& profile, const std::vector<uint32_t>& busy_by_device_ts,
                           size_t group_count, GroupOf group_of, Emit emit) {
  const DeviceTaskTable& d = profile.device_tasks;
  const TrackTable& tracks = profile.tracks;
  auto device_of = [&](uint32_t t) { return tracks.device[d.track[t]]; };
  // A group outside [0, group_count) (no valid name or kind) is left out: no caller could use its total.
  auto in_range = [&](uint32_t t) { return static_cast<size_t>(group_of(t)) < group_count; };
  std::vector<uint32_t> group_begin(group_count + 1, 0);
  size_t kept = 0;
  for (uint32_t t : busy_by_device_ts)
    if (in_range(t)) {
      ++group_begin[static_cast<size_t>(group_of(t)) + 1];
      ++kept;
    }
  for (size_t g = 0; g < group_count; ++g) group_begin[g + 1] += group_begin[g];
  std::vector<uint32_t> order(kept);
  for (uint32_t t : busy_by_device_ts)
    if (in_range(t)) order[group_begin[static_cast<size_t>(group_of(t))]++] = t;
  std::vector<uint32_t>().swap(group_begin);
  for (size_t i = 0; i < order.size();) {
    const auto group = group_of(order[i]);
    const int32_t device = device_of(order[i]);
    internal::SortedUnionLength busy;
    for (; i < order.size() && group_of(order[i]) == group && device_of(order[i]) == device; ++i)
      busy.Add(d.ts[order[i]], SaturatingAdd(d.ts[order[i]], std::max<TimeNs>(d.dur[order[i]], 0)));
    emit(group, busy.Total());
  }
}

// Marks the interned ids of `names` in a flag vector indexed by StrId. Names
// never interned cannot occur in the profile and are skipped.
// Ascend trace_view.json names CANN API calls "AscendCL@<api>"
// ("AscendCL@aclrtSynchronizeStreamWithTimeout"), so that form matches too.
std::vector<uint8_t> NameFlags(const Profile& profile, const std::vector<std::string>& names) {
  static constexpr std::string_view kAscendClPrefix = "AscendCL@";
  std::vector<uint8_t> flags(profile.strings.size(), 0);
  for (const std::string& name : names) {
    for (const std::string& form : {name, std::string(kAscendClPrefix) + name}) {
      StrId id = profile.strings.Find(form);
      if (id != kEmptyStr) flags[id] = 1;
    }
  }
  return flags;
}

// Finds `key` in a vector of (key, row) pairs sorted by key; kNoIndex if absent.
int32_t FindRow(const std::vector<std::pair<int64_t, uint32_t>>& index, int64_t key) {
  auto it = std::lower_bound(index.begin(), index.end(), key,
                             [](const std::pair<int64_t, uint32_t>& e, int64_t k) { return e.first < k; });
  if (it == index.end() || it->first != key) return kNoIndex;
  return static_cast<int32_t>(it->second);
}

// The rows whose group (group_of[row]) is set, ordered by group, each group
// in `order`'s order. No offsets per group are kept (they were 4 bytes per
// host op, twice, for the few ops that have tasks): GroupRange finds a group
// by binary search.
// `before(a, b)`: the order of `order` (a total order), used within a group.
template <typename GroupOf, typename Before>
std::vector<uint32_t> GroupRows(const GroupOf& group_of, const std::vector<uint32_t>& order,
                                Before before) {
  std::vector<uint32_t> rows;
  for (uint32_t row : order)
    if (group_of[row] >= 0) rows.push_back(row);
  // Tasks in time order mostly come group after group already: adaptive sort.
  SortUnlessSorted(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    if (group_of[a] != group_of[b]) return group_of[a] < group_of[b];
    return before(a, b);
  });
  rows.shrink_to_fit();
  return rows;
}

// GroupRange's coarse index over a GroupRows vector: for each block of
// kGroupsPerBlock consecutive groups, where its first row lies (then one more
// entry: the end). A bisection of all the rows went through group_of at
// every step, two cache misses a step, ~40 a query: 3 % of a 1 M-task DB's
// diagnose, whose detectors ask for the tasks of millions of host ops. Within
// a block it is a few steps over rows that lie together. 64 groups a block:
// 4 bytes per 64 host ops (the offsets of every group were 4 bytes each,
// twice, which GroupRows exists to avoid).
constexpr uint32_t kGroupsPerBlock = 64;

template <typename GroupOf>
std::vector<uint32_t> GroupBlockIndex(const std::vector<uint32_t>& rows, const GroupOf& group_of) {
  if (rows.empty()) return {};
  const size_t blocks = static_cast<size_t>(group_of[rows.back()]) / kGroupsPerBlock + 1;
  std::vector<uint32_t> start(blocks + 1);
  size_t at = 0;
  for (size_t b = 0; b <= blocks; ++b) {
    const int64_t first_group = static_cast<int64_t>(b) * kGroupsPerBlock;
    while (at < rows.size() && group_of[rows[at]] < first_group) ++at;
    start[b] = static_cast<uint32_t>(at);
  }
  return start;
}

// The rows of `group` in a GroupRows vector, `block_start` its GroupBlockIndex.
template <typename GroupOf>
std::span<const uint32_t> GroupRange(const std::vector<uint32_t>& rows, const GroupOf& group_of,
                                     const std::vector<uint32_t>& block_start, uint32_t group) {
  const size_t block = group / kGroupsPerBlock;
  if (block + 1 >= block_start.size()) return {};  // no rows, or past the last group
  const auto begin = rows.begin() + block_start[block], end = rows.begin() + block_start[block + 1];
  const int64_t key = group;
  auto first = std::lower_bound(begin, end, key, [&](uint32_t row, int64_t k) { return group_of[row] < k; });
  auto last = std::upper_bound(first, end, key, [&](int64_t k, uint32_t row) { return k < group_of[row]; });
  return {rows.data() + (first - rows.begin()), static_cast<size_t>(last - first)};
}

// Fills a CSR (offsets of size n+1, rows) from a "group of row" column, rows in
// the order given by `order` (so each group keeps that order).
void BuildCsr(size_t groups, const std::vector<int32_t>& group_of, const std::vector<uint32_t>& order,
              std::vector<uint32_t>& offsets, std::vector<uint32_t>& rows) {
  offsets.assign(groups + 1, 0);
  for (uint32_t row : order) {
    if (group_of[row] >= 0) ++offsets[group_of[row] + 1];
  }
  for (size_t i = 0; i < groups; ++i) offsets[i + 1] += offsets[i];
  rows.resize(offsets[groups]);
  std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
  for (uint32_t row : order) {
    if (group_of[row] >= 0) rows[fill[group_of[row]]++] = row;
  }
}

}  // namespace

// ------------------------------------------------------------------ builder

class CallGraphBuilder {
 public:
  CallGraphBuilder(Profile& profile, const GraphOptions& options, OperatorCallGraph& graph)
      : p_(profile), g_(graph) {
    g_.profile_ = &profile;
    g_.options_ = options;
  }

  Status Run() {
    PYPTO_RETURN_IF_ERROR(CheckColumns());
    PYPTO_RETURN_IF_ERROR(ComputeWholeWindow());
    { PhaseTimer t("graph.nest"); NestHostOps(); }
    { PhaseTimer t("graph.children+self"); ComputeChildrenAndSelfTime(); }
    { PhaseTimer t("graph.enclosing"); ComputeEnclosingOperators(); }
    first_cpu_task_ = static_cast<uint32_t>(p_.device_tasks.size());
    if (g_.options_.cpu_ops_as_device_tasks && p_.device_tasks.size() == 0) AddCpuComputeTasks();
    { PhaseTimer t("graph.link"); LinkDeviceTasks(); }
    { PhaseTimer t("graph.device_times"); ComputeDeviceTimesPerOp(); }
    { PhaseTimer t("graph.order_tasks"); OrderDeviceTasks(); }
    { PhaseTimer t("graph.steps"); FindSteps(); }
    g_.total_device_busy_ns_ = 0;
    for (const BusyTime& b : g_.DeviceBusyTimes()) g_.total_device_busy_ns_ += b.busy_ns;
    // Only the build walks ops by (track, ts); queries use host_by_ts_.
    std::vector<uint32_t>().swap(g_.host_by_track_ts_);
    ReleaseFreeHeapPages();  // the phases' transient arrays, before the analyses allocate theirs
    return Status::Ok();
  }

 private:
  Status CheckColumns() {
    HostOpTable& h = p_.host_ops;
    const size_t n = h.ts.size();
    if (h.name.size() != n || h.kind.size() != n || h.track.size() != n || h.dur.size() != n ||
        h.correlation.size() != n || h.external_id.size() != n) {
      return InternalError("graph: host op columns have different sizes");
    }
    h.depth.assign(n, 0);
    h.parent.assign(n, kNoIndex);
    DeviceTaskTable& d = p_.device_tasks;
    const size_t m = d.ts.size();
    if (d.name.size() != m || d.kind.size() != m || d.track.size() != m || d.dur.size() != m ||
        d.correlation.size() != m || d.external_id.size() != m || d.core_type.size() != m) {
      return InternalError("graph: device task columns have different sizes");
    }
    d.launcher.assign(m, kNoIndex);
    d.graph_launched.resize(m);
    if (n > static_cast<size_t>(INT32_MAX) || m > static_cast<size_t>(INT32_MAX)) {
      return LimitExceededError("graph: more than 2^31 host ops or device tasks");
    }
    for (size_t i = 0; i < n; ++i) {
      if (h.track[i] >= p_.tracks.size()) return InternalError("graph: host op track out of range");
    }
    for (size_t i = 0; i < m; ++i) {
      if (d.track[i] >= p_.tracks.size()) return InternalError("graph: device task track out of range");
    }
    g_.stats_.host_ops = n;
    g_.stats_.device_tasks = m;
    return Status::Ok();
  }

  // The window of every row. Refuses times that no clock of one profile gives:
  // an end past int64, or a span over kMaxProfileSpanNs. Every later figure
  // subtracts and sums times of this window, and would overflow otherwise.
  Status ComputeWholeWindow() {
    TimeNs start = INT64_MAX, end = INT64_MIN;
    const char* overflow_table = nullptr;
    TimeNs overflow_ts = 0;
    auto take = [&](const char* table, TimeNs ts, TimeNs dur) {
      TimeNs row_end = 0;
      if (__builtin_add_overflow(ts, std::max<TimeNs>(dur, 0), &row_end)) {
        if (!overflow_table) overflow_table = table, overflow_ts = ts;
        row_end = INT64_MAX;
      }
      start = std::min(start, ts);
      end = std::max(end, row_end);
    };
    for (size_t i = 0; i < p_.host_ops.size(); ++i) take("host op", p_.host_ops.ts[i], p_.host_ops.dur[i]);
    for (size_t i = 0; i < p_.device_tasks.size(); ++i)
      take("device task", p_.device_tasks.ts[i], p_.device_tasks.dur[i]);
    g_.whole_window_ = start <= end ? TimeWindow{start, end} : TimeWindow{0, 0};
    const std::string from =
        p_.source_files.empty() ? std::string("the profile") : p_.source_files.front();
    if (overflow_table) {
      return CorruptError(fmt::format("{}: a {} at ts {} ns ends past the largest int64 nanosecond time", from,
                                      overflow_table, overflow_ts));
    }
    TimeNs span = 0;
    if (start <= end && (__builtin_sub_overflow(end, start, &span) || span > kMaxProfileSpanNs)) {
      return CorruptError(fmt::format(
          "{}: the rows' times span {} ns to {} ns, more than {} days: the times are corrupt or mix clocks", from,
          start, end, kMaxProfileSpanNs / kNsPerDay));
    }
    return Status::Ok();
  }

  // Per track: sort by (ts, -dur), then a stack sweep. See docs/graph.md "Nesting".
  void NestHostOps() {
    HostOpTable& h = p_.host_ops;
    const size_t n = h.size();
    const TimeNs tol = std::max<TimeNs>(g_.options_.nesting_tolerance_ns, 0);
    auto& order = g_.host_by_track_ts_;
    {
      std::vector<uint32_t> rows(n);
      std::iota(rows.begin(), rows.end(), 0u);
      order = GroupThenSort(rows, [&](uint32_t op) { return h.track[op]; }, [&](uint32_t a, uint32_t b) {
        if (h.ts[a] != h.ts[b]) return h.ts[a] < h.ts[b];
        if (h.dur[a] != h.dur[b]) return h.dur[a] > h.dur[b];
        return a < b;
      });
    }
    std::vector<uint32_t> stack;
    uint32_t current_track = UINT32_MAX;
    for (uint32_t op : order) {
      if (h.track[op] != current_track) {
        stack.clear();
        current_track = h.track[op];
      }
      const TimeNs ts = h.ts[op];
      const TimeNs end = ts + std::max<TimeNs>(h.dur[op], 0);
      bool overlap = false;
      bool rounded = false;  // counted once per op, however many ops it touches
      while (!stack.empty()) {
        const uint32_t top = stack.back();
        const TimeNs top_end = h.ts[top] + std::max<TimeNs>(h.dur[top], 0);
        if (end <= top_end + tol) {  // contained (within rounding): child of top
          rounded |= end > top_end;
          break;
        }
        if (ts >= top_end - tol) {   // top finished before op starts (within rounding)
          rounded |= ts < top_end;
          stack.pop_back();
          continue;
        }
        overlap = true;              // starts inside top, ends well after it
        break;
      }
      if (rounded) ++g_.stats_.rounding_overlaps;
      if (overlap) {
        // Made a root, but still pushed: the ops it contains nest under it.
        // (Python tracer frames of record_function.__enter__ typically start
        // before the annotation and end inside it.) The entries under it that
        // ended are popped later by the "finished" rule above.
        ++g_.stats_.partial_overlaps;
      } else if (!stack.empty()) {
        const uint32_t parent = stack.back();
        h.parent[op] = static_cast<int32_t>(parent);
        h.depth[op] = static_cast<uint16_t>(std::min<uint32_t>(h.depth[parent] + 1u, UINT16_MAX));
        g_.stats_.max_depth = std::max<uint32_t>(g_.stats_.max_depth, h.depth[op]);
      }
      stack.push_back(op);
    }
    // (ts, -dur, row) order: each track's run of `order` is already in it, so
    // merge the runs (pairwise, log2(tracks) linear passes) instead of sorting again.
    g_.host_by_ts_ = order;
    auto by_time = [&](uint32_t a, uint32_t b) {
      if (h.ts[a] != h.ts[b]) return h.ts[a] < h.ts[b];
      if (h.dur[a] != h.dur[b]) return h.dur[a] > h.dur[b];
      return a < b;
    };
    std::vector<size_t> runs;  // run starts, then n
    for (size_t i = 0; i < n; ++i)
      if (i == 0 || h.track[order[i]] != h.track[order[i - 1]]) runs.push_back(i);
    runs.push_back(n);
    auto& merged = g_.host_by_ts_;
    while (runs.size() > 2) {
      std::vector<size_t> next;
      for (size_t r = 0; r + 1 < runs.size(); r += 2) {
        next.push_back(runs[r]);
        if (r + 2 < runs.size()) {
          std::inplace_merge(merged.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                             merged.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]),
                             merged.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]), by_time);
        }
      }
      next.push_back(n);
      runs.swap(next);
    }
  }

  void ComputeChildrenAndSelfTime() {
    const HostOpTable& h = p_.host_ops;
    const size_t n = h.size();
    BuildCsr(n, h.parent, g_.host_by_track_ts_, g_.child_offsets_, g_.child_rows_);
    g_.self_ns_.assign(n);
    for (size_t op = 0; op < n; ++op) {
      const TimeNs start = h.ts[op];
      const TimeNs end = start + std::max<TimeNs>(h.dur[op], 0);
      // Union of children clipped to the parent: children are in ts order.
      internal::SortedUnionLength covered;
      for (uint32_t c = g_.child_offsets_[op]; c < g_.child_offsets_[op + 1]; ++c) {
        const uint32_t child = g_.child_rows_[c];
        covered.Add(std::max(h.ts[child], start), std::min(h.ts[child] + std::max<TimeNs>(h.dur[child], 0), end));
      }
      g_.self_ns_.set(op, std::max<TimeNs>(end - start - covered.Total(), 0));
    }
  }

  // CPU-only profiles: one compute task per leaf operator (GraphOptions::
  // cpu_ops_as_device_tasks). The task keeps the operator's External id, so a
  // saved profile re-links it the same way, and is tied to the operator
  // explicitly after linking (LinkCpuComputeTasks) for traces without ids.
  void AddCpuComputeTasks() {
    HostOpTable& h = p_.host_ops;
    const size_t n = h.size();
    std::vector<uint8_t> has_operator_child(n, 0);
    bool any_operator = false;
    for (size_t op = 0; op < n; ++op) {
      if (h.kind[op] != HostOpKind::kOperator) continue;
      any_operator = true;
      const int32_t parent = h.parent[op];
      if (parent >= 0 && h.kind[parent] == HostOpKind::kOperator) has_operator_child[parent] = 1;
    }
    if (!any_operator) return;
    // Top-down: the outermost operator that does its own work (no operator
    // inside it, or at least kCpuTaskMinSelfShare of its time outside its
    // children: aten::mm around a tiny aten::resolve_conj) is the task; what
    // runs inside it is part of it.
    std::vector<uint8_t> inside_task(n, 0);
    std::vector<uint32_t> chosen;
    for (uint32_t op : g_.host_by_track_ts_) {
      const int32_t parent = h.parent[op];
      if (parent >= 0 && inside_task[parent]) {
        inside_task[op] = 1;
        continue;
      }
      if (h.kind[op] != HostOpKind::kOperator) continue;
      const TimeNs dur = std::max<TimeNs>(h.dur[op], 0);
      if (!has_operator_child[op] || double(g_.self_ns_[op]) >= kCpuTaskMinSelfShare * double(dur)) {
        inside_task[op] = 1;
        chosen.push_back(op);
      }
    }
    int32_t cpu_device = -1, next_index = 0;
    for (const DeviceRow& row : p_.devices.rows) {
      if (row.kind == DeviceKind::kCpu && cpu_device < 0) cpu_device = row.index;
      next_index = std::max(next_index, row.index + 1);
    }
    if (cpu_device < 0) {
      cpu_device = next_index;
      p_.devices.rows.push_back(DeviceRow{cpu_device, DeviceKind::kCpu, p_.Intern("cpu")});
    }
    const StrId category = p_.Intern("cpu_op");
    std::vector<uint32_t> stream_track(p_.tracks.size(), UINT32_MAX);
    DeviceTaskTable& d = p_.device_tasks;
    for (uint32_t op : chosen) {
      uint32_t& track = stream_track[h.track[op]];
      if (track == UINT32_MAX) {
        const std::string tid = "cpu ops of thread " + std::string(p_.Str(p_.tracks.tid_token[h.track[op]]));
        track = p_.DeviceTrack(p_.Str(p_.tracks.pid_token[h.track[op]]), tid, cpu_device, h.track[op]);
      }
      DeviceTaskRow row;
      row.name = h.name[op];
      row.category = category;
      row.kind = DeviceTaskKind::kKernel;
      row.track = track;
      row.ts = h.ts[op];
      row.dur = std::max<TimeNs>(h.dur[op], 0);
      row.external_id = h.external_id[op];
      d.Add(row);
      cpu_task_source_.push_back(op);
    }
    d.graph_launched.resize(d.size());
    g_.stats_.cpu_compute_tasks = cpu_task_source_.size();
    if (!cpu_task_source_.empty()) {
      p_.notes.push_back("CPU-only profile: " + std::to_string(cpu_task_source_.size()) +
                         " operators doing their own work are the compute tasks of device cpu (one stream per host thread)");
    }
  }

  // Top-down over (track, ts) order: parents come before their children.
  void ComputeEnclosingOperators() {
    const HostOpTable& h = p_.host_ops;
    const size_t n = h.size();
    g_.nearest_operator_.assign(n, kNoIndex);
    std::vector<int32_t> nearest_annotation(n, kNoIndex);
    for (uint32_t op : g_.host_by_track_ts_) {
      const int32_t parent = h.parent[op];
      int32_t nearest_op = parent >= 0 ? g_.nearest_operator_[parent] : kNoIndex;
      int32_t nearest_ann = parent >= 0 ? nearest_annotation[parent] : kNoIndex;
      if (h.kind[op] == HostOpKind::kOperator) nearest_op = static_cast<int32_t>(op);
      if (h.kind[op] == HostOpKind::kUserAnnotation) nearest_ann = static_cast<int32_t>(op);
      g_.nearest_operator_[op] = nearest_op;
      nearest_annotation[op] = nearest_ann;
    }
    for (size_t op = 0; op < n; ++op) {
      if (g_.nearest_operator_[op] == kNoIndex) g_.nearest_operator_[op] = nearest_annotation[op];
    }
  }

  void LinkDeviceTasks() {
    HostOpTable& h = p_.host_ops;
    DeviceTaskTable& d = p_.device_tasks;
    const size_t n = h.size();
    const size_t m = d.size();

    // Correlation -> runtime/driver call.
    std::vector<std::pair<int64_t, uint32_t>> by_correlation;
    for (uint32_t op = 0; op < n; ++op) {
      if (IsRuntimeKind(h.kind[op])) {
        ++g_.stats_.runtime_calls;
        if (h.correlation[op] != kNoId) by_correlation.emplace_back(h.correlation[op], op);
      }
    }
    SortUnlessSorted(by_correlation.begin(), by_correlation.end(),
                     std::less<std::pair<int64_t, uint32_t>>());  // ties: lowest row first
    by_correlation.erase(std::unique(by_correlation.begin(), by_correlation.end(),
                                     [&](const auto& a, const auto& b) {
                                       if (a.first != b.first) return false;
                                       ++g_.stats_.duplicate_correlations;
                                       return true;
                                     }),
                         by_correlation.end());
    // External id -> operator (then annotation): host rows sorted by
    // (External id, operators first, row), one row per id. Built on first use
    // (most tasks link by nesting) and as rows, not (id, row) pairs: on a 1 GB
    // trace the pairs were 16 MB at the graph's memory peak.
    std::vector<uint32_t> by_external_id;
    bool by_external_id_built = false;
    auto find_by_external_id = [&](int64_t ext) -> int32_t {
      if (!by_external_id_built) {
        by_external_id_built = true;
        for (uint32_t op = 0; op < n; ++op) {
          if ((h.kind[op] == HostOpKind::kOperator || h.kind[op] == HostOpKind::kUserAnnotation) &&
              h.external_id[op] != kNoId)
            by_external_id.push_back(op);
        }
        SortUnlessSorted(by_external_id.begin(), by_external_id.end(), [&](uint32_t a, uint32_t b) {
          if (h.external_id[a] != h.external_id[b]) return h.external_id[a] < h.external_id[b];
          const bool a_op = h.kind[a] == HostOpKind::kOperator;
          const bool b_op = h.kind[b] == HostOpKind::kOperator;
          if (a_op != b_op) return a_op;
          return a < b;
        });
        by_external_id.erase(std::unique(by_external_id.begin(), by_external_id.end(),
                                         [&](uint32_t a, uint32_t b) { return h.external_id[a] == h.external_id[b]; }),
                             by_external_id.end());
      }
      auto it = std::lower_bound(by_external_id.begin(), by_external_id.end(), ext,
                                 [&](uint32_t row, int64_t key) { return h.external_id[row] < key; });
      if (it == by_external_id.end() || h.external_id[*it] != ext) return kNoIndex;
      return static_cast<int32_t>(*it);
    };

    const std::vector<uint8_t> graph_launch = NameFlags(p_, g_.options_.graph_launch_names);
    const std::vector<uint8_t> sync_names = NameFlags(p_, g_.options_.sync_runtime_names);
    const std::vector<uint8_t> blocking_copies = NameFlags(p_, g_.options_.blocking_copy_runtime_names);
    g_.is_sync_call_.assign(n, 0);
    for (size_t op = 0; op < n; ++op) {
      if (IsRuntimeKind(h.kind[op]) && (sync_names[h.name[op]] || blocking_copies[h.name[op]]))
        g_.is_sync_call_[op] = 1;
    }
    // Blocking operators wait for a device only where there is one: in a
    // CPU-only profile (CPU compute tasks from first_cpu_task_ on) aten::item
    // is CPU work.
    if (first_cpu_task_ > 0) {
      const std::vector<uint8_t> blocking = NameFlags(p_, g_.options_.blocking_operator_names);
      for (size_t op = 0; op < n; ++op) {
        if (h.kind[op] == HostOpKind::kOperator && blocking[h.name[op]]) g_.is_sync_call_[op] = 1;
      }
    }

    g_.task_operator_.assign(m, kNoIndex);
    g_.task_link_.assign(m, TaskLink::kNone);
    for (uint32_t t = 0; t < m; ++t) {
      if (t >= first_cpu_task_ && t - first_cpu_task_ < cpu_task_source_.size()) {
        // A CPU compute task (AddCpuComputeTasks): its operator is known.
        g_.task_operator_.set(t, static_cast<int32_t>(cpu_task_source_[t - first_cpu_task_]));
        g_.task_link_.set(t, TaskLink::kExternalId);
        ++g_.stats_.tasks_attributed_by_external_id;
        continue;
      }
      int32_t launcher = kNoIndex;
      if (d.correlation[t] == kNoId) {
        ++g_.stats_.tasks_without_correlation;
      } else {
        launcher = FindRow(by_correlation, d.correlation[t]);
        if (launcher == kNoIndex) {
          ++g_.stats_.tasks_with_unmatched_correlation;
        } else {
          ++g_.stats_.tasks_linked_by_correlation;
        }
      }
      d.launcher.set(t, launcher);
      if (launcher != kNoIndex && graph_launch[h.name[launcher]]) d.graph_launched.set(t, 1);
      if (d.graph_launched[t]) ++g_.stats_.graph_launched_tasks;
      // A cuda_sync row is launched by a call that blocks: treat it as a sync call.
      if (launcher != kNoIndex && d.kind[t] == DeviceTaskKind::kSync) g_.is_sync_call_[launcher] = 1;
      // A copy from device to pageable host memory returns only once the copy
      // has completed, whatever the API's name says (CUDA Runtime API,
      // "API synchronization behavior": cudaMemcpyAsync to pageable memory;
      // Kineto names the row "Memcpy DtoH (Device -> Pageable)").
      if (launcher != kNoIndex && d.kind[t] == DeviceTaskKind::kMemcpy &&
          p_.Str(d.name[t]).find("Device -> Pageable") != std::string_view::npos)
        g_.is_sync_call_[launcher] = 1;

      int32_t op = kNoIndex;
      TaskLink link = TaskLink::kNone;
      if (launcher != kNoIndex && g_.nearest_operator_[launcher] != kNoIndex) {
        op = g_.nearest_operator_[launcher];
        link = TaskLink::kNesting;
      } else {
        // Not nested: the launcher's External id, else the task's own.
        int64_t ext = launcher != kNoIndex && h.external_id[launcher] != kNoId ? h.external_id[launcher]
                                                                             : d.external_id[t];
        if (ext != kNoId) op = find_by_external_id(ext);
        if (op == kNoIndex && launcher != kNoIndex && ext != d.external_id[t] && d.external_id[t] != kNoId) {
          op = find_by_external_id(d.external_id[t]);
        }
        if (op != kNoIndex) {
          link = TaskLink::kExternalId;
        } else if (launcher != kNoIndex) {
          link = TaskLink::kLauncherOnly;
        }
      }
      g_.task_operator_.set(t, op);
      g_.task_link_.set(t, link);
      switch (link) {
        case TaskLink::kNesting: ++g_.stats_.tasks_attributed_by_nesting; break;
        case TaskLink::kExternalId: ++g_.stats_.tasks_attributed_by_external_id; break;
        default: ++g_.stats_.tasks_unattributed; break;
      }
    }

    std::vector<std::pair<int64_t, uint32_t>>().swap(by_correlation);
    std::vector<uint32_t>().swap(by_external_id);
    std::vector<uint32_t> task_rows(m);
    std::iota(task_rows.begin(), task_rows.end(), 0u);
    // Stable by ts = ordered by (ts, row): a total order.
    auto by_time = [&](uint32_t a, uint32_t b) {
      if (d.ts[a] != d.ts[b]) return d.ts[a] < d.ts[b];
      return a < b;
    };
    SortUnlessSorted(task_rows.begin(), task_rows.end(), by_time);
    g_.op_task_rows_ = GroupRows(g_.task_operator_, task_rows, by_time);
    g_.launch_rows_ = GroupRows(d.launcher, task_rows, by_time);
    g_.op_task_blocks_ = GroupBlockIndex(g_.op_task_rows_, g_.task_operator_);
    g_.launch_blocks_ = GroupBlockIndex(g_.launch_rows_, d.launcher);

    // Runtime calls in row order against launch_rows_ grouped by launcher row:
    // one walk instead of a search per call.
    size_t next_launched = 0;
    for (uint32_t op = 0; op < n; ++op) {
      if (!IsRuntimeKind(h.kind[op])) continue;
      while (next_launched < g_.launch_rows_.size() && d.launcher[g_.launch_rows_[next_launched]] < static_cast<int32_t>(op))
        ++next_launched;
      const bool any = next_launched < g_.launch_rows_.size() && d.launcher[g_.launch_rows_[next_launched]] == static_cast<int32_t>(op);
      if (!any) {
        if (h.correlation[op] != kNoId) ++g_.stats_.runtime_calls_without_task;
        continue;
      }
      if (graph_launch[h.name[op]]) ++g_.stats_.graph_launches;
      if (g_.nearest_operator_[op] == kNoIndex &&
          g_.task_link_[g_.launch_rows_[next_launched]] != TaskLink::kExternalId) {
        ++g_.stats_.runtime_calls_without_operator;
      }
    }
  }

  void ComputeDeviceTimesPerOp() {
    const HostOpTable& h = p_.host_ops;
    const DeviceTaskTable& d = p_.device_tasks;
    const size_t n = h.size();
    // Self time per op is not kept (8 bytes per host op): DeviceSelfTime sums
    // the op's tasks on demand. Totals start from it, then add up the tree.
    g_.device_total_ns_.assign(n);
    for (size_t t = 0; t < d.size(); ++t) {
      if (g_.task_operator_[t] >= 0 && CountsAsBusy(d.kind[t])) {
        g_.device_total_ns_.add(g_.task_operator_[t], std::max<TimeNs>(d.dur[t], 0));
      }
    }
    // Bottom-up: children come after their parents in (track, ts) order.
    for (auto it = g_.host_by_track_ts_.rbegin(); it != g_.host_by_track_ts_.rend(); ++it) {
      if (h.parent[*it] >= 0) g_.device_total_ns_.add(h.parent[*it], g_.device_total_ns_[*it]);
    }
  }

  void OrderDeviceTasks() {
    const DeviceTaskTable& d = p_.device_tasks;
    const TrackTable& tr = p_.tracks;
    const size_t m = d.size();
    std::vector<uint32_t> busy;
    busy.reserve(m);
    for (uint32_t t = 0; t < m; ++t) {
      if (CountsAsBusy(d.kind[t])) busy.push_back(t);
    }
    auto by = [&](auto key) {
      return GroupThenSort(busy, key, [&](uint32_t a, uint32_t b) {
        if (d.ts[a] != d.ts[b]) return d.ts[a] < d.ts[b];
        return a < b;
      });
    };
    g_.task_by_track_ts_ = by([&](uint32_t t) { return static_cast<uint64_t>(d.track[t]); });
    g_.task_by_device_ts_ = by([&](uint32_t t) { return static_cast<int64_t>(tr.device[d.track[t]]); });
    IndexDeviceOrder();
    g_.task_by_core_ts_ = by([&](uint32_t t) {
      return std::pair<int64_t, uint64_t>(tr.device[d.track[t]], internal::CoreKey(d, t));
    });
  }

  void IndexDeviceOrder() {
    const DeviceTaskTable& d = p_.device_tasks;
    const TrackTable& tr = p_.tracks;
    const std::vector<uint32_t>& order = g_.task_by_device_ts_;
    g_.device_group_begin_.clear();
    g_.device_running_end_beyond_.assign(order.size(), 0);
    TimeNs running_end = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      const uint32_t t = order[i];
      const TimeNs end = d.ts[t] + std::max<TimeNs>(d.dur[t], 0);
      if (i == 0 || tr.device[d.track[t]] != tr.device[d.track[order[i - 1]]]) {
        g_.device_group_begin_.push_back(i);
        running_end = end;
      }
      running_end = std::max(running_end, end);
      g_.device_running_end_beyond_.set(i, running_end - end);
    }
    g_.device_group_begin_.push_back(order.size());
  }

  // Steps: the profile's step table, else ProfilerStep#N annotations, else the
  // whole window. Then the device span of each step.
  void FindSteps() {
    const HostOpTable& h = p_.host_ops;
    const DeviceTaskTable& d = p_.device_tasks;
    auto& steps = g_.steps_;
    steps.clear();
    if (!p_.steps.rows.empty()) {
      for (const StepRow& row : p_.steps.rows) {
        StepInfo s;
        s.number = row.number;
        s.name = row.name != kEmptyStr ? std::string(p_.Str(row.name)) : "step " + std::to_string(row.number);
        s.source = row.source != kEmptyStr ? std::string(p_.Str(row.source)) : "step table";
        s.device = row.device;
        if (row.ts == kUnknownNs) {
          // A step known only by its breakdown (no start time, no tasks to
          // place it on): the whole window stands in for its span, and the
          // breakdown's step time is its latency when the window is empty.
          s.cpu = g_.whole_window_;
          if (row.dur != kUnknownNs) s.recorded_latency_ns = row.dur;
        } else {
          s.cpu = {row.ts, SaturatingAdd(row.ts, std::max<TimeNs>(row.dur == kUnknownNs ? 0 : row.dur, 0))};
        }
        steps.push_back(std::move(s));
      }
    } else {
      const std::string& prefix = g_.options_.step_annotation_prefix;
      for (uint32_t op : g_.host_by_ts_) {
        // torch 1.9 wrote ProfilerStep#N with category "Operator", and the
        // legacy export has no categories at all: accept operators too.
        if (h.kind[op] != HostOpKind::kUserAnnotation && h.kind[op] != HostOpKind::kOperator) continue;
        std::string_view name = p_.Str(h.name[op]);
        if (prefix.empty() || name.substr(0, prefix.size()) != prefix) continue;
        StepInfo s;
        std::string_view digits = name.substr(prefix.size());
        int64_t number = -1;
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
        s.number = ec == std::errc() ? number : -1;
        s.name = std::string(name);
        s.source = "ProfilerStep annotation";
        s.host_op = static_cast<int32_t>(op);
        s.cpu = {h.ts[op], h.ts[op] + std::max<TimeNs>(h.dur[op], 0)};
        steps.push_back(std::move(s));
      }
      if (steps.empty()) {
        StepInfo s;
        s.name = "whole window";
        s.source = "whole window";
        s.cpu = g_.whole_window_;
        steps.push_back(std::move(s));
      }
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const StepInfo& a, const StepInfo& b) { return a.cpu.start < b.cpu.start; });

    // Tasks by anchor (TaskAnchor). The anchors are kept for the sort only
    // (8 bytes a task): queries compute them again.
    const size_t m = d.size();
    {
      std::vector<TimeNs> anchor(m);
      for (uint32_t t = 0; t < m; ++t) anchor[t] = g_.TaskAnchor(t);
      auto before = [&](uint32_t a, uint32_t b) {
        if (anchor[a] != anchor[b]) return anchor[a] < anchor[b];
        return a < b;
      };
      // Every task busy on one device and anchored at its own start (an
      // Ascend CSV): the device order holds every task in this order already
      // (a total order has one sorted sequence), and serves for both.
      const std::vector<uint32_t>& device_order = g_.task_by_device_ts_;
      g_.anchor_order_is_device_order_ =
          device_order.size() == m && std::is_sorted(device_order.begin(), device_order.end(), before);
      g_.task_by_anchor_.clear();
      if (!g_.anchor_order_is_device_order_) {
        g_.task_by_anchor_.resize(m);
        std::iota(g_.task_by_anchor_.begin(), g_.task_by_anchor_.end(), 0u);
        SortUnlessSorted(g_.task_by_anchor_.begin(), g_.task_by_anchor_.end(), before);
      }
    }
    const std::vector<uint32_t>& by_anchor = g_.TasksByAnchor();
    for (StepInfo& s : steps) {
      auto [begin, end] = g_.StepTaskRange(s.cpu);
      for (uint32_t i = begin; i < end; ++i) {
        const uint32_t t = by_anchor[i];
        if (!CountsAsBusy(d.kind[t])) continue;
        if (s.device >= 0 && p_.tracks.device[d.track[t]] != s.device) continue;
        const TimeNs te = d.ts[t] + std::max<TimeNs>(d.dur[t], 0);
        s.device_start = s.device_start == kNoTime ? d.ts[t] : std::min(s.device_start, d.ts[t]);
        s.device_end = s.device_end == kNoTime ? te : std::max(s.device_end, te);
        ++s.device_task_count;
      }
    }
    MarkHostRunningAhead(steps);
  }

  // The host running ahead of the device: step N's kernels still run when the
  // host starts step N+1 (asynchronous launches, no sync per step). Each
  // step's span from its start to its last kernel's end then covers part of
  // the previous step's device work, and the steps' latencies summed to more
  // than the profile (818 ms of steps in a 590 ms window). Such a step's time
  // starts when the previous step's device work ends: its latency is the
  // device's iteration period. Steps are compared per device (-1: host side).
  static void MarkHostRunningAhead(std::vector<StepInfo>& steps) {
    std::map<int32_t, const StepInfo*> previous_of_device;
    for (StepInfo& s : steps) {
      const StepInfo*& previous = previous_of_device[s.device];
      if (previous != nullptr && s.cpu.duration() > 0 && previous->device_end != kNoTime &&
          previous->device_end > s.cpu.start) {
        s.period_start = std::min(previous->device_end, std::max(s.cpu.end, s.device_end));
      }
      previous = &s;
    }
  }

  Profile& p_;
  std::vector<uint32_t> cpu_task_source_;  // AddCpuComputeTasks: source operator of each added task
  uint32_t first_cpu_task_ = 0;            // row of the first of them
  OperatorCallGraph& g_;
};

StatusOr<OperatorCallGraph> OperatorCallGraph::Build(Profile& profile, const GraphOptions& options) {
  OperatorCallGraph graph;
  CallGraphBuilder builder(profile, options, graph);
  PYPTO_RETURN_IF_ERROR(builder.Run());
  return graph;
}

// ------------------------------------------------------------------ queries

TimeNs OperatorCallGraph::DeviceRunningEnd(size_t position) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  const uint32_t t = task_by_device_ts_[position];
  return d.ts[t] + std::max<TimeNs>(d.dur[t], 0) + device_running_end_beyond_[position];
}

TimeNs OperatorCallGraph::TaskAnchor(uint32_t task) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  const int32_t launcher = d.launcher[task];
  if (launcher >= 0) return profile_->host_ops.ts[launcher];
  const int32_t op = task_operator_[task];
  return op >= 0 ? profile_->host_ops.ts[op] : d.ts[task];
}

std::pair<uint32_t, uint32_t> OperatorCallGraph::StepTaskRange(TimeWindow window) const {
  auto less_anchor = [&](uint32_t t, TimeNs v) { return TaskAnchor(t) < v; };
  const std::vector<uint32_t>& by_anchor = TasksByAnchor();
  auto begin = std::lower_bound(by_anchor.begin(), by_anchor.end(), window.start, less_anchor);
  auto end = std::lower_bound(begin, by_anchor.end(), window.end, less_anchor);
  return {static_cast<uint32_t>(begin - by_anchor.begin()), static_cast<uint32_t>(end - by_anchor.begin())};
}

uint64_t OperatorCallGraph::OpCount() const {
  uint64_t count = 0;
  for (HostOpKind kind : profile_->host_ops.kind) count += kind == HostOpKind::kOperator;
  if (count > 0) return count;
  // Device-only exports (Ascend kernel_details / op_summary without host rows):
  // each compute task row is one operator launch.
  for (DeviceTaskKind kind : profile_->device_tasks.kind) count += kind == DeviceTaskKind::kKernel;
  return count;
}

std::array<uint64_t, 6> OperatorCallGraph::HostOpCountsByKind() const {
  std::array<uint64_t, 6> counts{};
  for (HostOpKind kind : profile_->host_ops.kind) {
    size_t i = static_cast<size_t>(kind);
    if (i < counts.size()) ++counts[i];
  }
  return counts;
}

std::array<uint64_t, 7> OperatorCallGraph::DeviceTaskCountsByKind() const {
  std::array<uint64_t, 7> counts{};
  for (DeviceTaskKind kind : profile_->device_tasks.kind) {
    size_t i = static_cast<size_t>(kind);
    if (i < counts.size()) ++counts[i];
  }
  return counts;
}

std::span<const uint32_t> OperatorCallGraph::Children(uint32_t host_op) const {
  if (host_op + 1 >= child_offsets_.size()) return {};
  return {child_rows_.data() + child_offsets_[host_op], child_offsets_[host_op + 1] - child_offsets_[host_op]};
}

TimeNs OperatorCallGraph::TotalTime(uint32_t host_op) const {
  return std::max<TimeNs>(profile_->host_ops.dur[host_op], 0);
}

int32_t OperatorCallGraph::EnclosingOperator(uint32_t host_op) const {
  return host_op < nearest_operator_.size() ? nearest_operator_[host_op] : kNoIndex;
}

TimeNs OperatorCallGraph::DeviceSelfTime(uint32_t host_op) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  TimeNs sum = 0;
  for (uint32_t t : TasksOfOp(host_op))
    if (CountsAsBusy(d.kind[t])) sum += std::max<TimeNs>(d.dur[t], 0);
  return sum;
}

std::span<const uint32_t> OperatorCallGraph::TasksOfOp(uint32_t host_op) const {
  return GroupRange(op_task_rows_, task_operator_, op_task_blocks_, host_op);
}

std::span<const uint32_t> OperatorCallGraph::TasksLaunchedBy(uint32_t host_op) const {
  return GroupRange(launch_rows_, profile_->device_tasks.launcher, launch_blocks_, host_op);
}

int32_t OperatorCallGraph::LauncherOf(uint32_t task) const { return profile_->device_tasks.launcher[task]; }

bool OperatorCallGraph::IsGraphLaunched(uint32_t task) const {
  return profile_->device_tasks.graph_launched[task] != 0;
}

namespace {

// Busy time of task rows clipped to a window: their count, the sum of their
// clipped lengths and the length of their union. A row counts when its
// clipped part is non-empty, or when it is a zero-length row starting inside.
struct WindowBusy {
  uint64_t count = 0;
  TimeNs sum = 0;
  internal::SortedUnionLength busy;

  void Add(const DeviceTaskTable& d, uint32_t t, TimeWindow w) {
    const TimeNs s = std::max(d.ts[t], w.start);
    const TimeNs e = std::min(d.ts[t] + std::max<TimeNs>(d.dur[t], 0), w.end);
    if (e < s || (e == s && (d.ts[t] < w.start || d.ts[t] >= w.end))) return;  // outside the window
    ++count;
    sum += e - s;
    busy.Add(s, e);
  }
};

// Union of task intervals per group, over rows sorted by (group, ts). `group_of`
// gives the group key of a row; `emit(first_row, task_count, sum, busy)` is
// called once per non-empty group.
template <typename GroupOf, typename Emit>
void SweepBusy(const DeviceTaskTable& d, const std::vector<uint32_t>& order, TimeWindow w, GroupOf group_of,
               Emit emit) {
  size_t i = 0;
  while (i < order.size()) {
    const auto group = group_of(order[i]);
    const uint32_t first = order[i];
    WindowBusy window;
    for (; i < order.size() && group_of(order[i]) == group; ++i) window.Add(d, order[i], w);
    if (window.count > 0) emit(first, window.count, window.sum, window.busy.Total());
  }
}

// The first position in [begin, end) of a group whose running latest end
// (DeviceRunningEnd) reaches `start`: every row before it ends earlier, so
// a window starting at `start` can skip them.
// `running_end(i)`: that running end at position i.
template <typename RunningEnd>
size_t FirstRowReaching(RunningEnd running_end, size_t begin, size_t end, TimeNs start) {
  while (begin < end) {  // lower_bound over positions
    const size_t mid = begin + (end - begin) / 2;
    if (running_end(mid) < start) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

// SweepBusy over rows with a window index (device_group_begin_ and
// DeviceRunningEnd): per group, the scan starts at FirstRowReaching the
// window and stops at the first row starting at or after its end (rows are by
// ts). The rows skipped are exactly the ones WindowBusy::Add leaves out.
template <typename RunningEnd, typename Emit>
void SweepBusyIndexed(const DeviceTaskTable& d, const std::vector<uint32_t>& order,
                      const std::vector<size_t>& group_begin, RunningEnd running_end, TimeWindow w, Emit emit) {
  for (size_t g = 0; g + 1 < group_begin.size(); ++g) {
    const size_t begin = group_begin[g], end = group_begin[g + 1];
    WindowBusy window;
    for (size_t i = FirstRowReaching(running_end, begin, end, w.start); i < end && d.ts[order[i]] < w.end; ++i)
      window.Add(d, order[i], w);
    if (window.count > 0) emit(order[begin], window.count, window.sum, window.busy.Total());
  }
}

}  // namespace

std::vector<BusyTime> OperatorCallGraph::DeviceBusyTimes(std::optional<TimeWindow> window) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  const TrackTable& tr = profile_->tracks;
  const TimeWindow w = window.value_or(whole_window_);
  std::vector<BusyTime> out;
  SweepBusyIndexed(d, task_by_device_ts_, device_group_begin_, [this](size_t i) { return DeviceRunningEnd(i); }, w,
            [&](uint32_t first, uint64_t count, TimeNs sum, TimeNs busy) {
              BusyTime b;
              b.device = tr.device[d.track[first]];
              b.task_count = count;
              b.task_sum_ns = sum;
              b.busy_ns = busy;
              b.window_ns = w.duration();
              b.utilization = b.window_ns > 0 ? static_cast<double>(busy) / b.window_ns : 0.0;
              out.push_back(std::move(b));
            });
  return out;
}

std::vector<BusyTime> OperatorCallGraph::StreamBusyTimes(std::optional<TimeWindow> window) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  const TrackTable& tr = profile_->tracks;
  const TimeWindow w = window.value_or(whole_window_);
  std::vector<BusyTime> out;
  SweepBusy(d, task_by_track_ts_, w, [&](uint32_t t) { return d.track[t]; },
            [&](uint32_t first, uint64_t count, TimeNs sum, TimeNs busy) {
              BusyTime b;
              b.track = d.track[first];
              b.device = tr.device[b.track];
              b.stream = tr.stream[b.track];
              b.label = std::string(profile_->Str(tr.name[b.track]));
              b.task_count = count;
              b.task_sum_ns = sum;
              b.busy_ns = busy;
              b.window_ns = w.duration();
              b.utilization = b.window_ns > 0 ? static_cast<double>(busy) / b.window_ns : 0.0;
              out.push_back(std::move(b));
            });
  std::stable_sort(out.begin(), out.end(), [](const BusyTime& a, const BusyTime& b) {
    if (a.device != b.device) return a.device < b.device;
    return a.stream < b.stream;
  });
  return out;
}

std::vector<BusyTime> OperatorCallGraph::AiCoreUtilization(std::optional<TimeWindow> window) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  const TrackTable& tr = profile_->tracks;
  const TimeWindow w = window.value_or(whole_window_);
  std::vector<BusyTime> devices = DeviceBusyTimes(w);
  std::vector<BusyTime> out;
  SweepBusy(d, task_by_core_ts_, w,
            [&](uint32_t t) { return std::pair<int64_t, uint64_t>(tr.device[d.track[t]], internal::CoreKey(d, t)); },
            [&](uint32_t first, uint64_t count, TimeNs sum, TimeNs busy) {
              BusyTime b;
              b.device = tr.device[d.track[first]];
              b.label = internal::CoreLabel(*profile_, first);
              b.task_count = count;
              b.task_sum_ns = sum;
              b.busy_ns = busy;
              b.window_ns = w.duration();
              b.utilization = b.window_ns > 0 ? static_cast<double>(busy) / b.window_ns : 0.0;
              for (const BusyTime& dev : devices) {
                if (dev.device == b.device && dev.busy_ns > 0) b.share = static_cast<double>(busy) / dev.busy_ns;
              }
              out.push_back(std::move(b));
            });
  return out;
}

double OperatorCallGraph::ComputeUnitUtilization(std::optional<TimeWindow> window) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  const TimeWindow w = window.value_or(whole_window_);
  if (w.duration() <= 0) return 0.0;
  auto is_compute = [&](uint32_t t) {
    if (d.kind[t] != DeviceTaskKind::kKernel) return false;
    return d.core_type[t] == kEmptyStr || profile_->Str(d.core_type[t]) != "AI_CPU";
  };
  // task_by_device_ts_ is sorted by (device, ts): one sweep per device, from the
  // first row that reaches the window to the first that starts after it.
  TimeNs busy_total = 0;
  uint64_t devices = 0;
  const std::vector<uint32_t>& order = task_by_device_ts_;
  for (size_t g = 0; g + 1 < device_group_begin_.size(); ++g) {
    const size_t begin = device_group_begin_[g], end = device_group_begin_[g + 1];
    internal::SortedUnionLength busy;
    bool any = false;
    for (size_t i = FirstRowReaching([this](size_t i) { return DeviceRunningEnd(i); }, begin, end, w.start); i < end && d.ts[order[i]] < w.end;
         ++i) {
      const uint32_t t = order[i];
      if (!is_compute(t)) continue;
      const TimeNs s = std::max(d.ts[t], w.start);
      const TimeNs e = std::min(d.ts[t] + std::max<TimeNs>(d.dur[t], 0), w.end);
      if (e <= s) continue;
      any = true;
      busy.Add(s, e);
    }
    if (any) {
      busy_total += busy.Total();
      ++devices;
    }
  }
  if (devices == 0) return 0.0;
  return std::clamp(double(busy_total) / (double(devices) * double(w.duration())), 0.0, 1.0);
}

std::vector<HostOpAggregate> OperatorCallGraph::TopHostOpsBySelfTime(size_t limit, HostOpKind kind) const {
  const HostOpTable& h = profile_->host_ops;
  std::vector<int32_t> slot(profile_->strings.size(), -1);  // StrId -> aggregate row
  std::vector<HostOpAggregate> out;
  for (size_t op = 0; op < h.size(); ++op) {
    if (h.kind[op] != kind) continue;
    int32_t& s = slot[h.name[op]];
    if (s < 0) {
      s = static_cast<int32_t>(out.size());
      out.push_back({});
      out.back().name = h.name[op];
      out.back().kind = kind;
    }
    HostOpAggregate& a = out[s];
    ++a.count;
    a.total_ns += std::max<TimeNs>(h.dur[op], 0);
    a.self_ns += self_ns_[op];
  }
  // Device self time: each busy task to its operator's row (DeviceSelfTime summed by name).
  const DeviceTaskTable& d = profile_->device_tasks;
  for (size_t t = 0; t < d.size(); ++t) {
    const int32_t op = task_operator_[t];
    if (op < 0 || h.kind[op] != kind || !CountsAsBusy(d.kind[t])) continue;
    out[slot[h.name[op]]].device_ns += std::max<TimeNs>(d.dur[t], 0);
  }
  for (HostOpAggregate& a : out) a.mean_ns = a.count ? a.total_ns / static_cast<TimeNs>(a.count) : 0;
  std::sort(out.begin(), out.end(), [](const HostOpAggregate& a, const HostOpAggregate& b) {
    if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
    return a.name < b.name;
  });
  if (limit > 0 && out.size() > limit) out.resize(limit);
  return out;
}

std::vector<DeviceTaskAggregate> OperatorCallGraph::TopDeviceTasksByTotalTime(size_t limit) const {
  const DeviceTaskTable& d = profile_->device_tasks;
  std::vector<int32_t> slot(profile_->strings.size(), -1);
  std::vector<DeviceTaskAggregate> out;
  for (size_t t = 0; t < d.size(); ++t) {
    if (!CountsAsBusy(d.kind[t])) continue;
    int32_t& s = slot[d.name[t]];
    if (s < 0) {
      s = static_cast<int32_t>(out.size());
      out.push_back({});
      out.back().name = d.name[t];
      out.back().kind = d.kind[t];
    }
    ++out[s].count;
    out[s].total_ns += std::max<TimeNs>(d.dur[t], 0);
  }
  // A name's share of the busy time is the union of its tasks per device (as
  // DeviceTaskKindTotals): HCCL sub-tasks of one name run on several planes
  // at once ("Notify Wait" summed to 188.7 % of busy on the 2-rank DB).
  ForEachUnionPerDevice(*profile_, task_by_device_ts_, profile_->strings.size(), [&](uint32_t t) { return d.name[t]; },
                        [&](StrId name, TimeNs busy) { out[slot[name]].busy_ns += busy; });
  for (DeviceTaskAggregate& a : out) {
    a.mean_ns = a.count ? a.total_ns / static_cast<TimeNs>(a.count) : 0;
    a.share_of_busy =
        total_device_busy_ns_ > 0 ? std::min(1.0, static_cast<double>(a.busy_ns) / total_device_busy_ns_) : 0.0;
  }
  std::sort(out.begin(), out.end(), [](const DeviceTaskAggregate& a, const DeviceTaskAggregate& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.name < b.name;
  });
  if (limit > 0 && out.size() > limit) out.resize(limit);
  return out;
}

std::vector<DeviceTaskKindTotal> OperatorCallGraph::DeviceTaskKindTotals() const {
  const DeviceTaskTable& d = profile_->device_tasks;
  std::array<DeviceTaskKindTotal, 7> totals{};
  for (size_t t = 0; t < d.size(); ++t) {
    size_t k = static_cast<size_t>(d.kind[t]);
    if (k >= totals.size()) continue;
    ++totals[k].count;
    totals[k].total_ns += std::max<TimeNs>(d.dur[t], 0);
  }
  // Busy time of each kind: the union of its tasks per device, summed over
  // devices. Tasks of one kind nest and overlap (a collective's span and its
  // HCCL sub-tasks, concurrent streams), so their summed durations reached
  // 406 % of the busy time on the 2-rank DB; the union never exceeds it.
  ForEachUnionPerDevice(*profile_, task_by_device_ts_, kDeviceTaskKindCount, [&](uint32_t t) { return d.kind[t]; },
                        [&](DeviceTaskKind kind, TimeNs busy) {
    if (static_cast<size_t>(kind) < totals.size()) totals[static_cast<size_t>(kind)].busy_ns += busy;
  });
  std::vector<DeviceTaskKindTotal> out;
  for (size_t k = 0; k < totals.size(); ++k) {
    if (totals[k].count == 0) continue;
    DeviceTaskKindTotal row = totals[k];
    row.kind = static_cast<DeviceTaskKind>(k);
    if (CountsAsBusy(row.kind) && total_device_busy_ns_ > 0) {
      row.share_of_busy = std::min(1.0, static_cast<double>(row.busy_ns) / total_device_busy_ns_);
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace pypto
