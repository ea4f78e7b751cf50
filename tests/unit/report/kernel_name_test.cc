// ShortKernelName: readable kernel names that still tell kernels apart.
#include <gtest/gtest.h>

#include "report/kernel_name.h"

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
  EXPECT_LE(a.size(), kShortKernelNameChars + 3);  // "…" is 3 bytes

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

}  // namespace
}  // namespace pypto::report
