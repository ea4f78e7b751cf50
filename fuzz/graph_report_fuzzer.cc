// Raw bytes -> detection + import -> call graph -> analysis summary -> text and
// JSON reports and the Chrome trace export; both JSON outputs must parse back.
#include "fuzz/fuzz_common.h"
#include "importers/detect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "input");
  auto profile = pypto::LoadProfile(path, pypto::fuzz::FuzzImportOptions());
  if (profile.ok()) pypto::fuzz::RunGraphAndReports(*profile);
  return 0;
}
