// Shared statistics: expected values from printed tables.
#include "analysis/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace pypto {
namespace {

TEST(Statistics, NearestRankPercentile) {
  // 1..10: p50 = the 5th value (ceil(0.5 * 10) = 5), p90 = 9th, p99 = ceil(9.9) = 10th, p0 = the minimum.
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(NearestRankPercentile(v, 50), 5);
  EXPECT_EQ(NearestRankPercentile(v, 90), 9);
  EXPECT_EQ(NearestRankPercentile(v, 99), 10);
  EXPECT_EQ(NearestRankPercentile(v, 0), 1);
  EXPECT_EQ(NearestRankPercentile(v, 100), 10);
  EXPECT_EQ(NearestRankPercentile({7}, 50), 7);
  EXPECT_TRUE(std::isnan(NearestRankPercentile({}, 50)));
}

TEST(Statistics, StudentTAgainstTables) {
  // Two-sided critical values (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2):
  // t(0.975, 10) = 2.228, t(0.975, 1) = 12.706, t(0.995, 30) = 2.750.
  EXPECT_NEAR(StudentTTwoSidedQuantile(0.05, 10), 2.228139, 1e-6);
  EXPECT_NEAR(StudentTTwoSidedQuantile(0.05, 1), 12.706205, 1e-6);
  EXPECT_NEAR(StudentTTwoSidedQuantile(0.01, 30), 2.749996, 1e-6);
  // And back: P(|T| >= 2.228139) with 10 df is 0.05.
  EXPECT_NEAR(StudentTTwoSidedP(2.228139, 10), 0.05, 1e-6);
  EXPECT_NEAR(StudentTTwoSidedP(-2.228139, 10), 0.05, 1e-6);
  EXPECT_DOUBLE_EQ(StudentTTwoSidedP(0, 5), 1.0);
  EXPECT_EQ(StudentTTwoSidedP(std::numeric_limits<double>::infinity(), 5), 0.0);
  // Fractional df (Welch): between its neighbours (fewer df, heavier tails, larger p).
  const double p = StudentTTwoSidedP(2.0, 7.5);
  EXPECT_GT(StudentTTwoSidedP(2.0, 7), p);
  EXPECT_LT(StudentTTwoSidedP(2.0, 8), p);
}

TEST(Statistics, OutOfRangeArgumentsGiveNaNNotExceptions) {
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(1.0, 0)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(std::nan(""), 3)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedQuantile(0, 3)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedQuantile(1, 3)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedQuantile(0.05, -1)));
}

TEST(MedianAndRobustSigma, TheOutlierDoesNotMoveTheCentreOrTheSpread) {
  // 10, 11, 12, 13, 100: median 12; |x - 12| = 2, 1, 0, 1, 88 -> median 1; sigma 1.4826.
  RobustSpread odd = MedianAndRobustSigma({100, 10, 12, 11, 13});
  EXPECT_DOUBLE_EQ(odd.median, 12.0);
  EXPECT_DOUBLE_EQ(odd.sigma, 1.4826);
  // Even count: the mean of the two middle values. 1, 2, 4, 10: median 3; deviations 2, 1, 1, 7 ->
  // median (1 + 2) / 2 = 1.5; sigma 1.5 x 1.4826 = 2.2239.
  RobustSpread even = MedianAndRobustSigma({10, 1, 4, 2});
  EXPECT_DOUBLE_EQ(even.median, 3.0);
  EXPECT_NEAR(even.sigma, 2.2239, 1e-12);
  RobustSpread none = MedianAndRobustSigma({});
  EXPECT_TRUE(std::isnan(none.median));
  EXPECT_TRUE(std::isnan(none.sigma));
}

}  // namespace
}  // namespace pypto
