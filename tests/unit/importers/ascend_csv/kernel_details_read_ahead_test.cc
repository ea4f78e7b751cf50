// kernel_details.csv numeric attribute cells (PMU ratios, Task ID …) read on
// one thread and with the read-ahead thread (PYPTO_PARSE_THREADS=2): the
// read-ahead thread parses each cell once and the import takes its number,
// its text and its repaired-cell count from that parse. The expected values
// below follow from the cells as written.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "unit/parse_threads_env.h"

namespace pypto {
namespace {

using testing::Attribute;
using testing::TempDir;

const std::string kHeader =
    "Step Id,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,"
    "aic_mac_ratio,aic_total_cycles\n";

// One row per case for the two PMU columns: shortest form, not shortest
// ("0.0", "1.50", "1e3"), the same cell twice in a row (the memo), not a
// number, and N/A.
const std::vector<std::pair<std::string, std::string>> kPmuCells = {
    {"0.5", "100"}, {"0.0", "100"}, {"0.0", "1e3"}, {"1.50", "1e3"}, {"abc", "N/A"}, {"abc", "7"}, {"N/A", "7"},
};

std::string KernelDetails() {
  std::string text = kHeader;
  for (size_t i = 0; i < kPmuCells.size(); ++i)
    text += "1," + std::to_string(i + 1) + ",2,k" + std::to_string(i) + ",MatMulV2,AI_CORE,17000000000" +
            std::to_string(10 + i) + ".000\t,1.000,0,8," + kPmuCells[i].first + "," + kPmuCells[i].second + "\n";
  return text;
}

// Per task: (text, number) of both PMU columns, in task order.
using Cells = std::vector<std::tuple<std::string, double, std::string, double>>;
struct Imported {
  Cells cells;
  uint64_t repaired = 0;
};

Imported ImportWithThreads(const std::string& dir, const char* threads) {
  testing::ScopedParseThreads env(threads);
  auto p = LoadProfile(dir + "/run_ascend_pt");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  Imported out;
  if (!p.ok()) return out;
  for (uint32_t t = 0; t < p->device_tasks.size(); ++t) {
    auto mac = Attribute(*p, OwnerKind::kDeviceTask, t, "aic_mac_ratio");
    auto cycles = Attribute(*p, OwnerKind::kDeviceTask, t, "aic_total_cycles");
    out.cells.emplace_back(mac.first, mac.second, cycles.first, cycles.second);
  }
  for (const auto& [reason, entry] : p->data_loss)
    if (entry.kind == LossKind::kValueRepaired) out.repaired += entry.count;
  return out;
}

bool SameNumber(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(KernelDetailsReadAhead, NumericCellsMatchTheOneThreadImport) {
  TempDir dir;
  dir.Write("run_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", KernelDetails());
  const Imported one = ImportWithThreads(dir.path(), "1");
  const Imported two = ImportWithThreads(dir.path(), "2");
  ASSERT_EQ(one.cells.size(), kPmuCells.size());
  ASSERT_EQ(two.cells.size(), kPmuCells.size());
  for (size_t i = 0; i < kPmuCells.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(std::get<0>(one.cells[i]), std::get<0>(two.cells[i]));
    EXPECT_TRUE(SameNumber(std::get<1>(one.cells[i]), std::get<1>(two.cells[i])));
    EXPECT_EQ(std::get<2>(one.cells[i]), std::get<2>(two.cells[i]));
    EXPECT_TRUE(SameNumber(std::get<3>(one.cells[i]), std::get<3>(two.cells[i])));
  }
  // The cells as written: text kept as spelled, number parsed; "abc" twice is
  // two repaired cells; N/A is no attribute.
  const Cells expected = {
      {"0.5", 0.5, "100", 100},      {"0.0", 0, "100", 100}, {"0.0", 0, "1e3", 1000}, {"1.50", 1.5, "1e3", 1000},
      {"abc", NAN, "<absent>", NAN}, {"abc", NAN, "7", 7},   {"<absent>", NAN, "7", 7},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(std::get<0>(two.cells[i]), std::get<0>(expected[i]));
    EXPECT_TRUE(SameNumber(std::get<1>(two.cells[i]), std::get<1>(expected[i])));
    EXPECT_EQ(std::get<2>(two.cells[i]), std::get<2>(expected[i]));
    EXPECT_TRUE(SameNumber(std::get<3>(two.cells[i]), std::get<3>(expected[i])));
  }
  EXPECT_EQ(one.repaired, 2u);
  EXPECT_EQ(two.repaired, 2u);
}

}  // namespace
}  // namespace pypto
