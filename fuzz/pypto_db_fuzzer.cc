// Raw bytes -> a temporary .db file -> the saved-profile importer ("pypto",
// opened read-only and immutable, extensions off); a profile that loads then
// goes through the graph and every report (a saved file is trusted by nothing
// downstream: ids, parents and durations come from the file).
#include "fuzz/fuzz_common.h"
#include "importers/pypto_db/pypto_db_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "saved_profile.db");
  pypto::Profile profile;
  if (pypto::ImportPyptoDb(path, pypto::fuzz::FuzzImportOptions(), &profile).ok())
    pypto::fuzz::RunGraphAndReports(profile);
  return 0;
}
