// Op classes of real names taken from the fixtures (folder named per case).
#include <gtest/gtest.h>

#include "analysis/op_class.h"
#include "graph/call_graph.h"
#include "importers/detect.h"

namespace pypto {
namespace {

struct NameCase {
  const char* name;
  OpClass cls;
  const char* sub;
};

TEST(OpClass, RealNames) {
  const NameCase cases[] = {
      // tracelens_h100_qwen1.5_0.5b_hf_inference (Kineto, CUDA)
      {"aten::linear", OpClass::kMatmul, "gemm"},
      {"aten::addmm", OpClass::kMatmul, "gemm"},
      {"aten::bmm", OpClass::kMatmul, "bmm"},
      {"aten::_scaled_dot_product_flash_attention", OpClass::kAttention, "sdpa"},
      {"aten::pow", OpClass::kElementwise, "elementwise"},
      {"aten::rsqrt", OpClass::kElementwise, "elementwise"},
      {"aten::mean", OpClass::kReduction, "reduction"},
      {"aten::silu", OpClass::kActivation, "silu"},
      {"aten::embedding", OpClass::kEmbedding, "embedding"},
      {"aten::cat", OpClass::kCopy, "cat"},
      {"aten::contiguous", OpClass::kCopy, "copy"},
      {"aten::transpose", OpClass::kCopy, "view"},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
       OpClass::kMatmul, "gemm"},
      {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
       "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
       "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
       OpClass::kAttention, "flash"},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, "
       "unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, ...)",
       OpClass::kCopy, "cat"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)",
       OpClass::kActivation, "silu"},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
       "unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
       "unsigned int, c10::BFloat16, 4>)",
       OpClass::kReduction, "reduction"},
      // hta_trace_diff_control_a100_2022 / hta_nccl_2rank_a100_2024 (A100)
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)",
       OpClass::kMatmul, "gemm"},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", OpClass::kCommunication, "collective"},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, "
       "float const*, float const*, float*, float*, float*)",
       OpClass::kNorm, "layer_norm"},
      {"aten::native_layer_norm", OpClass::kNorm, "layer_norm"},
      {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn",
       OpClass::kMatmul, "conv"},
      {"c10d::allreduce_", OpClass::kCommunication, "collective"},
      // tracelens_mi300x_sglang_qwen3_8b_decode (ROCm)
      {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0",
       OpClass::kMatmul, "gemm"},
      {"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_S4_S4_diiiii",
       OpClass::kNorm, "add_rms_norm"},
      {"void rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)",
       OpClass::kRope, "rope"},
      {"void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)",
       OpClass::kCopy, "kv_cache_update"},
      {"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16>(...)", OpClass::kAttention, "paged"},
      {"_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS6_i",
       OpClass::kActivation, "swiglu"},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(...)",
       OpClass::kSampling, "sampling"},
      // tracelens_mi300x_vllm_decode_cudagraph (ROCm, graph replay)
      {"void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>(...)",
       OpClass::kCopy, "kv_cache_update"},
      {"kernel_unified_attention_2d", OpClass::kAttention, "flash"},
      {"_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bfDF16b",
       OpClass::kNorm, "rms_norm"},
      {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", OpClass::kMatmul, "grouped"},
      // pta_level2_llm_cann83 (Ascend kernel_details OP Type and Name)
      {"MatMulV3", OpClass::kMatmul, "gemm"},
      {"FlashAttentionScore", OpClass::kAttention, "flash"},
      {"FlashAttentionScoreGrad", OpClass::kAttention, "flash_grad"},
      {"RmsNorm", OpClass::kNorm, "rms_norm"},
      {"RotaryPositionEmbedding", OpClass::kRope, "rope"},
      {"SwiGlu", OpClass::kActivation, "swiglu"},
      {"Cast", OpClass::kCopy, "cast"},
      {"ConcatD", OpClass::kCopy, "cat"},
      {"TensorMove", OpClass::kCopy, "copy"},
      {"hcom_allReduce__170_1_1", OpClass::kCommunication, "collective"},
      {"aclnnMatmul_MatMulV3Common_MatMulV3", OpClass::kMatmul, "gemm"},
      {"aclnnCat_TensorMoveAiCore_TensorMove", OpClass::kCopy, "copy"},
      // pta_trace_view_2024 (task named after its aclnn API, last segment = op type)
      {"aclnnMm_CastAiCore_Cast", OpClass::kCopy, "cast"},
      {"aclnnMm_MatMulCommon_MatMulV2", OpClass::kMatmul, "gemm"},
      {"aclnnInplaceAdd", OpClass::kElementwise, "elementwise"},
      // pta_level1_alexnet_cann8
      {"TransData", OpClass::kCopy, "transpose"},
      {"TopKV2", OpClass::kSampling, "sampling"},
      // names from the brief / CANN docs (not in fixtures)
      {"IncreFlashAttention", OpClass::kAttention, "decode"},
      {"PagedAttention", OpClass::kAttention, "paged"},
      {"FusedInferAttentionScore", OpClass::kAttention, "fia"},
      {"AddRmsNorm", OpClass::kNorm, "add_rms_norm"},
      {"ScatterUpdate", OpClass::kCopy, "kv_cache_update"},
      {"GroupedMatmul", OpClass::kMatmul, "grouped"},
      {"SoftmaxV2", OpClass::kSoftmax, "softmax"},
      {"aten::multinomial", OpClass::kSampling, "sampling"},
  };
  for (const NameCase& c : cases) {
    OpClassMatch m = MatchName(c.name);
    EXPECT_EQ(m.cls, c.cls) << c.name << " -> " << OpClassName(m.cls);
    EXPECT_EQ(m.sub_kind, c.sub) << c.name;
    EXPECT_EQ(ClassifyName(c.name), c.cls);
  }
  // Kernel names matched by a generic rule never hide a specific one.
  EXPECT_FALSE(MatchName("something_unheard_of").matched());
  EXPECT_EQ(ClassifyName(""), OpClass::kOther);
}

TEST(OpClass, NamesRoundTrip) {
  for (size_t i = 0; i < kOpClassCount; ++i) {
    bool ok = false;
    EXPECT_EQ(OpClassFromName(OpClassName(static_cast<OpClass>(i)), &ok), static_cast<OpClass>(i));
    EXPECT_TRUE(ok);
  }
}

TEST(OpClass, UserRulesComeFirstAndErrorsNameTheRule) {
  auto user = OpClassifier::Parse(R"({"rules":[{"match":"prefix","pattern":"MyFusedLayer","class":"attention","sub_kind":"custom"}]})", "user");
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  auto merged = OpClassifier::Parse(R"({"rules":[{"match":"contains","pattern":"layer","class":"norm"}]})", "base");
  ASSERT_TRUE(merged.ok());
  merged->Prepend(*user);
  EXPECT_EQ(merged->Match("myfusedlayer_v2").cls, OpClass::kAttention);
  EXPECT_EQ(merged->Match("mylayer").cls, OpClass::kNorm);
  auto bad = OpClassifier::Parse(R"({"rules":[{"match":"regex","pattern":"([","class":"norm"}]})", "user.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("user.json: rules[0]"), std::string::npos);
  EXPECT_FALSE(OpClassifier::Parse(R"({"rules":[{"match":"exact","pattern":"x","class":"nope"}]})", "u").ok());
}

// Classification of a whole profile: pta_level2_llm_cann83 kernel_details
// (Type column counted with a CSV reader: MatMulV2 56 + MatMulV3 280 = 336
// matmul tasks; FlashAttentionScore 28 + Grad 28 = 56 attention; RmsNorm 112 +
// RmsNormGrad 112 = 224 norm; RotaryPositionEmbedding(+Grad) 112 rope).
TEST(ClassifyProfile, AscendLlmFixture) {
  auto p = LoadProfile(std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_level2_llm_cann83");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto g = OperatorCallGraph::Build(*p);
  ASSERT_TRUE(g.ok());
  OpClassification c = ClassifyProfile(*p, *g);
  EXPECT_EQ(c.task_counts[static_cast<size_t>(OpClass::kMatmul)], 336u);
  EXPECT_EQ(c.task_counts[static_cast<size_t>(OpClass::kAttention)], 56u);
  EXPECT_EQ(c.task_counts[static_cast<size_t>(OpClass::kNorm)], 224u);
  EXPECT_EQ(c.task_counts[static_cast<size_t>(OpClass::kRope)], 112u);
  EXPECT_EQ(c.task_counts[static_cast<size_t>(OpClass::kCommunication)], 15u);
}

// Kineto: kernels inherit their operator's class when their own name says
// nothing; the unfused-attention pass re-labels bmm -> softmax -> bmm.
TEST(ClassifyProfile, InheritAndUnfusedAttention) {
  Profile p;
  uint32_t th = p.TrackFor("1", "1", TrackKind::kHostThread);
  uint32_t st = p.DeviceTrack("0", "7", 0, 7);
  auto op = [&](const char* name, TimeNs ts, TimeNs dur) {
    HostOpRow r;
    r.name = p.Intern(name);
    r.kind = HostOpKind::kOperator;
    r.track = th;
    r.ts = ts * 1000;     // µs -> ns: ops further apart than the graph's 1 µs nesting tolerance
    r.dur = dur * 1000;
    r.external_id = ts;
    return p.host_ops.Add(r);
  };
  auto task = [&](const char* name, TimeNs ts, int64_t ext) {
    DeviceTaskRow r;
    r.name = p.Intern(name);
    r.kind = DeviceTaskKind::kKernel;
    r.track = st;
    r.ts = ts * 1000;
    r.dur = 10 * 1000;
    r.external_id = ext;
    return p.device_tasks.Add(r);
  };
  op("aten::bmm", 1000, 100);
  op("aten::div", 1200, 100);
  op("aten::softmax", 1400, 100);
  op("aten::bmm", 1600, 100);
  op("my::custom_norm_op", 1800, 100);
  task("gemm_kernel_a", 5000, 1000);
  task("void at::native::vectorized_elementwise_kernel<4, div>", 5100, 1200);
  task("softmax_warp_forward", 5200, 1400);
  task("gemm_kernel_b", 5300, 1600);
  uint32_t unknown = task("kernel_xyz_0", 5400, 1800);
  auto g = OperatorCallGraph::Build(p);
  ASSERT_TRUE(g.ok());
  OpClassification c = ClassifyProfile(p, *g);
  EXPECT_EQ(c.unfused_attention_groups, 1u);
  EXPECT_EQ(c.task_class[0], OpClass::kAttention);
  EXPECT_EQ(c.task_sub_kind[0], "qk_bmm");
  EXPECT_EQ(c.task_sub_kind[2], "scores_softmax");
  EXPECT_EQ(c.task_sub_kind[3], "pv_bmm");
  EXPECT_EQ(c.task_source[3], ClassSource::kSequence);
  EXPECT_EQ(c.host_class[0], OpClass::kAttention);
  // "kernel_xyz_0" is unknown; its operator name matches nothing either -> other.
  EXPECT_EQ(c.task_class[unknown], OpClass::kOther);
  EXPECT_EQ(c.task_source[unknown], ClassSource::kNone);
}

}  // namespace
}  // namespace pypto
