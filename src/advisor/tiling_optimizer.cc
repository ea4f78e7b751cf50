// TilingOptimizer: the tuning inputs for the flagged MatMuls (optimizers.h).
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "advisor/optimizers.h"
#include "analysis/cost_model.h"
#include "hw/dtype.h"
#include "hw/hardware.h"
#include "io/json_writer.h"

namespace pypto::advisor {
namespace {

// Padding multiples (elements).
// GPUs: 64. Source: NVIDIA "Matrix Multiplication Background" user guide —
// tensor cores need dims that are multiples of 8 (FP16/BF16) / 16 (INT8), and
// tile quantization is avoided with multiples of the CTA tile edge (64 and up);
// the hardware table's mma_dim_multiple is reported as the minimum.
constexpr int64_t kGpuPadMultiple = 64;
// CPU: 16 elements = one 64-byte cache line of FP32 (oneDNN / MKL blocked GEMM).
constexpr int64_t kCpuPadMultiple = 16;
// Ascend fallback when the hardware table gives none: inner axis multiple of
// 256 elements (msprof-analyze cube affinity rule, diagnosis-rules §1.2).
constexpr int64_t kAscendPadMultiple = 256;

int64_t RoundUp(int64_t v, int64_t m) { return m > 0 && v > 0 ? (v + m - 1) / m * m : v; }

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1000.0); }

}  // namespace

TuningConfig TilingOptimizer::GenerateTuningConfig(const DiagnosticReport& report, Backend backend) const {
  TuningConfig config;
  config.backend = backend;
  config.hardware_id = report.hardware_id;
  config.step_time_ns = report.step_time_ns;
  if (backend == Backend::kAscend && !report.hardware_id.empty()) config.soc_version = "Ascend" + report.hardware_id;
  HardwareSpec hw;
  if (!report.hardware_id.empty()) {
    StatusOr<HardwareSpec> found = FindHardware(report.hardware_id);
    if (found.ok()) hw = std::move(found).value();
  }
  int64_t multiple = kCpuPadMultiple;
  std::string align_source = "16 elements = one 64 B cache line of FP32 (blocked CPU GEMM)";
  if (backend == Backend::kAscend) {
    multiple = hw.inner_axis_multiple_elems > 0 ? hw.inner_axis_multiple_elems : kAscendPadMultiple;
    align_source = fmt::format("MatMul inner axis multiple of {} elements (cube affinity, diagnosis-rules §1.2{})",
                               multiple, hw.alignment_source.empty() ? "" : "; " + hw.alignment_source);
  } else if (backend == Backend::kCuda || backend == Backend::kRocm) {
    multiple = kGpuPadMultiple;
    align_source = fmt::format("64 elements: tile quantization (NVIDIA Matrix Multiplication Background); "
                               "tensor-core minimum {} elements (hardware table)",
                               hw.mma_dim_multiple > 0 ? hw.mma_dim_multiple : 8);
  }

  const Profile& p = graph_.profile();
  const DeviceTaskTable& t = p.device_tasks;
  std::set<std::string> seen;
  // matmul_tiling issues first: an op flagged by both keeps its tiling figures.
  std::vector<const Issue*> ordered;
  for (const Issue& issue : report.issues)
    if (issue.type == IssueType::kMatmulTiling) ordered.push_back(&issue);
  for (const Issue& issue : report.issues)
    if (issue.type != IssueType::kMatmulTiling) ordered.push_back(&issue);
  for (const Issue* issue_ptr : ordered) {
    const Issue& issue = *issue_ptr;
    const bool tiling = issue.type == IssueType::kMatmulTiling;
    const bool no_pipe = issue.type == IssueType::kNoPipeBound && backend == Backend::kAscend;
    if (!tiling && !no_pipe) continue;
    if (issue.evidence.tasks.empty()) continue;
    const uint32_t task = issue.evidence.tasks.front();
    if (task >= t.size()) continue;
    TuneOp op;
    op.issue_type = IssueTypeName(issue.type);
    op.kernel_name = std::string(p.Str(t.name[task]));
    op.op_type = t.op_type(task) != kEmptyStr ? std::string(p.Str(t.op_type(task))) : issue.op_type;
    op.input_shapes = std::string(p.Str(t.input_shapes(task)));
    op.input_dtypes = std::string(p.Str(t.input_types(task)));
    op.input_formats = std::string(p.Str(t.input_formats(task)));
    op.output_shapes = std::string(p.Str(t.output_shapes(task)));
    CostInput in = CostInputForTask(p, graph_, classes_, task);
    if (op.input_shapes.empty() && !issue.evidence.shapes.empty()) op.input_shapes = issue.evidence.shapes.front();
    op.tasks = issue.evidence.count;
    op.total_ns = issue.affected_ns;
    op.issue_saved_ns = issue.saved_ns;
    if (in.has_shapes && in.cls == OpClass::kMatmul) {
      OpCost cost = EstimateCost(in, hw);
      if (op.input_dtypes.empty() && cost.dtype != DType::kUnknown) op.input_dtypes = DTypeName(cost.dtype);
      if (cost.m > 0 && cost.n > 0 && cost.k > 0) {
        op.m = cost.m; op.n = cost.n; op.k = cost.k; op.batch = std::max<int64_t>(cost.batch, 1);
        op.align_multiple = multiple;
        op.align_source = align_source;
        op.padded_m = op.m;  // rows = tokens: not padded (they vary per step)
        op.padded_n = RoundUp(op.n, multiple);
        op.padded_k = RoundUp(op.k, multiple);
        op.extra_flops_fraction = double(op.padded_n) * double(op.padded_k) / (double(op.n) * double(op.k)) - 1.0;
      }
    }
    const TimeNs padding_cost = TimeNs(double(op.total_ns) * op.extra_flops_fraction);
    op.predicted_saved_ns = std::max<TimeNs>(0, op.issue_saved_ns - padding_cost);
    op.prediction_formula =
        op.extra_flops_fraction > 0
            ? fmt::format("issue saving {} - measured {} x extra FLOPs {:.4f} = {}", Us(op.issue_saved_ns),
                          Us(op.total_ns), op.extra_flops_fraction, Us(op.predicted_saved_ns))
            : fmt::format("issue saving {} ({})", Us(op.issue_saved_ns), issue.saving_formula);
    const std::string key = op.kernel_name + "|" + op.input_shapes;
    if (!seen.insert(key).second) continue;
    config.ops.push_back(std::move(op));
  }
  if (config.ops.empty()) config.notes.push_back("no matmul_tiling / no_pipe_bound issue with device rows: nothing to tune");
  return config;
}

void TuningConfig::WriteTuneOpsFile(io::ValueSink& w) const {
  // The msprof-analyze tune_ops_file form (advisor result _save_op_file_list):
  // {"tune_ops_name": [kernel names]}.
  w.BeginObject();
  w.Key("tune_ops_name");
  w.BeginArray();
  std::set<std::string> names;
  for (const TuneOp& op : ops)
    if (names.insert(op.kernel_name).second) w.String(op.kernel_name);
  w.EndArray();
  w.EndObject();
}

std::string TuningConfig::TuneOpsFileJson() const {
  std::string out;
  io::JsonWriter w(&out);
  w.set_indent(2);
  WriteTuneOpsFile(w);
  out += '\n';
  return out;
}

void TuningConfig::WriteDetail(io::ValueSink& w) const {
  w.BeginObject();
  w.KeyString("schema", kTuningConfigSchema);
  w.KeyString("backend", BackendName(backend));
  w.KeyString("hardware", hardware_id);
  if (!soc_version.empty()) w.KeyString("soc_version", soc_version);
  w.KeyMicrosFromNs("step_time_us", step_time_ns);
  w.Key("ops");
  w.BeginArray();
  for (const TuneOp& op : ops) {
    w.BeginObject();
    w.KeyString("issue_type", op.issue_type);
    w.KeyString("kernel_name", op.kernel_name);
    w.KeyString("op_type", op.op_type);
    w.KeyString("input_shapes", op.input_shapes);
    w.KeyString("input_dtypes", op.input_dtypes);
    w.KeyString("input_formats", op.input_formats);
    w.KeyString("output_shapes", op.output_shapes);
    w.KeyUint("tasks", op.tasks);
    w.KeyMicrosFromNs("total_us", op.total_ns);
    w.KeyMicrosFromNs("issue_saved_us", op.issue_saved_ns);
    if (op.m > 0) {
      w.Key("gemm");
      w.BeginObject();
      w.KeyInt("batch", op.batch);
      w.KeyInt("m", op.m);
      w.KeyInt("n", op.n);
      w.KeyInt("k", op.k);
      w.EndObject();
      w.Key("padded");
      w.BeginObject();
      w.KeyInt("m", op.padded_m);
      w.KeyInt("n", op.padded_n);
      w.KeyInt("k", op.padded_k);
      w.KeyInt("multiple", op.align_multiple);
      w.KeyString("multiple_source", op.align_source);
      w.KeyDouble("extra_flops_fraction", op.extra_flops_fraction);
      w.EndObject();
    }
    w.KeyMicrosFromNs("predicted_saved_us", op.predicted_saved_ns);
    w.KeyDouble("predicted_speedup", SpeedupFor(step_time_ns, op.predicted_saved_ns));
    w.KeyString("prediction", op.prediction_formula);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const std::string& n : notes) w.String(n);
  w.EndArray();
  w.EndObject();
}

std::string TuningConfig::DetailJson() const {
  std::string out;
  io::JsonWriter w(&out);
  w.set_indent(2);
  WriteDetail(w);
  out += '\n';
  return out;
}

std::string TuningConfig::ShellScript(const std::string& tune_ops_file) const {
  std::string ops_list;
  for (const TuneOp& op : ops) ops_list += fmt::format("#   {} ({}): {} [{}]\n", op.kernel_name, op.op_type,
                                                       op.input_shapes, op.input_dtypes);
  return fmt::format(R"SH(#!/usr/bin/env bash
# AOE operator tuning (job_type 2) of the operators pypto flagged. Generated by
# `pypto advise`; the ops and their figures are in aoe_tuning_ops.json.
# Ops ({count}):
{ops}#
# Steps (diagnosis-rules §6; msprof-analyze "operator no bound" suggestion):
#   1. ./aoe_tune.sh dump infer.py [args...]  run one inference with
#      torch_npu.npu.set_aoe(DUMP_DIR): single-op graphs are dumped for AOE
#   2. ./aoe_tune.sh tune                     aoe --job_type=2 on the listed ops;
#      the tuned tiling goes to TUNE_BANK_PATH (custom op repository)
#   3. ./aoe_tune.sh env                      prints the export to use when
#      running the model (TUNE_BANK_PATH must point at the bank when consumed)
set -euo pipefail
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
DUMP_DIR="${{DUMP_DIR:-$HERE/aoe_dump}}"
TUNE_OPS_FILE="$HERE/{cfg}"
export TUNE_BANK_PATH="${{TUNE_BANK_PATH:-$HERE/aoe_bank}}"
SOC_VERSION="{soc}"

case "${{1:-}}" in
  dump)
    shift
    [ $# -ge 1 ] || {{ echo "usage: $0 dump SCRIPT.py [args...]" >&2; exit 2; }}
    mkdir -p "$DUMP_DIR"
    exec "${{PYTHON:-python3}}" -c 'import runpy, sys, torch_npu
torch_npu.npu.set_aoe(sys.argv[1])
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")' "$DUMP_DIR" "$@"
    ;;
  tune)
    command -v aoe >/dev/null || {{ echo "aoe not found: source the CANN set_env.sh first" >&2; exit 127; }}
    [ -d "$DUMP_DIR" ] || {{ echo "$DUMP_DIR missing: run '$0 dump' first" >&2; exit 2; }}
    mkdir -p "$TUNE_BANK_PATH"
    aoe --job_type=2 --model_path="$DUMP_DIR" --tune_ops_file="$TUNE_OPS_FILE"
    echo "tuned tiling in $TUNE_BANK_PATH${{SOC_VERSION:+ (soc $SOC_VERSION)}}; run the model with:"
    echo "  export TUNE_BANK_PATH=$TUNE_BANK_PATH"
    ;;
  env)
    echo "export TUNE_BANK_PATH=$TUNE_BANK_PATH"
    ;;
  *)
    echo "usage: $0 dump SCRIPT.py [args...] | tune | env" >&2
    exit 2
    ;;
esac
)SH",
                     fmt::arg("count", ops.size()), fmt::arg("ops", ops_list), fmt::arg("cfg", tune_ops_file),
                     fmt::arg("soc", soc_version));
}

StatusOr<std::vector<std::string>> TuningConfig::Save(const std::string& dir, bool force) const {
  std::vector<std::string> paths;
  const std::string base = dir.empty() ? std::string(".") : dir;
  if (backend == Backend::kAscend) {
    const std::string cfg = base + "/aoe_tune_ops.cfg";
    PYPTO_RETURN_IF_ERROR(WriteArtifactFile(cfg, TuneOpsFileJson(), force));
    paths.push_back(cfg);
    const std::string detail = base + "/aoe_tuning_ops.json";
    PYPTO_RETURN_IF_ERROR(WriteArtifactFile(detail, DetailJson(), force));
    paths.push_back(detail);
    const std::string script = base + "/aoe_tune.sh";
    PYPTO_RETURN_IF_ERROR(WriteArtifactFile(script, ShellScript("aoe_tune_ops.cfg"), force));
    ::chmod(script.c_str(), 0755);
    paths.push_back(script);
  } else {
    const std::string detail = base + "/padded_gemm_shapes.json";
    PYPTO_RETURN_IF_ERROR(WriteArtifactFile(detail, DetailJson(), force));
    paths.push_back(detail);
  }
  return paths;
}

}  // namespace pypto::advisor
