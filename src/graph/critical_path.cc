// Critical path of a step, after HTA's critical path analysis
// (hta/analyzers/critical_path_analysis.py): a DAG whose nodes are the start and
// end of every host op and device task of the step, with edges for host nesting
// and sibling order, kernel launches, stream order and sync waits. The longest
// path (topological order, linear) is the chain of dependencies that set the
// step's latency. Rules and edge kinds: docs/graph.md "Critical path".
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <atomic>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "graph/call_graph.h"
#include "graph/graph_internal.h"

namespace pypto {

const char* PathSegmentKindName(PathSegmentKind kind) {
  switch (kind) {
    case PathSegmentKind::kHostBound: return "host-bound";
    case PathSegmentKind::kLaunchOverhead: return "launch overhead";
    case PathSegmentKind::kDeviceCompute: return "device compute";
    case PathSegmentKind::kMemoryCopy: return "memory copy";
    case PathSegmentKind::kCommunication: return "communication";
    case PathSegmentKind::kKernelGap: return "kernel-to-kernel gap";
    case PathSegmentKind::kSyncWait: return "sync wait";
  }
  return "?";
}

// Row -> local index of the rows selected for one window, stored over the
// span of row numbers they cover: a step's rows lie close together in file
// order, so one step's map is about the step's size, not the profile's
// (which was 4 bytes per host op and task for every thread).
class RowMap {
 public:
  void Build(const std::vector<uint32_t>& rows) {
    local_.clear();
    base_ = 0;
    if (rows.empty()) return;
    const auto [lo, hi] = std::minmax_element(rows.begin(), rows.end());
    base_ = *lo;
    local_.assign(static_cast<size_t>(*hi - *lo) + 1, -1);
    for (size_t j = 0; j < rows.size(); ++j) local_[rows[j] - base_] = static_cast<int32_t>(j);
  }
  int32_t operator[](int64_t row) const {
    const uint64_t i = static_cast<uint64_t>(row - static_cast<int64_t>(base_));
    return i < local_.size() ? local_[i] : -1;
  }
  void Release() { std::vector<int32_t>().swap(local_); }

 private:
  uint32_t base_ = 0;
  std::vector<int32_t> local_;
};

class CriticalPathBuilder {
 public:
  CriticalPathBuilder(const OperatorCallGraph& graph, bool keep_segments)
      : g_(graph), h_(graph.profile().host_ops), d_(graph.profile().device_tasks), keep_segments_(keep_segments) {}

  CriticalPath Run(TimeWindow window) {
    CriticalPath path;
    tolerance_ = std::max<TimeNs>(g_.options().nesting_tolerance_ns, 0);
    path.window = window;
    hosts_.clear();
    tasks_.clear();
    edges_.clear();
    skipped_edges_ = 0;
    SelectEvents(window);
    // At most: per host op one edge per child, one closing edge, one root edge
    // and one sync edge; per task its own, launch and stream edges. Reserved
    // so the vector never doubles (a whole 1 GB trace has ~3.5 M edges);
    // capacity that stays unused is never touched, so it costs no memory.
    edges_.reserve(4 * hosts_.size() + 4 * tasks_.size());
    AddHostEdges();
    AddDeviceEdges();
    AddCommunicationWaitEdges();
    AddSyncEdges();
    // Row -> local index maps are not needed any more.
    host_local_.Release();
    task_local_.Release();
    LongestPath(path);
    path.skipped_edges = skipped_edges_;
    return path;
  }

 private:
  // Which rule made an edge. With the two nodes it gives the edge's host op
  // and task (see Owners), so an edge is 12 bytes instead of 32: the whole
  // profile of a 1 GB trace has ~5 M edges. The weight is the time difference
  // of the nodes, recomputed where needed.
  enum class EdgeType : uint8_t {
    kFirstChild,   // op start -> first child start: host op = src's op
    kNextChild,    // child end -> next child start: host op = parent of dst's op
    kLastChild,    // last child end -> op end: host op = dst's op
    kLeaf,         // leaf op start -> end: host op = the op
    kRootToRoot,   // root end -> next root start on the thread: no host op
    kTask,         // task start -> end: task = the task
    kLaunch,       // launcher start -> task start: host op = src's op, task = dst's task
    kGap,          // stream predecessor end -> task start: task = dst's task
    kSync,         // task end -> sync call end: host op = dst's op, task = src's task
    kCrossStream,  // communication <-> compute on another stream of the device: task = dst's task
  };
  struct Edge {
    uint32_t src, dst;
    PathSegmentKind kind;
    EdgeType type;
  };

  TimeNs HostEnd(uint32_t op) const { return h_.ts[op] + std::max<TimeNs>(h_.dur[op], 0); }
  TimeNs TaskEnd(uint32_t t) const { return d_.ts[t] + std::max<TimeNs>(d_.dur[t], 0); }

  // Nodes: host op i (local) -> 2i (start), 2i+1 (end); task j -> base + 2j, base + 2j + 1.
  uint32_t HostStart(uint32_t local) const { return 2 * local; }
  uint32_t HostFinish(uint32_t local) const { return 2 * local + 1; }
  uint32_t TaskStart(uint32_t local) const { return task_base_ + 2 * local; }
  uint32_t TaskFinish(uint32_t local) const { return task_base_ + 2 * local + 1; }
  // Host op row / task row of a node.
  int32_t HostOf(uint32_t node) const { return static_cast<int32_t>(hosts_[node / 2]); }
  int32_t TaskOf(uint32_t node) const { return static_cast<int32_t>(tasks_[(node - task_base_) / 2]); }
  std::pair<int32_t, int32_t> Owners(const Edge& e) const {
    switch (e.type) {
      case EdgeType::kFirstChild: return {HostOf(e.src), kNoIndex};
      case EdgeType::kNextChild: return {h_.parent[HostOf(e.dst)], kNoIndex};
      case EdgeType::kLastChild:
      case EdgeType::kLeaf: return {HostOf(e.dst), kNoIndex};
      case EdgeType::kRootToRoot: return {kNoIndex, kNoIndex};
      case EdgeType::kTask: return {kNoIndex, TaskOf(e.src)};
      case EdgeType::kLaunch: return {HostOf(e.src), TaskOf(e.dst)};
      case EdgeType::kGap: return {kNoIndex, TaskOf(e.dst)};
      case EdgeType::kSync: return {HostOf(e.dst), TaskOf(e.src)};
      case EdgeType::kCrossStream: return {kNoIndex, TaskOf(e.dst)};
    }
    return {kNoIndex, kNoIndex};
  }
  TimeNs Weight(const Edge& e) const { return node_time_[e.dst] - node_time_[e.src]; }

  void SelectEvents(TimeWindow w) {
    // Host ops starting in the window, in ts order.
    const auto& by_ts = g_.host_by_ts_;
    auto first = std::lower_bound(by_ts.begin(), by_ts.end(), w.start,
                                  [&](uint32_t op, TimeNs v) { return h_.ts[op] < v; });
    // kOther host ops are profiler spans ("PyTorch Profiler (0)"), instants and
    // unknown categories: markers, not work, so they take no part in the path.
    for (auto it = first; it != by_ts.end() && h_.ts[*it] < w.end; ++it) {
      if (h_.kind[*it] == HostOpKind::kOther) continue;
      hosts_.push_back(*it);
    }
    // A zero-length window (empty profile, or one instant): take ops at w.start.
    for (auto it = first; w.end == w.start && it != by_ts.end() && h_.ts[*it] == w.start; ++it) {
      if (h_.kind[*it] == HostOpKind::kOther) continue;
      hosts_.push_back(*it);
    }
    // Device tasks anchored in the window (launched from it, or running in it
    // when unlinked); device annotations and sync rows are not work.
    auto [begin, end] = g_.StepTaskRange(w);
    std::vector<uint32_t> selected;
    for (uint32_t i = begin; i < end; ++i) {
      const uint32_t t = g_.task_by_anchor_[i];
      if (d_.kind[t] == DeviceTaskKind::kAnnotation || d_.kind[t] == DeviceTaskKind::kSync) continue;
      selected.push_back(t);
    }
    internal::SortUnlessSorted(selected.begin(), selected.end(), [&](uint32_t a, uint32_t b) {
      if (d_.track[a] != d_.track[b]) return d_.track[a] < d_.track[b];
      if (d_.ts[a] != d_.ts[b]) return d_.ts[a] < d_.ts[b];
      return a < b;
    });
    tasks_ = std::move(selected);
    host_local_.Build(hosts_);
    task_local_.Build(tasks_);
    task_base_ = static_cast<uint32_t>(2 * hosts_.size());
    node_time_.resize(task_base_ + 2 * tasks_.size());
    for (uint32_t i = 0; i < hosts_.size(); ++i) {
      node_time_[HostStart(i)] = h_.ts[hosts_[i]];
      node_time_[HostFinish(i)] = HostEnd(hosts_[i]);
    }
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      node_time_[TaskStart(j)] = d_.ts[tasks_[j]];
      node_time_[TaskFinish(j)] = TaskEnd(tasks_[j]);
    }
  }

  // Weights are time differences, so any path's length is its time span.
  // An edge that would go back in time by more than the rounding tolerance
  // (siblings around a partial overlap, clock skew) is left out: it would
  // count the same wall time twice.
  void AddEdge(uint32_t src, uint32_t dst, PathSegmentKind kind, EdgeType type) {
    const TimeNs diff = node_time_[dst] - node_time_[src];
    if (diff < -tolerance_) {
      ++skipped_edges_;
      return;
    }
    edges_.push_back({src, dst, kind, type});  // weight may be slightly < 0 (rounding)
  }

  PathSegmentKind LeafKind(uint32_t op) const {
    if (g_.is_sync_call_[op]) return PathSegmentKind::kSyncWait;
    // Only calls that launched device work are launch overhead; other runtime
    // calls (cudaFree, lazy context init, …) are host work.
    if ((h_.kind[op] == HostOpKind::kRuntime || h_.kind[op] == HostOpKind::kDriver) &&
        !g_.TasksLaunchedBy(op).empty()) {
      return PathSegmentKind::kLaunchOverhead;
    }
    return PathSegmentKind::kHostBound;
  }

  // Op start -> first child start, child end -> next child start, last child
  // end -> op end (the host time in between is the op's own work); a leaf's
  // start -> end; consecutive roots of a thread: end -> next start.
  void AddHostEdges() {
    std::vector<int32_t> last_root_of_track(g_.profile().tracks.size(), -1);
    for (uint32_t i = 0; i < hosts_.size(); ++i) {
      const uint32_t op = hosts_[i];
      int32_t previous = -1;
      for (uint32_t child : g_.Children(op)) {
        const int32_t c = host_local_[child];
        if (c < 0) continue;
        if (previous < 0) {
          AddEdge(HostStart(i), HostStart(c), PathSegmentKind::kHostBound, EdgeType::kFirstChild);
        } else {
          AddEdge(HostFinish(previous), HostStart(c), PathSegmentKind::kHostBound, EdgeType::kNextChild);
        }
        previous = c;
      }
      if (previous < 0) {
        AddEdge(HostStart(i), HostFinish(i), LeafKind(op), EdgeType::kLeaf);
      } else {
        AddEdge(HostFinish(previous), HostFinish(i), PathSegmentKind::kHostBound, EdgeType::kLastChild);
      }
      const int32_t parent = h_.parent[op];
      if (parent < 0 || host_local_[parent] < 0) {  // a root inside the window
        int32_t& last = last_root_of_track[h_.track[op]];
        if (last >= 0) AddEdge(HostFinish(last), HostStart(i), PathSegmentKind::kHostBound, EdgeType::kRootToRoot);
        last = static_cast<int32_t>(i);
      }
    }
  }

  static PathSegmentKind TaskKind(DeviceTaskKind kind) {
    switch (kind) {
      case DeviceTaskKind::kMemcpy:
      case DeviceTaskKind::kMemset: return PathSegmentKind::kMemoryCopy;
      case DeviceTaskKind::kCommunication: return PathSegmentKind::kCommunication;
      default: return PathSegmentKind::kDeviceCompute;
    }
  }

  // Task start -> end; launch call start -> task start; stream order: the end
  // of the task that finished last so far -> next start (a gap), unless the
  // next one starts well before that end (concurrent work on one stream row).
  void AddDeviceEdges() {
    const TimeNs tol = std::max<TimeNs>(g_.options().nesting_tolerance_ns, 0);
    int32_t last = -1;
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      AddEdge(TaskStart(j), TaskFinish(j), TaskKind(d_.kind[t]), EdgeType::kTask);
      const int32_t launcher = d_.launcher[t];
      if (launcher >= 0 && host_local_[launcher] >= 0) {
        AddEdge(HostStart(host_local_[launcher]), TaskStart(j), PathSegmentKind::kLaunchOverhead, EdgeType::kLaunch);
      }
      if (last >= 0 && d_.track[tasks_[last]] != d_.track[t]) last = -1;
      if (last >= 0) {
        if (d_.ts[t] >= TaskEnd(tasks_[last]) - tol) {
          AddEdge(TaskFinish(last), TaskStart(j), PathSegmentKind::kKernelGap, EdgeType::kGap);
        }
        if (TaskEnd(t) > TaskEnd(tasks_[last])) last = static_cast<int32_t>(j);
      } else {
        last = static_cast<int32_t>(j);
      }
    }
  }

  // Exposed communication. A collective and the compute it feeds run on
  // different streams of one device (HCCL/NCCL streams, the COMMUNICATION
  // core), and the profile carries no event linking them. When a task starts
  // after a gap on its own stream, the work of the other kind (communication
  // for a compute task, compute for a communication task) on the same device
  // that ended last inside that gap is what it waited for: an edge from that
  // end to this start. The path then runs through an exposed collective
  // instead of calling its time a kernel-to-kernel gap — the time
  // msprof-analyze's step_trace_time counts as Communication(Not Overlapped).
  void AddCommunicationWaitEdges() {
    const TrackTable& tracks = g_.profile().tracks;
    struct Ended {
      TimeNs end;
      uint32_t local;
    };
    // Per device, per kind (0 = compute/copy, 1 = communication): tasks by end.
    std::map<int32_t, std::array<std::vector<Ended>, 2>> by_device;
    bool any_communication = false;
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      const bool comm = d_.kind[t] == DeviceTaskKind::kCommunication;
      any_communication |= comm;
      by_device[tracks.device[d_.track[t]]][comm ? 1 : 0].push_back({TaskEnd(t), j});
    }
    if (!any_communication) return;
    for (auto& [device, lists] : by_device)
      for (auto& list : lists)
        std::sort(list.begin(), list.end(), [](const Ended& a, const Ended& b) { return a.end < b.end; });
    // Stream predecessors' ends, as AddDeviceEdges saw them (tasks_ is in (track, ts) order).
    TimeNs stream_end = 0;
    bool has_predecessor = false;
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      if (j == 0 || d_.track[tasks_[j - 1]] != d_.track[t]) has_predecessor = false;
      const TimeNs gap_start = has_predecessor ? stream_end : std::numeric_limits<TimeNs>::min();
      const bool after_gap = !has_predecessor || d_.ts[t] > stream_end + tolerance_;
      if (after_gap) {
        const bool comm = d_.kind[t] == DeviceTaskKind::kCommunication;
        const auto& other = by_device[tracks.device[d_.track[t]]][comm ? 0 : 1];
        auto it = std::upper_bound(other.begin(), other.end(), d_.ts[t] + tolerance_,
                                   [](TimeNs v, const Ended& e) { return v < e.end; });
        if (it != other.begin()) {
          const Ended& waited = *(it - 1);
          if (waited.end > gap_start && d_.track[tasks_[waited.local]] != d_.track[t])
            AddEdge(TaskFinish(waited.local), TaskStart(j), PathSegmentKind::kKernelGap, EdgeType::kCrossStream);
        }
      }
      stream_end = has_predecessor ? std::max(stream_end, TaskEnd(t)) : TaskEnd(t);
      has_predecessor = true;
    }
  }

  // A sync call returns when the work it waits for is done: the task that
  // ended last before the call returned (and after it began) -> call end.
  void AddSyncEdges() {
    const TimeNs tol = std::max<TimeNs>(g_.options().nesting_tolerance_ns, 0);
    std::vector<uint32_t> by_end(tasks_.size());
    for (uint32_t j = 0; j < tasks_.size(); ++j) by_end[j] = j;
    std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) {
      return TaskEnd(tasks_[a]) < TaskEnd(tasks_[b]);
    });
    for (uint32_t i = 0; i < hosts_.size(); ++i) {
      const uint32_t op = hosts_[i];
      if (!g_.is_sync_call_[op]) continue;
      const TimeNs call_end = HostEnd(op);
      auto it = std::upper_bound(by_end.begin(), by_end.end(), call_end + tol,
                                 [&](TimeNs v, uint32_t j) { return v < TaskEnd(tasks_[j]); });
      if (it == by_end.begin()) continue;
      const uint32_t j = *(it - 1);
      if (TaskEnd(tasks_[j]) < h_.ts[op]) continue;  // finished before the call: nothing waited for
      AddEdge(TaskFinish(j), HostFinish(i), PathSegmentKind::kSyncWait, EdgeType::kSync);
    }
  }

  // Kahn's algorithm; every node may start a path (distance 0). Among equal
  // distances the predecessor that finished last wins: it is the dependency
  // that actually held the node back.
  void LongestPath(CriticalPath& path) {
    const size_t nodes = node_time_.size();
    path.nodes = nodes;
    path.edges = edges_.size();
    if (nodes == 0) {
      path.path_start = path.path_end = path.window.start;
      return;
    }
    std::vector<uint32_t> out_offsets(nodes + 1, 0), out_edges(edges_.size()), in_degree(nodes, 0);
    for (const Edge& e : edges_) {
      ++out_offsets[e.src + 1];
      ++in_degree[e.dst];
    }
    for (size_t v = 0; v < nodes; ++v) out_offsets[v + 1] += out_offsets[v];
    {
      std::vector<uint32_t> fill(out_offsets.begin(), out_offsets.end() - 1);
      for (uint32_t e = 0; e < edges_.size(); ++e) out_edges[fill[edges_[e].src]++] = e;
    }
    // Weights are time differences, so a path's length telescopes to
    // time(node) - time(first node of the path): instead of the distance
    // (8 bytes a node) keep the path's first node (4 bytes). "Longer" is then
    // "starts earlier", with exactly the comparisons of the distances.
    std::vector<uint32_t> first(nodes);
    for (uint32_t v = 0; v < nodes; ++v) first[v] = v;
    auto dist = [&](uint32_t v) { return node_time_[v] - node_time_[first[v]]; };
    std::vector<int32_t> pred(nodes, -1);  // edge index
    std::vector<uint32_t> queue;
    queue.reserve(nodes);
    for (uint32_t v = 0; v < nodes; ++v) {
      if (in_degree[v] == 0) queue.push_back(v);
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      const uint32_t u = queue[head];
      for (uint32_t k = out_offsets[u]; k < out_offsets[u + 1]; ++k) {
        const Edge& e = edges_[out_edges[k]];
        const TimeNs candidate = dist(u) + Weight(e);
        const TimeNs current = dist(e.dst);
        bool better = candidate > current;
        if (candidate == current) {
          better = pred[e.dst] < 0 || node_time_[u] > node_time_[edges_[pred[e.dst]].src];
        }
        if (better) {
          first[e.dst] = first[u];
          pred[e.dst] = static_cast<int32_t>(out_edges[k]);
        }
        if (--in_degree[e.dst] == 0) queue.push_back(e.dst);
      }
    }
    path.dropped_nodes = nodes - queue.size();
    std::vector<uint32_t>().swap(out_offsets);
    std::vector<uint32_t>().swap(out_edges);
    std::vector<uint32_t>().swap(in_degree);
    // The path ends at the farthest node (latest time among equals).
    uint32_t end = queue.empty() ? 0 : queue[0];
    for (uint32_t v : queue) {
      if (dist(v) > dist(end) || (dist(v) == dist(end) && node_time_[v] > node_time_[end])) end = v;
    }
    std::vector<uint32_t>().swap(queue);
    std::vector<uint32_t>().swap(first);
    // Walk back twice: count, then fill, so neither list regrows.
    size_t length = 0;
    for (uint32_t v = end; pred[v] >= 0; v = edges_[pred[v]].src) ++length;
    std::vector<uint32_t> chain;  // edge indices, last first
    chain.reserve(length);
    uint32_t v = end;
    for (int32_t e = pred[v]; e >= 0; e = pred[v]) {
      chain.push_back(static_cast<uint32_t>(e));
      v = edges_[e].src;
    }
    std::vector<int32_t>().swap(pred);
    if (keep_segments_) path.segments.reserve(length);
    path.path_start = node_time_[v];
    // Segments in time order; a cursor absorbs the small backward steps that
    // rounding overlaps allow, so segments never overlap and sum to the latency.
    TimeNs cursor = path.path_start;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Edge& edge = edges_[*it];
      const TimeNs start = std::max(cursor, node_time_[edge.src]);
      const TimeNs stop = std::max(start, node_time_[edge.dst]);
      if (stop > start) {
        if (keep_segments_) {
          const auto [host_op, task] = Owners(edge);
          path.segments.push_back({edge.kind, host_op, task, start, stop - start});
        }
        ++path.segment_count;
        path.breakdown_ns[static_cast<size_t>(edge.kind)] += stop - start;
      }
      cursor = stop;
    }
    path.path_end = cursor;
    path.latency_ns = cursor - path.path_start;
  }

  const OperatorCallGraph& g_;
  const HostOpTable& h_;
  const DeviceTaskTable& d_;
  std::vector<uint32_t> hosts_;      // selected host rows, ts order
  RowMap host_local_;                // host row -> local index, -1 if not selected
  std::vector<uint32_t> tasks_;      // selected task rows, (track, ts) order
  RowMap task_local_;
  uint32_t task_base_ = 0;
  std::vector<TimeNs> node_time_;
  std::vector<Edge> edges_;
  TimeNs tolerance_ = 0;
  uint64_t skipped_edges_ = 0;
  bool keep_segments_ = true;
};

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathImpl(TimeWindow window, bool keep_segments) const {
  if (window.end < window.start) return InvalidArgumentError("critical path: window ends before it starts");
  CriticalPathBuilder builder(*this, keep_segments);
  return builder.Run(window);
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathImpl(std::optional<size_t> step,
                                                                  bool keep_segments) const {
  if (!step) {
    // Whole profile: one past the end so that the last instant is included.
    TimeWindow w = whole_window_;
    w.end += 1;
    return ComputeCriticalPathImpl(w, keep_segments);
  }
  if (*step >= steps_.size()) {
    return InvalidArgumentError(fmt::format("critical path: step {} out of range ({} steps)", *step, steps_.size()));
  }
  return ComputeCriticalPathImpl(steps_[*step].cpu, keep_segments);
}

bool OperatorCallGraph::HasSeparateHostSteps() const {
  if (steps_.size() < 2) return false;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].device >= 0) return false;  // per-device step rows (Ascend): windows repeat per device
    if (i > 0 && steps_[i].cpu.start < steps_[i - 1].cpu.end) return false;
  }
  return true;
}

std::vector<CriticalPath> OperatorCallGraph::ComputeEveryStepCriticalPathTotals() const {
  const size_t steps = steps_.size();
  std::vector<CriticalPath> paths(steps);
  const size_t threads = std::min<size_t>(
      {steps, kMaxCriticalPathThreads, std::max<size_t>(1, std::thread::hardware_concurrency())});
  std::atomic<size_t> next{0};
  auto work = [&] {
    CriticalPathBuilder builder(*this, /*keep_segments=*/false);
    for (size_t i = next++; i < steps; i = next++) paths[i] = builder.Run(steps_[i].cpu);
  };
  {
    std::vector<std::jthread> helpers;  // joined at the end of this block
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }
  return paths;
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPath(TimeWindow window) const {
  return ComputeCriticalPathImpl(window, true);
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPath(std::optional<size_t> step) const {
  return ComputeCriticalPathImpl(step, true);
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathTotals(std::optional<size_t> step) const {
  return ComputeCriticalPathImpl(step, false);
}

StatusOr<TimeNs> OperatorCallGraph::CriticalPathLatency(std::optional<size_t> step) const {
  PYPTO_ASSIGN_OR_RETURN(CriticalPath path, ComputeCriticalPathTotals(step));
  return path.latency_ns;
}

}  // namespace pypto
