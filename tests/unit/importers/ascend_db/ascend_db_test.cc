#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "importers/ascend_db/ascend_db.h"
#include "importers/detect.h"

namespace pypto {
namespace {

const std::string kFixture =
    std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_db_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/pypto_ascend_db_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + dir_).c_str()); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string Write(const std::string& name, const std::string& data) const {
    std::ofstream(Path(name), std::ios::binary) << data;
    return Path(name);
  }

 private:
  std::string dir_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string MakeDb(const TempDir& dir, const std::string& name, const char* sql) {
  std::string path = dir.Path(name);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  return path;
}

// Expected figures checked with python3 sqlite3 on the fixture (opened with
// mode=ro&immutable=1):
//  - TASK 552 rows (none with NULL connectionId), sum(endNs-startNs) = 367681571 ns;
//    187 join COMPUTE_TASK_INFO (kernels), 296 join COMMUNICATION_TASK_INFO
//    (Notify Wait 112, Write Value 112, SDMA 72); of the other 69: AI_CORE 9 (4 of
//    them the collectives' tasks: same connectionId as a COMMUNICATION_OP row) +
//    KERNEL_AICORE 8 kernels, EVENT_RECORD 16 + EVENT_WAIT 10 sync, MEMCPY_ASYNC 24,
//    PROFILING_ENABLE/DISABLE 2 other;
//  - COMMUNICATION_OP 4 (hcom_allReduce__210_{0..3}_1), sum dur 102108100 ns;
//  - TASK_PMU_INFO 5180 rows on 185 tasks (28 metrics each);
//  - CANN_API 710 (acl 515, node 191, hccl 4); 550 TASK rows share a connectionId
//    with a CANN_API row;
//  - PYTORCH_API 2460: op 860 (one ProfilerStep#50), queue 318, trace 1282; 169 op
//    rows carry a connectionId; through CONNECTION_IDS they reach 500 distinct TASK
//    rows and 191 CANN_API rows; the queue rows give 318 CONNECTION_IDS matches;
//  - 4 distinct globalTid; NPU_INFO (0, 'Ascend910B'); STEP_TIME (50, 1736410576386409710, 1736410576538298460);
//  - first PYTORCH_API startNs is TEXT '1736410576395167660'.
TEST(AscendDbTest, LoadsFixtureWithExpectedCounts) {
  StatusOr<Profile> loaded = LoadProfile(kFixture);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Profile& p = *loaded;
  EXPECT_EQ(p.metadata.at("format"), "ascend-db");
  EXPECT_EQ(p.metadata.at("format_version"), "1.0.0");
  EXPECT_EQ(p.TotalDataLoss(), 0u);

  ASSERT_EQ(p.device_tasks.size(), 552u + 4u);
  std::map<DeviceTaskKind, size_t> kinds;
  TimeNs task_total = 0, comm_op_total = 0;
  size_t comm_ops = 0, with_block_dim = 0, with_ext = 0, with_corr = 0;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) {
    ++kinds[p.device_tasks.kind[i]];
    if (p.Str(p.device_tasks.category[i]) == "communication_op") {
      ++comm_ops;
      comm_op_total += p.device_tasks.dur[i];
    } else {
      task_total += p.device_tasks.dur[i];
    }
    with_block_dim += p.device_tasks.block_dim(i) > 0;
    with_ext += p.device_tasks.external_id[i] != kNoId;
    with_corr += p.device_tasks.correlation[i] != kNoId;
  }
  EXPECT_EQ(comm_ops, 4u);
  EXPECT_EQ(task_total, 367681571);
  EXPECT_EQ(comm_op_total, 102108100);
  // 187 compute kernels + 13 of the 17 AI_CORE/KERNEL_AICORE rows: the other 4
  // AI_CORE rows share a COMMUNICATION_OP's connectionId (hcom_allReduce__210_{0..3}_1,
  // 88753693 + 2184004 + 2416068 + 8767755 ns) and are the collectives' own tasks.
  EXPECT_EQ(kinds[DeviceTaskKind::kKernel], 187u + 13u);
  EXPECT_EQ(kinds[DeviceTaskKind::kCommunication], 296u + 4u + 4u);
  EXPECT_EQ(kinds[DeviceTaskKind::kSync], 26u);
  EXPECT_EQ(kinds[DeviceTaskKind::kMemcpy], 24u);
  // The 2 TASK rows typed PROFILING_ENABLE / PROFILING_DISABLE: the
  // profiler's own markers, not work.
  EXPECT_EQ(kinds[DeviceTaskKind::kOther], 0u);
  EXPECT_EQ(kinds[DeviceTaskKind::kAnnotation], 2u);
  EXPECT_EQ(with_block_dim, 185u);  // COMPUTE_TASK_INFO rows with blockDim > 0 (the 2 DSA_SQE rows have 0)
  EXPECT_EQ(with_corr, 556u);       // TASK.connectionId and COMMUNICATION_OP.connectionId
  EXPECT_EQ(with_ext, 500u);        // PYTORCH_API -> CONNECTION_IDS -> TASK

  size_t pmu = 0;
  for (size_t a = 0; a < p.attributes.size(); ++a)
    pmu += p.attributes.owner_kind(a) == OwnerKind::kDeviceTask && p.Str(p.attributes.key(a)).starts_with("ai");
  EXPECT_EQ(pmu, 5180u);

  std::map<HostOpKind, size_t> host;
  size_t cann_ext = 0, ops_ext = 0;
  for (size_t i = 0; i < p.host_ops.size(); ++i) {
    ++host[p.host_ops.kind[i]];
    if (p.host_ops.kind[i] == HostOpKind::kRuntime) {
      cann_ext += p.host_ops.external_id[i] != kNoId;
    } else {
      ops_ext += p.host_ops.external_id[i] != kNoId;
    }
  }
  EXPECT_EQ(p.host_ops.size(), 710u + 2460u);
  EXPECT_EQ(host[HostOpKind::kRuntime], 710u);
  EXPECT_EQ(host[HostOpKind::kOperator], 859u);
  EXPECT_EQ(host[HostOpKind::kUserAnnotation], 1u);
  EXPECT_EQ(host[HostOpKind::kOther], 318u);
  EXPECT_EQ(host[HostOpKind::kPython], 1282u);
  EXPECT_EQ(cann_ext, 191u);
  EXPECT_EQ(ops_ext, 169u);
  EXPECT_EQ(p.metadata.at("ascend_db.cann_to_task_links"), "550");
  EXPECT_EQ(p.metadata.at("ascend_db.torch_to_task_links"), "500");
  EXPECT_EQ(p.flows.size(), 318u);  // async_task_queue ends of Enqueue/Dequeue

  size_t host_tracks = 0;
  for (size_t t = 0; t < p.tracks.size(); ++t) host_tracks += p.tracks.kind[t] == TrackKind::kHostThread;
  EXPECT_EQ(host_tracks, 4u);

  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.Str(p.devices.rows[0].name), "Ascend910B");
  EXPECT_EQ(p.devices.rows[0].kind, DeviceKind::kNpu);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps.rows[0].number, 50);
  EXPECT_EQ(p.steps.rows[0].ts, 1736410576386409710);
  EXPECT_EQ(p.steps.rows[0].dur, 1736410576538298460 - 1736410576386409710);

  // TEXT startNs read exactly: the first PYTORCH_API row (after the 710 CANN rows).
  EXPECT_EQ(p.host_ops.ts[710], 1736410576395167660);
  EXPECT_EQ(p.counters.size(), 3u);  // AICORE_FREQ
}

TEST(AscendDbTest, SqliteWithoutProfilerTablesIsRefusedClearly) {
  TempDir dir;
  std::string path = MakeDb(dir, "analysis.db", "CREATE TABLE STRING_IDS(id INTEGER, value TEXT);");
  StatusOr<Profile> loaded = LoadProfile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("analysis.db: not an Ascend profiler database: missing table TASK"),
            std::string::npos)
      << loaded.status().message();
}

TEST(AscendDbTest, NonSqliteFileNamedDbIsNotClaimed) {
  TempDir dir;
  std::string path = dir.Write("ascend_pytorch_profiler_0.db", "this is not a database\n");
  StatusOr<const Importer*> detected = DetectFormat(path);
  if (detected.ok()) {
    EXPECT_NE((*detected)->name(), "ascend-db");
  }
  Profile p;
  Status s = ImportAscendDb(path, {}, &p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not an SQLite database"), std::string::npos) << s.message();
}

TEST(AscendDbTest, CorruptDatabaseGivesErrorNotCrash) {
  TempDir dir;
  std::string good = ReadFile(kFixture);
  ASSERT_GT(good.size(), 100000u);
  // Keep the header, overwrite pages after the first with garbage.
  std::string bad = good;
  for (size_t i = 4096; i < bad.size(); i += 7) bad[i] = static_cast<char>(i * 131);
  std::string path = dir.Write("corrupt.db", bad);
  Profile p;
  Status s = ImportAscendDb(path, {}, &p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("corrupt.db"), std::string::npos) << s.message();
  // Truncated to half: also a clean error.
  std::string half = dir.Write("half.db", good.substr(0, good.size() / 2));
  Profile q;
  Status t = ImportAscendDb(half, {}, &q);
  if (!t.ok()) {
    EXPECT_NE(t.message().find("half.db"), std::string::npos) << t.message();
  }
}

TEST(AscendDbTest, RefusesSymlinkUnlessAllowed) {
  TempDir dir;
  std::string link = dir.Path("link.db");
  ASSERT_EQ(symlink(kFixture.c_str(), link.c_str()), 0);
  Profile p;
  Status s = ImportAscendDb(link, {}, &p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s.message();
}

TEST(AscendDbTest, ToleratesMissingOptionalTablesAndNewColumnNames) {
  // Newer schema names blockNum/mixBlockNum; only the required tables present.
  TempDir dir;
  std::string path = MakeDb(dir, "msprof_20250101000000.db", R"SQL(
    CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO STRING_IDS VALUES (1,'MatMulV3'),(2,'MIX_AIC'),(3,'KERNEL_MIX_AIC');
    CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER,
                      globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER, modelId INTEGER);
    INSERT INTO TASK VALUES (1000, 3000, 1, 7, 11, 99, 3, 4294967295, 5, 12, 4294967295);
    INSERT INTO TASK VALUES (5000, 4000, 1, 8, 12, 99, 3, 0, 5, 13, 0);
    CREATE TABLE COMPUTE_TASK_INFO(name INTEGER, globalTaskId INTEGER, blockNum INTEGER, mixBlockNum INTEGER,
                                   taskType INTEGER, opType INTEGER);
    INSERT INTO COMPUTE_TASK_INFO VALUES (1, 11, 20, 40, 2, 1);
  )SQL");
  StatusOr<Profile> loaded = LoadProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Profile& p = *loaded;
  ASSERT_EQ(p.device_tasks.size(), 1u);
  EXPECT_EQ(p.device_tasks.block_dim(0), 20);
  EXPECT_EQ(p.device_tasks.mix_block_dim(0), 40);
  EXPECT_EQ(p.Str(p.device_tasks.core_type[0]), "MIX_AIC");
  EXPECT_EQ(p.Str(p.device_tasks.op_type(0)), "MatMulV3");
  EXPECT_EQ(p.tracks.device[p.device_tasks.track[0]], 1);
  EXPECT_EQ(p.tracks.stream[p.device_tasks.track[0]], 5);
  EXPECT_EQ(p.device_tasks.correlation[0], 7);
  EXPECT_EQ(p.data_loss.count("task without valid startNs/endNs (skipped)"), 1u);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

// The Level0 2-rank allreduce DB (rank 0): TASK types 9 rows AI_CORE, 4 of
// which share a COMMUNICATION_OP's connectionId and appear in neither
// COMPUTE_TASK_INFO nor COMMUNICATION_TASK_INFO (sqlite3, immutable):
//   select n.value, t.endNs-t.startNs from TASK t join STRING_IDS s on s.id=t.taskType
//     join COMMUNICATION_OP c on c.connectionId=t.connectionId join STRING_IDS n on n.id=c.opName
//     where s.value='AI_CORE'
// gives hcom_allReduce__576_{0,1,2,3}_1 of 75076921, 2245104, 2364868, 10207364 ns; the
// other 5 AI_CORE rows last 141121 ns in all. Those 4 are the collectives' tasks.
TEST(AscendDbTest, CollectiveTasksTypedAiCoreAreCommunication) {
  const std::string db = std::string(PYPTO_FIXTURES_DIR) +
                         "/ascend/pta_db_level0_2rank_allreduce/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                         "ascend_pytorch_profiler_0.db";
  if (std::ifstream(db).fail()) GTEST_SKIP() << "fixture missing: " << db;
  auto p = LoadProfile(db);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::map<std::string, int64_t> collective_ns;
  int64_t ai_core_kernel_ns = 0;
  for (size_t i = 0; i < p->device_tasks.size(); ++i) {
    if (p->Str(p->device_tasks.category[i]) != "AI_CORE") continue;
    if (p->device_tasks.kind[i] == DeviceTaskKind::kCommunication)
      collective_ns[std::string(p->Str(p->device_tasks.name[i]))] += p->device_tasks.dur[i];
    else if (p->device_tasks.kind[i] == DeviceTaskKind::kKernel)
      ai_core_kernel_ns += p->device_tasks.dur[i];
  }
  EXPECT_EQ(collective_ns, (std::map<std::string, int64_t>{{"hcom_allReduce__576_0_1", 75076921},
                                                          {"hcom_allReduce__576_1_1", 2245104},
                                                          {"hcom_allReduce__576_2_1", 2364868},
                                                          {"hcom_allReduce__576_3_1", 10207364}}));
  EXPECT_EQ(ai_core_kernel_ns, 141121);
  // HCCL sub-tasks (COMMUNICATION_TASK_INFO, taskType N/A there) are named by
  // TASK.taskType: select s.value, count(*) from TASK t join STRING_IDS s on
  // s.id = t.taskType where t.globalTaskId in (select globalTaskId from
  // COMMUNICATION_TASK_INFO) group by 1 → Notify Wait 112, SDMA 72, Write Value 112.
  // The op name is then only on the COMMUNICATION_OP row and the op's own task.
  std::map<std::string, int> calls;
  for (size_t i = 0; i < p->device_tasks.size(); ++i) ++calls[std::string(p->Str(p->device_tasks.name[i]))];
  EXPECT_EQ(calls["Notify Wait"], 112);
  EXPECT_EQ(calls["SDMA"], 72);
  EXPECT_EQ(calls["Write Value"], 112);
  EXPECT_EQ(calls["hcom_allReduce__576_0_1"], 2);
}

}  // namespace
}  // namespace pypto
