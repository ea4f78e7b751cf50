#include "kernels/fused_norm.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace pypto::kernels {
namespace {

// Independent partial sums so the compiler can keep several double adds in
// flight (and vectorise them) without -ffast-math reassociation.
constexpr int kAccumulatorLanes = 4;

double SumOfSquares(const float* row, int64_t cols) {
  double lanes[kAccumulatorLanes] = {0, 0, 0, 0};
  int64_t c = 0;
  for (; c + kAccumulatorLanes <= cols; c += kAccumulatorLanes) {
    for (int lane = 0; lane < kAccumulatorLanes; ++lane) {
      const double v = row[c + lane];
      lanes[lane] += v * v;
    }
  }
  double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; c < cols; ++c) total += static_cast<double>(row[c]) * row[c];
  return total;
}

// residual_out = x + residual, returning the sum of squares of the result.
double AddAndSumOfSquares(const float* x, const float* residual, int64_t cols, float* residual_out) {
  double lanes[kAccumulatorLanes] = {0, 0, 0, 0};
  int64_t c = 0;
  for (; c + kAccumulatorLanes <= cols; c += kAccumulatorLanes) {
    for (int lane = 0; lane < kAccumulatorLanes; ++lane) {
      const float sum = x[c + lane] + residual[c + lane];  // float add: the value torch's x + residual has
      residual_out[c + lane] = sum;
      lanes[lane] += static_cast<double>(sum) * sum;
    }
  }
  double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; c < cols; ++c) {
    const float sum = x[c] + residual[c];
    residual_out[c] = sum;
    total += static_cast<double>(sum) * sum;
  }
  return total;
}

// 1 / sqrt(mean square + eps), rounded once to float.
float InverseRms(double sum_of_squares, int64_t cols, float eps) {
  return static_cast<float>(1.0 / std::sqrt(sum_of_squares / static_cast<double>(cols) + static_cast<double>(eps)));
}

void ScaleRow(const float* in, float scale, const float* weight, int64_t cols, float* out) {
  if (weight != nullptr) {
    for (int64_t c = 0; c < cols; ++c) out[c] = in[c] * scale * weight[c];
  } else {
    for (int64_t c = 0; c < cols; ++c) out[c] = in[c] * scale;
  }
}

// Runs row_fn(first_row, end_row) over [0, rows), split across threads when
// NormThreadCount says the tensor is large enough.
template <typename RowFn>
void ForEachRowBlock(int64_t rows, int64_t cols, int max_threads, RowFn row_fn) {
  const int threads = NormThreadCount(rows, cols, max_threads);
  if (threads <= 1) {
    row_fn(int64_t{0}, rows);
    return;
  }
  const int64_t rows_per_thread = (rows + threads - 1) / threads;
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (int t = 1; t < threads; ++t) {
    const int64_t first = t * rows_per_thread;
    const int64_t end = std::min(rows, first + rows_per_thread);
    if (first >= end) break;
    workers.emplace_back([=] { row_fn(first, end); });
  }
  row_fn(int64_t{0}, std::min(rows, rows_per_thread));  // the calling thread takes the first block
  for (auto& worker : workers) worker.join();
}

}  // namespace

int NormThreadCount(int64_t rows, int64_t cols, int max_threads) {
  if (rows < 2 || cols <= 0) return 1;
  const int64_t elements = rows * cols;
  if (elements < kNormParallelMinElements) return 1;
  int64_t limit = max_threads > 0 ? max_threads : static_cast<int64_t>(std::thread::hardware_concurrency());
  if (limit < 1) limit = 1;
  const int64_t by_work = std::max<int64_t>(1, elements / kNormMinElementsPerThread);
  return static_cast<int>(std::min({limit, by_work, rows}));
}

void FusedRmsNorm(const float* x, const float* weight, float eps, int64_t rows, int64_t cols, float* out,
                  int max_threads) {
  if (rows <= 0 || cols <= 0) return;
  ForEachRowBlock(rows, cols, max_threads, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const float* row = x + r * cols;
      const float inverse_rms = InverseRms(SumOfSquares(row, cols), cols, eps);
      ScaleRow(row, inverse_rms, weight, cols, out + r * cols);
    }
  });
}

void FusedAddRmsNorm(const float* x, const float* residual, const float* weight, float eps, int64_t rows,
                     int64_t cols, float* out, float* residual_out, int max_threads) {
  if (rows <= 0 || cols <= 0) return;
  ForEachRowBlock(rows, cols, max_threads, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      float* summed = residual_out + r * cols;
      const double sum_of_squares = AddAndSumOfSquares(x + r * cols, residual + r * cols, cols, summed);
      ScaleRow(summed, InverseRms(sum_of_squares, cols, eps), weight, cols, out + r * cols);
    }
  });
}

void FusedLayerNorm(const float* x, const float* weight, const float* bias, float eps, int64_t rows, int64_t cols,
                    float* out, int max_threads) {
  if (rows <= 0 || cols <= 0) return;
  ForEachRowBlock(rows, cols, max_threads, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const float* row = x + r * cols;
      // Shifted one-pass moments: sums of (x - shift) and (x - shift)^2 in
      // double. With shift = a row element the cancellation in
      // E[d^2] - E[d]^2 is bounded by the row's spread, not its mean.
      const double shift = row[0];
      double sum_lanes[kAccumulatorLanes] = {0, 0, 0, 0};
      double square_lanes[kAccumulatorLanes] = {0, 0, 0, 0};
      int64_t c = 0;
      for (; c + kAccumulatorLanes <= cols; c += kAccumulatorLanes) {
        for (int lane = 0; lane < kAccumulatorLanes; ++lane) {
          const double d = static_cast<double>(row[c + lane]) - shift;
          sum_lanes[lane] += d;
          square_lanes[lane] += d * d;
        }
      }
      double sum = (sum_lanes[0] + sum_lanes[1]) + (sum_lanes[2] + sum_lanes[3]);
      double sum_squares = (square_lanes[0] + square_lanes[1]) + (square_lanes[2] + square_lanes[3]);
      for (; c < cols; ++c) {
        const double d = static_cast<double>(row[c]) - shift;
        sum += d;
        sum_squares += d * d;
      }
      const double n = static_cast<double>(cols);
      const double mean_shifted = sum / n;
      const double variance = std::max(0.0, sum_squares / n - mean_shifted * mean_shifted);
      const float mean = static_cast<float>(shift + mean_shifted);
      const float inverse_std = static_cast<float>(1.0 / std::sqrt(variance + static_cast<double>(eps)));
      float* out_row = out + r * cols;
      for (int64_t k = 0; k < cols; ++k) {
        float v = (row[k] - mean) * inverse_std;
        if (weight != nullptr) v *= weight[k];
        if (bias != nullptr) v += bias[k];
        out_row[k] = v;
      }
    }
  });
}

}  // namespace pypto::kernels
