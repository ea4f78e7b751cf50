// The fused norm kernels against naive two-pass references in double.
#include "kernels/fused_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace pypto::kernels {
namespace {

// Kernel vs double reference, relative to the output's scale: a few float
// ulps (2^-24 ~ 6e-8) per element, with room for the float scale and weight
// multiplications.
constexpr double kRelativeTolerance = 1e-6;

std::vector<float> RandomVector(int64_t n, uint32_t seed, float mean = 0.0f, float spread = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, spread);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& value : v) value = dist(rng);
  return v;
}

std::vector<double> ReferenceRmsNorm(const std::vector<float>& x, const float* weight, double eps, int64_t rows,
                                     int64_t cols) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean_square = 0;
    for (int64_t c = 0; c < cols; ++c) mean_square += double(x[r * cols + c]) * x[r * cols + c];
    mean_square /= double(cols);
    const double scale = 1.0 / std::sqrt(mean_square + eps);
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = x[r * cols + c] * scale * (weight ? double(weight[c]) : 1.0);
  }
  return out;
}

std::vector<double> ReferenceLayerNorm(const std::vector<float>& x, const float* weight, const float* bias,
                                       double eps, int64_t rows, int64_t cols) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= double(cols);
    double variance = 0;
    for (int64_t c = 0; c < cols; ++c) variance += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    variance /= double(cols);
    const double scale = 1.0 / std::sqrt(variance + eps);
    for (int64_t c = 0; c < cols; ++c) {
      double v = (x[r * cols + c] - mean) * scale;
      if (weight) v *= weight[c];
      if (bias) v += bias[c];
      out[r * cols + c] = v;
    }
  }
  return out;
}

void ExpectClose(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  double scale = 1.0;
  for (double v : expected) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], kRelativeTolerance * scale) << "element " << i;
  }
}

struct Shape {
  int64_t rows;
  int64_t cols;
};
// cols = 1, odd sizes, sizes around the 4-lane unrolling, decoder widths.
const Shape kShapes[] = {{1, 1}, {3, 1}, {1, 2}, {2, 3}, {5, 7}, {1, 4}, {4, 5}, {7, 63}, {1, 4096}, {3, 2049}};

TEST(FusedRmsNorm, MatchesReferenceOnOddShapes) {
  for (const auto& shape : kShapes) {
    SCOPED_TRACE(testing::Message() << shape.rows << "x" << shape.cols);
    const auto x = RandomVector(shape.rows * shape.cols, 1);
    const auto weight = RandomVector(shape.cols, 2, 1.0f, 0.3f);
    std::vector<float> out(x.size());
    FusedRmsNorm(x.data(), weight.data(), 1e-6f, shape.rows, shape.cols, out.data());
    ExpectClose(out, ReferenceRmsNorm(x, weight.data(), 1e-6, shape.rows, shape.cols));
    FusedRmsNorm(x.data(), nullptr, 1e-6f, shape.rows, shape.cols, out.data());
    ExpectClose(out, ReferenceRmsNorm(x, nullptr, 1e-6, shape.rows, shape.cols));
  }
}

TEST(FusedRmsNorm, ColsOneIsSignTimesWeight) {
  // With one column, x / sqrt(x^2 + eps) is sign(x) when eps << x^2.
  const std::vector<float> x = {3.0f, -0.5f};
  const float weight = 2.0f;
  std::vector<float> out(2);
  FusedRmsNorm(x.data(), &weight, 1e-12f, 2, 1, out.data());
  EXPECT_NEAR(out[0], 2.0f, 1e-6);
  EXPECT_NEAR(out[1], -2.0f, 1e-6);
}

TEST(FusedRmsNorm, EpsDominatesSmallInputs) {
  // Inputs at the scale of sqrt(eps): eps changes the result by a large factor,
  // so a kernel that dropped or misplaced eps fails here.
  const int64_t cols = 16;
  std::vector<float> x(cols, 1e-3f);  // mean square 1e-6
  std::vector<float> out(cols);
  FusedRmsNorm(x.data(), nullptr, 1e-6f, 1, cols, out.data());
  EXPECT_NEAR(out[0], 1e-3 / std::sqrt(2e-6), 1e-5);
  FusedRmsNorm(x.data(), nullptr, 1e-5f, 1, cols, out.data());
  EXPECT_NEAR(out[0], 1e-3 / std::sqrt(1.1e-5), 1e-5);
  // All-zero row: finite zeros, not NaN.
  std::vector<float> zeros(cols, 0.0f);
  FusedRmsNorm(zeros.data(), nullptr, 1e-6f, 1, cols, out.data());
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(FusedRmsNorm, InPlaceOutput) {
  auto x = RandomVector(3 * 17, 3);
  const auto expected = ReferenceRmsNorm(x, nullptr, 1e-5, 3, 17);
  FusedRmsNorm(x.data(), nullptr, 1e-5f, 3, 17, x.data());
  ExpectClose(x, expected);
}

TEST(FusedAddRmsNorm, MatchesAddThenReference) {
  for (const auto& shape : kShapes) {
    SCOPED_TRACE(testing::Message() << shape.rows << "x" << shape.cols);
    const int64_t n = shape.rows * shape.cols;
    const auto x = RandomVector(n, 4);
    const auto residual = RandomVector(n, 5);
    const auto weight = RandomVector(shape.cols, 6, 1.0f, 0.3f);
    std::vector<float> summed(n);
    for (int64_t i = 0; i < n; ++i) summed[i] = x[i] + residual[i];
    std::vector<float> out(n), residual_out(n);
    FusedAddRmsNorm(x.data(), residual.data(), weight.data(), 1e-5f, shape.rows, shape.cols, out.data(),
                    residual_out.data());
    EXPECT_EQ(residual_out, summed);  // bit-identical to a float add
    ExpectClose(out, ReferenceRmsNorm(summed, weight.data(), 1e-5, shape.rows, shape.cols));
  }
}

TEST(FusedAddRmsNorm, ResidualOutMayAliasResidual) {
  const int64_t rows = 2, cols = 9;
  const auto x = RandomVector(rows * cols, 7);
  auto residual = RandomVector(rows * cols, 8);
  std::vector<float> summed(residual.size());
  for (size_t i = 0; i < summed.size(); ++i) summed[i] = x[i] + residual[i];
  std::vector<float> out(residual.size());
  FusedAddRmsNorm(x.data(), residual.data(), nullptr, 1e-6f, rows, cols, out.data(), residual.data());
  EXPECT_EQ(residual, summed);
  ExpectClose(out, ReferenceRmsNorm(summed, nullptr, 1e-6, rows, cols));
}

TEST(FusedLayerNorm, MatchesReferenceOnOddShapes) {
  for (const auto& shape : kShapes) {
    SCOPED_TRACE(testing::Message() << shape.rows << "x" << shape.cols);
    const auto x = RandomVector(shape.rows * shape.cols, 9, 0.5f, 2.0f);
    const auto weight = RandomVector(shape.cols, 10, 1.0f, 0.3f);
    const auto bias = RandomVector(shape.cols, 11, 0.0f, 0.1f);
    std::vector<float> out(x.size());
    FusedLayerNorm(x.data(), weight.data(), bias.data(), 1e-5f, shape.rows, shape.cols, out.data());
    ExpectClose(out, ReferenceLayerNorm(x, weight.data(), bias.data(), 1e-5, shape.rows, shape.cols));
    FusedLayerNorm(x.data(), nullptr, nullptr, 1e-5f, shape.rows, shape.cols, out.data());
    ExpectClose(out, ReferenceLayerNorm(x, nullptr, nullptr, 1e-5, shape.rows, shape.cols));
    FusedLayerNorm(x.data(), weight.data(), nullptr, 1e-5f, shape.rows, shape.cols, out.data());
    ExpectClose(out, ReferenceLayerNorm(x, weight.data(), nullptr, 1e-5, shape.rows, shape.cols));
  }
}

TEST(FusedLayerNorm, ColsOneGivesBias) {
  // A single column has zero variance: (x - mean) = 0, the output is the bias.
  const std::vector<float> x = {5.0f, -2.0f};
  const float weight = 3.0f, bias = 0.25f;
  std::vector<float> out(2);
  FusedLayerNorm(x.data(), &weight, &bias, 1e-5f, 2, 1, out.data());
  EXPECT_EQ(out[0], 0.25f);
  EXPECT_EQ(out[1], 0.25f);
}

TEST(FusedLayerNorm, LargeMeanSmallSpreadKeepsVariance) {
  // Mean 1e4, spread 1e-1: a naive float E[x^2] - E[x]^2 loses every digit of
  // the variance; the shifted double accumulation keeps it.
  const int64_t cols = 1000;
  const auto x = RandomVector(cols, 12, 1e4f, 0.1f);
  std::vector<float> out(cols);
  FusedLayerNorm(x.data(), nullptr, nullptr, 1e-5f, 1, cols, out.data());
  // The output is (x - mean) / std; float rounding of x - mean at 1e4 is
  // ~1e-3 absolute against std 0.1, so allow 1e-2 relative to unit scale.
  const auto expected = ReferenceLayerNorm(x, nullptr, nullptr, 1e-5, 1, cols);
  for (int64_t c = 0; c < cols; ++c) ASSERT_NEAR(out[c], expected[c], 1e-2);
}

TEST(FusedLayerNorm, EpsEffect) {
  // Constant row: variance 0, output 0 whatever eps; row {-a, a}: variance
  // a^2, so eps = a^2 halves the squared output.
  const std::vector<float> x = {-1e-3f, 1e-3f};
  std::vector<float> out(2);
  FusedLayerNorm(x.data(), nullptr, nullptr, 1e-6f, 1, 2, out.data());
  EXPECT_NEAR(out[1], 1e-3 / std::sqrt(2e-6), 1e-5);
}

TEST(NormThreadCount, SmallTensorsStaySingleThreaded) {
  EXPECT_EQ(NormThreadCount(1, 8192, 64), 1);   // one decode token, any width
  EXPECT_EQ(NormThreadCount(32, 4096, 64), 1);  // 128K elements: under the threshold
  EXPECT_EQ(NormThreadCount(0, 4096, 64), 1);
  EXPECT_GT(NormThreadCount(512, 4096, 64), 1);  // a prefill of 512 tokens
  EXPECT_LE(NormThreadCount(512, 4096, 4), 4);
  EXPECT_LE(NormThreadCount(3, 1 << 20, 64), 3);  // never more threads than rows
}

TEST(FusedNorms, ThreadedMatchesSingleThreadBitForBit) {
  const int64_t rows = 300, cols = 1031;  // 309K elements: over the threshold, odd split
  ASSERT_GT(NormThreadCount(rows, cols, 3), 1);
  const auto x = RandomVector(rows * cols, 13);
  const auto residual = RandomVector(rows * cols, 14);
  const auto weight = RandomVector(cols, 15, 1.0f, 0.3f);
  std::vector<float> single(x.size()), threaded(x.size()), res_single(x.size()), res_threaded(x.size());
  FusedRmsNorm(x.data(), weight.data(), 1e-6f, rows, cols, single.data(), 1);
  FusedRmsNorm(x.data(), weight.data(), 1e-6f, rows, cols, threaded.data(), 3);
  EXPECT_EQ(single, threaded);
  FusedAddRmsNorm(x.data(), residual.data(), weight.data(), 1e-6f, rows, cols, single.data(), res_single.data(), 1);
  FusedAddRmsNorm(x.data(), residual.data(), weight.data(), 1e-6f, rows, cols, threaded.data(), res_threaded.data(),
                  3);
  EXPECT_EQ(single, threaded);
  EXPECT_EQ(res_single, res_threaded);
  FusedLayerNorm(x.data(), weight.data(), nullptr, 1e-5f, rows, cols, single.data(), 1);
  FusedLayerNorm(x.data(), weight.data(), nullptr, 1e-5f, rows, cols, threaded.data(), 3);
  EXPECT_EQ(single, threaded);
  ExpectClose(single, ReferenceLayerNorm(x, weight.data(), nullptr, 1e-5, rows, cols));
}

}  // namespace
}  // namespace pypto::kernels
