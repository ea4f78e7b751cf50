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

}  // namespace pypto
