// The engine's results as Python classes (one bound class per file:
// bind_diagnosis.cc, bind_advice.cc, bind_comparison.cc, bind_tuning.cc).
// Each holds the C++ result (and whatever owns it) and renders on demand:
// document() gives the schema'd document as native Python objects, to_json()
// / to_text() / … the same text as the command line.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "advisor/advise_profile.h"
#include "advisor/optimizers.h"
#include "analysis/diagnostic_report.h"
#include "compare/compare.h"
#include "python/bind_common.h"

namespace pypto::python {

// A diagnosis. `report` may alias its owner (the profile session's cache or an
// advice result), which it keeps alive.
struct BoundDiagnosis {
  std::shared_ptr<const DiagnosticReport> report;
};

struct BoundAdvice {
  std::shared_ptr<const advisor::AdviseProfileResult> result;
};

struct BoundComparison {
  std::shared_ptr<const ComparisonReport> report;
};

// A tuning config (save() to a directory writes the same files as `pypto advise`).
struct BoundTuningConfig {
  advisor::TuningConfig config;
};

// `render(value)` (a renderer function or member) run without the GIL, as a Python str.
template <typename Value, typename Render>
py::str RenderedWithoutGil(const Value& value, Render render) {
  std::string text;
  {
    py::gil_scoped_release release;
    text = std::invoke(render, value);
  }
  return Text(text);
}

void BindDiagnosis(py::module_& m);
void BindAdvice(py::module_& m);
void BindComparison(py::module_& m);   // also the module function compare()
void BindTuningConfig(py::module_& m);
void BindLoadedProfile(py::module_& m);  // also load_profile()
void BindCalibration(py::module_& m);

}  // namespace pypto::python
