// The text export (kernel_details.csv) and the database export
// (ascend_pytorch_profiler_0.db) of two separate runs of the same torch_npu
// level-1 AlexNet workload (fixtures pta_level1_alexnet_cann8 and
// pta_db_level1_alexnet_cann8) must describe the same compute work. Each
// expectation was checked by hand first with python (csv.DictReader on
// kernel_details.csv; sqlite3 on COMPUTE_TASK_INFO joined to STRING_IDS):
// compute tasks (core type AI_CORE / AI_VECTOR_CORE / MIX_AIV / MIX_AIC /
// AI_CPU, with an op type, i.e. a kernel_details row / a COMPUTE_TASK_INFO row)
// are 185 on both sides, with the same 32 op types, the same counts per
// op type, the same 77 kernel names and the same set of block dims per op type.
// Times differ between runs and are not compared. The database also has 17
// TASK rows typed AI_CORE (9) / KERNEL_AICORE (8) without COMPUTE_TASK_INFO
// (no name, op type nor block dim): they have no kernel_details counterpart and
// are left out by the op-type condition.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "importers/detect.h"

namespace pypto {
namespace {

const std::string kFixtures = PYPTO_FIXTURES_DIR;

bool IsCompute(std::string_view core) {
  return core == "AI_CORE" || core == "AI_VECTOR_CORE" || core == "MIX_AIV" || core == "MIX_AIC" ||
         core == "AI_CPU";
}

struct ComputeView {
  std::map<std::string, int> by_op_type;
  std::map<std::string, int> by_core_type;
  std::set<std::string> names;
  std::map<std::string, std::set<int32_t>> block_dims;
  int total = 0;
  std::set<std::string> device_kinds;
};

ComputeView View(const Profile& p) {
  ComputeView v;
  const DeviceTaskTable& t = p.device_tasks;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string core(p.Str(t.core_type[i]));
    const std::string op(p.Str(t.op_type(i)));
    if (!IsCompute(core) || op.empty()) continue;
    ++v.total;
    ++v.by_op_type[op];
    ++v.by_core_type[core];
    v.names.insert(std::string(p.Str(t.name[i])));
    v.block_dims[op].insert(t.block_dim(i));
  }
  for (const DeviceRow& d : p.devices.rows) v.device_kinds.insert(DeviceKindName(d.kind));
  return v;
}

TEST(AscendCsvDbAgreement, AlexNetLevel1SameComputeWork) {
  auto csv = LoadProfile(kFixtures + "/ascend/pta_level1_alexnet_cann8");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  auto db = LoadProfile(kFixtures + "/ascend/pta_db_level1_alexnet_cann8");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  const ComputeView a = View(*csv);
  const ComputeView b = View(*db);

  // Counts of compute tasks: equal by hand (185 and 185); separate runs may
  // differ, so the stated tolerance is 5 %.
  EXPECT_EQ(a.total, 185);
  EXPECT_NEAR(b.total, a.total, a.total * 0.05);
  // The same op types (32), with their counts, and the same kernel names (77).
  EXPECT_EQ(a.by_op_type.size(), 32u);
  EXPECT_EQ(a.by_op_type, b.by_op_type);
  EXPECT_EQ(a.names.size(), 77u);
  EXPECT_EQ(a.names, b.names);
  // The same compute core types: AI_VECTOR_CORE 149, AI_CORE 23, MIX_AIV 13.
  const std::map<std::string, int> cores = {{"AI_CORE", 23}, {"AI_VECTOR_CORE", 149}, {"MIX_AIV", 13}};
  EXPECT_EQ(a.by_core_type, cores);
  EXPECT_EQ(b.by_core_type, cores);
  // Block dims per op type (e.g. MatMulV2 {16, 21, 22, 24}, Conv2D {16}).
  EXPECT_EQ(a.block_dims, b.block_dims);
  EXPECT_EQ(a.block_dims.at("MatMulV2"), (std::set<int32_t>{16, 21, 22, 24}));
  EXPECT_EQ(a.block_dims.at("Conv2D"), (std::set<int32_t>{16}));
  // Both are one NPU.
  EXPECT_EQ(a.device_kinds, (std::set<std::string>{"npu"}));
  EXPECT_EQ(a.device_kinds, b.device_kinds);
}

}  // namespace
}  // namespace pypto
