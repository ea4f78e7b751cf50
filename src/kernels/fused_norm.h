// Fused normalisation kernels for CPU float32 (used by pypto.fusion).
//
// Plain C++20: no torch, no pybind. Each row of `cols` contiguous floats is
// read once to accumulate its statistics (in double), then written once.
// Rows are independent; the row loop runs on std::thread workers only when
// the tensor is large enough to pay for starting threads (see
// kNormParallelMinElements), so a decode step (a handful of rows) stays on
// the calling thread.
//
// Error bound: statistics are accumulated in double, so the accumulation error
// (<= cols * 2^-53 relative) is far below float32's rounding of the result
// (2^-24); each output differs from the exact value by a few float ulps.
#pragma once

#include <cstdint>

namespace pypto::kernels {

// Smallest tensor (rows * cols elements) whose row loop is split across
// threads. Source: starting and joining a std::thread measured 20-60 us on
// Linux x86-64 (~56 us on a busy 2-core build host); the kernel runs at
// ~1 ns per element (read + write, bench/fusion_bench.py: 64 x 4096 in
// ~250 us), so from 256K elements the work is several times the cost of a
// thread. A decode step of a 4096-wide model (rows <= 32) stays
// single-threaded.
inline constexpr int64_t kNormParallelMinElements = int64_t{1} << 18;
// Each worker gets at least this many elements (same rationale).
inline constexpr int64_t kNormMinElementsPerThread = int64_t{1} << 17;

// How many threads the kernels use for a rows x cols tensor (1 = the calling
// thread only). `max_threads` <= 0 means std::thread::hardware_concurrency().
int NormThreadCount(int64_t rows, int64_t cols, int max_threads = 0);

// out[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * weight[c].
// `weight` may be null (no scale). x and out may alias.
void FusedRmsNorm(const float* x, const float* weight, float eps, int64_t rows, int64_t cols, float* out,
                  int max_threads = 0);

// residual_out = x + residual (in float, as torch adds), then
// out = FusedRmsNorm(residual_out). `weight` may be null. residual_out may
// alias x or residual; out may alias x.
void FusedAddRmsNorm(const float* x, const float* residual, const float* weight, float eps, int64_t rows,
                     int64_t cols, float* out, float* residual_out, int max_threads = 0);

// out[r, c] = (x[r, c] - mean) / sqrt(var + eps) * weight[c] + bias[c], with
// the biased variance over the row (as torch.nn.LayerNorm). weight and bias
// may each be null. One pass accumulates the sum and sum of squares in double
// around a shift (the row's first element), which keeps the variance exact
// for rows whose mean is large against their spread.
void FusedLayerNorm(const float* x, const float* weight, const float* bias, float eps, int64_t rows, int64_t cols,
                    float* out, int max_threads = 0);

}  // namespace pypto::kernels
