#include "python/bind_kernels.h"

namespace pypto::python {

// The fused norm kernels are added here by pypto.fusion's kernel work; until
// then pypto.fusion falls back to torch's own fused ops.
void BindKernels(pybind11::module_& m) { m.attr("has_fused_kernels") = false; }

}  // namespace pypto::python
