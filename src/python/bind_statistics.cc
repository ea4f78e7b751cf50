#include "python/bind_statistics.h"

#include <pybind11/stl.h>

#include <vector>

#include "analysis/statistics.h"
#include "compare/compare.h"
#include "python/bind_common.h"

namespace py = pybind11;

namespace pypto::python {

void BindStatistics(py::module_& m) {
  m.def("nearest_rank_percentile", [](const std::vector<double>& sorted_values, double percent) {
    if (sorted_values.empty()) throw EngineError{InvalidArgumentError("percentile of an empty list")};
    return NearestRankPercentile(sorted_values, percent);
  }, py::arg("sorted_values"), py::arg("percent"),
        "The nearest-rank percentile of ascending values: the smallest value with at least PERCENT % at or below it.");
  m.def("student_t_two_sided_p", &StudentTTwoSidedP, py::arg("t"), py::arg("df"),
        "Two-sided p-value P(|T| >= |t|) of Student's t with DF degrees of freedom (Boost.Math).");
  m.def("welch_test", [](const std::vector<double>& baseline, const std::vector<double>& candidate, double alpha) {
    const SignificanceTest r = WelchTest(baseline, candidate, alpha);
    py::dict d;
    d["testable"] = r.testable;
    d["n_a"] = r.n_baseline;
    d["n_b"] = r.n_candidate;
    d["mean_a"] = r.mean_baseline;
    d["mean_b"] = r.mean_candidate;
    d["delta"] = r.delta;
    d["t"] = r.t;
    d["df"] = r.df;
    d["p_value"] = r.p_value;
    d["ci_low"] = r.ci_low;
    d["ci_high"] = r.ci_high;
    d["significant"] = r.significant;
    d["verdict"] = r.verdict;
    return d;
  }, py::arg("baseline"), py::arg("candidate"), py::arg("alpha") = kDefaultSignificanceAlpha,
        "Welch's unequal-variance t-test of CANDIDATE against BASELINE samples (the test pypto compare uses): "
        "t and df, two-sided p, the (1 - alpha) CI of mean(candidate) - mean(baseline), the verdict.");

  m.def("robust_spread", [](const std::vector<double>& values) {
    const RobustSpread r = MedianAndRobustSigma(values);
    py::dict d;
    d["median"] = r.median;
    d["sigma"] = r.sigma;
    return d;
  }, py::arg("values"),
        "The median and the robust sigma (1.4826 x the median absolute deviation) of VALUES: the centre and "
        "spread of the outlier rules (analyze's outlier steps, pypto ranks' stragglers). NaN when empty.");
  m.def("ks_two_sample", [](const std::vector<double>& a, const std::vector<double>& b) {
    const KolmogorovSmirnovTest r = KolmogorovSmirnov(a, b);
    py::dict d;
    d["testable"] = r.testable;
    d["d"] = r.d;
    d["p_value"] = r.p_value;
    d["n_a"] = r.n_a;
    d["n_b"] = r.n_b;
    return d;
  }, py::arg("sample_a"), py::arg("sample_b"),
        "Two-sample Kolmogorov-Smirnov test: D and its asymptotic p-value (Stephens' correction).");
  m.def("holm_adjust", &HolmAdjustedPValues, py::arg("p_values"),
        "Holm's step-down adjustment of the p-values of several tests taken together (a NaN p counts as 1), in "
        "the input's order: significant at alpha when the adjusted p is below alpha.");
  m.def("paired_ratio_test", [](const std::vector<double>& baseline, const std::vector<double>& candidate, double alpha) {
    const PairedRatioTest r = PairedRatio(baseline, candidate, alpha);
    py::dict d;
    d["testable"] = r.testable;
    d["rounds"] = r.rounds;
    d["rounds_dropped"] = r.rounds_dropped;
    d["speedup"] = r.speedup;
    d["baseline_geomean"] = r.baseline_geomean;
    d["candidate_geomean"] = r.candidate_geomean;
    d["ci_low"] = r.ci_low;
    d["ci_high"] = r.ci_high;
    d["relative_half_width"] = r.relative_half_width;
    d["p_value"] = r.p_value;
    d["alpha"] = r.alpha;
    d["significant"] = r.significant;
    d["verdict"] = r.verdict;
    return d;
  }, py::arg("baseline"), py::arg("candidate"), py::arg("alpha") = kDefaultSignificanceAlpha,
        "Paired test of interleaved A/B rounds (round i of each side timed back to back): the speedup "
        "baseline/candidate as the geometric mean of the per-round ratios, its (1 - alpha) CI from Student's t "
        "on the log ratios, the two-sided p of no change, the verdict (faster / slower / no significant change).");
}

}  // namespace pypto::python
