// Comparison: what ProfileComparer.generate_comparison_report returns
// (wrapped by pypto.comparison.ComparisonReport), and compare(), which makes it.
#include "python/bind_options.h"
#include "python/bind_results.h"
#include "python/py_object_sink.h"

namespace pypto::python {
namespace {

BoundComparison Compare(LoadedProfile& baseline, LoadedProfile& candidate, const std::string& actions_json,
                        double alpha, const py::dict& kw) {
  CompareOptions options;
  options.alpha = alpha;
  if (!actions_json.empty()) options.actions = Unwrap(ParseAppliedActions(actions_json, "actions"));
  const DiagnoseOptions diagnose = DiagnoseOptionsFrom(kw);
  StatusOr<ComparisonReport> report = InternalError("not run");
  {
    py::gil_scoped_release release;
    StatusOr<const DiagnosticReport*> base = baseline.session().Diagnosis(diagnose);
    StatusOr<const DiagnosticReport*> cand = candidate.session().Diagnosis(diagnose);
    if (!base.ok()) report = base.status();
    else if (!cand.ok()) report = cand.status();
    else
      report = CompareProfiles(
          CompareRun{&baseline.graph(), *base, &baseline.session().Classes(), &baseline.session().Structure()},
          CompareRun{&candidate.graph(), *cand, &candidate.session().Classes(), &candidate.session().Structure()},
          options);
  }
  return BoundComparison{std::make_shared<const ComparisonReport>(Unwrap(std::move(report)))};
}

}  // namespace

void BindComparison(py::module_& m) {
  py::class_<BoundComparison>(m, "Comparison", "Baseline vs candidate (schema pypto.compare/1).")
      .def("document", [](const BoundComparison& c) {
        return ToPython([&](io::ValueSink& sink) { c.report->Write(sink); });
      }, "The pypto.compare/1 document as dicts and lists.")
      .def("to_json", [](const BoundComparison& c) { return RenderedWithoutGil(*c.report, &ComparisonReport::to_json); })
      .def("to_text", [](const BoundComparison& c) { return RenderedWithoutGil(*c.report, &ComparisonReport::to_text); })
      .def("to_markdown", [](const BoundComparison& c) { return RenderedWithoutGil(*c.report, &ComparisonReport::to_markdown); })
      .def("to_html", [](const BoundComparison& c) { return RenderedWithoutGil(*c.report, &ComparisonReport::to_html); })
      .def_property_readonly("verdict", [](const BoundComparison& c) { return Text(c.report->Verdict()); })
      .def_property_readonly("identical", [](const BoundComparison& c) { return c.report->Identical(); });

  m.def("compare", &Compare, py::arg("baseline"), py::arg("candidate"), py::arg("actions_json") = "",
        py::arg("alpha") = kDefaultSignificanceAlpha, py::arg("options") = py::dict(),
        "Compares two loaded profiles (the engine's CompareProfiles, as `pypto compare`).");
}

}  // namespace pypto::python
