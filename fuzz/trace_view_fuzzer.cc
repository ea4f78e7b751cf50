// Raw bytes -> the Ascend timeline importer (trace_view.json / msprof_*.json).
#include "fuzz/fuzz_common.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "trace_view.json");
  pypto::Profile profile;
  (void)pypto::ImportAscendTraceView(path, pypto::fuzz::FuzzImportOptions(), &profile);
  return 0;
}
