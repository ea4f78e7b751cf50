#include "session/profile_session.h"

#include <cstdio>
#include <utility>

#include "core/parallel.h"
#include "importers/detect.h"
#include "model/phase_timer.h"

namespace pypto {

StatusOr<std::unique_ptr<ProfileSession>> ProfileSession::Open(const std::string& path, const ImportOptions& import,
                                                               const GraphOptions& graph) {
  PhaseTimer import_timer("import");
  PYPTO_ASSIGN_OR_RETURN(Profile loaded, LoadProfile(path, import));
  import_timer.Stop();
  if (PhaseTimer::Enabled()) {
    const Profile::TableBytes bytes = loaded.MemoryBytesByTable();
    std::fprintf(stderr,
                 "pypto memory: profile tables %.0f MB (attributes %.0f MB in %zu rows, strings %.0f MB; host ops %.0f MB "
                 "in %zu rows, device tasks %.0f MB in %zu rows, flows %.0f MB in %zu rows, counters %.0f MB)\n",
                 bytes.total() * 1e-6, bytes.attributes * 1e-6, loaded.attributes.size(), bytes.strings * 1e-6,
                 bytes.host_ops * 1e-6, loaded.host_ops.size(), bytes.device_tasks * 1e-6, loaded.device_tasks.size(),
                 bytes.flows * 1e-6, loaded.flows.size(), bytes.counters * 1e-6);
  }
  if (import.cancel && import.cancel->load()) return CancelledError(path + ": cancelled after import");
  if (loaded.metadata.find("source_path") == loaded.metadata.end()) loaded.metadata["source_path"] = path;
  return FromProfile(std::move(loaded), graph);
}

StatusOr<std::unique_ptr<ProfileSession>> ProfileSession::FromProfile(Profile profile, const GraphOptions& graph) {
  std::unique_ptr<ProfileSession> session(new ProfileSession());
  session->profile_ = std::make_unique<Profile>(std::move(profile));
  PhaseTimer graph_timer("graph");
  PYPTO_ASSIGN_OR_RETURN(OperatorCallGraph built, OperatorCallGraph::Build(*session->profile_, graph));
  session->graph_ = std::make_unique<OperatorCallGraph>(std::move(built));
  return session;
}

std::string ProfileSession::source_path() const {
  auto it = profile_->metadata.find("source_path");
  return it == profile_->metadata.end() ? std::string() : it->second;
}

const OpClassification& ProfileSession::Classes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ClassesLocked();
}

const OpClassification& ProfileSession::ClassesLocked() {
  if (!classes_) {
    PhaseTimer timer("classes");
    classes_ = ClassifyProfile(*profile_, *graph_, OpClassifier::Builtin());
  }
  return *classes_;
}

const StatusOr<ModelStructure>& ProfileSession::Structure(const std::string& model_arch) {
  std::lock_guard<std::mutex> lock(mutex_);
  return StructureLocked(model_arch);
}

std::future<void> ProfileSession::PrepareStructure(const std::string& model_arch) {
  const std::launch policy = DefaultParallelism() > 1 ? std::launch::async : std::launch::deferred;
  return std::async(policy, [this, model_arch] { Structure(model_arch); });
}

const StatusOr<ModelStructure>& ProfileSession::StructureLocked(const std::string& model_arch) {
  auto it = structures_.find(model_arch);
  if (it == structures_.end()) {
    const OpClassification& classes = ClassesLocked();
    PhaseTimer timer("structure");
    StructureOptions options;
    options.model_arch = model_arch;
    it = structures_.emplace(model_arch, AnalyzeStructure(*profile_, *graph_, classes, options)).first;
  }
  return it->second;
}

StatusOr<const DiagnosticReport*> ProfileSession::Diagnosis(const DiagnoseOptions& options, bool keep_task_costs) {
  std::lock_guard<std::mutex> lock(mutex_);
  return DiagnosisLocked(options, keep_task_costs);
}

StatusOr<const DiagnosticReport*> ProfileSession::DiagnosisLocked(const DiagnoseOptions& options,
                                                                  bool keep_task_costs) {
  for (const KeptDiagnosis& kept : diagnoses_) {
    if (kept.options == options) return kept.report.get();
  }
  PYPTO_RETURN_IF_ERROR(ValidateDiagnoseOptions(options));
  // The steps' paths first, into the graph's cache, while the op classes and
  // the structure are not yet held (when nothing computed them before).
  if (structures_.find(options.model_arch) == structures_.end()) PrepareDiagnosisStepPaths(*graph_, options);
  DiagnosisInputs inputs;
  inputs.classes = &ClassesLocked();
  inputs.structure = &StructureLocked(options.model_arch);
  // Kept only when asked: held past the diagnosis, it would stay beside
  // whatever a front does next (10^5 distinct shapes: ~12 MB).
  std::unique_ptr<TaskCostTable> task_costs = keep_task_costs ? std::make_unique<TaskCostTable>() : nullptr;
  inputs.task_costs = task_costs.get();
  PhaseTimer timer("diagnose");
  PYPTO_ASSIGN_OR_RETURN(DiagnosticReport report, DiagnoseGraph(*graph_, options, inputs));
  if (report.source_path.empty()) report.source_path = source_path();
  diagnoses_.push_back({options, std::make_unique<DiagnosticReport>(std::move(report)), std::move(task_costs)});
  return diagnoses_.back().report.get();
}

std::unique_ptr<TaskCostTable> ProfileSession::TakeDiagnosisTaskCosts(const DiagnoseOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (KeptDiagnosis& kept : diagnoses_) {
    if (kept.options == options) return std::move(kept.task_costs);
  }
  return nullptr;
}

StatusOr<advisor::AdviseProfileResult> ProfileSession::Advise(const advisor::AdviseProfileOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  const DiagnoseOptions diagnose = advisor::AdviseDiagnoseOptions(options);
  PYPTO_ASSIGN_OR_RETURN(const DiagnosticReport* report, DiagnosisLocked(diagnose));
  const StatusOr<ModelStructure>& structure = StructureLocked(diagnose.model_arch);
  PhaseTimer timer("advise");
  PYPTO_ASSIGN_OR_RETURN(advisor::AdviceReport advice,
                         advisor::AdviseFromDiagnosis(*graph_, *report, ClassesLocked(),
                                                      structure.ok() ? &*structure : nullptr, options));
  return advisor::AdviseProfileResult{*report, std::move(advice)};
}

StatusOr<DiagnosticReport> DiagnosePath(const std::string& path, const DiagnoseOptions& options) {
  PYPTO_RETURN_IF_ERROR(ValidateDiagnoseOptions(options));
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<ProfileSession> session, ProfileSession::Open(path));
  PYPTO_ASSIGN_OR_RETURN(const DiagnosticReport* report, session->Diagnosis(options));
  return *report;
}

}  // namespace pypto
