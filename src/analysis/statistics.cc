#include "analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace pypto {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Out-of-range arguments give NaN instead of throwing (the engine never throws).
using NoThrowPolicy = boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                                    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                                    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;
using StudentT = boost::math::students_t_distribution<double, NoThrowPolicy>;

}  // namespace

double NearestRankPercentile(const std::vector<double>& sorted, double percent) {
  if (sorted.empty() || std::isnan(percent)) return kNaN;
  const double rank = std::ceil(std::clamp(percent, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size())));
  return sorted[index - 1];
}

double StudentTTwoSidedP(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(t)) return 0.0;
  return 2.0 * boost::math::cdf(boost::math::complement(StudentT(df), std::fabs(t)));
}

double StudentTTwoSidedQuantile(double alpha, double df) {
  if (!(alpha > 0 && alpha < 1) || !(df > 0)) return kNaN;
  return boost::math::quantile(boost::math::complement(StudentT(df), alpha / 2.0));
}

namespace {

double MedianOf(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + mid);
  return (lower + upper) / 2;
}

}  // namespace

RobustSpread MedianAndRobustSigma(const std::vector<double>& values) {
  const double median = MedianOf(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return {median, kMadToStandardDeviation * MedianOf(std::move(deviations))};
}

namespace {

// Below this lambda the alternating series converges too slowly to be summed,
// and the p-value is within 1e-7 of 1 anyway (Q_KS(0.2) = 1 - 2.8e-10); Press
// et al., Numerical Recipes 3rd ed. §14.3.3 use the same cut.
constexpr double kKsSeriesMinLambda = 0.2;
// Terms of the series summed: by k = 100 a term is below exp(-2 * 100^2 * 0.04) = exp(-800).
constexpr int kKsSeriesTerms = 100;

}  // namespace

KolmogorovSmirnovTest KolmogorovSmirnov(std::vector<double> a, std::vector<double> b) {
  KolmogorovSmirnovTest r;
  r.n_a = a.size();
  r.n_b = b.size();
  if (a.empty() || b.empty()) return r;
  r.testable = true;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] == x) ++i;   // ties move both distribution functions together
    while (j < b.size() && b[j] == x) ++j;
    r.d = std::max(r.d, std::fabs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  const double n = na * nb / (na + nb);
  const double lambda = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * r.d;
  if (lambda > kKsSeriesMinLambda) {
    double sum = 0;
    for (int k = 1; k <= kKsSeriesTerms; ++k)
      sum += (k % 2 == 1 ? 1.0 : -1.0) * std::exp(-2.0 * k * k * lambda * lambda);
    r.p_value = std::clamp(2.0 * sum, 0.0, 1.0);
  }
  return r;
}

std::vector<double> HolmAdjustedPValues(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  auto p_of = [&](size_t i) { return std::isnan(p_values[i]) ? 1.0 : p_values[i]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p_of(a) < p_of(b); });
  std::vector<double> adjusted(m, 1.0);
  double running_max = 0;
  for (size_t k = 0; k < m; ++k) {
    const double scaled = std::min(1.0, double(m - k) * p_of(order[k]));
    running_max = std::max(running_max, scaled);
    adjusted[order[k]] = running_max;
  }
  return adjusted;
}

}  // namespace pypto
