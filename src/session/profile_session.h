// The engine facade: one object opened on a profile that owns the profile and
// its call graph and computes what the fronts ask for (op classes, model
// structure, diagnosis, advice) once, on first use. The CLI, the Python
// binding, compare and the report collection go through it; none of them
// loads, builds a graph or diagnoses by hand.
//
// Layer: above analysis and advisor, below compare, report, cli and python.
// A session is safe to share between threads: its caches are filled under one
// lock (the Python binding runs engine calls without the GIL).
#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advise_profile.h"
#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "core/status.h"
#include "graph/call_graph.h"
#include "importers/importer.h"
#include "model/profile.h"

namespace pypto {

class ProfileSession {
 public:
  // Detects the format, imports (ImportOptions: limits, forced format,
  // progress, cancel) and builds the call graph. The profile's metadata
  // "source_path" is set to `path` when the importer did not set it.
  static StatusOr<std::unique_ptr<ProfileSession>> Open(const std::string& path, const ImportOptions& import = {},
                                                        const GraphOptions& graph = {});
  // A profile already in memory (merged ranks, tests, the Python collector).
  static StatusOr<std::unique_ptr<ProfileSession>> FromProfile(Profile profile, const GraphOptions& graph = {});

  Profile& profile() { return *profile_; }
  const Profile& profile() const { return *profile_; }
  const OperatorCallGraph& graph() const { return *graph_; }
  // metadata "source_path", or "".
  std::string source_path() const;

  // Op classes with the built-in classifier.
  const OpClassification& Classes();
  // Layers, phases and per-token latency for a model architecture hint ("" =
  // infer); the error when the structure cannot be derived.
  const StatusOr<ModelStructure>& Structure(const std::string& model_arch = "");
  // Starts Structure(model_arch), and the op classes it needs, on a thread of
  // its own when the machine has more than one core, so that it runs beside
  // the caller's next work on the graph (the summary's critical paths read
  // only the graph, not the session). The future waits for it, also when
  // destroyed; Structure() then returns the kept result. On one core the
  // work runs in the future's get().
  std::future<void> PrepareStructure(const std::string& model_arch = "");
  // The diagnosis for these options; the same options give the same report
  // object (computed once). Its source_path is the session's.
  // With keep_task_costs, the task costs the diagnosis computes (the tasks
  // of its windows) are kept for TakeDiagnosisTaskCosts.
  StatusOr<const DiagnosticReport*> Diagnosis(const DiagnoseOptions& options = {}, bool keep_task_costs = false);
  // The task costs kept by Diagnosis(options, true), handed over (the
  // report's roofline reads them instead of costing the tasks again, then
  // frees them); null when none were kept, or already taken.
  std::unique_ptr<TaskCostTable> TakeDiagnosisTaskCosts(const DiagnoseOptions& options);
  // Advice for the diagnosis of `options.diagnose` (model_arch taken from the
  // user's model when empty), artifacts written when options.output_dir is set.
  StatusOr<advisor::AdviseProfileResult> Advise(const advisor::AdviseProfileOptions& options);

 private:
  ProfileSession() = default;
  const OpClassification& ClassesLocked();
  const StatusOr<ModelStructure>& StructureLocked(const std::string& model_arch);
  StatusOr<const DiagnosticReport*> DiagnosisLocked(const DiagnoseOptions& options, bool keep_task_costs = false);

  std::unique_ptr<Profile> profile_;
  std::unique_ptr<OperatorCallGraph> graph_;  // points into *profile_
  std::mutex mutex_;
  std::optional<OpClassification> classes_;
  std::map<std::string, StatusOr<ModelStructure>> structures_;  // by model_arch
  struct KeptDiagnosis {
    DiagnoseOptions options;
    std::unique_ptr<DiagnosticReport> report;
    std::unique_ptr<TaskCostTable> task_costs;  // when kept; not movable (its lock), hence the pointer
  };
  std::vector<KeptDiagnosis> diagnoses_;
};

// Open then diagnose (tests and one-shot callers).
StatusOr<DiagnosticReport> DiagnosePath(const std::string& path, const DiagnoseOptions& options = {});

}  // namespace pypto
