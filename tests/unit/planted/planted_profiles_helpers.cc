#include "unit/planted/planted_profiles.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pypto::testing {
namespace {

constexpr TimeNs kUs = 1000;
// Healthy ops run at this fraction of their roofline (and so the bound pipe
// shows this PMU ratio): above the 0.8 "bound" ratio of msprof-analyze.
constexpr double kHealthyEfficiency = 0.85;
constexpr double kMinKernelUs = 3.0;        // shortest kernel (launch-dominated elementwise)
constexpr double kHealthyGapUs = 0.5;       // device idle between back-to-back kernels (HTA: sub-µs)
constexpr double kLaunchCallUs = 3.0;       // cudaLaunchKernel / Node@launch duration
constexpr double kLaunchLatencyUs = 1.0;    // launch end -> earliest kernel start
constexpr double kHostGapUs = 1.0;          // host idle between ops
constexpr double kViewOpUs = 2.0;           // host ops without a kernel (view, slice, chunk …)

struct Pmu {
  // NaN = not written. Ascend PipeUtilization columns.
  double aic_mac = NAN, aic_mte2 = NAN, aic_fixpipe = NAN, aic_scalar = NAN, aic_mte1 = NAN, aic_mte3 = NAN;
  double aiv_vec = NAN, aiv_mte2 = NAN, aiv_mte3 = NAN, aiv_scalar = NAN;
};

struct OpSpec {
  std::string host;          // aten op name
  std::string dims;          // Kineto Input Dims
  std::string types;         // Kineto Input type
  bool has_kernel = true;
  std::string kernel;        // CUDA kernel name / Ascend task name
  std::string op_type;       // Ascend OP Type
  std::string core = "AI_VECTOR_CORE";
  std::string shapes;        // Ascend Input Shapes
  std::string dtypes;        // Ascend Input Data Types
  int block_dim = 40;
  int mix_block_dim = -1;
  double dur_us = kMinKernelUs;
  double gap_us = kHealthyGapUs;
  Pmu pmu;
  DeviceTaskKind kind = DeviceTaskKind::kKernel;
};

std::string Join(const std::vector<int64_t>& dims, const char* sep) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(dims[i]);
  }
  return s;
}

class Builder {
 public:
  explicit Builder(const PlantKnobs& k) : k_(k), ascend_(k.flavor == PlantedFlavor::kAscend) {
    bw_ = ascend_ ? 1.6e12 : 3.35e12;       // 910B3 1.6 TB/s; H100 SXM 3.35 TB/s (data/hardware)
    peak_ = ascend_ ? 294.9e12 : 989.4e12;  // BF16 matrix peaks
    thread_ = p_.TrackFor("100", "100", TrackKind::kHostThread);
    p_.tracks.name[thread_] = p_.Intern("python main thread");
    if (ascend_) {
      stream_ = p_.DeviceTrack("NPU 0", "Stream 2", 0, 2);
      p_.tracks.name[stream_] = p_.Intern("Stream 2");
      DeviceRow dev;
      dev.index = 0;
      dev.kind = DeviceKind::kNpu;
      dev.name = p_.Intern("Ascend910B3");
      p_.devices.rows.push_back(dev);
      DeviceAttr("ai_core_num", 20);
      DeviceAttr("aiv_num", 40);
      DeviceAttr("aic_frequency", 1800);
      p_.metadata["format"] = "planted-ascend";
    } else {
      stream_ = p_.DeviceTrack("0", "7", 0, 7);
      DeviceRow dev;
      dev.index = 0;
      dev.kind = DeviceKind::kCuda;
      dev.name = p_.Intern("NVIDIA H100 80GB HBM3");
      p_.devices.rows.push_back(dev);
      DeviceAttr("numSms", 132);
      DeviceAttr("computeMajor", 9);
      p_.metadata["format"] = "planted-kineto";
    }
    p_.metadata["clock"] = "relative";
    host_t_ = 1'000'000;  // 1 ms
    dev_t_ = host_t_;
    f_.first_ts = host_t_;
  }

  Profile Build(PlantedFacts* facts) {
    int step_no = 0;
    if (k_.prefill_step) BuildStep(step_no++, /*prefill=*/true, k_.prompt_len);
    for (int s = 0; s < k_.decode_steps; ++s) BuildStep(step_no++, false, k_.prompt_len + s);
    f_.steps = step_no;
    if (facts) *facts = f_;
    return std::move(p_);
  }

 private:
  void DeviceAttr(const char* key, double v) {
    std::string text = std::to_string(static_cast<int64_t>(v));
    p_.attributes.Add(OwnerKind::kDevice, 0, p_.Intern(key), p_.Intern(text), v);
  }
  void TaskAttr(uint32_t task, const char* key, double v) {
    if (std::isnan(v)) return;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3f", v);
    p_.attributes.Add(OwnerKind::kDeviceTask, task, p_.Intern(key), p_.Intern(buf), v);
  }
  void TaskText(uint32_t task, const char* key, std::string_view text) {
    p_.attributes.Add(OwnerKind::kDeviceTask, task, p_.Intern(key), p_.Intern(text), NAN);
  }

  uint32_t HostOp(std::string_view name, TimeNs ts, TimeNs dur, HostOpKind kind, std::string_view category) {
    HostOpRow row;
    row.name = p_.Intern(name);
    row.category = p_.Intern(category);
    row.kind = kind;
    row.track = thread_;
    row.ts = ts;
    row.dur = dur;
    return p_.host_ops.Add(row);
  }

  // ---------------------------------------------------------------- timing helpers
  double MemUs(double bytes) const { return bytes / (bw_ * kHealthyEfficiency) * 1e6; }
  double FlopUs(double flops) const { return flops / (peak_ * kHealthyEfficiency) * 1e6; }

  // Emits one op: host op (+ launch call, + online compile) and its kernel.
  // Returns the task row or UINT32_MAX.
  uint32_t Emit(const OpSpec& s) {
    const bool compile = ascend_ && s.has_kernel && compiled_in_step_ < k_.compile_calls_per_step;
    const TimeNs op_ts = host_t_;
    if (!s.has_kernel) {
      uint32_t op = HostOp(s.host, op_ts, TimeNs(kViewOpUs * kUs), HostOpKind::kOperator, "cpu_op");
      SetDims(op, s);
      host_t_ = op_ts + TimeNs((kViewOpUs + kHostGapUs) * kUs);
      return UINT32_MAX;
    }
    const double compile_us = compile ? k_.compile_us + 10.0 : 0.0;
    const double op_us = k_.host_op_us + k_.host_overhead_us + compile_us;
    const TimeNs op_dur = TimeNs(op_us * kUs);
    uint32_t op = HostOp(s.host, op_ts, op_dur, HostOpKind::kOperator, "cpu_op");
    SetDims(op, s);
    const int64_t corr = next_corr_++;
    const int64_t ext = next_ext_++;
    p_.host_ops.external_id.set(op, ext);
    // The launch call sits at the end of the op; online compile just before it.
    const TimeNs launch_ts = op_ts + op_dur - TimeNs((kLaunchCallUs + 1.0) * kUs);
    if (compile) {
      const TimeNs c_ts = launch_ts - TimeNs((k_.compile_us + 6.0) * kUs);
      uint32_t ce = HostOp("AscendCL@aclopCompileAndExecute", c_ts, TimeNs((k_.compile_us + 5.0) * kUs),
                           HostOpKind::kRuntime, "AscendCL");
      (void)ce;
      HostOp("AscendCL@opCompile", c_ts + kUs, TimeNs(k_.compile_us * kUs), HostOpKind::kRuntime, "AscendCL");
      ++compiled_in_step_;
      ++f_.compile_calls;
    }
    uint32_t launch = HostOp(ascend_ ? "Node@launch" : "cudaLaunchKernel", launch_ts, TimeNs(kLaunchCallUs * kUs),
                             HostOpKind::kRuntime, ascend_ ? "Node" : "cuda_runtime");
    p_.host_ops.correlation.set(launch, corr);
    p_.host_ops.external_id.set(launch, ext);

    const TimeNs earliest = launch_ts + TimeNs((kLaunchCallUs + kLaunchLatencyUs) * kUs);
    const TimeNs start = std::max(dev_t_ + TimeNs(s.gap_us * kUs), earliest);
    if (pending_sync_idle_from_ != kNoTime) {
      f_.sync_idle_ns += start - pending_sync_idle_from_;
      pending_sync_idle_from_ = kNoTime;
    }
    DeviceTaskRow row;
    row.name = p_.Intern(s.kernel);
    row.kind = s.kind;
    row.track = stream_;
    row.ts = start;
    row.dur = std::max<TimeNs>(TimeNs(s.dur_us * kUs), kUs);
    row.correlation = corr;
    row.external_id = ext;
    if (ascend_) {
      row.core_type = p_.Intern(s.core);
      row.category = row.core_type;
      row.op_type = p_.Intern(s.op_type);
      row.block_dim = s.block_dim;
      row.mix_block_dim = s.mix_block_dim;
      if (!s.shapes.empty()) row.input_shapes = p_.Intern(s.shapes);
      if (!s.dtypes.empty()) row.input_types = p_.Intern(s.dtypes);
      row.input_formats = p_.Intern("FORMAT_ND");
    } else {
      row.category = p_.Intern(s.kind == DeviceTaskKind::kMemcpy ? "gpu_memcpy" : "kernel");
      row.grid[0] = 132;
      row.grid[1] = row.grid[2] = 1;
      row.block[0] = 256;
      row.block[1] = row.block[2] = 1;
    }
    uint32_t task = p_.device_tasks.Add(row);
    dev_t_ = start + row.dur;
    step_dev_end_ = std::max(step_dev_end_, dev_t_);
    ++f_.kernels;
    if (ascend_) {
      TaskAttr(task, "Step Id", step_no_);
      TaskText(task, "OP State", (compile || k_.all_ops_dynamic) ? "dynamic" : "static");
      const Pmu& m = s.pmu;
      TaskAttr(task, "aic_mac_ratio", m.aic_mac);
      TaskAttr(task, "aic_scalar_ratio", m.aic_scalar);
      TaskAttr(task, "aic_mte1_ratio", m.aic_mte1);
      TaskAttr(task, "aic_mte2_ratio", m.aic_mte2);
      TaskAttr(task, "aic_fixpipe_ratio", m.aic_fixpipe);
      TaskAttr(task, "aic_mte3_ratio", m.aic_mte3);
      TaskAttr(task, "aiv_vec_ratio", m.aiv_vec);
      TaskAttr(task, "aiv_scalar_ratio", m.aiv_scalar);
      TaskAttr(task, "aiv_mte2_ratio", m.aiv_mte2);
      TaskAttr(task, "aiv_mte3_ratio", m.aiv_mte3);
    }
    host_t_ = op_ts + op_dur + TimeNs(kHostGapUs * kUs);
    return task;
  }

  void SetDims(uint32_t op, const OpSpec& s) {
    if (!s.dims.empty()) p_.host_ops.input_dims[op] = p_.Intern(s.dims);
    if (!s.types.empty()) p_.host_ops.input_types[op] = p_.Intern(s.types);
  }

  // ---------------------------------------------------------------- op specs
  std::string KType(int n) const {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += std::string(i ? ", " : "") + "\"c10::BFloat16\"";
    return s + "]";
  }
  std::string AType(int n) const {
    std::string s;
    for (int i = 0; i < n; ++i) s += std::string(i ? ";" : "") + "DT_BF16";
    return s;
  }

  // Vector op over `elements` bf16 elements read `reads` times + written once.
  OpSpec Vector(std::string host, std::string op_type, std::string cuda_kernel, std::vector<int64_t> dims,
                int inputs = 1) {
    OpSpec s;
    s.host = std::move(host);
    std::string kd = "[";
    std::string ad;
    for (int i = 0; i < inputs; ++i) {
      kd += std::string(i ? ", " : "") + "[" + Join(dims, ", ") + "]";
      ad += std::string(i ? ";" : "") + Join(dims, ",");
    }
    s.dims = kd + "]";
    s.types = KType(inputs);
    s.shapes = ad;
    s.dtypes = AType(inputs);
    double elements = 1;
    for (int64_t d : dims) elements *= double(d);
    const double bytes = elements * 2.0 * (inputs + 1);
    s.dur_us = std::max(kMinKernelUs, MemUs(bytes));
    s.op_type = std::move(op_type);
    s.kernel = ascend_ ? "aclnn" + s.op_type + "_" + s.op_type + "AiCore_" + s.op_type : std::move(cuda_kernel);
    const double mem_share = MemUs(bytes) * kHealthyEfficiency / s.dur_us;
    s.pmu.aiv_mte2 = std::min(0.9, mem_share * 0.9 + 0.05);
    s.pmu.aiv_mte3 = std::min(0.6, mem_share * 0.5 + 0.05);
    s.pmu.aiv_vec = 0.3;
    s.pmu.aiv_scalar = 0.1;
    if (s.dur_us > 20.0) s.pmu.aiv_mte2 = kHealthyEfficiency;  // long vector ops stream at the bound pipe
    return s;
  }

  // GEMM [m, k] x [k, n] (weights as the second input, Kineto aten::mm).
  OpSpec Gemm(int64_t m, int64_t n, int64_t k) {
    OpSpec s;
    s.host = "aten::mm";
    s.dims = "[[" + std::to_string(m) + ", " + std::to_string(k) + "], [" + std::to_string(k) + ", " +
             std::to_string(n) + "]]";
    s.types = KType(2);
    s.shapes = std::to_string(m) + "," + std::to_string(k) + ";" + std::to_string(k) + "," + std::to_string(n);
    s.dtypes = AType(2);
    s.op_type = "MatMulV2";
    s.core = "AI_CORE";
    s.block_dim = 20;
    s.kernel = ascend_ ? "aclnnMm_MatMulCommon_MatMulV2"
                       : "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                         "segment_k_off_kernel__5x_cublas";
    const double flops = 2.0 * double(m) * double(n) * double(k);
    const double bytes = 2.0 * (double(m) * k + double(k) * n + double(m) * n);
    const double fu = FlopUs(flops), mu = MemUs(bytes);
    s.dur_us = std::max({kMinKernelUs, fu, mu});
    s.pmu.aic_mac = fu * kHealthyEfficiency / s.dur_us;
    s.pmu.aic_mte2 = mu * kHealthyEfficiency / s.dur_us;
    s.pmu.aic_mte1 = 0.3;
    s.pmu.aic_fixpipe = 0.1;
    s.pmu.aic_scalar = 0.05;
    s.pmu.aic_mte3 = 0.0;
    return s;
  }

  void Norm(int64_t tokens) {
    const std::vector<int64_t> d = {tokens, k_.hidden};
    if (k_.unfused_norm_gap_us <= 0) {
      OpSpec s = Vector("aten::rms_norm", "RmsNorm", "void vllm::rms_norm_kernel<c10::BFloat16>", d, 1);
      Emit(s);
      return;
    }
    struct Part { const char* host; const char* op_type; const char* cuda; };
    static const Part kChain[] = {
        {"aten::to", "Cast", "void at::native::unrolled_elementwise_kernel<at::native::copy_kernel>"},
        {"aten::pow", "Pow", "void at::native::vectorized_elementwise_kernel<4, at::native::pow_tensor_scalar_kernel>"},
        {"aten::mean", "ReduceMeanD", "void at::native::reduce_kernel<512, 1, at::native::MeanOps<float>>"},
        {"aten::add", "Add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>>"},
        {"aten::rsqrt", "Rsqrt", "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda>"},
        {"aten::mul", "Mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<MulFunctor>>"},
        {"aten::to", "Cast", "void at::native::unrolled_elementwise_kernel<at::native::copy_kernel>"},
        {"aten::mul", "Mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<MulFunctor>>"},
    };
    for (const Part& part : kChain) {
      OpSpec s = Vector(part.host, part.op_type, part.cuda, d, 1);
      s.dur_us = kMinKernelUs;
      s.gap_us = k_.unfused_norm_gap_us;
      Emit(s);
    }
  }

  void Rope(int64_t tokens) {
    const std::vector<int64_t> q = {tokens, int64_t(k_.heads), int64_t(k_.head_dim)};
    if (!k_.unfused_rope) {
      Emit(Vector("npu::npu_rotary_mul", "RotaryMul", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>", q, 3));
      return;
    }
    for (int t = 0; t < 2; ++t) {  // q then k
      std::vector<int64_t> d = t == 0 ? q : std::vector<int64_t>{tokens, int64_t(k_.kv_heads), int64_t(k_.head_dim)};
      auto part = [&](const char* host, const char* op_type, bool kernel) {
        OpSpec s = Vector(host, op_type, std::string("void at::native::vectorized_elementwise_kernel<4, ") + op_type + ">", d, 2);
        s.has_kernel = kernel;
        s.dur_us = kMinKernelUs;
        s.gap_us = k_.unfused_gap_us;
        Emit(s);
      };
      part("aten::mul", "Mul", true);
      part("aten::slice", "StridedSliceD", false);
      part("aten::slice", "StridedSliceD", false);
      part("aten::neg", "Neg", true);
      part("aten::cat", "ConcatD", true);
      part("aten::mul", "Mul", true);
      part("aten::add", "Add", true);
    }
  }

  double KvBytes(int64_t kv_len) const {
    return 2.0 /*K,V*/ * double(k_.batch) * double(kv_len) * k_.kv_heads * k_.head_dim * 2.0;
  }

  void KvCache(int64_t tokens, int64_t kv_len) {
    const int64_t kvh = k_.kv_heads, hd = k_.head_dim;
    if (!k_.kv_cache_cat) {
      OpSpec s = Vector(ascend_ ? "npu::npu_scatter_nd_update_" : "_C_cache_ops::reshape_and_cache", "ScatterNdUpdate",
                        "void vllm::reshape_and_cache_kernel<__nv_bfloat16, __nv_bfloat16>", {tokens, kvh, hd}, 2);
      Emit(s);
      return;
    }
    const int64_t past = kv_len - 1;
    for (int t = 0; t < 2; ++t) {  // K and V
      OpSpec cat;
      cat.host = "aten::cat";
      cat.dims = "[[[" + Join({k_.batch, kvh, past, hd}, ", ") + "], [" + Join({k_.batch, kvh, 1, hd}, ", ") + "]], []]";
      cat.types = "[\"TensorList\", \"Scalar\"]";
      cat.shapes = Join({k_.batch, kvh, past, hd}, ",") + ";" + Join({k_.batch, kvh, 1, hd}, ",");
      cat.dtypes = AType(2);
      cat.op_type = "ConcatD";
      cat.kernel = ascend_ ? "aclnnCat_ConcatDAiCore_ConcatD"
                           : "void at::native::(anonymous namespace)::CatArrayBatchedCopy<c10::BFloat16, unsigned int, 4, 64, 64>";
      const double cache = KvBytes(kv_len) / 2.0;
      cat.dur_us = std::max(kMinKernelUs, MemUs(2.0 * cache));
      cat.pmu.aiv_mte2 = kHealthyEfficiency;
      cat.pmu.aiv_mte3 = 0.8;
      cat.pmu.aiv_vec = 0.05;
      Emit(cat);
      OpSpec tr;
      tr.host = "aten::transpose";
      tr.has_kernel = false;
      tr.dims = "[[" + Join({k_.batch, kvh, kv_len, hd}, ", ") + "], [], []]";
      Emit(tr);
      OpSpec cp = cat;
      cp.host = "aten::contiguous";
      cp.dims = "[[" + Join({k_.batch, kv_len, kvh, hd}, ", ") + "], []]";
      cp.types = "[\"c10::BFloat16\", \"Scalar\"]";
      cp.shapes = Join({k_.batch, kv_len, kvh, hd}, ",");
      cp.dtypes = AType(1);
      cp.op_type = "Transpose";
      cp.kernel = ascend_ ? "aclnnInplaceCopy_TransposeAiCore_Transpose"
                          : "void at::native::elementwise_kernel<128, 4, at::native::direct_copy_kernel_cuda>";
      Emit(cp);
    }
  }

  void Attention(int64_t tokens, int64_t q_len, int64_t kv_len, bool prefill) {
    const int64_t b = k_.batch, h = k_.heads, kvh = k_.kv_heads, d = k_.head_dim;
    // Planted memory-bound decode attention: a padded (max-length, not paged)
    // cache read `attention_slowdown` times longer than the live KV length.
    if (!prefill && k_.attention_slowdown > 1.0) kv_len = int64_t(double(kv_len) * k_.attention_slowdown);
    const double bytes = 2.0 * (double(b) * q_len * h * d * 2) + KvBytes(kv_len);  // Q + O + K + V
    const double flops = 4.0 * double(b) * h * double(q_len) * double(kv_len) * d;
    if (k_.unfused_attention && !prefill) {
      auto part = [&](const char* host, const char* op_type, const char* cuda, bool kernel, double dur, const char* core) {
        OpSpec s = Vector(host, op_type, cuda, {b, h, q_len, kv_len}, 1);
        s.has_kernel = kernel;
        s.core = core;
        s.dur_us = dur;
        s.gap_us = k_.unfused_gap_us;
        Emit(s);
      };
      const double bmm_us = std::max(kMinKernelUs, MemUs(KvBytes(kv_len) / 2.0));
      part("aten::transpose", "Transpose", "", false, 0, "AI_VECTOR_CORE");
      part("aten::matmul", "BatchMatMulV2", "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_stages_64x5_tn", true, bmm_us, "AI_CORE");
      part("aten::mul", "Mul", "void at::native::vectorized_elementwise_kernel<4, MulFunctor>", true, kMinKernelUs, "AI_VECTOR_CORE");
      part("aten::add", "Add", "void at::native::vectorized_elementwise_kernel<4, AddFunctor>", true, kMinKernelUs, "AI_VECTOR_CORE");
      part("aten::softmax", "SoftmaxV2", "void at::native::cunn_SoftMaxForward<8, c10::BFloat16>", true, kMinKernelUs, "AI_VECTOR_CORE");
      part("aten::dropout", "DropOutDoMask", "", false, 0, "AI_VECTOR_CORE");
      part("aten::matmul", "BatchMatMulV2", "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_stages_64x5_nn", true, bmm_us, "AI_CORE");
      return;
    }
    OpSpec s;
    const std::string q = Join({b, q_len, h * d}, ",");
    const std::string kv = Join({b, kv_len, kvh * d}, ",");
    s.shapes = q + ";" + kv + ";" + kv;
    s.dtypes = AType(3);
    s.types = KType(3);
    s.core = "MIX_AIC";
    s.block_dim = 20;
    s.mix_block_dim = 40;
    if (prefill) {
      s.host = ascend_ ? "npu::npu_fusion_attention" : "aten::_scaled_dot_product_flash_attention";
      s.op_type = "FlashAttentionScore";
      s.kernel = ascend_ ? "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore"
                         : "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, true, false, false, false, false, true, false>(Flash_fwd_params)";
    } else {
      s.host = ascend_ ? "npu::npu_incre_flash_attention" : "aten::_scaled_dot_product_flash_attention";
      s.op_type = "IncreFlashAttention";
      s.kernel = ascend_ ? "aclnnIncreFlashAttentionV4_IncreFlashAttention_IncreFlashAttention"
                         : "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, false, false, false, false, true, false, false>(Flash_fwd_params)";
    }
    s.dims = "[[" + Join({b, h, q_len, d}, ", ") + "], [" + Join({b, kvh, kv_len, d}, ", ") + "], [" +
             Join({b, kvh, kv_len, d}, ", ") + "]]";
    const double fu = FlopUs(flops), mu = MemUs(bytes);
    s.dur_us = std::max({kMinKernelUs, fu, mu});
    s.pmu.aic_mac = fu * kHealthyEfficiency / s.dur_us;
    s.pmu.aic_mte2 = prefill ? 0.5 : kHealthyEfficiency * 0.8;  // decode healthy: streaming but not saturated
    s.pmu.aiv_vec = prefill ? kHealthyEfficiency : 0.5;
    s.pmu.aiv_mte2 = prefill ? 0.3 : 0.5;
    s.pmu.aic_fixpipe = 0.1;
    if (!prefill && k_.attention_slowdown > 1.0) {
      s.pmu.aic_mte2 = 0.95;
      s.pmu.aiv_mte2 = 0.9;
      s.pmu.aiv_vec = 0.5 / k_.attention_slowdown;
    }
    Emit(s);
  }

  void Swiglu(int64_t tokens) {
    if (!k_.unfused_swiglu) {
      OpSpec s = Vector("npu::npu_swiglu", "SwiGlu", "void vllm::act_and_mul_kernel<c10::BFloat16, silu_kernel>",
                        {tokens, 2LL * k_.ffn}, 1);
      Emit(s);
      return;
    }
    const std::vector<int64_t> half = {tokens, int64_t(k_.ffn)};
    OpSpec chunk = Vector("aten::chunk", "Split", "", {tokens, 2LL * k_.ffn}, 1);
    chunk.has_kernel = false;
    Emit(chunk);
    OpSpec silu = Vector("aten::silu", "Swish", "void at::native::vectorized_elementwise_kernel<4, silu_kernel>", half, 1);
    silu.gap_us = k_.unfused_gap_us;
    Emit(silu);
    OpSpec mul = Vector("aten::mul", "Mul", "void at::native::vectorized_elementwise_kernel<4, MulFunctor>", half, 2);
    mul.gap_us = k_.unfused_gap_us;
    Emit(mul);
  }

  void Sync() {
    // .item(): aten::item -> aten::_local_scalar_dense -> D2H copy + stream sync.
    const TimeNs item_ts = host_t_;
    const TimeNs sync_ts = item_ts + 2 * kUs;
    const TimeNs dev_done = std::max(dev_t_, sync_ts + 3 * kUs);
    const TimeNs copy_start = dev_done + kUs;
    const TimeNs copy_end = copy_start + 2 * kUs;
    const TimeNs sync_end = copy_end + 2 * kUs;
    const TimeNs item_end = sync_end + kUs;
    HostOp("aten::item", item_ts, item_end - item_ts, HostOpKind::kOperator, "cpu_op");
    HostOp("aten::_local_scalar_dense", item_ts + kUs / 2, item_end - item_ts - kUs, HostOpKind::kOperator, "cpu_op");
    const int64_t corr = next_corr_++;
    DeviceTaskRow copy;
    copy.kind = DeviceTaskKind::kMemcpy;
    copy.track = stream_;
    copy.ts = copy_start;
    copy.dur = copy_end - copy_start;
    copy.correlation = corr;
    copy.bytes = 8 * k_.batch;
    // Both runtimes: the D2H copy is queued, then the host waits for the stream.
    uint32_t m = HostOp(ascend_ ? "AscendCL@aclrtMemcpyAsync" : "cudaMemcpyAsync", sync_ts, 3 * kUs,
                        HostOpKind::kRuntime, ascend_ ? "AscendCL" : "cuda_runtime");
    p_.host_ops.correlation.set(m, corr);
    const int64_t sc = next_corr_++;
    uint32_t s = HostOp(ascend_ ? "AscendCL@aclrtSynchronizeStream" : "cudaStreamSynchronize", sync_ts + 3 * kUs,
                        sync_end - sync_ts - 3 * kUs, HostOpKind::kRuntime, ascend_ ? "AscendCL" : "cuda_runtime");
    p_.host_ops.correlation.set(s, sc);
    if (ascend_) {
      copy.name = p_.Intern("MEMCPY_ASYNC");
      copy.category = p_.Intern("MEMCPY_ASYNC");
    } else {
      copy.name = p_.Intern("Memcpy DtoH (Device -> Pageable)");
      copy.category = p_.Intern("gpu_memcpy");
      DeviceTaskRow sync;
      sync.name = p_.Intern("Stream Sync");
      sync.category = p_.Intern("cuda_sync");
      sync.kind = DeviceTaskKind::kSync;
      sync.track = stream_;
      sync.ts = copy_end;
      sync.dur = sync_end - copy_end;
      sync.correlation = sc;
      p_.device_tasks.Add(sync);
    }
    p_.device_tasks.Add(copy);
    dev_t_ = copy_end;
    step_dev_end_ = std::max(step_dev_end_, dev_t_);
    ++f_.sync_calls;
    pending_sync_idle_from_ = copy_end;
    host_t_ = item_end + TimeNs(k_.sync_host_work_us * kUs);
  }

  void Layer(int layer, int64_t tokens, int64_t q_len, int64_t kv_len, bool prefill) {
    const int64_t qkv_n = int64_t(k_.heads + 2 * k_.kv_heads) * k_.head_dim;
    Norm(tokens);
    Emit(Gemm(tokens, qkv_n, k_.hidden));
    Rope(tokens);
    KvCache(tokens, kv_len);
    if (ascend_ && k_.no_pipe_us > 0) {
      OpSpec t = Vector("aten::repeat", "Tile", "", {k_.batch, k_.kv_heads, kv_len, k_.head_dim}, 1);
      t.dur_us = k_.no_pipe_us;
      t.pmu.aiv_vec = 0.2;
      t.pmu.aiv_mte2 = 0.45;
      t.pmu.aiv_mte3 = 0.4;
      t.pmu.aiv_scalar = 0.3;
      Emit(t);
      ++f_.no_pipe_tasks;
    }
    if (ascend_ && k_.aicpu_us > 0) {
      OpSpec a;
      a.host = "aten::nonzero";
      a.dims = "[[" + Join({k_.batch, kv_len}, ", ") + "]]";
      a.types = "[\"long int\"]";
      a.shapes = Join({k_.batch, kv_len}, ",");
      a.dtypes = k_.aicpu_dtype;
      a.op_type = k_.aicpu_op_type;
      a.core = "AI_CPU";
      a.block_dim = 1;
      a.kernel = k_.aicpu_op_type;
      a.dur_us = k_.aicpu_us;
      Emit(a);
      ++f_.aicpu_tasks;
    }
    Attention(tokens, q_len, kv_len, prefill);
    OpSpec o = Gemm(tokens, k_.hidden, k_.hidden);
    if (k_.bad_matmul_slowdown > 1.0) {
      o = Gemm(tokens, k_.hidden - 7, k_.hidden - 7);
      o.dur_us *= k_.bad_matmul_slowdown;
      o.pmu.aic_mac /= k_.bad_matmul_slowdown;
      o.pmu.aic_mte2 /= k_.bad_matmul_slowdown;
      o.block_dim = 13;
    }
    Emit(o);
    Emit(Vector("aten::add", "Add", "void at::native::vectorized_elementwise_kernel<4, AddFunctor>", {tokens, k_.hidden}, 2));
    Norm(tokens);
    Emit(Gemm(tokens, 2LL * k_.ffn, k_.hidden));
    Swiglu(tokens);
    Emit(Gemm(tokens, k_.hidden, k_.ffn));
    Emit(Vector("aten::add", "Add", "void at::native::vectorized_elementwise_kernel<4, AddFunctor>", {tokens, k_.hidden}, 2));
    // .item() syncs spread over the step: after layers 0, L/n, 2L/n, …
    if (k_.syncs_per_step > 0) {
      const int n = std::min(k_.syncs_per_step, k_.layers);
      for (int i = 0; i < n; ++i)
        if (layer == (i * k_.layers) / n) Sync();
      if (layer == k_.layers - 1)
        for (int i = n; i < k_.syncs_per_step; ++i) Sync();
    }
  }

  void BuildStep(int number, bool prefill, int64_t kv_len) {
    step_no_ = number;
    compiled_in_step_ = 0;
    const TimeNs step_ts = std::max(host_t_, dev_t_) + 5 * kUs;
    host_t_ = step_ts + 2 * kUs;
    step_dev_end_ = step_ts;
    const int64_t q_len = prefill ? k_.prompt_len : 1;
    const int64_t tokens = int64_t(k_.batch) * q_len;
    const size_t first_task = p_.device_tasks.size();
    const uint32_t ann = HostOp("ProfilerStep#" + std::to_string(number), step_ts, 0, HostOpKind::kUserAnnotation,
                                "user_annotation");
    // Prologue: embedding.
    OpSpec emb = Vector("aten::embedding", "GatherV2", "void at::native::indexSelectLargeIndex<c10::BFloat16, long>",
                        {tokens, k_.hidden}, 1);
    Emit(emb);
    for (int l = 0; l < k_.layers; ++l) Layer(l, tokens, q_len, prefill ? k_.prompt_len : kv_len + 1, prefill);
    Norm(tokens);
    OpSpec head = Gemm(prefill ? k_.batch : tokens, k_.vocab, k_.hidden);
    Emit(head);
    Emit(Vector("aten::argmax", "ArgMaxV2", "void at::native::reduce_kernel<512, 1, ArgMaxOps<float>>",
                {prefill ? k_.batch : tokens, k_.vocab}, 1));
    const TimeNs host_end = host_t_;
    p_.host_ops.dur[ann] = host_end - step_ts;
    const TimeNs step_end = std::max(host_end, step_dev_end_);
    f_.step_start.push_back(step_ts);
    f_.step_end.push_back(step_end);
    if (ascend_) {
      // step_trace_time row: Computing = busy union of the step's tasks, Free = rest.
      std::vector<std::pair<TimeNs, TimeNs>> iv;
      for (size_t t = first_task; t < p_.device_tasks.size(); ++t)
        iv.push_back({p_.device_tasks.ts[t], p_.device_tasks.ts[t] + p_.device_tasks.dur[t]});
      std::sort(iv.begin(), iv.end());
      TimeNs busy = 0, cur_s = 0, cur_e = -1;
      for (auto [s, e] : iv) {
        if (s > cur_e) {
          if (cur_e > cur_s) busy += cur_e - cur_s;
          cur_s = s;
          cur_e = e;
        } else {
          cur_e = std::max(cur_e, e);
        }
      }
      if (cur_e > cur_s) busy += cur_e - cur_s;
      StepRow row;
      row.number = number;
      row.name = p_.Intern("Step " + std::to_string(number));
      row.source = p_.Intern("step_trace_time.csv");
      row.device = 0;
      row.ts = step_ts;
      row.dur = step_end - step_ts;
      row.computing = busy;
      row.communication_not_overlapped = 0;
      row.overlapped = 0;
      row.communication = 0;
      row.free = row.dur - busy;
      row.stage = 0;
      row.bubble = 0;
      p_.steps.rows.push_back(row);
    }
    host_t_ = step_end;
  }

  const PlantKnobs& k_;
  bool ascend_;
  double bw_ = 0, peak_ = 0;
  Profile p_;
  PlantedFacts f_;
  uint32_t thread_ = 0, stream_ = 0;
  TimeNs host_t_ = 0, dev_t_ = 0, step_dev_end_ = 0;
  TimeNs pending_sync_idle_from_ = kNoTime;
  int64_t next_corr_ = 1, next_ext_ = 1;
  int step_no_ = 0;
  int compiled_in_step_ = 0;
  static constexpr TimeNs kNoTime = INT64_MIN;
};

}  // namespace

Profile BuildPlantedProfile(const PlantKnobs& knobs, PlantedFacts* facts) {
  Builder b(knobs);
  PlantedFacts f;
  Profile p = b.Build(&f);
  f.matmul_op = knobs.flavor == PlantedFlavor::kAscend
                    ? "MatMulV2"
                    : "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                      "segment_k_off_kernel__5x_cublas";
  f.attention_op = knobs.flavor == PlantedFlavor::kAscend
                       ? "IncreFlashAttention"
                       : "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, "
                         "false, cutlass::bfloat16_t>, false, false, false, false, true, false, false>(Flash_fwd_params)";
  if (facts) *facts = f;
  return p;
}

}  // namespace pypto::testing
