// Advice: what TuningAdvisor.advise returns (wrapped by
// pypto.advisor.AdviceReport), with the diagnosis it was made from.
#include "python/bind_results.h"
#include "python/py_object_sink.h"
#include "report/advice_report.h"

namespace pypto::python {

void BindAdvice(py::module_& m) {
  py::class_<BoundAdvice>(m, "Advice", "Recommendations of one profile (schema pypto.advise/1).")
      .def("document", [](const BoundAdvice& a) {
        return ToPython([&](io::ValueSink& sink) { report::WriteAdvice(sink, a.result->advice); });
      }, "The pypto.advise/1 document as dicts and lists.")
      .def("to_json", [](const BoundAdvice& a) { return RenderedWithoutGil(a.result->advice, report::RenderAdviceJson); })
      .def("to_text", [](const BoundAdvice& a) { return RenderedWithoutGil(a.result->advice, report::RenderAdviceText); })
      .def("to_markdown", [](const BoundAdvice& a) { return RenderedWithoutGil(a.result->advice, report::RenderAdviceMarkdown); })
      .def_property_readonly("diagnosis", [](const BoundAdvice& a) {
        return BoundDiagnosis{std::shared_ptr<const DiagnosticReport>(a.result, &a.result->diagnosis)};
      })
      .def_property_readonly("recommendation_count",
                             [](const BoundAdvice& a) { return a.result->advice.recommendations.size(); })
      .def_property_readonly("combined_speedup", [](const BoundAdvice& a) { return a.result->advice.combined_speedup; })
      .def_property_readonly("artifacts", [](const BoundAdvice& a) { return TextList(a.result->advice.artifacts); });
}

}  // namespace pypto::python
