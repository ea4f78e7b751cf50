// Bindings of the engine's statistics (analysis/statistics.h, the tests of
// compare/compare.h), so Python computes no percentile, t-test or robust
// spread of its own: drift, ranks, fleet, collection and the A/B runner call these.
#pragma once

#include <pybind11/pybind11.h>

namespace pypto::python {

void BindStatistics(pybind11::module_& m);

}  // namespace pypto::python
