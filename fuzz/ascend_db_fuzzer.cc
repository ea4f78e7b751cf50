// Raw bytes -> a temporary .db file -> the Ascend profiler SQLite importer
// (opened read-only and immutable, extensions off).
#include "fuzz/fuzz_common.h"
#include "importers/ascend_db/ascend_db.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "ascend_pytorch_profiler_0.db");
  pypto::Profile profile;
  (void)pypto::ImportAscendDb(path, pypto::fuzz::FuzzImportOptions(), &profile);
  return 0;
}
