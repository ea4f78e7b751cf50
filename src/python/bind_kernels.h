// Bindings of pypto's fused CPU kernels (src/kernels) used by pypto.fusion.
#pragma once

#include <pybind11/pybind11.h>

namespace pypto::python {

void BindKernels(pybind11::module_& m);

}  // namespace pypto::python
