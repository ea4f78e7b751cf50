// pypto._engine: the Python front end of the engine. Thin by design: every
// function converts arguments, calls the same engine function the CLI calls
// (src/cli), releases the GIL while the engine works, and turns a non-OK
// Status into the typed exception of pypto.errors. Results are bound classes
// that render on demand (bind_results.h: one file per class), documents as
// native Python objects (py_object_sink.h), small dicts, or numpy columns of
// the profile's tables (bind_tables.cc); the Python package (python/pypto)
// wraps them in the brief's classes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "advisor/optimizers.h"
#include "analysis/detector.h"
#include "cli/python_command_table.h"
#include "analysis/statistics.h"
#include "compare/compare.h"
#include "hw/hardware.h"
#include "importers/detect.h"
#include "io/limits.h"
#include "io/output_file.h"
#include "python/bind_common.h"
#include "python/bind_kernels.h"
#include "python/bind_options.h"
#include "python/bind_results.h"
#include "python/bind_statistics.h"
#include "python/bind_text.h"

namespace pypto::python {

void BindEngine(py::module_& m) {
  BindDiagnosis(m);
  BindAdvice(m);
  BindComparison(m);
  BindTuningConfig(m);
  BindLoadedProfile(m);
  BindCalibration(m);

  m.def("kv_cache_patch", [](const std::string& model_config_json) {
    return Text(Unwrap(advisor::KVCacheLayoutOptimizer(ModelConfigFrom(model_config_json)).GenerateLayoutTransformPatch()).text);
  }, py::arg("model_config_json") = "");

  m.def("importers", [] {
    py::list out;
    for (const Importer* importer : AllImporters())
      out.append(py::make_tuple(std::string(importer->name()), std::string(importer->description())));
    return out;
  });
  m.def("write_text_file", [](const std::string& path, const std::string& text, bool force) {
    Check(io::WriteTextFile(path, text, force));
  }, py::arg("path"), py::arg("text"), py::arg("force") = false);
  // The engine's defaults, so that the Python classes do not restate them.
  py::dict defaults;
  defaults["tiling_utilization_threshold"] = kDefaultTilingUtilizationThreshold;
  defaults["mem_bottleneck_ratio_threshold"] = kDefaultMemBottleneckRatioThreshold;
  defaults["significance_alpha"] = kDefaultSignificanceAlpha;
  defaults["calibration_seconds"] = kDefaultCalibrationSeconds;
  defaults["mad_to_standard_deviation"] = kMadToStandardDeviation;
  m.attr("defaults") = defaults;
  // Commands implemented in Python: name -> module (the CLI's own list).
  py::dict python_commands;
  for (const cli::PythonCommand& command : cli::kPythonCommands) python_commands[command.name] = command.module;
  m.attr("python_commands") = python_commands;
  m.attr("__version__") = PYPTO_VERSION;
  m.attr("default_max_input_bytes") = io::kDefaultMaxInputBytes;
}

void RegisterErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const EngineError& e) {
      // The typed exceptions live in Python (pypto/errors.py) so that they can
      // also derive from the builtin they resemble (FileNotFoundError, …).
      py::object errors = py::module_::import("pypto.errors");
      py::object cls = errors.attr("exception_for_code")(StatusCodeName(e.status.code()));
      PyErr_SetObject(cls.ptr(), Text(e.status.ToString()).ptr());
    }
  });
}

}  // namespace pypto::python

PYBIND11_MODULE(_engine, m) {
  m.doc() = "pypto engine bindings (use the pypto package, not this module)";
  pypto::python::RegisterErrorTranslator();
  pypto::python::BindEngine(m);
  pypto::python::BindKernels(m);
  pypto::python::BindText(m);
  pypto::python::BindStatistics(m);
}
