// Cost models: FLOPs and bytes of one op from its class and input shapes,
// the roofline time on a HardwareSpec (max(FLOPs / peak, bytes / bandwidth)),
// and, given a measured duration, the achieved FLOP/s and bandwidth, the
// efficiency against the roofline and whether the op is compute- or
// memory-bound. When shapes are missing or do not fit the class the cost says
// so (status + note) and keeps the figures NaN: no number is made up.
//
// Formulas (docs/cost-model.md):
//   GEMM        2·M·N·K FLOPs; bytes s·(M·K + K·N + M·N) (+ bias); batched × B
//   attention   4·B·H·S_q·S_kv·D FLOPs (QK^T and PV; causal prefill not halved,
//               see docs); bytes = Q + K + V + O (decode: the KV cache read dominates)
//   norm        ≈ 5 FLOP/element; bytes = read + write (+ gamma)
//   rope        ≈ 3 FLOP/element; elementwise/activation ≈ 1 (swiglu 4) FLOP/element,
//               bytes = inputs + output
//   copy/layout 0 FLOPs; bytes = 2 × size (read + write)
//   softmax     ≈ 5 FLOP/element; reduction ≈ 1 FLOP/element
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/op_class.h"
#include "analysis/shapes.h"
#include "graph/call_graph.h"
#include "hw/hardware.h"
#include "model/profile.h"

namespace pypto {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Per-element FLOP counts of the simple classes (unit FLOP/element; source:
// op definitions — RMSNorm x·rsqrt(mean(x²)+eps)·g = square, sum, mul, mul
// plus the rsqrt amortised ≈ 4–5; LayerNorm adds the mean subtraction ≈ 5–8;
// we take 5 for both as the brief states).
inline constexpr double kNormFlopsPerElement = 5.0;
inline constexpr double kSoftmaxFlopsPerElement = 5.0;  // max, sub, exp, sum, div
inline constexpr double kRopeFlopsPerElement = 3.0;     // x·cos + rotate(x)·sin
inline constexpr double kElementwiseFlopsPerElement = 1.0;
inline constexpr double kSwigluFlopsPerElement = 4.0;   // silu (≈3) + mul, per output element
inline constexpr double kReductionFlopsPerElement = 1.0;

enum class CostStatus : uint8_t {
  kOk,               // FLOPs and bytes computed from shapes
  kNoShapes,         // the op carries no shapes (record_shapes off, graph replay kernel …)
  kBadShapes,        // shapes present but unparsable or inconsistent with the class (note says why)
  kUnsupported,      // class without a cost model (other, communication, sampling)
  kNoDuration,       // costs known, no measured duration (achieved figures NaN)
};
const char* CostStatusName(CostStatus status);

enum class Bound : uint8_t { kUnknown, kCompute, kMemory };
const char* BoundName(Bound bound);

enum class AttentionPhase : uint8_t { kUnknown, kPrefill, kDecode };
const char* AttentionPhaseName(AttentionPhase phase);

// What the cost model needs about one op (filled from a task or a host op by
// the helpers below, or by hand in tests).
// Whether the cost functions write their explanations or skip them: then
// OpCost::note and peak_note are empty, and GemmDims::note and
// CostInput::shape_source keep only texts that need no formatting. The
// figures are the same either way. TaskCostMemo keeps figures only, and
// formatting the texts was a third of costing a task of a shape of its own.
enum class CostNotes : bool { kSkip, kWrite };

struct CostInput {
  OpClass cls = OpClass::kOther;
  std::string_view sub_kind;
  std::string_view name;        // for notes and name-based hints (transpose flags, "decode")
  OpShapes shapes;              // inputs
  bool has_shapes = false;
  OpShapes outputs;             // output shapes when the profile gives them (Ascend); resolve transposes/layouts
  bool has_outputs = false;
  std::string shape_source;     // "task Input Shapes", "operator aten::mm Input Dims", or why none
  TimeNs measured_ns = -1;      // device (or host for CPU) duration, -1 unknown
  ComputeUnit unit = ComputeUnit::kMatrix;  // matmul/attention: kMatrix; others kVector (set by the helpers)
  // CostInputForTask: where the shapes came from (TaskCostMemo keys its sets by it).
  enum class ShapeOrigin : uint8_t { kNone, kTaskDetail, kOperator };
  ShapeOrigin shape_origin = ShapeOrigin::kNone;
};

// The figures of a cost estimate without its explanation: what a diagnosis
// keeps for every device task (the two notes took a third of its memory, some
// 160 B a task, and no detector reads them).
struct CostFigures {
  CostStatus status = CostStatus::kNoShapes;
  OpClass cls = OpClass::kOther;
  std::string_view sub_kind;
  DType dtype = DType::kUnknown;
  ComputeUnit unit = ComputeUnit::kMatrix;

  // Problem size (GEMM: batch, m, n, k; attention: b, h, s_q, s_kv, d; else elements in m).
  int64_t batch = 0, m = 0, n = 0, k = 0;
  int64_t heads = 0, s_q = 0, s_kv = 0, head_dim = 0;
  AttentionPhase phase = AttentionPhase::kUnknown;

  double flops = kNaN;
  double bytes = kNaN;
  double intensity = kNaN;      // FLOP/B

  // Roofline on the spec.
  double peak_flops = kNaN;     // peak used (FLOP/s), see OpCost::peak_note
  double bandwidth = kNaN;      // B/s used
  double roofline_ns = kNaN;    // max(flops/peak, bytes/bandwidth) in ns
  Bound bound = Bound::kUnknown;  // which term of the roofline is larger

  // Measured.
  TimeNs measured_ns = -1;
  double achieved_flops = kNaN;     // flops / measured
  double achieved_bandwidth = kNaN; // bytes / measured
  double compute_efficiency = kNaN; // achieved_flops / peak
  double bandwidth_efficiency = kNaN; // achieved_bandwidth / bandwidth
  double efficiency = kNaN;         // roofline_ns / measured_ns (1 = at the roofline)

  bool has_costs() const { return status == CostStatus::kOk || status == CostStatus::kNoDuration; }
};

// Cost figures per device task row, as a diagnosis keeps them. A task's
// figures are its shape figures (class, problem size, FLOPs, bytes, roofline)
// plus what its measured time, its duration, makes of them (achieved rates,
// efficiencies). Tasks of one op on one shape share the first part, and most
// tasks of a large profile have no costs at all (no shapes, copies,
// communication, AI CPU). So a row whose figures are exactly a shared set's
// with its own duration keeps a 4-byte reference to that set, and the
// measured part is computed again, by the formulas EstimateCost uses, when it
// is read; any other row is stored whole. Whole, the table took ~200 bytes a
// task: 219 MB of the diagnosis of a 1 M-task profiler DB.
class TaskCostTable {
 public:
  // A shared set as kept: the figures but their measured part (measured_ns,
  // achieved rates, efficiencies), which is made again from each task's
  // duration: 136 of CostFigures' 208 bytes.
  struct SharedFigures {
    CostStatus status;
    OpClass cls;
    DType dtype;
    ComputeUnit unit;
    AttentionPhase phase;
    Bound bound;
    std::string_view sub_kind;
    int64_t batch, m, n, k, heads, s_q, s_kv, head_dim;
    double flops, bytes, intensity, peak_flops, bandwidth, roofline_ns;
  };

 private:
  // A shared set, kept once and found by its figures: the index holds a
  // pointer, not a second copy (with 10^5 distinct shapes, continuous
  // batching, the copies in the index and the batches were half of the
  // table's 28 MB). NaN equals NaN; sub_kind by identity.
  struct SetRef {
    const SharedFigures* figures;
    int32_t id;
  };
  struct SetRefHash {
    using is_transparent = void;
    size_t operator()(const SharedFigures& f) const;
    size_t operator()(const SetRef& r) const { return (*this)(*r.figures); }
  };
  struct SetRefEqual {
    using is_transparent = void;
    bool operator()(const SharedFigures& a, const SharedFigures& b) const;
    bool operator()(const SetRef& a, const SetRef& b) const { return (*this)(*a.figures, *b.figures); }
    bool operator()(const SharedFigures& a, const SetRef& b) const { return (*this)(a, *b.figures); }
    bool operator()(const SetRef& a, const SharedFigures& b) const { return (*this)(*a.figures, b); }
  };
  using SetIndex = std::unordered_set<SetRef, SetRefHash, SetRefEqual>;

 public:
  // `durations`: the tasks' durations (DeviceTaskTable::dur), read back as
  // measured_ns of shared rows; outlives the table.
  void Reset(size_t tasks, const std::vector<TimeNs>* durations);
  // Rows costed by one worker (any thread); Merge adds them to the table.
  class Batch {
   public:
    void Add(uint32_t task, CostFigures figures);

   private:
    friend class TaskCostTable;
    explicit Batch(TaskCostTable* table) : table_(table) {}
    TaskCostTable* table_;
    SetIndex seen_;  // sets this batch has met (no lock): the table's own, which never move nor change
    std::vector<std::pair<uint32_t, uint32_t>> shared_;  // (task, shared set)
    std::vector<std::pair<uint32_t, CostFigures>> whole_;
  };
  Batch NewBatch() { return Batch(this); }
  // Not thread-safe: one batch at a time, after its worker is done.
  void Merge(Batch&& batch);

  // Never-costed rows read as CostFigures{} (measured_ns -1).
  CostFigures operator[](size_t task) const;
  // Whether `task` was added (a diagnosis costs only the tasks of its windows).
  bool costed(size_t task) const { return task < slot_.size() && slot_[task] != 0; }
  size_t size() const { return slot_.size(); }
  size_t shared_set_count() const { return shared_count_; }
  size_t whole_row_count() const { return whole_.size(); }

 private:
  // The shared set `key`, added when new. Thread-safe.
  SetRef SharedSet(const SharedFigures& key);
  const SharedFigures& shared_set(size_t id) const { return shared_chunks_[id / kSharedChunk][id % kSharedChunk]; }
  static constexpr uint32_t kShared = 0x80000000u;  // slot: shared set | kShared; else whole row + 1; 0 never costed
  // Shared sets a chunk: they stay where they are (the index and the batches
  // point at them), without a deque's per-block slack (3 of 136 bytes in 512).
  static constexpr size_t kSharedChunk = 1024;
  const std::vector<TimeNs>* durations_ = nullptr;
  std::vector<uint32_t> slot_;
  std::vector<CostFigures> whole_;
  std::vector<std::unique_ptr<SharedFigures[]>> shared_chunks_;
  size_t shared_count_ = 0;
  SetIndex shared_index_;
  std::mutex shared_mutex_;
};

struct OpCost : CostFigures {
  std::string note;             // how it was computed, or why not ("no Input Dims", "K not found: …")
  std::string peak_note;        // "910B3 matrix bf16 294.9 TFLOP/s (MSM)" / fallback used
};

// GEMM dims from shapes. Handles mm/addmm/linear (weight [N,K] transposed),
// bmm/matmul/baddbmm (batched; broadcast), Ascend MatMul*/BatchMatMul* with
// unknown transpose flags (K = the dim shared by A and B; when ambiguous the
// inner axis of A is taken and the note says so), GroupedMatmul (sum over groups).
struct GemmDims {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool ok = false;
  std::string note;
};
// `outputs` (may be null) gives M and N directly when present ([..., M, N]).
GemmDims InferGemmDims(std::string_view name, std::string_view sub_kind, const OpShapes& shapes,
                       const OpShapes* outputs = nullptr, CostNotes notes = CostNotes::kWrite);

// Pure cost model on the given inputs.
OpCost EstimateCost(const CostInput& input, const HardwareSpec& hw, CostNotes notes = CostNotes::kWrite);

// Builds the input of a device task: class from `classes`, shapes from the
// Ascend detail table, else from the operator the task is attributed to
// (Kineto Input Dims), duration = task duration.
CostInput CostInputForTask(const Profile& profile, const OperatorCallGraph& graph,
                           const OpClassification& classes, uint32_t task, CostNotes notes = CostNotes::kWrite);
// Builds the input of a host op: its own shapes; duration = device time of
// the op and its descendants (DeviceTotalTime) when > 0, else the host
// duration if `hw` is a CPU, else unknown.
CostInput CostInputForHostOp(const Profile& profile, const OperatorCallGraph& graph,
                             const OpClassification& classes, uint32_t host_op, const HardwareSpec& hw);

OpCost EstimateTaskCost(const Profile& profile, const OperatorCallGraph& graph,
                        const OpClassification& classes, const HardwareSpec& hw, uint32_t task);

// EstimateTaskCost's figures (no notes), reusing those of tasks costed from
// the same inputs. A task whose shapes are its own Input Shapes (Ascend) is
// costed from its class, sub-kind, op type and the six shape, type and format
// ids alone; a task without a detail row that takes its operator's shapes
// (Kineto), from its class and sub-kind, its name and its operator's name,
// class, sub-kind and Input Dims / types ids. So tasks of one op on one shape
// need one EstimateCost (shape parsing and notes were ~1 us a task; a
// 400k-row kernel_details.csv has a few thousand distinct rows). The measured
// part is computed from each task's own duration, as TaskCostTable does; a
// set is kept only when that gives back exactly the figures EstimateCost
// gave. Every other task is estimated on its own. Not thread-safe: one per
// worker.
//
// The memo is bounded, in two generations: sets go to the recent one; when
// it holds kMaxMemoShapes, it becomes the older one and the one before is
// dropped; a set found in the older one moves back to the recent one. A
// trace of continuous batching has new shapes every step (10^5 distinct in
// the bench's many_shapes trace, 12 MB of memo a worker kept whole) that
// repeat within the step only: the recent ones stay. Shapes that repeat
// every step stay while there are fewer than 2 x kMaxMemoShapes of them.
class TaskCostMemo {
 public:
  TaskCostMemo(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
               const HardwareSpec& hw)
      : profile_(profile), graph_(graph), classes_(classes), hw_(hw) {}
  CostFigures Figures(uint32_t task);
  size_t shape_set_count() const { return recent_.size() + older_.size(); }  // distinct sets kept
  // Sets a generation: 2048 (~250 bytes each with the map's node, at most
  // 1 MB a worker in two generations). The bench's 1 M-row kernel_details.csv
  // has 3,391 distinct rows, repeated every step: all stay (fewer than two
  // generations). One step of its varying-batch trace has a few dozen.
  static constexpr size_t kMaxMemoShapes = 2048;

 private:
  struct Key {
    CostInput::ShapeOrigin origin;
    OpClass cls;
    const char* sub_kind;
    size_t sub_kind_size;
    // kTaskDetail: op type (else name), input shapes/types/formats, output shapes/types/formats.
    // kOperator: the task's name, the operator's name, Input Dims and input types.
    std::array<StrId, 7> ids;
    OpClass op_cls = OpClass::kOther;  // kOperator: the operator's class and sub-kind, and whether its shapes are the task's
    const char* op_sub_kind = nullptr;
    size_t op_sub_kind_size = 0;
    bool same_work = false;
    bool operator==(const Key&) const = default;
  };
  // The key of `task` when its shapes may come from its detail row or its
  // operator (CostInputForTask's two sources), else nullopt.
  std::optional<Key> KeyOf(uint32_t task) const;
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  const Profile& profile_;
  const OperatorCallGraph& graph_;
  const OpClassification& classes_;
  const HardwareSpec& hw_;
  using Sets = std::unordered_map<Key, TaskCostTable::SharedFigures, KeyHash>;
  void Remember(const Key& key, const TaskCostTable::SharedFigures& set);
  Sets recent_, older_;
};
OpCost EstimateHostOpCost(const Profile& profile, const OperatorCallGraph& graph,
                          const OpClassification& classes, const HardwareSpec& hw, uint32_t host_op);

// Roofline summary per class over all device tasks (what detectors and the
// report read): time, FLOPs and bytes of tasks with costs, how many lacked shapes.
struct ClassCostSummary {
  OpClass cls = OpClass::kOther;
  uint64_t tasks = 0;
  uint64_t tasks_with_costs = 0;
  TimeNs measured_ns = 0;          // all tasks of the class
  TimeNs measured_with_costs_ns = 0;
  double flops = 0;
  double bytes = 0;
  double roofline_ns = 0;          // sum over tasks with costs
  double efficiency = kNaN;        // roofline_ns / measured_with_costs_ns
};
std::vector<ClassCostSummary> SummarizeCosts(const Profile& profile, const OperatorCallGraph& graph,
                                             const OpClassification& classes, const HardwareSpec& hw);

}  // namespace pypto
