#include "python/bind_options.h"

#include <map>
#include <vector>

#include "advisor/advise_profile.h"

namespace pypto::python {

DiagnoseOptions DiagnoseOptionsFrom(const py::dict& kw) {
  DiagnoseOptions o;
  for (auto item : kw) {
    const std::string key = py::str(item.first);
    py::handle v = item.second;
    if (v.is_none()) continue;
    if (key == "ai_core_theoretical_peak") o.ai_core_theoretical_peak = v.cast<double>();
    else if (key == "hbm_bandwidth") o.hbm_bandwidth = v.cast<double>();
    else if (key == "tiling_utilization_threshold") o.tiling_utilization_threshold = v.cast<double>();
    else if (key == "mem_bottleneck_ratio_threshold") o.mem_bottleneck_ratio_threshold = v.cast<double>();
    else if (key == "hardware") o.hardware_name = v.cast<std::string>();
    else if (key == "step") o.step = v.cast<int64_t>();
    else if (key == "model_arch") o.model_arch = v.cast<std::string>();
    else if (key == "only") o.only = v.cast<std::vector<std::string>>();
    else if (key == "params") o.params = v.cast<std::map<std::string, double>>();
    else throw EngineError{InvalidArgumentError("unknown diagnosis option '" + key + "'")};
  }
  Check(ValidateDiagnoseOptions(o));
  return o;
}

advisor::ModelConfig ModelConfigFrom(const std::string& config_json) {
  if (config_json.empty()) return {};
  return Unwrap(advisor::ParseHfConfigJson(config_json, "model_config"));
}

}  // namespace pypto::python
