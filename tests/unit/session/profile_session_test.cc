// The engine facade: opened once, every product computed once and shared.
#include "session/profile_session.h"

#include <gtest/gtest.h>

#include <thread>

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

}  // namespace
}  // namespace pypto
