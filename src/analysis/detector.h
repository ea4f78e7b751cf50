// The detector framework: one Detector per anti-pattern (one file each under
// src/analysis/detectors/), the context they all read (profile, call graph,
// hardware, op classes, per-task costs, model structure, the steps analysed)
// and the options (thresholds) of the diagnosis.
//
// Adding a detector: write src/analysis/detectors/<name>.cc defining
//   const Detector& <Name>Detector();      // returns a function-local static
// and add one line `X(<Name>)` to PYPTO_DETECTORS in
// src/analysis/detectors/registry.cc. Its thresholds go into its own options
// struct in DiagnoseOptions (or, for quick experiments, DiagnoseOptions::params).
//
// Rules every detector follows:
//   * every threshold is a named constant with unit and source (diagnosis-rules.md);
//   * an issue only when the data supports it; missing inputs (no shapes, no PMU
//     columns, unknown hardware) produce a note and fewer issues, never guesses;
//   * only rows inside the analysed steps count (DiagnosisContext::InWindow);
//   * savings are claimed per row (Issue::savings) so the combination can
//     avoid double counting; `saving_formula` says how they were computed.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cost_model.h"
#include "analysis/diagnostic_report.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "graph/call_graph.h"
#include "hw/hardware.h"
#include "model/profile.h"

namespace pypto {

// ------------------------------------------------------------------ thresholds

// (1) matmul_tiling
// Achieved FLOP/s below this fraction of the dtype's peak = under-utilised.
// Source: the brief's HotspotDetector(tiling_utilization_threshold=0.6); matches
// the legacy msprof-analyze advisor "red" cube kernel (aic_mac_ratio < 0.6).
inline constexpr double kDefaultTilingUtilizationThreshold = 0.6;
// PMU aic_mac_ratio: < 0.6 red, < 0.8 yellow (unitless). Source: msprof-analyze
// advisor_backend common_func_advisor/constant.py (diagnosis-rules §1.2).
inline constexpr double kDefaultMacRatioRed = 0.6;
inline constexpr double kDefaultMacRatioYellow = 0.8;

struct MatmulTilingOptions {
  double utilization_threshold = kDefaultTilingUtilizationThreshold;
  double mac_ratio_red = kDefaultMacRatioRed;
  double mac_ratio_yellow = kDefaultMacRatioYellow;
  bool operator==(const MatmulTilingOptions&) const = default;
};

// (2) attention_memory_bound
// Memory share at or above this = memory bound (unitless): the memory term of
// the attention's roofline, bytes/bandwidth over (bytes/bandwidth +
// FLOPs/peak). Source: the brief's HotspotDetector(mem_bottleneck_ratio_threshold=0.7);
// equals the advisor's vector rule aiv_mte2_ratio >= 0.7 (§1.2).
inline constexpr double kDefaultMemBottleneckRatioThreshold = 0.7;
// A memory-bound attention is only reported when the roofline time of the
// bytes it must read is below this fraction of its measured time (time to
// win; unitless). Source: the legacy msprof-analyze advisor calls a vector
// kernel "good" at >= 1150 GB/s, 0.72 of the 910B's 1.6 TB/s HBM (§1.2, §8);
// rounded down to 0.7. Healthy decode attention streams at ~0.85.
inline constexpr double kDefaultAttentionBandwidthEfficiencyFloor = 0.7;
// PMU: FlashAttention fwd aic_mte2_ratio >= 0.8 (MPA ai_core_performance, §1.2).
inline constexpr double kDefaultFaAicMte2Ratio = 0.8;
// PMU: vector part aiv_mte2_ratio >= 0.7 (MPA, §1.2).
inline constexpr double kDefaultAivMte2Ratio = 0.7;

struct AttentionMemoryOptions {
  double mem_bottleneck_ratio_threshold = kDefaultMemBottleneckRatioThreshold;
  double fa_aic_mte2_ratio = kDefaultFaAicMte2Ratio;
  double aiv_mte2_ratio = kDefaultAivMte2Ratio;
  double bandwidth_efficiency_floor = kDefaultAttentionBandwidthEfficiencyFloor;
  bool operator==(const AttentionMemoryOptions&) const = default;
};

// (3) kv_cache_layout
// A cat/copy/transpose of K or V counts as per-step cache traffic when it feeds
// an attention op within this many ops on the same thread (unitless count).
// Source: a transformer layer's K/V path is project -> rope -> cache -> attention,
// i.e. a handful of ops (structure.h); 12 covers reshape/view chains in between,
// incl. the grouped-query repeat of K and V (unsqueeze/expand/reshape each, plus
// a transpose: 7 ops between the value cat and the QK matmul in transformers).
inline constexpr int kDefaultKvFeedWindowOps = 12;

struct KvCacheLayoutOptions {
  int feed_window_ops = kDefaultKvFeedWindowOps;
  bool operator==(const KvCacheLayoutOptions&) const = default;
};

// (4) norm_launch_overhead
// Launch/dispatch gap before a norm kernel at or above this fraction of the
// kernel's execution = launch overhead "comparable to execution" (unitless).
// Source: HTA get_cuda_kernel_launch_stats (kernel shorter than its launch call,
// diagnosis-rules §4.3) relaxed to "comparable" = half.
inline constexpr double kDefaultNormGapToExecRatio = 0.5;
// Norm kernels shorter than this are "short" (µs). Source: msprof-analyze
// operator-bound / AI CPU checkers ignore ops <= 20 µs as launch-dominated (§1.1).
inline constexpr double kDefaultNormShortKernelUs = 20.0;

struct NormLaunchOptions {
  double gap_to_exec_ratio = kDefaultNormGapToExecRatio;
  double short_kernel_us = kDefaultNormShortKernelUs;
  bool operator==(const NormLaunchOptions&) const = default;
};

// (5) host_bound
// Device idle share of the step above this = host bound. Source: msprof-analyze
// overall summary "free time exceed the threshold 10%" (Free / E2E > 0.1, §1.1).
inline constexpr double kDefaultFreeShareThreshold = 0.10;
// Kernel-to-kernel gaps at or below this are launch latency (µs), larger gaps
// are host waits only when the launch started after the previous kernel ended
// (HTA idle-time categories, §4.2). Source: HTA KERNEL_KERNEL_DELAY_THRESHOLD
// 1500 µs bounds gaps attributable to the stream order (§4.4).
inline constexpr double kDefaultMaxLaunchGapUs = 1500.0;
// Host segments above this share of the critical path = host dominated
// (unitless). Source: majority of the path (HTA critical-path summary, §4.4).
inline constexpr double kDefaultCriticalPathHostShare = 0.5;

struct HostBoundOptions {
  double free_share_threshold = kDefaultFreeShareThreshold;
  double max_launch_gap_us = kDefaultMaxLaunchGapUs;
  double critical_path_host_share = kDefaultCriticalPathHostShare;
  bool operator==(const HostBoundOptions&) const = default;
};

// Issues whose affected time is below this share of the step time are dropped
// (unitless). Source: msprof-analyze fusible-operator checker keeps sequences
// with wall/step > 0.01 (§1.1).
inline constexpr double kDefaultMinIssueShare = 0.01;

// ------------------------------------------------------------------ options

struct DiagnoseOptions {
  // HotspotDetector(ai_core_theoretical_peak, hbm_bandwidth, …) of the brief.
  double ai_core_theoretical_peak = 0;   // FLOP/s, replaces the detected matrix peak; 0 = detected
  double hbm_bandwidth = 0;              // B/s, replaces the detected bandwidth; 0 = detected
  double tiling_utilization_threshold = kDefaultTilingUtilizationThreshold;   // copied into matmul_tiling
  double mem_bottleneck_ratio_threshold = kDefaultMemBottleneckRatioThreshold; // copied into attention_memory

  std::string hardware_name;             // force a hardware table entry ("910B3", "H100")
  std::optional<int64_t> step;           // analyse only step number N (ProfilerStep#N / Step Id); all when empty
  std::string model_arch;                // passed to AnalyzeStructure

  SeverityThresholds severity;
  double min_issue_share = kDefaultMinIssueShare;

  // Per-detector thresholds. The top-level tiling / mem-bottleneck values win
  // over the copies here when they differ from their defaults.
  MatmulTilingOptions matmul_tiling;
  AttentionMemoryOptions attention_memory;
  KvCacheLayoutOptions kv_cache_layout;
  NormLaunchOptions norm_launch;
  HostBoundOptions host_bound;

  // Extra named thresholds "<issue_type>.<name>" -> value, for detectors
  // without an options struct yet (read with Param()).
  std::map<std::string, double> params;
  double Param(std::string_view key, double default_value) const;

  // Detectors to run by issue-type name; empty = all registered.
  std::vector<std::string> only;

  // Same options, same diagnosis (a session keeps one report per options).
  bool operator==(const DiagnoseOptions&) const = default;
};

// Checks ranges (ratios in (0, 1], non-negative figures). InvalidArgument naming the field.
Status ValidateDiagnoseOptions(const DiagnoseOptions& options);

// ------------------------------------------------------------------ context

// Everything detectors read. Built once by Diagnose(); read-only for detectors.
struct DiagnosisContext {
  const Profile* profile = nullptr;
  const OperatorCallGraph* graph = nullptr;
  const HardwareSpec* hardware = nullptr;        // always set (generic fallback when unknown)
  bool hardware_known = false;                   // false: generic fallback, peaks unreliable
  const OpClassification* classes = nullptr;
  const TaskCostTable* task_costs = nullptr;     // per device task row (EstimateTaskCost)
  const ModelStructure* structure = nullptr;     // nullptr when structure analysis failed
  const DiagnoseOptions* options = nullptr;      // effective options (top-level values merged)
  Workload workload = Workload::kUnknown;        // training / inference (ClassifyWorkload)

  // Steps analysed (indices into graph->Steps()) and their windows.
  std::vector<size_t> steps;
  std::vector<TimeWindow> step_windows;          // [min(cpu.start, device_start), max(cpu.end, device_end))
  bool step_windows_ordered = false;             // ascending and disjoint: StepOf binary-searches them
  TimeNs step_time_ns = 0;                       // sum of latencies: the severity / speedup basis

  // Device tasks (kAnnotation and kSync excluded) whose start lies in an
  // analysed step, sorted by (track, ts).
  std::vector<uint32_t> tasks;
  // Host ops whose start lies in an analysed step, sorted by (track, ts).
  std::vector<uint32_t> host_ops;

  // StepPath's cache, one entry per analysed step; filled on first use, under
  // the mutex (detectors run side by side).
  mutable std::vector<CriticalPath> step_paths;
  mutable std::mutex step_paths_mutex;

  // PMU / extra attributes of device tasks (OwnerKind::kDeviceTask), by row.
  bool has_pmu = false;                          // any aic_* / aiv_* ratio present
  // Numeric attribute `key` of a task, NaN when absent.
  double TaskAttribute(uint32_t task, std::string_view key) const;
  // Text of attribute `key` of a task, "" when absent.
  std::string TaskAttributeText(uint32_t task, std::string_view key) const;
  // The task's attribute row with key `key`, nullopt when it has none.
  std::optional<uint32_t> TaskAttributeRow(uint32_t task, std::string_view key) const;
  // The same lookups by a key resolved once with AttributeKey: a detector
  // reading attributes of every task resolves its keys before the loop (a
  // hash of the key text per task and key, with the other per-task string
  // work, was ~15 % of the detectors on a 1 M-row kernel_details.csv).
  StrId AttributeKey(std::string_view key) const;
  double TaskAttribute(uint32_t task, StrId key) const;
  std::optional<uint32_t> TaskAttributeRow(uint32_t task, StrId key) const;
  // Numeric attributes `keys` (from AttributeKey) of a task, read in one pass
  // over its rows; NaN where absent (the first row of a key, as TaskAttribute).
  template <size_t N>
  std::array<double, N> TaskAttributes(uint32_t task, const std::array<StrId, N>& keys) const {
    std::array<double, N> values;
    values.fill(std::numeric_limits<double>::quiet_NaN());
    std::array<bool, N> found{};
    size_t left = N;
    FindTaskAttributeRow(task, [&](uint32_t row) {
      const StrId key = profile->attributes.key(row);
      for (size_t i = 0; i < N; ++i) {
        if (keys[i] != key || found[i]) continue;
        found[i] = true;
        values[i] = profile->attributes.number(row);
        --left;
      }
      return left == 0;
    });
    return values;
  }

  // True when `ts` lies in one of the analysed step windows.
  bool InWindow(TimeNs ts) const;
  // Index into `steps` of the window containing ts, or -1.
  int StepOf(TimeNs ts) const;
  // Affected time / step time.
  double ShareOfStep(TimeNs ns) const { return step_time_ns > 0 ? double(ns) / double(step_time_ns) : 0; }
  // Critical-path totals (no segments) of steps[k], computed once for all
  // detectors that read them (host_bound, communication) on first use; a
  // step whose path cannot be built gives an empty path.
  const CriticalPath& StepPath(size_t k) const;
  // Name of a task to show: Ascend OP Type when set, else the task name.
  std::string_view TaskLabel(uint32_t task) const;
  // Its string id: tasks with the same id have the same label.
  StrId TaskLabelId(uint32_t task) const;

  // Attribute index (built by Diagnose). Importers add a task's attributes one
  // after the other, so each task's rows are usually one run of the attribute
  // table: [attr_begin[t], attr_end[t]) (8 bytes a task). When some task's rows
  // are not one run (attributes added later, merged profiles), the index is a
  // CSR over task rows instead (attr_offsets, attr_rows: 4 bytes an attribute,
  // 44 MB for the 11 M attributes of a 400k-row kernel_details.csv).
  std::vector<uint32_t> attr_begin, attr_end;    // run form: size tasks (begin = end when none)
  std::vector<uint32_t> attr_offsets;            // CSR form: size tasks+1
  std::vector<uint32_t> attr_rows;               // CSR form: rows of profile->attributes
  // Calls fn(row) for each attribute row of `task` until fn returns true.
  template <typename Fn>
  void FindTaskAttributeRow(uint32_t task, Fn fn) const {
    if (task < attr_begin.size()) {
      for (uint32_t row = attr_begin[task]; row < attr_end[task]; ++row)
        if (fn(row)) return;
      return;
    }
    if (task + 1 >= attr_offsets.size()) return;
    for (uint32_t i = attr_offsets[task]; i < attr_offsets[task + 1]; ++i)
      if (fn(attr_rows[i])) return;
  }
};

// Fills severity (from affected_share), saved_ns (sum of savings) and
// affected_share of an issue; detectors call it before emitting.
void FinalizeIssue(const DiagnosisContext& ctx, Issue* issue);

// ------------------------------------------------------------------ detector

struct DetectorOutput {
  std::vector<Issue> issues;
  std::vector<std::string> notes;   // what this detector could not check and why
};

class Detector {
 public:
  virtual ~Detector() = default;
  // Stable snake_case name; equals IssueTypeName(type()).
  virtual std::string_view name() const = 0;
  virtual IssueType type() const = 0;
  // Appends issues and notes. Never fails: missing data becomes notes.
  // Detectors run side by side (RunDetectors): Run reads the context and
  // writes `out` only; shared state of its own must be safe for that.
  virtual void Run(const DiagnosisContext& ctx, DetectorOutput* out) const = 0;
  // True when Run will read ctx.StepPath. The paths are then computed before
  // the detectors start side by side, so the DAG of a long step (25 MB for a
  // 300 MB trace without steps) is freed before their transients, and not
  // held beside them.
  virtual bool ReadsStepPaths(const DiagnosisContext&) const { return false; }
  // Issues listed whatever their share of the step (min_issue_share does not
  // drop them): AI CPU fallbacks, which msprof-analyze always lists.
  virtual bool ListedAtAnyShare() const { return false; }
};

// Every registered detector in registry order (src/analysis/detectors/registry.cc).
const std::vector<const Detector*>& AllDetectors();
const Detector* FindDetector(std::string_view name);

// Builds the context and runs the detectors on an already built graph (tests
// and front ends that hold a graph). `profile` must be the graph's profile.
StatusOr<DiagnosticReport> DiagnoseGraph(const OperatorCallGraph& graph, const DiagnoseOptions& options);

// What a caller (a ProfileSession) already computed on the graph; null fields
// are computed by DiagnoseGraph. `structure` must come from AnalyzeStructure
// with options.model_arch.
struct DiagnosisInputs {
  const OpClassification* classes = nullptr;
  const StatusOr<ModelStructure>* structure = nullptr;
  // Where the diagnosis leaves its task costs, for a caller that reads them
  // after it (the report's roofline); null: they go with the diagnosis.
  TaskCostTable* task_costs = nullptr;
};
StatusOr<DiagnosticReport> DiagnoseGraph(const OperatorCallGraph& graph, const DiagnoseOptions& options,
                                         const DiagnosisInputs& inputs);

// Computes into the graph's path cache the critical paths of the steps that
// DiagnoseGraph(graph, options) will read (Detector::ReadsStepPaths), so a
// caller can have them before it allocates the op classes and the structure:
// a long step's DAG (25 MB for a 300 MB trace without steps) then does not
// sit on top of them. Nothing when no selected detector reads them, or when
// the options fail (DiagnoseGraph reports that).
void PrepareDiagnosisStepPaths(const OperatorCallGraph& graph, const DiagnoseOptions& options);

}  // namespace pypto
