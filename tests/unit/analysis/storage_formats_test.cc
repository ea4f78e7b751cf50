// Tiled Ascend storage formats decoded to logical shapes (analysis/shapes.h
// DecodeStorageFormats) before GEMM dimensions are inferred.
#include <gtest/gtest.h>

#include "analysis/cost_model.h"
#include "analysis/shapes.h"

namespace pypto {
namespace {

OpShapes Parse(const char* shapes, const char* types) {
  OpShapes s;
  EXPECT_TRUE(ParseAscendShapes(shapes, types, &s).ok());
  return s;
}

// An lm_head MatMulV2 whose weight is stored FRACTAL_NZ: "9496,256,16,16" is
// [N/16, M/16, 16, 16] of a 4096 × 151936 matrix (256·16 = 4096, 9496·16 =
// 151936). The activation [1, 4096] (ND) times it is M 1, K 4096, N 151936 —
// one GEMM, not 2.4 M batched 16×16 ones.
TEST(StorageFormats, FractalNzWeightIsOneMatrix) {
  OpShapes s = Parse("1,4096;9496,256,16,16", "FLOAT16;FLOAT16");
  EXPECT_EQ(DecodeStorageFormats("ND;FRACTAL_NZ", &s), 1);
  const TensorShape* w = s.tensor(1);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->rank, 2);
  EXPECT_EQ(w->dim(0), 4096);
  EXPECT_EQ(w->dim(1), 151936);
  GemmDims g = InferGemmDims("MatMulV2", "gemm", s);
  ASSERT_TRUE(g.ok) << g.note;
  EXPECT_EQ(g.batch, 1);
  EXPECT_EQ(g.m, 1);
  EXPECT_EQ(g.k, 4096);
  EXPECT_EQ(g.n, 151936);
}

// The ViT patch-embedding Conv2D of ascend/pta_vit_patch_embed_910b_conv_fractal_z
// (kernel_details row "Conv2D2"): input NC1HWC0 "3840,1,14,14,16" is NCHW
// [3840, 16, 14, 14] (C padded to one C0 block of 16); weight FRACTAL_Z
// "196,72,16,16" is [C1·H·W = 196, N1 = 72, N0 = 16, C0 = 16] → Cout 1152 ×
// C1·H·W·C0 3136, the conv's GEMM view (72·16 = 1152 output channels).
TEST(StorageFormats, Nc1hwc0AndFractalZ) {
  OpShapes s = Parse("3840,1,14,14,16;196,72,16,16;1152", "FLOAT16;FLOAT16;FLOAT16");
  EXPECT_EQ(DecodeStorageFormats("NC1HWC0;FRACTAL_Z;NCHW", &s), 2);
  const TensorShape* x = s.tensor(0);
  const TensorShape* w = s.tensor(1);
  EXPECT_EQ(x->rank, 4);
  EXPECT_EQ(x->dim(0), 3840);
  EXPECT_EQ(x->dim(1), 16);
  EXPECT_EQ(x->dim(2), 14);
  EXPECT_EQ(x->dim(3), 14);
  EXPECT_EQ(w->rank, 2);
  EXPECT_EQ(w->dim(0), 1152);
  EXPECT_EQ(w->dim(1), 3136);
  // A plain format and a bias are left as they are.
  EXPECT_EQ(s.tensor(2)->rank, 1);
  EXPECT_EQ(s.tensor(2)->dim(0), 1152);
}

TEST(StorageFormats, PlainFormatsAndPrefixes) {
  OpShapes s = Parse("8,16,16,16;8,16,16,16", "");
  EXPECT_EQ(DecodeStorageFormats("FORMAT_ND;FORMAT_FRACTAL_NZ", &s), 1);
  EXPECT_EQ(s.tensor(0)->rank, 4);
  EXPECT_EQ(s.tensor(1)->rank, 2);
  EXPECT_EQ(s.tensor(1)->dim(0), 256);
  EXPECT_EQ(s.tensor(1)->dim(1), 128);
  OpShapes t = Parse("4,5", "");
  EXPECT_EQ(DecodeStorageFormats("", &t), 0);
  EXPECT_EQ(DecodeStorageFormats("FRACTAL_NZ", &t), 0);  // rank 2 cannot be fractal: kept
  EXPECT_EQ(t.tensor(0)->dim(1), 5);
}

}  // namespace
}  // namespace pypto
