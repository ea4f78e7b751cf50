// Raw bytes -> the Kineto (PyTorch profiler Chrome trace) importer, plain or gzip.
#include "fuzz/fuzz_common.h"
#include "importers/kineto/kineto_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "trace.json");
  pypto::Profile profile;
  (void)pypto::KinetoImporter()->Import(path, pypto::fuzz::FuzzImportOptions(), &profile);
  return 0;
}
