// Diagnosis: what HotspotDetector.detect returns (wrapped by
// pypto.diagnostics.DiagnosticReport).
#include "python/bind_results.h"
#include "python/py_object_sink.h"
#include "report/diagnosis_report.h"

namespace pypto::python {

void BindDiagnosis(py::module_& m) {
  py::class_<BoundDiagnosis>(m, "Diagnosis", "The diagnosis of one profile (schema pypto.diagnose/1).")
      .def("document", [](const BoundDiagnosis& d) {
        return ToPython([&](io::ValueSink& sink) { report::WriteDiagnosis(sink, *d.report); });
      }, "The pypto.diagnose/1 document as dicts and lists (the JSON form, without the text).")
      .def("to_json", [](const BoundDiagnosis& d) { return RenderedWithoutGil(*d.report, report::RenderDiagnosisJson); })
      .def("to_text", [](const BoundDiagnosis& d) { return RenderedWithoutGil(*d.report, report::RenderDiagnosisText); })
      .def("to_markdown", [](const BoundDiagnosis& d) { return RenderedWithoutGil(*d.report, report::RenderDiagnosisMarkdown); })
      .def_property_readonly("issue_count", [](const BoundDiagnosis& d) { return d.report->issues.size(); })
      .def_property_readonly("estimated_combined_speedup",
                             [](const BoundDiagnosis& d) { return d.report->estimated_combined_speedup; })
      .def_property_readonly("estimated_saved_ns", [](const BoundDiagnosis& d) { return d.report->estimated_saved_ns; })
      .def_property_readonly("step_time_ns", [](const BoundDiagnosis& d) { return d.report->step_time_ns; })
      .def_property_readonly("hardware_id", [](const BoundDiagnosis& d) { return Text(d.report->hardware_id); })
      .def_property_readonly("notes", [](const BoundDiagnosis& d) { return TextList(d.report->notes); });
}

}  // namespace pypto::python
