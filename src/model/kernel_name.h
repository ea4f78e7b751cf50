// Kernel names a person can read: CUDA/HIP template instantiations and
// lambdas run to hundreds of characters ("void at::native::(anonymous
// namespace)::CatArrayBatchedCopy<float, unsigned int, 3, 128, 1>(…)").
// Mangled names ("_ZN…") are demangled first. The short form drops the return type, the parameter list and namespace
// qualifiers, elides template arguments below the first level ("<…>") and
// lambda bodies, and, when template arguments or lambdas were elided or the
// name was cut, appends a 4-hex-digit hash of the full name so two kernels
// that differ only in what was elided stay apart. Names that fit are kept whole. Full names stay in JSON, HTML tooltips and the Chrome trace.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pypto {

// Names up to this many characters are kept whole; a short form longer than
// this is cut with "…" (the hash is kept). Source: the name column of the
// analyze tables (64 characters).
inline constexpr size_t kShortKernelNameChars = 64;

std::string ShortKernelName(std::string_view name, size_t max_chars = kShortKernelNameChars);

// The demangled form of an Itanium-mangled name ("_Z…"); "" when it is not one
// or the runtime's demangler refuses it.
std::string Demangle(std::string_view name);

}  // namespace pypto
