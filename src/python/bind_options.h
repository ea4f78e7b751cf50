// Engine options from the keyword arguments the Python classes collect.
#pragma once

#include <string>

#include "advisor/model_config.h"
#include "analysis/detector.h"
#include "python/bind_common.h"

namespace pypto::python {

// Diagnose options from a dict of the HotspotDetector keywords (None = default);
// an unknown key or an invalid value raises InvalidArgumentError.
DiagnoseOptions DiagnoseOptionsFrom(const py::dict& kw);

// A transformers config.json text ("" = none: inferred from the profile).
advisor::ModelConfig ModelConfigFrom(const std::string& config_json);

}  // namespace pypto::python
