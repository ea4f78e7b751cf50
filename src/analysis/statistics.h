// Statistics every layer and the Python package share, so each is computed one
// way: nearest-rank percentiles and Student's t distribution. The t
// distribution comes from Boost.Math (a well-kept implementation) rather than
// a hand-written incomplete beta; the robust centre and spread that outlier
// rules use (analyze's outlier steps, pypto ranks' stragglers).
#pragma once

#include <cstddef>
#include <vector>

namespace pypto {

// The nearest-rank percentile of ascending `sorted` values: the smallest value
// with at least `percent` % of the values at or below it (percent in [0, 100];
// 0 gives the minimum). NaN for an empty list.
double NearestRankPercentile(const std::vector<double>& sorted, double percent);

// Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| >= |t|).
// 0 for an infinite t, NaN for NaN t or df <= 0.
double StudentTTwoSidedP(double t, double df);

// The t with P(|T| >= t) = alpha (alpha in (0, 1), df > 0): the half-width
// factor of a (1 - alpha) confidence interval. NaN outside those ranges.
double StudentTTwoSidedQuantile(double alpha, double df);

// The factor that scales a median absolute deviation to a standard deviation
// for normally distributed data (1 / Phi^-1(3/4); Rousseeuw & Croux 1993).
inline constexpr double kMadToStandardDeviation = 1.4826;

// The median (the mean of the two middle values for an even count) and the
// robust sigma, kMadToStandardDeviation x the median absolute deviation from
// it: a centre and spread that the outliers themselves do not move. NaN for
// an empty list.
struct RobustSpread {
  double median;
  double sigma;
};
RobustSpread MedianAndRobustSigma(const std::vector<double>& values);

// Two-sample Kolmogorov-Smirnov test: D = the largest distance between the two
// empirical distribution functions, and its asymptotic p-value with Stephens'
// (1970) small-sample correction, lambda = (sqrt(n) + 0.12 + 0.11 / sqrt(n)) D
// with n = n_a n_b / (n_a + n_b), p = 2 sum_k (-1)^(k-1) exp(-2 k^2 lambda^2).
// Hand-written: Boost.Math has the one-sample distribution only from 1.75 on
// (Debian 12 ships 1.74), and this is one loop. `testable` is false when a
// sample is empty.
struct KolmogorovSmirnovTest {
  bool testable = false;
  double d = 0;
  double p_value = 1;
  size_t n_a = 0, n_b = 0;
};
KolmogorovSmirnovTest KolmogorovSmirnov(std::vector<double> sample_a, std::vector<double> sample_b);

// Holm's (1979) step-down adjustment of the p-values of m tests taken together:
// sorted ascending, the k-th smallest (k from 1) becomes min(1, (m - k + 1) p),
// raised to the largest adjusted value before it so the order is kept. A test
// is significant at level alpha, with the chance of any false finding among
// the m at most alpha, when its adjusted p is below alpha. Returned in the
// input's order; a NaN p counts as 1. Hand-written: one sort and one pass.
std::vector<double> HolmAdjustedPValues(const std::vector<double>& p_values);

}  // namespace pypto
