// Critical path of a step, after HTA's critical path analysis
// (hta/analyzers/critical_path_analysis.py): a DAG whose nodes are the start and
// end of every host op and device task of the step, with edges for host nesting
// and sibling order, kernel launches, stream order and sync waits. The longest
// path (topological order, linear) is the chain of dependencies that set the
// step's latency. Rules and edge kinds: docs/graph.md "Critical path".
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/free_memory.h"
#include "core/parallel.h"
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
//
// When the rows are not close (a database import appends the PyTorch API rows
// of the whole run, then its CANN API rows, so one step's host ops span the
// whole table), the dense map would be filled for every step: a profile of
// 1M tasks spent 7 % of its analyze in that memset. Then the map is the
// step's rows sorted, searched by bisection.
class RowMap {
 public:
  void Build(const std::vector<uint32_t>& rows) {
    local_.clear();
    sorted_.clear();
    base_ = 0;
    if (rows.empty()) return;
    const auto [lo, hi] = std::minmax_element(rows.begin(), rows.end());
    const size_t span = static_cast<size_t>(*hi - *lo) + 1;
    if (span > kMaxDenseSpanPerRow * rows.size() + kAlwaysDenseSpan) {
      sorted_.reserve(rows.size());
      for (size_t j = 0; j < rows.size(); ++j) sorted_.push_back({rows[j], static_cast<int32_t>(j)});
      // The rows come as a few ascending blocks (one per table), mostly: merged, not sorted.
      SortUnlessSorted(sorted_.begin(), sorted_.end(), std::less<std::pair<uint32_t, int32_t>>());
      return;
    }
    base_ = *lo;
    local_.assign(span, -1);
    for (size_t j = 0; j < rows.size(); ++j) local_[rows[j] - base_] = static_cast<int32_t>(j);
  }
  int32_t operator[](int64_t row) const {
    if (!sorted_.empty()) {
      if (row < 0 || row > std::numeric_limits<uint32_t>::max()) return -1;
      const uint32_t key = static_cast<uint32_t>(row);
      auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair<uint32_t, int32_t>{key, INT32_MIN});
      return it != sorted_.end() && it->first == key ? it->second : -1;
    }
    const uint64_t i = static_cast<uint64_t>(row - static_cast<int64_t>(base_));
    return i < local_.size() ? local_[i] : -1;
  }
  void Release() {
    std::vector<int32_t>().swap(local_);
    std::vector<std::pair<uint32_t, int32_t>>().swap(sorted_);
  }

 private:
  // The dense map is used while it has at most this many entries per row (plus
  // kAlwaysDenseSpan): 32 bytes a row for a lookup that is one load, where the
  // sorted pairs take 8 bytes but a bisection. A file-order step spans 1-3 x.
  static constexpr size_t kMaxDenseSpanPerRow = 8;
  // Spans up to this are always dense (64 KiB of map): not worth a bisection.
  static constexpr size_t kAlwaysDenseSpan = 16384;

  uint32_t base_ = 0;
  std::vector<int32_t> local_;
  std::vector<std::pair<uint32_t, int32_t>> sorted_;  // (row, local index) when the rows are far apart
};

// A path of at least this many nodes gives the heap's free pages back before
// it builds its arrays and again before the longest-path pass (free_memory.h):
// 13 bytes a node and 5 an edge, so 3 MB and more, where the trim's walk over
// the free chunks costs well under a millisecond. A step of a decode trace has
// a few thousand nodes; a whole 300 MB trace ~1 M.
inline constexpr size_t kReleaseFreePagesNodes = size_t{1} << 18;

// CriticalPathBuilder's max_segments: keep every segment of the path.
inline constexpr size_t kAllSegments = std::numeric_limits<size_t>::max();

// A thread idle at least this long between two of its root ops was waiting
// for another thread to hand it work (AddThreadHandOffEdges). 100 µs: well
// above the gaps between back-to-back operators of one thread (a few µs of
// Python between calls) and below a DataLoader or backward hand-off (ms).
inline constexpr TimeNs kThreadHandOffGapNs = 100'000;
// Longest time from a launch call's return to its task's start on an idle
// device that is still launch latency (ns). Kernel launch latency is ~5-20 µs
// on CUDA/HIP and tens of µs on Ascend; 100 µs leaves room for a busy driver.
// A task starting later waited for something else (AddDeviceEdges).
inline constexpr TimeNs kMaxLaunchLatencyNs = 100'000;

class CriticalPathBuilder {
 public:
  // `max_segments`: how many of the path's first segments to keep (0: none,
  // the totals only; kAllSegments: every one).
  CriticalPathBuilder(const OperatorCallGraph& graph, size_t max_segments)
      : g_(graph), h_(graph.profile().host_ops), d_(graph.profile().device_tasks), max_segments_(max_segments) {}

  // `device` >= 0: the step of one device (per-device step rows, one rank of
  // a merged multi-rank profile): only that device's tasks and the host
  // threads of the processes that launch on it take part.
  CriticalPath Run(TimeWindow window, int32_t device = -1) {
    CriticalPath path;
    tolerance_ = std::max<TimeNs>(g_.options().nesting_tolerance_ns, 0);
    path.window = window;
    hosts_.clear();
    tasks_.clear();
    SelectEvents(window, device);
    const bool large = node_count_ >= kReleaseFreePagesNodes;
    CacheNodeTimes(!large);
    if (large) ReleaseFreeHeapPages();  // what the phases before freed
    NestPathHostOps();
    // The edges are made twice, by the same rules in the same order: first
    // counted per source node, then written where their source's range
    // starts. So they are stored by source at 5 bytes an edge, in the order
    // made, with no list of 12-byte edges beside the index (a path of the
    // whole of a 300 MB trace has 1 M edges: its peak went 35 -> 20 MB).
    out_offsets_.assign(node_count_ + 1, 0);
    in_degree_.Assign(node_count_);
    pass_ = Pass::kCount;
    AddEveryEdge();
    for (size_t v = 0; v < node_count_; ++v) out_offsets_[v + 1] += out_offsets_[v];
    edge_dst_.resize(out_offsets_[node_count_]);
    edge_rule_.resize(out_offsets_[node_count_]);
    pass_ = Pass::kFill;
    AddEveryEdge();  // moves out_offsets_[v] to the end of v's edges: the start of v + 1's
    for (size_t v = node_count_; v > 0; --v) out_offsets_[v] = out_offsets_[v - 1];
    out_offsets_[0] = 0;
    // Row -> local index maps, the nesting and the edges' fates are not needed any more.
    std::vector<bool>().swap(edge_kept_);
    host_local_.Release();
    task_local_.Release();
    std::vector<uint32_t>().swap(child_offsets_);
    std::vector<uint32_t>().swap(children_);
    // Only the segments' owners read the nesting (Owners).
    if (large && max_segments_ == 0) std::vector<int32_t>().swap(path_parent_);
    if (large) ReleaseFreeHeapPages();  // the maps, the nesting and the hand-off queries
    LongestPath(path);
    node_time_.clear();  // later reads go through the rows; the capacity serves the next step
    path.skipped_edges = skipped_edges_;
    path.skewed_launches = skewed_launches_;
    path.max_launch_skew_ns = max_launch_skew_ns_;
    path.queued_tasks = queued_tasks_;
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
    kThreadHandOff,  // between threads (AddThreadHandOffEdges): host op = the other thread's op
    kCrossStream,  // a wait on another stream of the device (AddCrossStreamWaits): task = dst's task
  };
  struct Edge {
    uint32_t src, dst;
    PathSegmentKind kind;
    EdgeType type;
  };
  // An edge's kind and rule in one byte (7 kinds, 11 rules).
  static uint8_t PackRule(PathSegmentKind kind, EdgeType type) {
    return static_cast<uint8_t>(static_cast<uint8_t>(kind) << 4 | static_cast<uint8_t>(type));
  }
  Edge EdgeAt(uint32_t src, uint32_t index) const {
    return {src, edge_dst_[index], static_cast<PathSegmentKind>(edge_rule_[index] >> 4),
            static_cast<EdgeType>(edge_rule_[index] & 0x0f)};
  }
  enum class Pass : uint8_t { kCount, kFill };
  // Edges in per node, a byte each: a node has a few (a task: its stream
  // predecessor, its launch, a cross-stream wait). One that many threads hand
  // back to (or sync calls wait for) counts on aside from 255 edges.
  class InDegrees {
   public:
    void Assign(size_t nodes) {
      small_.assign(nodes, 0);
      aside_.clear();
    }
    bool IsZero(uint32_t v) const { return small_[v] == 0; }
    void Increment(uint32_t v) {
      if (small_[v] == kAside) {
        ++aside_[v];
      } else if (++small_[v] == kAside) {
        aside_[v] = kAside;
      }
    }
    // True when the last edge in is taken.
    bool Decrement(uint32_t v) {
      if (small_[v] != kAside) return --small_[v] == 0;
      auto it = aside_.find(v);
      if (--it->second > 0) return false;
      aside_.erase(it);
      small_[v] = 0;
      return true;
    }
    void Release() {
      std::vector<uint8_t>().swap(small_);
      aside_.clear();
    }

   private:
    static constexpr uint8_t kAside = 255;
    std::vector<uint8_t> small_;
    std::unordered_map<uint32_t, uint32_t> aside_;
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
      case EdgeType::kNextChild: return {static_cast<int32_t>(hosts_[path_parent_[e.dst / 2]]), kNoIndex};
      case EdgeType::kLastChild:
      case EdgeType::kLeaf: return {HostOf(e.dst), kNoIndex};
      case EdgeType::kRootToRoot: return {kNoIndex, kNoIndex};
      case EdgeType::kTask: return {kNoIndex, TaskOf(e.src)};
      case EdgeType::kLaunch: return {HostOf(e.src), TaskOf(e.dst)};
      case EdgeType::kGap: return {kNoIndex, TaskOf(e.dst)};
      case EdgeType::kSync: return {HostOf(e.dst), TaskOf(e.src)};
      case EdgeType::kThreadHandOff:  // the op of the other thread: the start's source, the end's target
        return {e.src % 2 == 0 ? HostOf(e.src) : HostOf(e.dst), kNoIndex};
      case EdgeType::kCrossStream: return {kNoIndex, TaskOf(e.dst)};
    }
    return {kNoIndex, kNoIndex};
  }
  // A node's time: from the array CacheNodeTimes filled for a step's path,
  // else from its row (a whole-trace path has ~1 M nodes, and a column of
  // their times cost 8 bytes each at the path's peak).
  TimeNs NodeTime(uint32_t node) const {
    return node_time_.empty() ? NodeTimeFromRows(node) : node_time_[node];
  }

  // A step's path (a few thousand nodes) keeps each node's time in an array:
  // the edges and the longest-path pass read them again and again, each
  // through the node's row (a tenth of a step's path). A path of the whole of
  // a large trace reads them through the rows instead: 8 bytes a node is
  // 8 MB there, against the memory target of analyze.
  void CacheNodeTimes(bool cache) {
    node_time_.clear();
    if (!cache) return;
    node_time_.resize(node_count_);
    for (uint32_t v = 0; v < node_count_; ++v) node_time_[v] = NodeTimeFromRows(v);
  }
  TimeNs NodeTimeFromRows(uint32_t node) const {
    if (node < task_base_) {
      const uint32_t op = hosts_[node / 2];
      return node % 2 ? HostEnd(op) : h_.ts[op];
    }
    const uint32_t task = tasks_[(node - task_base_) / 2];
    return (node - task_base_) % 2 ? TaskEnd(task) : d_.ts[task];
  }

  // kOther host ops are profiler spans ("PyTorch Profiler (0)"), instants and
  // unknown categories: markers, not work. Python frames (with_stack) are the
  // call stack around the work, not work: where they are not nested with the
  // operators (the Ascend DB keeps them on a track of their own) a frame such
  // as `main.py: train` is a 138 ms leaf that, starting first, became the
  // whole path (100 % host-bound); where they are nested, their time between
  // operators stays host-bound through the edges between roots.
  bool IsPathHostOp(uint32_t op) const {
    return h_.kind[op] != HostOpKind::kOther && h_.kind[op] != HostOpKind::kPython;
  }

  // Per host track: does it take part in the path of `device`'s step? Tracks
  // of a process (pid token) that launched a task on another device only are
  // left out; with no launch links at all every track takes part.
  // Computed once per device and kept: a builder runs one step after another
  // (ComputeEveryStepCriticalPathTotals), and the scan is over every task.
  const std::vector<uint8_t>& HostTracksOfDevice(int32_t device) {
    auto [cached, inserted] = host_tracks_of_device_.try_emplace(device);
    if (!inserted) return cached->second;
    const TrackTable& tracks = g_.profile().tracks;
    std::vector<uint8_t>& keep = cached->second;
    keep.assign(tracks.size(), 1);
    if (device < 0) return keep;
    // pid token -> 1: launches on `device`, 2: launches elsewhere only.
    std::map<StrId, uint8_t> process;
    for (size_t t = 0; t < d_.size(); ++t) {
      const int32_t launcher = d_.launcher[t];
      if (launcher < 0) continue;
      uint8_t& state = process[tracks.pid_token[h_.track[launcher]]];
      if (tracks.device[d_.track[t]] == device) {
        state = 1;
      } else if (state == 0) {
        state = 2;
      }
    }
    for (size_t k = 0; k < tracks.size(); ++k) {
      auto it = process.find(tracks.pid_token[k]);
      if (it != process.end() && it->second == 2) keep[k] = 0;
    }
    return keep;
  }

  void SelectEvents(TimeWindow w, int32_t device) {
    const std::vector<uint8_t>& host_track_kept = HostTracksOfDevice(device);
    // Host ops starting in the window, in ts order.
    const auto& by_ts = g_.host_by_ts_;
    auto first = std::lower_bound(by_ts.begin(), by_ts.end(), w.start,
                                  [&](uint32_t op, TimeNs v) { return h_.ts[op] < v; });
    for (auto it = first; it != by_ts.end() && h_.ts[*it] < w.end; ++it) {
      if (IsPathHostOp(*it) && host_track_kept[h_.track[*it]]) hosts_.push_back(*it);
    }
    // A zero-length window (empty profile, or one instant): take ops at w.start.
    for (auto it = first; w.end == w.start && it != by_ts.end() && h_.ts[*it] == w.start; ++it) {
      if (IsPathHostOp(*it) && host_track_kept[h_.track[*it]]) hosts_.push_back(*it);
    }
    // Device tasks anchored in the window (launched from it, or running in it
    // when unlinked); device annotations and sync rows are not work.
    auto [begin, end] = g_.StepTaskRange(w);
    std::vector<uint32_t> selected;
    for (uint32_t i = begin; i < end; ++i) {
      const uint32_t t = g_.TasksByAnchor()[i];
      if (d_.kind[t] == DeviceTaskKind::kAnnotation || d_.kind[t] == DeviceTaskKind::kSync) continue;
      if (device >= 0 && g_.profile().tracks.device[d_.track[t]] != device) continue;
      selected.push_back(t);
    }
    SortUnlessSorted(selected.begin(), selected.end(), [&](uint32_t a, uint32_t b) {
      if (d_.track[a] != d_.track[b]) return d_.track[a] < d_.track[b];
      if (d_.ts[a] != d_.ts[b]) return d_.ts[a] < d_.ts[b];
      return a < b;
    });
    tasks_ = std::move(selected);
    host_local_.Build(hosts_);
    task_local_.Build(tasks_);
    task_base_ = static_cast<uint32_t>(2 * hosts_.size());
    node_count_ = task_base_ + 2 * tasks_.size();
  }

  // Every edge of the window, by the rules below, in one fixed order (Run
  // calls it once to count and once to write); the counts it reports are
  // those of the last pass that made them (below).
  void AddEveryEdge() {
    // AddEdge's counts come from the count pass (the fill pass only replays
    // its decisions); the rules' own counts are made again each pass.
    if (pass_ == Pass::kCount) {
      skipped_edges_ = 0;
      skewed_launches_ = 0;
      max_launch_skew_ns_ = 0;
      edge_kept_.clear();
    }
    next_edge_decision_ = 0;
    queued_tasks_ = 0;
    AddHostEdges();
    AddDeviceEdges();
    AddSyncEdges();
  }

  // Weights are time differences, so any path's length is its time span.
  // An edge that would go back in time by more than the rounding tolerance
  // (siblings around a partial overlap, clock skew) is left out: it would
  // count the same wall time twice. A launch edge back in time is a task
  // that starts before the call that launched it (linked by the format's own
  // ids): the host and device clocks disagree (seen on CANN DB exports: tasks
  // up to 24 us before their launch). Those are counted apart, with the
  // largest skew, so a well-formed but skewed profile is not reported as
  // having broken edges.
  //
  // The count pass decides and records each edge's fate (a bit an edge
  // tried); the fill pass, which tries the same edges in the same order,
  // replays it instead of reading both nodes' times again (on a path of a
  // whole trace, two lookups through the rows an edge).
  void AddEdge(uint32_t src, uint32_t dst, PathSegmentKind kind, EdgeType type) {
    if (pass_ == Pass::kFill) {
      if (!edge_kept_[next_edge_decision_++]) return;
      const uint32_t index = out_offsets_[src]++;
      edge_dst_[index] = dst;
      edge_rule_[index] = PackRule(kind, type);
      return;
    }
    const TimeNs diff = NodeTime(dst) - NodeTime(src);
    const bool kept = diff >= -tolerance_;  // the weight may be slightly < 0 (rounding)
    edge_kept_.push_back(kept);
    if (!kept) {
      if (type == EdgeType::kLaunch) {
        ++skewed_launches_;
        max_launch_skew_ns_ = std::max(max_launch_skew_ns_, -diff);
      } else {
        ++skipped_edges_;
      }
      return;
    }
    ++out_offsets_[src + 1];
    in_degree_.Increment(dst);
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

  // Nesting among the path's ops (IsPathHostOp) by time on each thread: an
  // op's parent is the innermost path op of its thread that contains it. Not
  // the call graph's parent: Python frames that straddle a step's boundary
  // (record_function's __exit__ starts inside ProfilerStep#N and ends after
  // it) break that nesting, which left a step's operators as roots and their
  // step's whole span as one host-bound edge. Fills path_parent_ and
  // children_ (CSR over child_offsets_, each parent's children in ts order).
  void NestPathHostOps() {
    std::vector<uint32_t>& child_offsets = child_offsets_;
    std::vector<uint32_t>& children = children_;
    const size_t n = hosts_.size();
    path_parent_.assign(n, -1);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    // By track, then (ts, outer one first, index): grouped, then each track
    // sorted adaptively, as the rows mostly come in time order.
    order = GroupThenSort(order, [&](uint32_t i) { return h_.track[hosts_[i]]; }, [&](uint32_t a, uint32_t b) {
      const uint32_t oa = hosts_[a], ob = hosts_[b];
      if (h_.ts[oa] != h_.ts[ob]) return h_.ts[oa] < h_.ts[ob];
      if (HostEnd(oa) != HostEnd(ob)) return HostEnd(oa) > HostEnd(ob);  // the outer one first
      return a < b;
    });
    std::vector<uint32_t> open;  // enclosing ops of the current thread, outermost first
    for (size_t k = 0; k < n; ++k) {
      const uint32_t i = order[k];
      const uint32_t op = hosts_[i];
      if (k > 0 && h_.track[hosts_[order[k - 1]]] != h_.track[op]) open.clear();
      while (!open.empty() && HostEnd(hosts_[open.back()]) < HostEnd(op) - tolerance_) open.pop_back();
      if (!open.empty()) path_parent_[i] = static_cast<int32_t>(open.back());
      open.push_back(i);
    }
    child_offsets.assign(n + 1, 0);
    for (uint32_t i = 0; i < n; ++i)
      if (path_parent_[i] >= 0) ++child_offsets[path_parent_[i] + 1];
    for (size_t i = 0; i < n; ++i) child_offsets[i + 1] += child_offsets[i];
    children.assign(child_offsets[n], 0);
    std::vector<uint32_t> fill(child_offsets.begin(), child_offsets.end() - 1);
    for (uint32_t i : order)
      if (path_parent_[i] >= 0) children[fill[path_parent_[i]]++] = i;
  }

  // Op start -> first child start, child end -> next child start, last child
  // end -> op end (the host time in between is the op's own work); a leaf's
  // start -> end; consecutive roots of a thread: end -> next start.
  void AddHostEdges() {
    const size_t n = hosts_.size();
    const std::vector<uint32_t>& child_offsets = child_offsets_;
    const std::vector<uint32_t>& children = children_;
    std::vector<int32_t> last_root_of_track(g_.profile().tracks.size(), -1);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t op = hosts_[i];
      int32_t previous = -1;
      for (uint32_t k = child_offsets[i]; k < child_offsets[i + 1]; ++k) {
        const int32_t c = static_cast<int32_t>(children[k]);
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
      if (path_parent_[i] < 0) {  // a root inside the window
        int32_t& last = last_root_of_track[h_.track[op]];
        if (last >= 0) AddEdge(HostFinish(last), HostStart(i), PathSegmentKind::kHostBound, EdgeType::kRootToRoot);
        last = static_cast<int32_t>(i);
      }
    }
    AddThreadHandOffEdges();
  }

  // Hand-offs between threads, which the trace records no event for. A
  // thread that starts working after being idle (its first root in the
  // window, or a root after kThreadHandOffGapNs without work) was handed that
  // work by another thread — the autograd engine's backward thread by
  // loss.backward() on the main thread, a DataLoader worker by __next__ —
  // so an edge runs from the start of the innermost op of another thread
  // running at that moment (the latest-starting one). A thread that goes
  // idle (its last root, or one before such a gap) hands its result back to
  // the op of another thread that was waiting for it (the innermost, the
  // one ending first after it, within kThreadHandOffGapNs; or, failing that,
  // the op that started it, when that op's thread did nothing traced while
  // it ran): an edge from its end to that op's end.
  // Without them a worker thread's chain began in mid-step and led nowhere,
  // so the device work it launched (a gradient all-reduce) was never on the
  // path, and the main thread's wait for it (loss.backward(), an
  // annotation around it) read as host-bound.
  void AddThreadHandOffEdges() {
    struct Query {
      TimeNs at;
      uint32_t root;   // local index
      bool join;       // true: the root hands back at its end; false: it was started at its start
      uint32_t burst;  // the run of roots of one thread between two idle gaps
    };
    std::vector<Query> queries;
    std::vector<int32_t> last_root(g_.profile().tracks.size(), -1);
    std::vector<uint32_t> burst_of_track(g_.profile().tracks.size(), 0);
    uint32_t bursts = 0;
    auto close_burst = [&](int32_t root) {
      if (root >= 0)
        queries.push_back({HostEnd(hosts_[root]), static_cast<uint32_t>(root), true,
                           burst_of_track[h_.track[hosts_[root]]]});
    };
    size_t tracks_with_roots = 0;
    for (uint32_t i = 0; i < hosts_.size(); ++i) {
      if (path_parent_[i] >= 0) continue;
      const uint32_t track = h_.track[hosts_[i]];
      int32_t& last = last_root[track];
      if (last < 0) ++tracks_with_roots;
      if (last < 0 || h_.ts[hosts_[i]] - HostEnd(hosts_[last]) >= kThreadHandOffGapNs) {
        close_burst(last);
        burst_of_track[track] = bursts++;
        queries.push_back({h_.ts[hosts_[i]], i, false, burst_of_track[track]});
      }
      if (last < 0 || HostEnd(hosts_[i]) > HostEnd(hosts_[last])) last = static_cast<int32_t>(i);
    }
    if (tracks_with_roots < 2) return;
    for (int32_t last : last_root) close_burst(last);
    std::sort(queries.begin(), queries.end(), [](const Query& a, const Query& b) { return a.at < b.at; });
    // Per burst: when it started and the op of another thread that started it.
    std::vector<TimeNs> burst_start(bursts, 0);
    std::vector<int32_t> burst_forker(bursts, -1);
    // Path op starts per thread, to tell whether a thread did anything
    // traced while another thread's burst ran.
    std::vector<std::vector<TimeNs>> starts_of_track(g_.profile().tracks.size());
    for (uint32_t i = 0; i < hosts_.size(); ++i) starts_of_track[h_.track[hosts_[i]]].push_back(h_.ts[hosts_[i]]);
    auto idle_between = [&](uint32_t track, TimeNs after, TimeNs until) {
      const std::vector<TimeNs>& starts = starts_of_track[track];
      auto it = std::upper_bound(starts.begin(), starts.end(), after);
      return it == starts.end() || *it > until;
    };
    // Sweep in time: per thread, the stack of its path ops open at the
    // query's time (path ops nest per thread, NestPathHostOps).
    std::vector<std::vector<uint32_t>> open(g_.profile().tracks.size());
    std::vector<uint32_t> active_tracks;
    size_t next = 0;
    for (const Query& q : queries) {
      for (; next < hosts_.size() && h_.ts[hosts_[next]] <= q.at; ++next) {
        std::vector<uint32_t>& stack = open[h_.track[hosts_[next]]];
        while (!stack.empty() && HostEnd(hosts_[stack.back()]) < h_.ts[hosts_[next]]) stack.pop_back();
        if (stack.empty()) active_tracks.push_back(h_.track[hosts_[next]]);
        stack.push_back(static_cast<uint32_t>(next));
      }
      const uint32_t own_track = h_.track[hosts_[q.root]];
      int32_t best = -1;
      for (uint32_t track : active_tracks) {
        if (track == own_track) continue;
        std::vector<uint32_t>& stack = open[track];
        while (!stack.empty() && HostEnd(hosts_[stack.back()]) < q.at) stack.pop_back();
        if (stack.empty()) continue;
        const uint32_t candidate = stack.back();
        // Strictly before / after: two threads starting (ending) at the same
        // instant must not hand off to each other (a zero-length cycle).
        if (q.join ? HostEnd(hosts_[candidate]) <= q.at : h_.ts[hosts_[candidate]] >= q.at) continue;
        // An op waiting for the thread returns right after it: one ending
        // more than kThreadHandOffGapNs later was doing something else.
        if (q.join && HostEnd(hosts_[candidate]) - q.at > kThreadHandOffGapNs) continue;
        const bool better = best < 0 || (q.join ? HostEnd(hosts_[candidate]) < HostEnd(hosts_[best])
                                                 : h_.ts[hosts_[candidate]] > h_.ts[hosts_[best]]);
        if (better) best = static_cast<int32_t>(candidate);
      }
      // Fork and join: the op that started this burst is still open when the
      // burst ends, and its thread started nothing traced in between — it
      // sat blocked in that op (loss.backward() on the main thread while the
      // autograd thread ran the backward, then returned after untraced work:
      // seen 10.8 ms later). It waited for the burst, however long after.
      if (q.join && best < 0) {
        const int32_t forker = burst_forker[q.burst];
        if (forker >= 0 && HostEnd(hosts_[forker]) > q.at &&
            idle_between(h_.track[hosts_[forker]], burst_start[q.burst], q.at)) {
          best = forker;
        }
      }
      // Tracks whose stacks emptied drop out of the active list.
      active_tracks.erase(std::remove_if(active_tracks.begin(), active_tracks.end(),
                                         [&](uint32_t track) { return open[track].empty(); }),
                          active_tracks.end());
      if (!q.join) {
        burst_start[q.burst] = q.at;
        burst_forker[q.burst] = best;
      }
      if (best < 0) continue;
      if (q.join) {
        AddEdge(HostFinish(q.root), HostFinish(best), PathSegmentKind::kHostBound, EdgeType::kThreadHandOff);
      } else {
        AddEdge(HostStart(best), HostStart(q.root), PathSegmentKind::kHostBound, EdgeType::kThreadHandOff);
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

  // Task start -> end; stream order: the end of the task that finished last so
  // far -> next start (a gap), unless the next one starts well before that end
  // (concurrent work on one stream row); work on another stream of the device
  // the task waited for (AddCrossStreamWaits); launch call start -> task start
  // unless the task was queued behind device work (below).
  void AddDeviceEdges() {
    const TimeNs tol = std::max<TimeNs>(g_.options().nesting_tolerance_ns, 0);
    // End of the device work each task followed (own stream or cross-stream wait).
    std::vector<TimeNs> device_ready(tasks_.size(), std::numeric_limits<TimeNs>::min());
    int32_t last = -1;
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      AddEdge(TaskStart(j), TaskFinish(j), TaskKind(d_.kind[t]), EdgeType::kTask);
      if (last >= 0 && d_.track[tasks_[last]] != d_.track[t]) last = -1;
      if (last >= 0) {
        if (d_.ts[t] >= TaskEnd(tasks_[last]) - tol) {
          AddEdge(TaskFinish(last), TaskStart(j), PathSegmentKind::kKernelGap, EdgeType::kGap);
          device_ready[j] = TaskEnd(tasks_[last]);
        }
        if (TaskEnd(t) > TaskEnd(tasks_[last])) last = static_cast<int32_t>(j);
      } else {
        last = static_cast<int32_t>(j);
      }
    }
    AddCrossStreamWaits(device_ready);
    // Launch overhead is only the time the device sat idle waiting for the
    // launch. A task that started after its launch call had returned, right
    // when the device work before it ended, was queued behind that work (a
    // device backlog): the device chain, not the launch, held it back, so the
    // launch edge is left out and the path runs through the device.
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      const int32_t launcher = d_.launcher[t];
      if (launcher < 0 || host_local_[launcher] < 0) continue;
      const TimeNs launch_returned = HostEnd(static_cast<uint32_t>(launcher));
      const bool queued = d_.ts[t] > launch_returned + tol && device_ready[j] > launch_returned + tol;
      if (queued) {
        ++queued_tasks_;
        continue;
      }
      // Started long after the launch returned on an idle device: it waited
      // for something the trace does not show (another process on the device,
      // an event), not for its launch. The call itself stays launch overhead
      // (its leaf edge); from its return to the task's start the device sat
      // idle with work queued: a gap, like the one between two tasks. Not
      // for graph replays: the runtime submits a graph's tasks after the
      // launch call returns (hipGraphLaunch on ROCm takes ms), which is
      // launch overhead.
      if (d_.ts[t] > launch_returned + kMaxLaunchLatencyNs && !d_.graph_launched[t]) {
        AddEdge(HostFinish(host_local_[launcher]), TaskStart(j), PathSegmentKind::kKernelGap, EdgeType::kLaunch);
        continue;
      }
      AddEdge(HostStart(host_local_[launcher]), TaskStart(j), PathSegmentKind::kLaunchOverhead, EdgeType::kLaunch);
    }
  }

  // Waits across the streams of one device, which the profile records no
  // event for. When a task starts after a gap on its own stream (or is the
  // first on it), the work on another stream of the same device that ended
  // last inside that gap is what it waited for — an edge from that end to
  // this start — in two cases:
  //  * communication <-> compute: a collective and the compute it feeds run
  //    on different streams (HCCL/NCCL streams, the COMMUNICATION core). The
  //    path then runs through an exposed collective instead of calling its
  //    time a kernel-to-kernel gap — the time msprof-analyze's
  //    step_trace_time counts as Communication(Not Overlapped).
  //  * a queued task (it started after its launch call returned) waited for
  //    the device work of any kind that ended when it started (an event wait
  //    on another stream, or a full device), not for its launch.
  void AddCrossStreamWaits(std::vector<TimeNs>& device_ready) {
    const TrackTable& tracks = g_.profile().tracks;
    struct Ended {
      TimeNs end;
      uint32_t local;
    };
    // Per device, per kind (0 = compute/copy, 1 = communication): tasks by end.
    std::map<int32_t, std::array<std::vector<Ended>, 2>> by_device;
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      const bool comm = d_.kind[t] == DeviceTaskKind::kCommunication;
      by_device[tracks.device[d_.track[t]]][comm ? 1 : 0].push_back({TaskEnd(t), j});
    }
    for (auto& [device, lists] : by_device)
      for (auto& list : lists)
        std::sort(list.begin(), list.end(), [](const Ended& a, const Ended& b) { return a.end < b.end; });
    // The task of a list that ended last by `limit`, on a stream other than
    // `track` and after `after`; -1 when none.
    auto last_ended = [&](const std::vector<Ended>& list, TimeNs limit, TimeNs after, uint32_t track) -> int64_t {
      auto it = std::upper_bound(list.begin(), list.end(), limit, [](TimeNs v, const Ended& e) { return v < e.end; });
      if (it == list.begin()) return -1;
      const Ended& e = *(it - 1);
      if (e.end <= after || d_.track[tasks_[e.local]] == track) return -1;
      return e.local;
    };
    // Stream predecessors' ends, as AddDeviceEdges saw them (tasks_ is in (track, ts) order).
    TimeNs stream_end = 0;
    bool has_predecessor = false;
    for (uint32_t j = 0; j < tasks_.size(); ++j) {
      const uint32_t t = tasks_[j];
      if (j == 0 || d_.track[tasks_[j - 1]] != d_.track[t]) has_predecessor = false;
      const TimeNs gap_start = has_predecessor ? stream_end : std::numeric_limits<TimeNs>::min();
      const bool after_gap = !has_predecessor || d_.ts[t] > stream_end + tolerance_;
      if (after_gap) {
        const auto& lists = by_device[tracks.device[d_.track[t]]];
        const TimeNs limit = d_.ts[t] + tolerance_;
        const bool comm = d_.kind[t] == DeviceTaskKind::kCommunication;
        int64_t waited = last_ended(lists[comm ? 0 : 1], limit, gap_start, d_.track[t]);
        const int32_t launcher = d_.launcher[t];
        if (waited < 0 && launcher >= 0 && host_local_[launcher] >= 0) {
          const TimeNs launch_returned = HostEnd(static_cast<uint32_t>(launcher));
          if (d_.ts[t] > launch_returned + tolerance_) {
            const TimeNs after = std::max(gap_start, launch_returned + tolerance_);
            const int64_t a = last_ended(lists[0], limit, after, d_.track[t]);
            const int64_t b = last_ended(lists[1], limit, after, d_.track[t]);
            waited = (a < 0 || (b >= 0 && TaskEnd(tasks_[b]) > TaskEnd(tasks_[a]))) ? b : a;
          }
        }
        if (waited >= 0) {
          const uint32_t w = static_cast<uint32_t>(waited);
          AddEdge(TaskFinish(w), TaskStart(j), PathSegmentKind::kKernelGap, EdgeType::kCrossStream);
          device_ready[j] = std::max(device_ready[j], TaskEnd(tasks_[w]));
        }
      }
      stream_end = has_predecessor ? std::max(stream_end, TaskEnd(t)) : TaskEnd(t);
      has_predecessor = true;
    }
  }

  // A sync call returns when the work it waits for is done: the task that
  // ended last before the call returned (and after it began) -> call end.
  void AddSyncEdges() {
    // Most profiles have no sync call in a window; the sort below would be
    // for nothing (twice: edges are made in two passes).
    if (std::none_of(hosts_.begin(), hosts_.end(), [&](uint32_t op) { return g_.is_sync_call_[op]; })) return;
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
    const size_t nodes = node_count_;
    path.nodes = nodes;
    path.edges = edge_dst_.size();
    if (nodes == 0) {
      path.path_start = path.path_end = path.window.start;
      return;
    }
    // Weights are time differences, so a path's length telescopes to
    // time(node) - time(first node of the path): instead of the distance
    // (8 bytes a node) keep the path's first node (4 bytes). "Longer" is then
    // "starts earlier", with exactly the comparisons of the distances.
    std::vector<uint32_t> first(nodes);
    for (uint32_t v = 0; v < nodes; ++v) first[v] = v;
    // The node each node's longest path came from; its edge is the first of
    // that node's edges to it (a later parallel edge has the same weight, and
    // never wins a tie, below).
    std::vector<int32_t> pred(nodes, -1);
    // FIFO of the nodes whose edges in are all relaxed. A deque frees its
    // blocks as they empty, so it holds the frontier, not every node.
    std::deque<uint32_t> ready;
    for (uint32_t v = 0; v < nodes; ++v) {
      if (in_degree_.IsZero(v)) ready.push_back(v);
    }
    // The path ends at the farthest node (latest time among equals), taken
    // among the nodes in the order they leave the queue: a node's distance
    // is final then.
    //
    // Each node's time and its path's start time are read once, when it
    // leaves the queue: on a path of a whole trace a node's time is a lookup
    // through its row. Through u, dst's distance would be time(dst) -
    // start(u), against time(dst) - start(dst) now: u gives the longer path
    // exactly when its path starts earlier, and an equal one when both start
    // at the same time.
    size_t processed = 0;
    uint32_t end = ready.empty() ? 0 : ready.front();
    TimeNs end_dist = 0;  // dist(end) and NodeTime(end) once `end` has left the queue
    TimeNs end_time = std::numeric_limits<TimeNs>::min();
    while (!ready.empty()) {
      const uint32_t u = ready.front();
      ready.pop_front();
      ++processed;
      const TimeNs u_time = NodeTime(u);
      const TimeNs u_start = NodeTime(first[u]);
      const TimeNs u_dist = u_time - u_start;
      if (processed == 1 || u_dist > end_dist || (u_dist == end_dist && u_time > end_time)) {
        end = u;
        end_dist = u_dist;
        end_time = u_time;
      }
      for (uint32_t k = out_offsets_[u]; k < out_offsets_[u + 1]; ++k) {
        const uint32_t dst = edge_dst_[k];
        const TimeNs dst_start = NodeTime(first[dst]);
        bool better = u_start < dst_start;
        // Among equal distances the predecessor that finished last wins.
        if (u_start == dst_start) better = pred[dst] < 0 || u_time > NodeTime(static_cast<uint32_t>(pred[dst]));
        if (better) {
          first[dst] = first[u];
          pred[dst] = static_cast<int32_t>(u);
        }
        if (in_degree_.Decrement(dst)) ready.push_back(dst);
      }
    }
    path.dropped_nodes = nodes - processed;
    in_degree_.Release();
    std::vector<uint32_t>().swap(first);
    // The edge from `from` to `to` that the path took: the first of them.
    auto edge_between = [&](uint32_t from, uint32_t to) {
      uint32_t k = out_offsets_[from];
      while (edge_dst_[k] != to) ++k;
      return EdgeAt(from, k);
    };
    // Walk back twice: count, then fill, so neither list regrows.
    size_t length = 0;
    for (uint32_t v = end; pred[v] >= 0; v = static_cast<uint32_t>(pred[v])) ++length;
    std::vector<uint32_t> chain;  // path nodes from the end, the start last
    chain.reserve(length + 1);
    uint32_t v = end;
    chain.push_back(v);
    for (; pred[v] >= 0; v = static_cast<uint32_t>(pred[v])) chain.push_back(static_cast<uint32_t>(pred[v]));
    std::vector<int32_t>().swap(pred);
    path.segments.reserve(std::min(length, max_segments_));
    path.path_start = NodeTime(v);
    // Segments in time order; a cursor absorbs the small backward steps that
    // rounding overlaps allow, so segments never overlap and sum to the latency.
    TimeNs cursor = path.path_start;
    for (size_t i = chain.size() - 1; i > 0; --i) {
      const Edge edge = edge_between(chain[i], chain[i - 1]);
      const TimeNs start = std::max(cursor, NodeTime(edge.src));
      const TimeNs stop = std::max(start, NodeTime(edge.dst));
      if (stop > start) {
        if (path.segments.size() < max_segments_) {
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
  std::vector<TimeNs> node_time_;    // by node, for a step's path (CacheNodeTimes); empty for a large path
  std::vector<uint32_t> hosts_;      // selected host rows, ts order
  RowMap host_local_;                // host row -> local index, -1 if not selected
  std::vector<uint32_t> tasks_;      // selected task rows, (track, ts) order
  RowMap task_local_;
  uint32_t task_base_ = 0;
  size_t node_count_ = 0;  // 2 a host op, then 2 a task
  // The edges, by source node: node v's are [out_offsets_[v], out_offsets_[v + 1]).
  std::vector<uint32_t> out_offsets_;
  std::vector<uint32_t> edge_dst_;
  std::vector<uint8_t> edge_rule_;  // PackRule(kind, type)
  InDegrees in_degree_;
  Pass pass_ = Pass::kCount;
  std::vector<bool> edge_kept_;     // per edge tried in the count pass: kept (AddEdge)
  size_t next_edge_decision_ = 0;   // the fill pass's place in edge_kept_
  std::vector<uint32_t> child_offsets_, children_;  // NestPathHostOps: CSR of each path op's children
  TimeNs tolerance_ = 0;
  uint64_t skipped_edges_ = 0;
  uint64_t skewed_launches_ = 0;
  TimeNs max_launch_skew_ns_ = 0;
  uint64_t queued_tasks_ = 0;
  std::map<int32_t, std::vector<uint8_t>> host_tracks_of_device_;  // HostTracksOfDevice's results
  std::vector<int32_t> path_parent_;  // per host op (local): local index of its parent among the path's ops, or -1
  size_t max_segments_ = kAllSegments;
};

struct OperatorCallGraph::PathTotalsCache {
  std::mutex mutex;
  std::map<std::tuple<TimeNs, TimeNs, int32_t>, CriticalPath> totals;  // (window start, end, device)

  std::optional<CriticalPath> Find(TimeWindow window, int32_t device) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = totals.find({window.start, window.end, device});
    if (it == totals.end()) return std::nullopt;
    return it->second;
  }
  void Keep(TimeWindow window, int32_t device, const CriticalPath& path) {
    std::lock_guard<std::mutex> lock(mutex);
    totals.try_emplace({window.start, window.end, device}, path);
  }
};

OperatorCallGraph::OperatorCallGraph() : path_totals_cache_(std::make_unique<PathTotalsCache>()) {}
OperatorCallGraph::OperatorCallGraph(OperatorCallGraph&&) noexcept = default;
OperatorCallGraph& OperatorCallGraph::operator=(OperatorCallGraph&&) noexcept = default;
OperatorCallGraph::~OperatorCallGraph() = default;

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathImpl(TimeWindow window, size_t max_segments,
                                                                  int32_t device) const {
  if (window.end < window.start) return InvalidArgumentError("critical path: window ends before it starts");
  if (max_segments == 0)
    if (std::optional<CriticalPath> known = path_totals_cache_->Find(window, device)) return *std::move(known);
  CriticalPathBuilder builder(*this, max_segments);
  CriticalPath path = builder.Run(window, device);
  // The totals of a path with segments are the same path's totals (a fixture
  // test checks every field a summary reads): kept without the segments.
  std::vector<PathSegment> segments;
  segments.swap(path.segments);
  path_totals_cache_->Keep(window, device, path);
  segments.swap(path.segments);
  return path;
}

namespace {
// The window of a step's path. A profile without steps has one step, the
// whole window, and its path is the whole profile's: one past the end, so
// that the last instant is included, as ComputeCriticalPath() without a step.
TimeWindow PathWindow(const StepInfo& step, TimeWindow whole_window) {
  if (step.host_op < 0 && step.cpu.start == whole_window.start && step.cpu.end == whole_window.end)
    return {whole_window.start, whole_window.end + 1};
  return step.cpu;
}
}  // namespace

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathImpl(std::optional<size_t> step,
                                                                  size_t max_segments) const {
  if (!step) {
    // Whole profile: one past the end so that the last instant is included.
    TimeWindow w = whole_window_;
    w.end += 1;
    return ComputeCriticalPathImpl(w, max_segments);
  }
  if (*step >= steps_.size()) {
    return InvalidArgumentError(fmt::format("critical path: step {} out of range ({} steps)", *step, steps_.size()));
  }
  return ComputeCriticalPathImpl(PathWindow(steps_[*step], whole_window_), max_segments, steps_[*step].device);
}

bool OperatorCallGraph::HasSeparateHostSteps() const {
  if (steps_.size() < 2) return false;
  // Per-device steps (Ascend step rows, the ranks of a merged job) repeat
  // the same windows on each device; each device's own steps must not
  // overlap, and each is a path of its device (ComputeCriticalPathImpl).
  std::map<int32_t, TimeNs> last_end;
  for (const StepInfo& step : steps_) {
    if (step.cpu.end <= step.cpu.start) return false;
    auto [it, first] = last_end.try_emplace(step.device, step.cpu.end);
    if (!first) {
      if (step.cpu.start < it->second) return false;
      it->second = step.cpu.end;
    }
  }
  return true;
}

std::vector<CriticalPath> OperatorCallGraph::ComputeEveryStepCriticalPathTotals() const {
  std::vector<size_t> all(steps_.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return ComputeStepCriticalPathTotals(all);
}

std::vector<CriticalPath> OperatorCallGraph::ComputeStepCriticalPathTotals(const std::vector<size_t>& which) const {
  std::vector<CriticalPath> paths(which.size());
  ParallelForWithState(
      which.size(), std::min(kMaxCriticalPathThreads, DefaultParallelism()),
      [&] { return CriticalPathBuilder(*this, /*max_segments=*/0); },
      [&](CriticalPathBuilder& builder, size_t i) {
        if (which[i] >= steps_.size()) return;
        const StepInfo& step = steps_[which[i]];
        if (step.cpu.end < step.cpu.start) return;   // as ComputeCriticalPathTotals refuses it
        const TimeWindow window = PathWindow(step, whole_window_);
        if (std::optional<CriticalPath> known = path_totals_cache_->Find(window, step.device)) {
          paths[i] = *std::move(known);
          return;
        }
        paths[i] = builder.Run(window, step.device);
        path_totals_cache_->Keep(window, step.device, paths[i]);
      });
  return paths;
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPath(TimeWindow window) const {
  return ComputeCriticalPathImpl(window, kAllSegments);
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPath(std::optional<size_t> step) const {
  return ComputeCriticalPathImpl(step, kAllSegments);
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathHead(std::optional<size_t> step, size_t max_segments) const {
  return ComputeCriticalPathImpl(step, max_segments);
}

StatusOr<CriticalPath> OperatorCallGraph::ComputeCriticalPathTotals(std::optional<size_t> step) const {
  return ComputeCriticalPathImpl(step, 0);
}

StatusOr<TimeNs> OperatorCallGraph::CriticalPathLatency(std::optional<size_t> step) const {
  PYPTO_ASSIGN_OR_RETURN(CriticalPath path, ComputeCriticalPathTotals(step));
  return path.latency_ns;
}

}  // namespace pypto
