// The planted-profile builder lives with the planted tests; this unit links
// it in (the test CMake builds each folder's *_test.cc and *_helpers.cc).
#include "unit/planted/planted_profiles_helpers.cc"  // NOLINT(bugprone-suspicious-include)
