// The planted-profile builder (tests/unit/planted/) compiled into this binary
// too, so that the one-file-per-detector tests here can plant the Ascend /
// CUDA anti-patterns of detectors 6-10 without copying the builder.
#include "unit/planted/planted_profiles_helpers.cc"  // NOLINT(bugprone-suspicious-include)
