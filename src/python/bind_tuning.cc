// TuningConfig: what TilingOptimizer.generate_tuning_config returns (wrapped
// by pypto.optimizers.TuningConfig).
#include "python/bind_results.h"
#include "python/py_object_sink.h"

namespace pypto::python {

void BindTuningConfig(py::module_& m) {
  py::class_<BoundTuningConfig>(m, "TuningConfig", "Tiling tuning input (schema pypto.tiling/1).")
      .def("detail", [](const BoundTuningConfig& t) {
        return ToPython([&](io::ValueSink& sink) { t.config.WriteDetail(sink); });
      }, "The pypto.tiling/1 document as dicts and lists: every flagged op with shapes and figures.")
      .def("detail_json", [](const BoundTuningConfig& t) { return Text(t.config.DetailJson()); })
      .def("tune_ops_json", [](const BoundTuningConfig& t) { return Text(t.config.TuneOpsFileJson()); },
           "The AOE --tune_ops_file text: {\"tune_ops_name\": [kernel names]}.")
      .def("tune_ops", [](const BoundTuningConfig& t) {
        return ToPython([&](io::ValueSink& sink) { t.config.WriteTuneOpsFile(sink); });
      }, "The AOE --tune_ops_file document: {\"tune_ops_name\": [kernel names, each once]}.")
      .def_property_readonly("kernel_names", [](const BoundTuningConfig& t) {
        py::list out;
        for (const advisor::TuneOp& op : t.config.ops) out.append(Text(op.kernel_name));
        return out;
      }, "Kernel names of the flagged ops, in op order (repeats kept).")
      .def_property_readonly("backend", [](const BoundTuningConfig& t) {
        return std::string(advisor::BackendName(t.config.backend));
      })
      .def_property_readonly("op_count", [](const BoundTuningConfig& t) { return t.config.ops.size(); })
      .def("save", [](const BoundTuningConfig& t, const std::string& directory, bool force) {
        Check(advisor::EnsureDirectory(directory));
        return TextList(Unwrap(t.config.Save(directory, force)));
      }, py::arg("directory"), py::arg("force") = false,
      "Writes the files of `pypto advise` into DIRECTORY (Ascend: aoe_tune_ops.cfg, aoe_tuning_ops.json, "
      "aoe_tune.sh; others: padded_gemm_shapes.json); returns the paths.");
}

}  // namespace pypto::python
