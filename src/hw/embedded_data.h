// Data files built into the binary (data/**/*.json, see cmake/embed_data.cmake).
#pragma once

#include <string_view>

namespace pypto {

// Text of data/<name> ("hardware/hardware.json", "op_classes.json"); empty when absent.
std::string_view EmbeddedData(std::string_view name);

}  // namespace pypto
