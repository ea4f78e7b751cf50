// The engine facade: opened once, every product computed once and shared.
#include "session/profile_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "unit/profile_builder.h"

namespace pypto {
namespace {

const std::string kKineto = std::string(PYPTO_FIXTURES_DIR) +
                            "/kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz";

TEST(ProfileSession, OpenSetsTheSourceAndDiagnosesOncePerOptions) {
  StatusOr<std::unique_ptr<ProfileSession>> opened = ProfileSession::Open(kKineto);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ProfileSession& session = **opened;
  EXPECT_EQ(session.source_path(), kKineto);
  EXPECT_GT(session.graph().Steps().size(), 0u);

  StatusOr<const DiagnosticReport*> first = session.Diagnosis();
  StatusOr<const DiagnosticReport*> again = session.Diagnosis(DiagnoseOptions{});
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(*first, *again);  // the same object: computed once
  EXPECT_EQ((*first)->source_path, kKineto);

  DiagnoseOptions only_host;
  only_host.only = {"host_bound"};
  StatusOr<const DiagnosticReport*> other = session.Diagnosis(only_host);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *first);
  EXPECT_EQ((*other)->detectors_run, std::vector<std::string>{"host_bound"});

  // The facade's diagnosis is the one the analysis layer computes alone.
  StatusOr<DiagnosticReport> direct = DiagnoseGraph(session.graph(), DiagnoseOptions{});
  ASSERT_TRUE(direct.ok());
  ASSERT_EQ(direct->issues.size(), (*first)->issues.size());
  for (size_t i = 0; i < direct->issues.size(); ++i) {
    EXPECT_EQ(direct->issues[i].type, (*first)->issues[i].type);
    EXPECT_EQ(direct->issues[i].saved_ns, (*first)->issues[i].saved_ns);
  }
  EXPECT_EQ(direct->estimated_combined_speedup, (*first)->estimated_combined_speedup);
}

TEST(ProfileSession, AdviceReusesTheCachedDiagnosis) {
  StatusOr<std::unique_ptr<ProfileSession>> opened = ProfileSession::Open(kKineto);
  ASSERT_TRUE(opened.ok());
  StatusOr<const DiagnosticReport*> diagnosis = (*opened)->Diagnosis();
  ASSERT_TRUE(diagnosis.ok());
  StatusOr<advisor::AdviseProfileResult> advice = (*opened)->Advise(advisor::AdviseProfileOptions{});
  ASSERT_TRUE(advice.ok()) << advice.status().ToString();
  EXPECT_EQ(advice->diagnosis.issues.size(), (*diagnosis)->issues.size());
  EXPECT_EQ(&(*opened)->Classes(), &(*opened)->Classes());
}

TEST(ProfileSession, ConcurrentCallersGetOneDiagnosis) {
  StatusOr<std::unique_ptr<ProfileSession>> opened = ProfileSession::Open(kKineto);
  ASSERT_TRUE(opened.ok());
  const DiagnosticReport* seen[2] = {nullptr, nullptr};
  std::thread a([&] { seen[0] = *(*opened)->Diagnosis(); });
  std::thread b([&] { seen[1] = *(*opened)->Diagnosis(); });
  a.join();
  b.join();
  EXPECT_NE(seen[0], nullptr);
  EXPECT_EQ(seen[0], seen[1]);
}

TEST(ProfileSession, ErrorsNameTheInputAndBadOptionsTheField) {
  StatusOr<std::unique_ptr<ProfileSession>> missing = ProfileSession::Open("/nonexistent/trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/trace.json"), std::string::npos)
      << missing.status().ToString();

  testing::ProfileBuilder b;
  b.Host("aten::mm", HostOpKind::kOperator, 0, 10);
  StatusOr<std::unique_ptr<ProfileSession>> session = ProfileSession::FromProfile(std::move(b.p));
  ASSERT_TRUE(session.ok());
  EXPECT_EQ((*session)->source_path(), "");
  DiagnoseOptions bad;
  bad.tiling_utilization_threshold = 2.0;
  StatusOr<const DiagnosticReport*> refused = (*session)->Diagnosis(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("tiling_utilization_threshold"), std::string::npos)
      << refused.status().ToString();
}

// Real profiles on which several detectors report (issues on each, from the
// fixture truth table): communication and host_bound read the steps' critical
// paths through the context's shared cache, and the diagnosis may run beside
// a structure prepared on another thread.
const std::vector<std::string> kSeveralDetectorFixtures = {
    std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_trace_view_2024/trace_view.json",
    std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_level2_llm_cann83",
    std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_db_level0_2rank_allreduce/rank0_ascend_pt",
    std::string(PYPTO_FIXTURES_DIR) + "/kineto/hta_trace_diff_control_a100_2022/control.json.gz",
    std::string(PYPTO_FIXTURES_DIR) + "/kineto/hta_nccl_2rank_a100_2024/nccl_data.json.gz",
    std::string(PYPTO_FIXTURES_DIR) + "/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
};

using IssueKey = std::tuple<IssueType, std::string, std::string, TimeNs, TimeNs, std::string>;
IssueKey KeyOf(const Issue& i) { return {i.type, i.op_name, i.profile_op_name, i.affected_ns, i.saved_ns, i.detail}; }

// The same issues in the same order, and the same notes.
void ExpectSameDiagnosis(const DiagnosticReport& a, const DiagnosticReport& b) {
  ASSERT_EQ(a.issues.size(), b.issues.size());
  for (size_t i = 0; i < a.issues.size(); ++i) EXPECT_EQ(KeyOf(a.issues[i]), KeyOf(b.issues[i]));
  EXPECT_EQ(a.notes, b.notes);
}

// A detector must not depend on what another left in the shared context (the
// steps' critical paths): run alone (--only) it finds exactly what it finds
// among the others, with the same notes. Expected: the union of the
// single-detector runs.
TEST(ProfileSession, EachDetectorFindsAloneWhatItFindsAmongTheOthers) {
  for (const std::string& path : kSeveralDetectorFixtures) {
    SCOPED_TRACE(path);
    StatusOr<std::unique_ptr<ProfileSession>> opened = ProfileSession::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const OperatorCallGraph& graph = (*opened)->graph();
    StatusOr<DiagnosticReport> all = DiagnoseGraph(graph, DiagnoseOptions{});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_GE(all->detectors_run.size(), 2u);
    std::vector<IssueKey> expected, found;
    std::vector<std::string> expected_notes, found_notes;
    size_t detectors_with_issues = 0;
    for (const std::string& name : all->detectors_run) {
      DiagnoseOptions only;
      only.only = {name};
      StatusOr<DiagnosticReport> alone = DiagnoseGraph(graph, only);
      ASSERT_TRUE(alone.ok()) << name << ": " << alone.status().ToString();
      detectors_with_issues += alone->issues.empty() ? 0 : 1;
      for (const Issue& issue : alone->issues) expected.push_back(KeyOf(issue));
      for (const std::string& note : alone->notes)
        if (note.starts_with(name + ": ")) expected_notes.push_back(note);
      for (const std::string& note : all->notes)
        if (note.starts_with(name + ": ")) found_notes.push_back(note);
    }
    for (const Issue& issue : all->issues) found.push_back(KeyOf(issue));
    std::sort(expected.begin(), expected.end());
    std::sort(found.begin(), found.end());
    EXPECT_EQ(found, expected);
    EXPECT_EQ(found_notes, expected_notes);  // both in registry order
    EXPECT_GE(detectors_with_issues, 1u);
  }
}

// The structure prepared on its own thread while the diagnosis starts (it
// waits on the session's lock) gives the diagnosis of a session without it.
TEST(ProfileSession, StructurePreparedAsideGivesTheSameDiagnosis) {
  for (const std::string& path : kSeveralDetectorFixtures) {
    SCOPED_TRACE(path);
    StatusOr<std::unique_ptr<ProfileSession>> plain = ProfileSession::Open(path);
    StatusOr<std::unique_ptr<ProfileSession>> prepared = ProfileSession::Open(path);
    ASSERT_TRUE(plain.ok() && prepared.ok());
    std::future<void> structure_ready = (*prepared)->PrepareStructure();
    StatusOr<const DiagnosticReport*> with = (*prepared)->Diagnosis();
    structure_ready.get();
    StatusOr<const DiagnosticReport*> without = (*plain)->Diagnosis();
    ASSERT_TRUE(with.ok() && without.ok());
    ExpectSameDiagnosis(**with, **without);
    EXPECT_EQ((*prepared)->Structure().ok(), (*plain)->Structure().ok());
  }
}

// A session's diagnosis computes the steps' paths first, into the graph's
// cache (PrepareDiagnosisStepPaths), before the op classes and the
// structure; the diagnosis then reads them from the cache. It must be the
// diagnosis of the same graph without that step: DiagnoseGraph on a graph
// whose cache is empty, issue for issue and note for note.
TEST(ProfileSession, StepPathsPreparedFirstGiveTheSameDiagnosis) {
  for (const std::string& path : kSeveralDetectorFixtures) {
    SCOPED_TRACE(path);
    StatusOr<std::unique_ptr<ProfileSession>> session = ProfileSession::Open(path);
    StatusOr<std::unique_ptr<ProfileSession>> plain = ProfileSession::Open(path);
    ASSERT_TRUE(session.ok() && plain.ok());
    StatusOr<const DiagnosticReport*> prepared = (*session)->Diagnosis();
    StatusOr<DiagnosticReport> direct = DiagnoseGraph((*plain)->graph(), DiagnoseOptions{});
    ASSERT_TRUE(prepared.ok() && direct.ok());
    ExpectSameDiagnosis(**prepared, *direct);
    EXPECT_EQ((*prepared)->step_time_ns, direct->step_time_ns);
  }
}

}  // namespace
}  // namespace pypto
