// Raw bytes -> the Ascend CSV readers (kernel_details / op_summary /
// op_statistic / step_trace_time / memory CSVs, classified by header), then
// step placement on the tasks read.
#include "fuzz/fuzz_common.h"
#include "importers/ascend_csv/ascend_tables.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > pypto::fuzz::kMaxFuzzInputBytes) return -1;
  const std::string path = pypto::fuzz::WriteInput(data, size, "table.csv");
  const pypto::ImportOptions options = pypto::fuzz::FuzzImportOptions();
  pypto::ascend::RunContext run;
  run.options = &options;
  pypto::Profile profile;
  if (pypto::ascend::ImportAscendCsv(path, run, &profile).ok()) pypto::ascend::PlaceStepsOnTasks(&profile);
  return 0;
}
