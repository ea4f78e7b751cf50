// Calibration of this machine's CPU peaks (pypto calibrate, pypto.calibrate()).
#include "hw/hardware.h"
#include "python/bind_results.h"

namespace pypto::python {

void BindCalibration(py::module_& m) {
  m.def("calibrate", [](double seconds, int threads, const std::string& output) {
    const CalibrationOptions options = CalibrationOptionsFor(seconds, threads);
    StatusOr<CalibrationResult> result = InternalError("not run");
    {
      py::gil_scoped_release release;
      result = CalibrateThisMachine(options);
    }
    CalibrationResult r = Unwrap(std::move(result));
    const std::string path = output.empty() ? DefaultCalibrationPath() : output;
    Check(SaveCalibration(r, path));
    py::dict d;
    d["path"] = Text(path);
    d["cpu_model"] = Text(r.cpu_model);
    d["threads"] = r.threads;
    d["fp32_flops"] = r.fp32_flops;
    d["fp32_gemm_flops"] = r.fp32_gemm_flops;
    d["memory_bandwidth"] = r.memory_bandwidth;
    d["method"] = Text(r.method);
    d["measured_at"] = Text(r.measured_at);
    return d;
  }, py::arg("seconds") = kDefaultCalibrationSeconds, py::arg("threads") = 0, py::arg("output") = "");
  m.def("calibration_path", [] { return Text(DefaultCalibrationPath()); });
  m.def("has_calibration", [](const std::string& path) { return LoadCalibration(path).ok(); }, py::arg("path") = "");

}

}  // namespace pypto::python
