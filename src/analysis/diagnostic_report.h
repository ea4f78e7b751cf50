// The diagnosis result: issues found by the detectors (one anti-pattern each,
// see analysis/detector.h), each with the numbers that support it, the rows it
// is about, the time it costs and an estimate of the time a fix would save,
// and how that estimate was computed. The analysis layer writes no prose for
// the user: `detail` strings are short factual lines; the report layer renders
// (src/report/diagnosis_{text,json,markdown}.cc).
//
// Severity is the affected time's share of the step time basis, with the
// priority thresholds of the msprof-analyze advisor (analyzer/base_analyzer.py:
// issue time / step time >= 0.05 high, >= 0.03 medium, else low).
//
// The combined speedup never counts a saving twice: every issue lists the rows
// (device tasks, host ops, idle time of a step) it saves time on; per row the
// largest saving claimed by any issue is taken, those are summed (clamped to
// 99% of the step time basis) and speedup = T / (T - saved). A task's
// execution (kDeviceTask) and the idle gap before it (kTaskGap) are distinct
// targets: a tiling fix and a launch fix on the same kernel add up.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/structure.h"
#include "analysis/workload.h"
#include "core/status.h"
#include "model/profile.h"

namespace pypto {

struct DiagnoseOptions;  // analysis/detector.h

// ------------------------------------------------------------------ issue types

// The one list of anti-patterns: the IssueType enum, its names and the
// detector registry (detectors/registry.cc) are generated from it. Adding a
// detector is a line here, src/analysis/detectors/<id>.cc defining
// `const Detector& <Name>Detector()`, and its rules in data/advisor/rules/<id>.json.
// The ids are stable (JSON, advisor rule keys, --only); append, never reorder
// (the pypto database stores the enum value).
// X(Name, id, what it finds)
#define PYPTO_ISSUE_TYPES(X)                                                                                        \
  X(MatmulTiling, matmul_tiling, "GEMM below the tiling threshold of its peak, with a shape/block-dim cause")        \
  X(AttentionMemoryBound, attention_memory_bound, "attention time dominated by memory traffic (decode)")             \
  X(KvCacheLayout, kv_cache_layout, "K/V transposed/copied/concatenated every step before attention")                \
  X(NormLaunchOverhead, norm_launch_overhead, "LayerNorm/RMSNorm kernels whose launch gaps rival their execution")   \
  X(HostBound, host_bound, "device idle share of the step / launch-bound kernel gaps")                               \
  X(AicpuFallback, aicpu_fallback, "ops running on the Ascend AI CPU")                                               \
  X(DynamicShapeCompile, dynamic_shape_compile, "online compile / dynamic shape ops")                                \
  X(StreamSync, stream_sync, "synchronisation calls stalling dispatch")                                              \
  X(NoPipeBound, no_pipe_bound, "long ops without any PMU pipe above the bound ratio")                               \
  X(FusibleSequence, fusible_sequence, "repeated short kernel sequences to fuse")                                    \
  X(Communication, communication, "exposed collectives, wait vs transfer, the rank others wait for")                 \
  X(InputStall, input_stall, "the device idles while the host loads data or copies from pageable memory")

enum class IssueType : uint8_t {
#define PYPTO_ISSUE_TYPE_ENUM(Name, id, what) k##Name,
  PYPTO_ISSUE_TYPES(PYPTO_ISSUE_TYPE_ENUM)
#undef PYPTO_ISSUE_TYPE_ENUM
};
#define PYPTO_ISSUE_TYPE_COUNT(Name, id, what) +1
inline constexpr size_t kIssueTypeCount = 0 PYPTO_ISSUE_TYPES(PYPTO_ISSUE_TYPE_COUNT);
#undef PYPTO_ISSUE_TYPE_COUNT
const char* IssueTypeName(IssueType type);
// Parses the names IssueTypeName returns; false when unknown.
bool IssueTypeFromName(std::string_view name, IssueType* type);

// ------------------------------------------------------------------ severity

enum class Severity : uint8_t { kLow = 0, kMedium, kHigh };
const char* SeverityName(Severity severity);  // "low", "medium", "high"

// Share of the step time basis (affected time / step time), unitless.
// Source: msprof-analyze advisor priority (analyzer/base_analyzer.py):
// >= 0.05 high, >= 0.03 medium, else low.
inline constexpr double kDefaultHighSeverityShare = 0.05;
inline constexpr double kDefaultMediumSeverityShare = 0.03;

struct SeverityThresholds {
  double high_share = kDefaultHighSeverityShare;
  double medium_share = kDefaultMediumSeverityShare;
  bool operator==(const SeverityThresholds&) const = default;
};
Severity SeverityForShare(double share, const SeverityThresholds& thresholds = {});

// ------------------------------------------------------------------ estimates

// How an issue's estimated saving was computed.
enum class SavingMethod : uint8_t {
  kNone = 0,      // no estimate (data missing); saved_ns = 0
  kRoofline,      // roofline of the shapes (FLOPs / peak, bytes / bandwidth, at a target efficiency)
  kMeasuredGap,   // a measured gap: idle / launch / copy time that the fix removes
  kAmdahl,        // a fraction of the affected time (a ratio from PMU or the spec) removed
};
const char* SavingMethodName(SavingMethod method);  // "none", "roofline", "measured_gap", "amdahl"

// What a saving is claimed on. Savings of two issues on the same target are
// not added: the combination takes the largest.
enum class SavingTargetKind : uint8_t {
  kDeviceTask = 0,  // row of profile.device_tasks
  kHostOp,          // row of profile.host_ops
  kStepIdle,        // device idle time of a step not before any task (row = index into graph.Steps())
  kTaskGap,         // idle gap on the task's stream just before device task `row` (launch / dispatch wait)
};
const char* SavingTargetKindName(SavingTargetKind kind);  // "device_task", "host_op", "step_idle", "task_gap"

struct RowSaving {
  SavingTargetKind kind = SavingTargetKind::kDeviceTask;
  uint32_t row = 0;
  TimeNs saved_ns = 0;
};

// ------------------------------------------------------------------ evidence

// A named number backing an issue ("aic_mac_ratio" 0.42 "ratio",
// "achieved_tflops" 88.1 "TFLOP/s", "gap_mean_us" 12.5 "us").
struct Metric {
  std::string name;   // snake_case
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string unit;   // "ratio", "ns", "us", "B", "B/s", "FLOP/s", "count", …
};

// At most this many rows are listed per issue (counts and times cover all).
inline constexpr size_t kMaxEvidenceRows = 64;

// Shapes that differ only in their numbers, as one range per number position
// (decode steps: the KV length grows by one each step, so every step's shape
// is new): "[[32,1,512..911],[32,512..911,128]]" seen 400 times.
struct ShapeGroup {
  std::string skeleton;              // the shape with each number replaced by '#'
  std::vector<int64_t> low, high;    // per number position
  uint64_t count = 0;                // rows (tasks / ops) with this skeleton
  std::string Text() const;          // the skeleton with "low..high" (or the value) per position
};
// Shape groups kept per issue; further skeletons are counted in other_shapes.
inline constexpr size_t kMaxShapeGroups = 8;

struct Evidence {
  std::vector<uint32_t> tasks;       // device task rows, ts order, capped at kMaxEvidenceRows
  std::vector<uint32_t> host_ops;    // host op rows, ts order, capped at kMaxEvidenceRows
  uint64_t count = 0;                // occurrences (kernels, op calls, gaps …) behind the issue
  TimeNs total_ns = 0;               // their total duration
  TimeNs mean_ns = 0;                // total / count
  std::vector<std::string> shapes;   // distinct input shapes as written in the profile (capped)
  std::vector<ShapeGroup> shape_groups;  // every row's shape, merged by skeleton (AddShapeToGroups)
  uint64_t other_shapes = 0;         // rows whose skeleton came after kMaxShapeGroups others
  std::vector<Metric> metrics;       // the figures the detector compared with its thresholds
};

// Merges one row's shape text into the evidence's groups.
void AddShapeToGroups(Evidence* evidence, std::string_view shape);

// ------------------------------------------------------------------ issue

struct Issue {
  IssueType type = IssueType::kMatmulTiling;
  Severity severity = Severity::kLow;
  std::string op_name;               // op / kernel name (or op type) the issue is about; "" for step-wide issues
  std::string op_type;               // Ascend OP Type or op class name ("MatMulV2", "attention")
  std::string phase;                 // "decode", "prefill" or "" when unknown / mixed

  // Ratios in [0, 1], NaN when unknown.
  double compute_ratio = std::numeric_limits<double>::quiet_NaN();  // AI-core / compute: aic_mac_ratio, achieved/peak FLOP/s
  double memory_ratio = std::numeric_limits<double>::quiet_NaN();   // HBM / memory: mte2 ratio, modeled memory time / measured

  // The brief's two shares, always in [0, 1] (filled by FinalizeIssue): of the
  // issue's device time, the share in compute-unit work / in HBM transfers.
  // Source in order: the detector's own ratio above, the PMU pipe ratios of
  // the evidence tasks, the roofline of their shapes; 0 when none applies.
  double ai_core_time_ratio = 0;
  double hbm_access_time_ratio = 0;
  std::string time_ratio_source;     // "detector", "pipe_ratios", "roofline", "none" (per ratio: "a/b" when they differ)
  // What the profile ran: the op / kernel, the op sequence, or the step(s) of a
  // step-wide issue. `op_name` may name what to use instead (a fused API).
  std::string profile_op_name;

  std::string detail;                // short factual line, e.g. "N=1000 not a multiple of 16 (fractal)"
  Evidence evidence;

  TimeNs affected_ns = 0;            // time of the rows the issue is about (within the analysed steps)
  // Every task whose duration makes up affected_ns (AddTaskEvidence; not
  // capped like the evidence rows): FinalizeIssue replaces their summed time
  // by the wall time they cover, so overlapping or duplicated rows never
  // affect more than the step. Not part of the report.
  std::vector<uint32_t> affected_tasks;
  double affected_share = 0;         // affected_ns / step time basis

  TimeNs saved_ns = 0;               // estimated saving = sum of `savings`
  SavingMethod method = SavingMethod::kNone;
  std::string saving_formula;        // how: "sum(measured - 2MNK/(0.6 * peak)) over 12 kernels"
  std::vector<RowSaving> savings;    // per row (not capped: the combination needs them all)
};

// Deterministic order: severity (high first), saved time (desc), type, op name, first row.
bool IssueBefore(const Issue& a, const Issue& b);
void SortIssues(std::vector<Issue>* issues);

// Combination of the issues' savings without double counting (see top of file).
struct CombinedSaving {
  TimeNs saved_ns = 0;               // sum over targets of the largest claimed saving, <= step time
  TimeNs claimed_ns = 0;             // plain sum of the issues' savings (>= saved_ns; the difference overlapped)
  double speedup = 1.0;              // T / (T - saved); 1 when nothing is saved or T unknown
};
CombinedSaving CombineSavings(const std::vector<Issue>& issues, TimeNs step_time_ns);

// ------------------------------------------------------------------ report

// The model structure over the analysed steps (analysis/structure.h), as the
// report shows it: layers found, phase of each step, per-token latency.
struct StructureSummary {
  bool available = false;            // false: structure analysis failed (a note says why)
  int32_t layers = 0;                // repeating transformer layers (0: none found)
  int32_t layer_period = 0;          // ops per layer
  uint64_t prefill_steps = 0;        // over the analysed steps
  uint64_t decode_steps = 0;
  uint64_t unknown_steps = 0;
  std::vector<std::string> step_phases;  // per analysed step (report.step_numbers order): prefill / decode / unknown
  // The rules that decided the phases and how many steps each decided
  // ("attention S_q" -> 399, "GEMM rows ratio" -> 1); steps left unknown are not counted.
  std::map<std::string, uint64_t> phase_rules;
  LatencyStats decode_latency;       // per-token latency = decode step latency (p50/p90/p99, ms)
  LatencyStats prefill_latency;      // prefill step latency (time to first token candidates)
  std::string model_arch;            // as given by the user
};

struct DiagnosticReport {
  std::string source_path;           // what was diagnosed (metadata "source_path")
  std::string format;                // metadata "format"

  std::vector<Issue> issues;         // SortIssues order
  std::vector<std::string> notes;    // what was missing or degraded (no shapes, no PMU, unknown hardware …)
  std::vector<std::string> detectors_run;  // names, registry order

  // Hardware used and how it was chosen.
  std::string hardware_id;           // "910B3", "H100-SXM", "" when unknown
  std::string hardware_name;         // display name
  std::string hardware_selection;    // HardwareSpec::selection (+ overrides)
  double peak_flops = std::numeric_limits<double>::quiet_NaN();       // headline peak used, FLOP/s
  double memory_bandwidth = std::numeric_limits<double>::quiet_NaN(); // B/s

  // Step time basis: the steps analysed and their total latency.
  std::vector<size_t> steps;         // indices into the graph's Steps()
  std::vector<int64_t> step_numbers; // their numbers (ProfilerStep#N / Step Id; -1 whole window)
  std::string step_basis;            // "3 steps (ProfilerStep annotation)", "whole window"
  TimeNs step_time_ns = 0;           // sum of StepInfo::latency_ns over `steps`
  TimeNs device_busy_ns = 0;         // device busy time within those steps (union over devices' streams)

  StructureSummary structure;

  // Training or inference (ClassifyWorkload) and the rows that decided.
  Workload workload = Workload::kUnknown;
  std::string workload_reason;

  // Combination (CombineSavings).
  TimeNs estimated_saved_ns = 0;
  TimeNs claimed_saved_ns = 0;
  double estimated_combined_speedup = 1.0;
};

// The engine: graph -> hardware -> op classes -> per-task costs -> model
// structure -> every registered detector (analysis/detector.h) -> sorted
// issues and combined speedup. Fails only when the graph cannot be built or
// the options are invalid (bad step number, thresholds outside (0, 1]);
// missing metrics degrade to fewer issues plus notes.
StatusOr<DiagnosticReport> Diagnose(Profile& profile, const DiagnoseOptions& options);

}  // namespace pypto
