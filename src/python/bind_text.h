// Bindings of the engine's terminal text (report/text_table.h) used by the
// Python commands (ranks, fleet), so their tables are the C++ commands' tables.
#pragma once

#include <pybind11/pybind11.h>

namespace pypto::python {

void BindText(pybind11::module_& m);

}  // namespace pypto::python
