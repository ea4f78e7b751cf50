// A folder of one Kineto trace per rank loads as one profile (importers/detect.cc
// LoadRanks, model/profile_merge.h).
//
// Expected figures come from the raw fixture: HTA's sampled 2-rank NCCL job
// (kineto/hta_sampled_2rank_nccl_w128), whose distributedInfo says rank 0 and
// rank 1 of 128; each rank has 10 ncclKernel_SendRecv kernels (zcat the file,
// count "ncclKernel" names with ph "X" and cat "kernel"). The merged profile
// must hold exactly what the two files give when loaded one by one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "graph/call_graph.h"
#include "importers/detect.h"

namespace pypto {
namespace {

namespace fs = std::filesystem;

const std::string kJobDir = std::string(PYPTO_FIXTURES_DIR) + "/kineto/hta_sampled_2rank_nccl_w128";
const std::string kRank0 = kJobDir + "/sampled_rank-0.json.gz";
const std::string kRank1 = kJobDir + "/sampled_rank-1.json.gz";

class MultiRankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kRank0) || !fs::exists(kRank1)) GTEST_SKIP() << "fixture missing: " << kJobDir;
    char tmpl[] = "/tmp/pypto_ranks_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string dir_;
};

size_t CountTasksNamed(const Profile& p, std::string_view needle) {
  size_t n = 0;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) n += p.Str(p.device_tasks.name[i]).find(needle) != std::string_view::npos;
  return n;
}

TEST_F(MultiRankTest, TwoRanksMergeIntoOneProfile) {
  auto one = LoadProfile(kRank0);
  auto two = LoadProfile(kRank1);
  auto job = LoadProfile(kJobDir);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_TRUE(job.ok()) << job.status().ToString();

  EXPECT_EQ(job->metadata["ranks"], "2");
  EXPECT_EQ(job->metadata["rank_list"], "0, 1");
  EXPECT_EQ(job->metadata["format"], "kineto");
  EXPECT_EQ(job->host_ops.size(), one->host_ops.size() + two->host_ops.size());
  EXPECT_EQ(job->device_tasks.size(), one->device_tasks.size() + two->device_tasks.size());
  // The ranks' ProfilerStep annotations become step rows (2 each, below).
  EXPECT_EQ(one->steps.size() + two->steps.size(), 0u);
  EXPECT_EQ(job->steps.size(), 4u);
  EXPECT_EQ(CountTasksNamed(*one, "ncclKernel"), 10u);
  EXPECT_EQ(CountTasksNamed(*two, "ncclKernel"), 10u);
  EXPECT_EQ(CountTasksNamed(*job, "ncclKernel"), 20u);
  EXPECT_EQ(job->TotalDataLoss(), one->TotalDataLoss() + two->TotalDataLoss());

  // No track is shared between ranks: every pid token names its rank.
  std::set<std::string> ranks_seen;
  for (size_t t = 0; t < job->tracks.size(); ++t) {
    const std::string pid(job->Str(job->tracks.pid_token[t]));
    ASSERT_TRUE(pid.rfind("rank 0:", 0) == 0 || pid.rfind("rank 1:", 0) == 0) << pid;
    ranks_seen.insert(pid.substr(0, 6));
  }
  EXPECT_EQ(ranks_seen.size(), 2u);
  // Rank 0 runs on cuda:0 and rank 1 on cuda:1 in this job: indices kept.
  std::set<int32_t> devices;
  for (size_t t = 0; t < job->tracks.size(); ++t)
    if (job->tracks.device[t] >= 0) devices.insert(job->tracks.device[t]);
  EXPECT_EQ(devices, (std::set<int32_t>{0, 1}));

  // Launch links stay inside a rank: as many kernels link to their runtime
  // call as in the two files on their own (correlation ids repeat across ranks).
  auto g_one = OperatorCallGraph::Build(*one);
  auto g_two = OperatorCallGraph::Build(*two);
  auto g_job = OperatorCallGraph::Build(*job);
  ASSERT_TRUE(g_one.ok() && g_two.ok() && g_job.ok());
  EXPECT_EQ(g_job->stats().tasks_linked_by_correlation,
            g_one->stats().tasks_linked_by_correlation + g_two->stats().tasks_linked_by_correlation);
  EXPECT_EQ(g_job->stats().duplicate_correlations, 0u);

  // Both ranks ran ProfilerStep#551 and #552 over the same wall time: four
  // steps, each on its rank's device, each counting only its rank's tasks
  // (the same count as the rank's trace alone gives that step).
  ASSERT_EQ(g_job->Steps().size(), 4u);
  std::map<std::pair<int64_t, int32_t>, uint64_t> job_tasks, rank_tasks;
  for (const StepInfo& s : g_job->Steps()) job_tasks[{s.number, s.device}] = s.device_task_count;
  for (const StepInfo& s : g_one->Steps()) rank_tasks[{s.number, 0}] = s.device_task_count;
  for (const StepInfo& s : g_two->Steps()) rank_tasks[{s.number, 1}] = s.device_task_count;
  EXPECT_EQ(job_tasks, rank_tasks);
  EXPECT_EQ(job_tasks.size(), 4u);
}

TEST_F(MultiRankTest, TwoCopiesOfOneRankAreRefused) {
  // Two copies of rank 0 renamed ranks 4 and 5: their distributedInfo says
  // rank 0 for both, which wins over the names, so they are not one job.
  fs::copy_file(kRank0, dir_ + "/rank-4.json.gz");
  fs::copy_file(kRank0, dir_ + "/rank-5.json.gz");
  auto job = LoadProfile(dir_);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(job.status().message().find("are both rank 0"), std::string::npos) << job.status().message();
  EXPECT_NE(job.status().message().find("rank-4.json.gz"), std::string::npos);
}

TEST_F(MultiRankTest, ARankThatDoesNotLoadIsCountedNotFatal) {
  fs::copy_file(kRank0, dir_ + "/sampled_rank-0.json.gz");
  std::ofstream(dir_ + "/sampled_rank-1.json.gz") << "{\"traceEvents\": [ {\"ph\": \"X\", ";  // cut early
  auto job = LoadProfile(dir_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto one = LoadProfile(kRank0);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(job->device_tasks.size(), one->device_tasks.size());
  EXPECT_GT(job->TotalDataLoss(), one->TotalDataLoss());
}

TEST_F(MultiRankTest, AnEmptyRankFileBesideAGoodOneIsCounted) {
  // The empty file is not recognised as a trace at all; its rank name still
  // makes it a lost rank, not a file to ignore.
  fs::copy_file(kRank0, dir_ + "/sampled_rank-0.json.gz");
  std::ofstream(dir_ + "/sampled_rank-1.json.gz") << "";
  auto job = LoadProfile(dir_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ(job->data_loss.count("multi-rank: a rank's trace did not load"), 1u);
  EXPECT_NE(job->data_loss["multi-rank: a rank's trace did not load"].first_location.find("sampled_rank-1.json.gz"),
            std::string::npos);
}

// A minimal trace of one rank: a launch (correlation 1) and its kernel on cuda:0.
std::string OneKernelTrace(int rank) {
  return "{\"distributedInfo\": {\"rank\": " + std::to_string(rank) +
         ", \"world_size\": 8}, \"traceEvents\": ["
         "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, "
         "\"tid\": 100, \"ts\": 10, \"dur\": 5, \"args\": {\"correlation\": 1}},"
         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_rank" + std::to_string(rank) +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 10, "
         "\"args\": {\"correlation\": 1, \"device\": 0, \"stream\": 7}}]}";
}

TEST_F(MultiRankTest, RanksOnTheSameDeviceIndexAreNumberedByRank) {
  // Ranks 2 and 3, each on cuda:0 of its own node, with the same pid, tid and
  // correlation id: two device rows 2 and 3, two launch links, no cross-link.
  std::ofstream(dir_ + "/rank-2.json") << OneKernelTrace(2);
  std::ofstream(dir_ + "/rank-3.json") << OneKernelTrace(3);
  auto job = LoadProfile(dir_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->metadata["rank_list"], "2, 3");
  ASSERT_EQ(job->device_tasks.size(), 2u);
  std::map<std::string, int32_t> device_of_kernel;
  for (size_t i = 0; i < job->device_tasks.size(); ++i)
    device_of_kernel[std::string(job->Str(job->device_tasks.name[i]))] = job->tracks.device[job->device_tasks.track[i]];
  EXPECT_EQ(device_of_kernel["gemm_rank2"], 2);
  EXPECT_EQ(device_of_kernel["gemm_rank3"], 3);
  auto graph = OperatorCallGraph::Build(*job);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->stats().tasks_linked_by_correlation, 2u);
  EXPECT_EQ(graph->stats().duplicate_correlations, 0u);
  for (size_t i = 0; i < job->device_tasks.size(); ++i) {
    const int32_t launcher = job->device_tasks.launcher[i];
    ASSERT_GE(launcher, 0);
    // The launch is on the same rank's host thread as the kernel's stream.
    const std::string host_pid(job->Str(job->tracks.pid_token[job->host_ops.track[launcher]]));
    const std::string task_pid(job->Str(job->tracks.pid_token[job->device_tasks.track[i]]));
    EXPECT_EQ(host_pid.substr(0, 7), task_pid.substr(0, 7));
  }
}

TEST_F(MultiRankTest, TracesWithoutRanksAreRefusedWithTheReason) {
  std::string no_rank = OneKernelTrace(0);
  no_rank.replace(no_rank.find("\"distributedInfo\""), no_rank.find("\"traceEvents\"") - no_rank.find("\"distributedInfo\""), "");
  std::ofstream(dir_ + "/a.json") << no_rank;
  std::ofstream(dir_ + "/b.json") << no_rank;
  auto job = LoadProfile(dir_);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("names no rank"), std::string::npos) << job.status().message();
}

// The Ascend job of ranks 1 and 3 (ascend/pta_level2_llm_pp2dp2_ranks1_3), read side by side. A rank
// folder beside it whose kernel_details.csv has no task-name column does not load: the job still loads,
// with rank 1 exactly as read alone, and the lost rank is counted and named, not fatal.
TEST_F(MultiRankTest, AnAscendRankThatDoesNotLoadIsANoteNotTheEndOfTheJob) {
  const std::string job_dir = std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_level2_llm_pp2dp2_ranks1_3";
  if (!fs::exists(job_dir)) GTEST_SKIP() << "fixture missing: " << job_dir;
  fs::copy(job_dir + "/rank_1_ascend_pt", dir_ + "/rank_1_ascend_pt", fs::copy_options::recursive);
  fs::create_directories(dir_ + "/rank_3_ascend_pt/ASCEND_PROFILER_OUTPUT");
  std::ofstream(dir_ + "/rank_3_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv") << "not,a,kernel table\n1,2,3\n";
  auto job = LoadProfile(dir_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto alone = LoadProfile(job_dir + "/rank_1_ascend_pt");
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_EQ(job->metadata["ranks"], "1");
  EXPECT_EQ(job->device_tasks.size(), alone->device_tasks.size());
  EXPECT_EQ(job->steps.size(), alone->steps.size());
  const std::string kLost = "multi-rank: a rank's folder did not load";
  ASSERT_EQ(job->data_loss.count(kLost), 1u);
  EXPECT_NE(job->data_loss[kLost].first_location.find("rank_3_ascend_pt: rank not loaded: "), std::string::npos)
      << job->data_loss[kLost].first_location;
  EXPECT_NE(job->data_loss[kLost].first_location.find("missing required column"), std::string::npos);

  // Both ranks whole: both read (in parallel), merged in rank order as before.
  auto both = LoadProfile(job_dir);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->metadata["ranks"], "2");
  EXPECT_EQ(both->data_loss.count(kLost), 0u);
}

}  // namespace
}  // namespace pypto
