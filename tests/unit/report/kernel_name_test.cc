// ShortKernelName: readable kernel names that still tell kernels apart.
#include <gtest/gtest.h>

#include "model/kernel_name.h"

namespace pypto::report {
namespace {

TEST(KernelName, ShortNamesAreKeptWhole) {
  EXPECT_EQ(ShortKernelName("Memcpy HtoD (Pinned -> Device)"), "Memcpy HtoD (Pinned -> Device)");
  EXPECT_EQ(ShortKernelName("aclnnMatmul_MatMulV2_MatMulV2"), "aclnnMatmul_MatMulV2_MatMulV2");
}

TEST(KernelName, ReturnTypeParametersAndNamespacesGo) {
  EXPECT_EQ(ShortKernelName("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 3, 128, "
                            "1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned "
                            "int, 128, 1>, int, unsigned int)"),
            "CatArrayBatchedCopy<float, unsigned int, 3, 128, 1>");
}

TEST(KernelName, ElidedTemplatesAndLambdasKeepAHashThatSeparatesLookAlikes) {
  const std::string add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                          "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
                          "at::detail::Array<char*, 3>)";
  std::string mul = add;
  mul.replace(mul.find("CUDAFunctor_add<float>"), 22, "CUDAFunctor_add<c10::Half>");
  const std::string a = ShortKernelName(add), m = ShortKernelName(mul);
  EXPECT_TRUE(a.starts_with("vectorized_elementwise_kernel<4, CUDAFunctor_add<…>")) << a;
  EXPECT_NE(a, m);  // only the hash differs
  EXPECT_EQ(a.substr(0, a.size() - 4), m.substr(0, m.size() - 4));
  size_t chars = 0;
  for (char c : a) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  EXPECT_LE(chars, kShortKernelNameChars);  // in characters, as a table cell counts them

  const std::string lambda = ShortKernelName(
      "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::MulFunctor<float> "
      ">(at::TensorIteratorBase&, at::native::MulFunctor<float> const&)::{lambda(int)#1}>(int, "
      "at::native::gpu_kernel_impl<at::native::MulFunctor<float> >(at::TensorIteratorBase&, "
      "at::native::MulFunctor<float> const&)::{lambda(int)#1})");
  EXPECT_TRUE(lambda.starts_with("elementwise_kernel<128, 2, gpu_kernel_impl<…>{…}> #")) << lambda;
}

TEST(KernelName, MangledNamesAreDemangled) {
  // c++filt _ZN7cutlass6KernelINS_4conv6kernelEEEvNT_6ParamsE = void
  // cutlass::Kernel<cutlass::conv::kernel>(cutlass::conv::kernel::Params), 76
  // characters: shortened like any long name.
  EXPECT_EQ(ShortKernelName("_ZN7cutlass6KernelINS_4conv6kernelEEEvNT_6ParamsE"), "Kernel<kernel>");
  EXPECT_EQ(ShortKernelName("_ZN7cutlass6KernelINS_4conv6kernelEEEvNT_6ParamsE", 100),
            "void cutlass::Kernel<cutlass::conv::kernel>(cutlass::conv::kernel::Params)");
  EXPECT_EQ(ShortKernelName("_Znot_a_mangled_name"), "_Znot_a_mangled_name");
}

TEST(KernelName, Bfloat16ManglingDemanglesAsCxxfiltDoes) {
  // A ck_tile RMSNorm of the vLLM MI300X decode fixture: DF16b (std::bfloat16_t)
  // is refused by libstdc++ 12's demangler; the expected text is c++filt
  // (binutils) output with std::bfloat16_t written __bf16.
  const std::string mangled =
      "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeINS_8sequenceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnorm2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE0ELNS_23Rmsnorm2dFusedQuantEnumE0ELNS_22Rmsnorm2dSensitiveEnumE0EEEEENS_33Rmsnorm2dFwdPipelineDefaultPolicyEEENS_17Default2DEpilogueINS_24Default2DEpilogueProblemIfDF16bLb0ELb1ELb0EEEvEEEEJNSM_5KargsEEEEvDpT1_";
  EXPECT_EQ(Demangle(mangled),
            "void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<ck_tile::Rmsnorm2dFwdPipelineProblem<__bf16, __bf16, float, __bf16, __bf16, __bf16, float, float, ck_tile::Generic2dBlockShape<ck_tile::sequence<1, 3072>, ck_tile::sequence<1, 128>, ck_tile::sequence<1, 8> >, ck_tile::Rmsnorm2dFwdTraits<true, false, false, false, (ck_tile::Rmsnorm2dFusedAddEnum)0, (ck_tile::Rmsnorm2dFusedQuantEnum)0, (ck_tile::Rmsnorm2dSensitiveEnum)0> >, ck_tile::Rmsnorm2dFwdPipelineDefaultPolicy>, ck_tile::Default2DEpilogue<ck_tile::Default2DEpilogueProblem<float, __bf16, false, true, false>, void> >, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<ck_tile::Rmsnorm2dFwdPipelineProblem<__bf16, __bf16, float, __bf16, __bf16, __bf16, float, float, ck_tile::Generic2dBlockShape<ck_tile::sequence<1, 3072>, ck_tile::sequence<1, 128>, ck_tile::sequence<1, 8> >, ck_tile::Rmsnorm2dFwdTraits<true, false, false, false, (ck_tile::Rmsnorm2dFusedAddEnum)0, (ck_tile::Rmsnorm2dFusedQuantEnum)0, (ck_tile::Rmsnorm2dSensitiveEnum)0> >, ck_tile::Rmsnorm2dFwdPipelineDefaultPolicy>, ck_tile::Default2DEpilogue<ck_tile::Default2DEpilogueProblem<float, __bf16, false, true, false>, void> >::Kargs>(ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<ck_tile::Rmsnorm2dFwdPipelineProblem<__bf16, __bf16, float, __bf16, __bf16, __bf16, float, float, ck_tile::Generic2dBlockShape<ck_tile::sequence<1, 3072>, ck_tile::sequence<1, 128>, ck_tile::sequence<1, 8> >, ck_tile::Rmsnorm2dFwdTraits<true, false, false, false, (ck_tile::Rmsnorm2dFusedAddEnum)0, (ck_tile::Rmsnorm2dFusedQuantEnum)0, (ck_tile::Rmsnorm2dSensitiveEnum)0> >, ck_tile::Rmsnorm2dFwdPipelineDefaultPolicy>, ck_tile::Default2DEpilogue<ck_tile::Default2DEpilogueProblem<float, __bf16, false, true, false>, void> >::Kargs)");
  const std::string short_name = ShortKernelName(mangled);
  EXPECT_TRUE(short_name.starts_with("kentry<1, Rmsnorm2dFwd<…>")) << short_name;
  EXPECT_EQ(short_name.find("_ZN"), std::string::npos) << short_name;
}

TEST(KernelName, ACutNameKeepsItsHashWithinTheTableWidth) {
  // Two rocBLAS/Tensile kernels alike in their first 64 characters.
  const std::string a = "Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0";
  std::string b = a;
  b.back() = '1';
  const std::string sa = ShortKernelName(a), sb = ShortKernelName(b);
  EXPECT_NE(sa, sb);
  size_t chars = 0;
  for (char c : sa) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  EXPECT_EQ(chars, kShortKernelNameChars) << sa;  // "…" counts one, as a table cell counts it
  EXPECT_NE(sa.find("… #"), std::string::npos) << sa;
}

}  // namespace
}  // namespace pypto::report
