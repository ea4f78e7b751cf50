// analysis.db beside the profiler output (importers/ascend_db/analysis_db.h).
//
// Expected figures are the raw rows (sqlite3 "select * from …"):
//  - pta_level2_llm_pp2dp2_ranks1_3/rank_1: CommAnalyzerTime holds 15 ops of
//    step13, the same ops communication.json of that rank lists (3 p2p + 12
//    collective), with the same Elapse/Transit/Wait/Synchronization/Idle times
//    in ms: the test reads both files into two profiles and compares every
//    time key, so the analysis.db reader must give exactly what the JSON gives.
//  - pta_db_level0_2rank_allreduce/rank0: StepTraceTime step 50: computing
//    8843.91 µs, communication_not_overlapped 85881.122 µs, free 25900.158 µs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "importers/ascend_csv/ascend_tables.h"
#include "importers/ascend_db/analysis_db.h"
#include "importers/detect.h"

namespace pypto::testing {
namespace {

namespace fs = std::filesystem;

const std::string kRank1 = AscendFixture("pta_level2_llm_pp2dp2_ranks1_3/rank_1_ascend_pt/ASCEND_PROFILER_OUTPUT");
const std::string kLevel0 = AscendFixture("pta_db_level0_2rank_allreduce");

// "communication/…" device attributes whose key ends in one of the time fields.
std::map<std::string, double> CommunicationTimes(const Profile& p) {
  std::map<std::string, double> out;
  for (size_t i = 0; i < p.attributes.size(); ++i) {
    const std::string key(p.Str(p.attributes.key(i)));
    // "Total Op Info" is communication.json's sum over a group's ops; the
    // database keeps the ops only.
    if (key.rfind("communication/", 0) != 0 || key.find("/Total Op Info/") != std::string::npos) continue;
    for (const char* field : {"Elapse Time(ms)", "Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)",
                              "Idle Time(ms)", "Wait Time Ratio", "HCCS Transit Size(MB)", "HCCS Bandwidth(GB/s)"})
      if (key.size() > std::string(field).size() && key.ends_with(std::string("/") + field)) out[key] = p.attributes.number(i);
  }
  return out;
}

TEST(AnalysisDb, CommunicationEqualsCommunicationJson) {
  if (!fs::exists(kRank1)) GTEST_SKIP() << "fixture missing: " << kRank1;
  Profile from_json, from_db;
  ASSERT_TRUE(ascend::ImportCommunicationJson(kRank1 + "/communication.json", 1, {}, &from_json).ok());
  ascend::ImportAnalysisDb(kRank1 + "/analysis.db", 1, {}, {}, &from_db);
  EXPECT_EQ(from_db.TotalDataLoss(), 0u);
  const auto json = CommunicationTimes(from_json);
  const auto db = CommunicationTimes(from_db);
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.size(), db.size());
  for (const auto& [key, value] : json) {
    auto it = db.find(key);
    ASSERT_NE(it, db.end()) << "analysis.db lacks " << key;
    EXPECT_NEAR(it->second, value, 1e-9 * std::max(1.0, std::fabs(value))) << key;
  }
  // Spot check one raw row: hcom_batchSendRecv__764_4_1 elapsed 164.09654 ms, waited 163.64802 ms.
  EXPECT_DOUBLE_EQ(db.at("communication/step13/hcom_batchSendRecv__764_4_1@3985310499963036764/Elapse Time(ms)"),
                   164.09654);
}

TEST(AnalysisDb, StepBreakdownFillsTheDatabaseStep) {
  if (!fs::exists(kLevel0)) GTEST_SKIP() << "fixture missing: " << kLevel0;
  auto p = LoadProfile(kLevel0 + "/rank0_ascend_pt");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const StepRow* step50 = nullptr;
  for (const StepRow& s : p->steps.rows)
    if (s.number == 50 && s.computing != kUnknownNs) step50 = &s;
  ASSERT_NE(step50, nullptr);
  EXPECT_EQ(step50->computing, 8843910);
  EXPECT_EQ(step50->communication_not_overlapped, 85881122);
  EXPECT_EQ(step50->free, 25900158);
}

TEST(AnalysisDb, TruncatedFileIsCountedAsLoss) {
  if (!fs::exists(kRank1)) GTEST_SKIP() << "fixture missing: " << kRank1;
  TempDir dir;
  std::ifstream in(kRank1 + "/analysis.db", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 32768u);  // 8 pages of 4096 B (header offsets 16 and 28)
  const std::string cut = dir.Write("analysis.db", bytes.substr(0, 20000));
  Profile p;
  ascend::ImportAnalysisDb(cut, 1, {}, {}, &p);
  ASSERT_EQ(p.data_loss.count("ascend-pt: analysis.db truncated (rows on the missing pages lost)"), 1u);
  EXPECT_NE(p.data_loss.at("ascend-pt: analysis.db truncated (rows on the missing pages lost)").first_location.find(
                "byte 20000: file holds 4 of 8 pages"),
            std::string::npos);

  Profile empty;
  ascend::ImportAnalysisDb(dir.Write("empty/analysis.db", ""), 1, {}, {}, &empty);
  EXPECT_EQ(empty.TotalDataLoss(), 1u);
}

TEST(AnalysisDb, RankFolderReadsTextFilesFirst) {
  // rank_1 has step_trace_time.csv and communication.json: their rows are
  // kept once (not doubled by analysis.db), and analysis.db is still opened.
  if (!fs::exists(kRank1)) GTEST_SKIP() << "fixture missing: " << kRank1;
  auto p = LoadProfile(fs::path(kRank1).parent_path().string());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->steps.size(), 1u);
  // step_trace_time.csv: Computing 230903.7200000004 µs → 230903720 ns.
  EXPECT_EQ(p->steps.rows[0].computing, 230903720);
  bool analysis_read = false;
  for (const auto& f : p->source_files) analysis_read |= f.ends_with("analysis.db");
  EXPECT_TRUE(analysis_read);
}

}  // namespace
}  // namespace pypto::testing
