// Raw bytes -> format detection -> whichever importer claims them (Kineto,
// Kineto legacy, Ascend CSVs, trace_view, SQLite database, ...).
#include <cstdio>
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "importers/detect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "input");
  auto profile = pypto::LoadProfile(path, pypto::fuzz::FuzzImportOptions());
  // PYPTO_FUZZ_VERBOSE=1: one line per input (checks that the seeds load).
  static const bool verbose = std::getenv("PYPTO_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    if (profile.ok())
      std::fprintf(stderr, "loaded: format %s, %zu host ops, %zu device tasks, %llu data loss\n",
                   profile->metadata["format"].c_str(), profile->host_ops.size(), profile->device_tasks.size(),
                   static_cast<unsigned long long>(profile->TotalDataLoss()));
    else
      std::fprintf(stderr, "error: %s\n", profile.status().ToString().c_str());
  }
  return 0;
}
