#include "importers/common/parse_threads.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace pypto {

size_t DefaultParseThreads() {
  if (const char* forced = std::getenv("PYPTO_PARSE_THREADS")) {
    const long n = std::strtol(forced, nullptr, 10);
    if (n >= 1 && n <= 64) return static_cast<size_t>(n);
  }
  const size_t cores = std::thread::hardware_concurrency();
  return std::clamp<size_t>(cores, 1, kMaxParseThreads);
}

}  // namespace pypto
