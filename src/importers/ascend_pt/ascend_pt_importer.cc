#include "importers/ascend_pt/ascend_pt_importer.h"

#include <algorithm>
#include <charconv>

#include "importers/ascend_csv/ascend_tables.h"

#include "importers/ascend_db/analysis_db.h"
#include "importers/ascend_db/ascend_db.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"
#include "importers/common/shared_progress.h"
#include "model/phase_timer.h"
#include "model/profile_merge.h"

namespace pypto {
namespace {

constexpr std::string_view kOutputDirName = "ASCEND_PROFILER_OUTPUT";
constexpr std::string_view kRunDirSuffix = "_ascend_pt";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}
std::string DirName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

// "rank0_ascend_pt", "rank_3_ascend_pt", "profiler_info_3.json" → 3; else -1.
int32_t RankFromName(std::string_view name) {
  size_t pos = name.find("rank");
  std::string_view digits;
  if (pos != std::string_view::npos) {
    size_t i = pos + 4;
    if (i < name.size() && (name[i] == '_' || name[i] == '-')) ++i;
    digits = name.substr(i);
  } else if (StartsWith(name, "profiler_info_")) {
    digits = name.substr(14);
  } else {
    return -1;
  }
  int32_t rank = -1;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  return ec == std::errc() && ptr != digits.data() ? rank : -1;
}

bool HasEntry(const std::vector<io::DirEntry>& entries, std::string_view name, io::PathKind kind) {
  for (const auto& e : entries)
    if (e.name == name && e.kind == kind) return true;
  return false;
}

bool IsRunDir(const io::DirEntry& e) {
  if (e.kind != io::PathKind::kDirectory) return false;
  if (EndsWith(e.name, kRunDirSuffix)) return true;
  auto children = io::ListDirectory(e.path);
  return children.ok() && HasEntry(*children, kOutputDirName, io::PathKind::kDirectory);
}

// Reads profiler_info*.json of a run directory: metadata, and the rank and
// CANN version for the CSV adapters.
Status ReadProfilerInfo(const std::string& run_dir, const ImportOptions& options, Profile* profile,
                        ascend::RunContext* run) {
  auto entries = io::ListDirectory(run_dir);
  if (!entries.ok()) return Status::Ok();
  for (const auto& e : *entries) {
    if (e.kind != io::PathKind::kFile || !StartsWith(e.name, "profiler_info") || !EndsWith(e.name, ".json")) continue;
    auto rank = ascend::ImportProfilerInfo(e.path, options, profile);
    if (!rank.ok()) {
      // A broken side file must not stop the kernels from loading.
      profile->CountLoss(LossKind::kFileUnreadable, "ascend-pt: unreadable profiler_info json", rank.status().message());
      continue;
    }
    if (run->device < 0) run->device = *rank >= 0 ? *rank : RankFromName(e.name);
    auto cann = profile->metadata.find("cann_version");
    if (cann != profile->metadata.end() && run->cann_version.empty()) {
      run->cann_version = cann->second;
      run->version_source = e.name;
    }
  }
  return Status::Ok();
}

// Reads the files of one ASCEND_PROFILER_OUTPUT folder. Returns how many files were read.
StatusOr<int> ImportOutputDir(const std::string& dir, const ascend::RunContext& run, Profile* profile) {
  PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(dir));
  const ImportOptions& options = *run.options;
  const int32_t device = run.device >= 0 ? run.device : 0;
  int read = 0;
  std::string trace_view, database, analysis_db;
  ascend::AnalysisDbNeeds analysis_needs;
  struct CsvFile {
    std::string_view name;
    ascend::CsvKind kind;
  };
  static constexpr CsvFile kCsvFiles[] = {
      {"kernel_details.csv", ascend::CsvKind::kTaskTable},
      {"op_statistic.csv", ascend::CsvKind::kOpStatistic},
      {"operator_details.csv", ascend::CsvKind::kOperatorDetails},
      {"step_trace_time.csv", ascend::CsvKind::kStepTraceTime},
      {"memory_record.csv", ascend::CsvKind::kMemoryRecord},
      {"operator_memory.csv", ascend::CsvKind::kOperatorMemory},
  };
  for (const auto& e : entries) {
    if (e.kind != io::PathKind::kFile) continue;
    if (e.name == "trace_view.json") trace_view = e.path;
    if (StartsWith(e.name, "ascend_pytorch_profiler") && EndsWith(e.name, ".db") && database.empty()) database = e.path;
    if (e.name == "analysis.db") analysis_db = e.path;
  }
  // The timeline first: it holds host ops and launch links; kernel_details
  // rows then enrich its device tasks (RunContext::merge_from_task).
  ascend::RunContext csv_run = run;
  if (!trace_view.empty()) {
    csv_run.merge_from_task = profile->device_tasks.size();
    PYPTO_RETURN_IF_ERROR(ImportAscendTraceView(trace_view, options, profile));
    profile->source_files.push_back(trace_view);
    ++read;
  }
  for (const auto& e : entries) {
    if (e.kind != io::PathKind::kFile) continue;
    for (const auto& f : kCsvFiles) {
      if (e.name != f.name) continue;
      PYPTO_RETURN_IF_ERROR(ascend::ImportAscendCsv(e.path, csv_run, profile, f.kind));
      if (f.kind == ascend::CsvKind::kStepTraceTime) analysis_needs.steps = false;
      ++read;
    }
    if (e.name == "communication_matrix.json") {
      Status s = ascend::ImportCommunicationMatrixJson(e.path, device, options, profile);
      if (!s.ok()) profile->CountLoss(LossKind::kFileUnreadable, "ascend-pt: unreadable communication_matrix.json", s.message());
    }
    if (e.name == "communication.json") {
      Status s = ascend::ImportCommunicationJson(e.path, device, options, profile);
      if (!s.ok()) profile->CountLoss(LossKind::kFileUnreadable, "ascend-pt: unreadable communication.json", s.message());
      else ++read, analysis_needs.communication = false;
    }
  }
  if (read == 0 && !database.empty()) {
    PYPTO_RETURN_IF_ERROR(AscendDbImporter()->Import(database, options, profile));
    profile->source_files.push_back(database);
    profile->notes.push_back(dir + ": only a database export found; read " + BaseName(database));
    ++read;
  }
  // Host API statistics (api_statistic.csv), after the files that name the
  // run's device: its rows say Device_id "host", so they go to that device. A
  // side file: a damaged one is counted, not fatal.
  const std::string api_statistic = dir + "/api_statistic.csv";
  if (read > 0 && io::GetPathKind(api_statistic) == io::PathKind::kFile) {
    ascend::RunContext api_run = csv_run;
    if (api_run.device < 0 && !profile->devices.rows.empty()) api_run.device = profile->devices.rows.front().index;
    Status s = ascend::ImportAscendCsv(api_statistic, api_run, profile, ascend::CsvKind::kApiStatistic);
    if (!s.ok()) profile->CountLoss(LossKind::kFileUnreadable, "ascend-pt: unreadable api_statistic.csv", s.message());
  }
  // The communication and step analysis: a side file, read after the files it
  // completes (its steps enrich the database's STEP_TIME rows).
  if (!analysis_db.empty() && read > 0) {
    PhaseTimer timer("import.analysis_db");
    ascend::ImportAnalysisDb(analysis_db, device, analysis_needs, options, profile);
  }
  return read;
}

// One `*_ascend_pt` run directory (or a bare ASCEND_PROFILER_OUTPUT folder).
StatusOr<int> ImportRunDir(const std::string& dir, int32_t rank_hint, const ImportOptions& options, Profile* profile) {
  ascend::RunContext run;
  run.options = &options;
  std::string output = dir;
  if (BaseName(dir) == kOutputDirName) {
    PYPTO_RETURN_IF_ERROR(ReadProfilerInfo(DirName(dir), options, profile, &run));
  } else {
    PYPTO_RETURN_IF_ERROR(ReadProfilerInfo(dir, options, profile, &run));
    if (io::GetPathKind(dir + "/" + std::string(kOutputDirName)) == io::PathKind::kDirectory)
      output = dir + "/" + std::string(kOutputDirName);
  }
  if (run.device < 0) run.device = RankFromName(BaseName(dir == output ? DirName(dir) : dir));
  if (run.device < 0) run.device = rank_hint;
  // Megatron's parallel groups and the job's settings, beside profiler_info.
  const std::string run_dir = BaseName(dir) == kOutputDirName ? DirName(dir) : dir;
  const std::string metadata_file = run_dir + "/profiler_metadata.json";
  if (io::GetPathKind(metadata_file) == io::PathKind::kFile) {
    Status s = ascend::ImportProfilerMetadata(metadata_file, run.device >= 0 ? run.device : 0, options, profile);
    if (!s.ok()) profile->CountLoss(LossKind::kFileUnreadable, "ascend-pt: unreadable profiler_metadata.json", s.message());
  }
  PYPTO_ASSIGN_OR_RETURN(int read, ImportOutputDir(output, run, profile));
  ascend::PlaceStepsOnTasks(profile);
  return read;
}

class AscendPtImporterImpl final : public Importer {
 public:
  std::string_view name() const override { return "ascend-pt"; }
  std::string_view description() const override {
    return "Ascend PyTorch Profiler output (*_ascend_pt, ASCEND_PROFILER_OUTPUT, kernel_details.csv)";
  }

  int Sniff(const SniffInput& input) const override {
    if (input.kind == io::PathKind::kFile) {
      auto header = ascend::HeaderOfPrefix(input.prefix);
      switch (ascend::ClassifyHeader(header)) {
        case ascend::CsvKind::kTaskTable:
          return ascend::StyleOfHeader(header) == ascend::TableStyle::kKernelDetails ? 90 : 0;
        case ascend::CsvKind::kOpStatistic:
        case ascend::CsvKind::kStepTraceTime: return 80;
        case ascend::CsvKind::kOperatorDetails:
        case ascend::CsvKind::kApiStatistic: return 60;
        case ascend::CsvKind::kTaskTime: return 0;  // msprof's file
        case ascend::CsvKind::kMemoryRecord:
        case ascend::CsvKind::kOperatorMemory: return 60;
        case ascend::CsvKind::kUnknown: return 0;
      }
      return 0;
    }
    if (input.kind != io::PathKind::kDirectory) return 0;
    std::string base = BaseName(input.path);
    if (EndsWith(base, kRunDirSuffix) || base == kOutputDirName) return 90;
    auto entries = io::ListDirectory(input.path);
    if (!entries.ok()) return 0;
    if (HasEntry(*entries, kOutputDirName, io::PathKind::kDirectory)) return 90;
    for (const auto& e : *entries)
      if (e.kind == io::PathKind::kDirectory && EndsWith(e.name, kRunDirSuffix)) return 85;
    if (HasEntry(*entries, "kernel_details.csv", io::PathKind::kFile)) return 80;
    return 0;
  }

  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    profile->metadata["format"] = "ascend-pt";
    profile->metadata["clock"] = "epoch";
    io::PathKind kind = io::GetPathKind(path);
    if (kind == io::PathKind::kSymlink && options.limits.follow_symlinks) kind = io::PathKind::kFile;
    if (kind == io::PathKind::kMissing) return NotFoundError(path + ": no such file or directory");
    if (kind == io::PathKind::kFile) return ImportFile(path, options, profile);
    if (kind != io::PathKind::kDirectory) return InvalidArgumentError(path + ": not a regular file or directory");

    PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(path));
    std::string base = BaseName(path);
    bool is_run = EndsWith(base, kRunDirSuffix) || base == kOutputDirName ||
                  HasEntry(entries, kOutputDirName, io::PathKind::kDirectory) ||
                  HasEntry(entries, "kernel_details.csv", io::PathKind::kFile);
    if (!is_run) {
      std::vector<const io::DirEntry*> runs;
      for (const auto& e : entries)
        if (IsRunDir(e)) runs.push_back(&e);
      if (!runs.empty()) return ImportRanks(path, runs, options, profile);
    }
    PYPTO_ASSIGN_OR_RETURN(int read, ImportRunDir(path, -1, options, profile));
    profile->metadata["format"] = "ascend-pt";  // the timeline importer may have set its own name
    if (read == 0)
      return NotFoundError(path + ": no Ascend profiler output found (looked for kernel_details.csv, "
                                  "op_statistic.csv, step_trace_time.csv, trace_view.json, "
                                  "ascend_pytorch_profiler*.db in ASCEND_PROFILER_OUTPUT or *_ascend_pt folders)");
    return Status::Ok();
  }

 private:
  // Each run is imported into a profile of its own and appended with the
  // multi-rank merge (model/profile_merge.h): the runs' ids (connection ids,
  // correlation ids, flows) are per process and repeat across ranks, so read
  // into one profile a rank's tasks linked to the other rank's host ops (the
  // 2-rank allreduce DB: 369 of rank 1's tasks "launched" by rank 0).
  static Status ImportRanks(const std::string& path, const std::vector<const io::DirEntry*>& runs,
                            const ImportOptions& options, Profile* profile) {
    struct Run {
      Profile profile;
      int32_t rank = -1;
      int read = 0;
      std::string label;
      Status status;
    };
    // The ranks are read side by side, one per core: each import fills only its own Run.
    std::vector<Run> imported(runs.size());
    ImportSideBySide(runs.size(), options, [&](size_t i, const ImportOptions& rank_options) {
      const io::DirEntry& run = *runs[i];
      // Without a rank in the name, the folder's place stands in only when
      // there are several (one run keeps the Device_id its files write).
      int32_t hint = RankFromName(run.name);
      if (hint < 0 && runs.size() > 1) hint = static_cast<int32_t>(i);
      Run& r = imported[i];
      r.label = run.name;
      StatusOr<int> read = ImportRunDir(run.path, hint, rank_options, &r.profile);
      if (!read.ok()) {
        r.status = read.status();
        return;
      }
      r.read = *read;
      r.rank = hint;
      if (r.profile.devices.size() == 1) r.rank = r.profile.devices.rows[0].index;
      auto it = r.profile.metadata.find("rank_id");
      if (r.rank < 0 && it != r.profile.metadata.end()) r.rank = std::atoi(it->second.c_str());
      std::string devices;
      for (const DeviceRow& d : r.profile.devices.rows) devices += (devices.empty() ? "" : ",") + std::to_string(d.index);
      r.profile.notes.insert(r.profile.notes.begin(), run.path + ": rank " + (devices.empty() ? "?" : devices) + ", " +
                                                          std::to_string(r.read) + " files, " +
                                                          std::to_string(r.profile.device_tasks.size()) + " device tasks");
    });
    // A rank that does not load is a note and counted data loss, not the end of the job's other ranks;
    // when none loads (or the user cancelled), its error is the answer.
    int total = 0;
    size_t loaded = 0;
    for (const Run& r : imported) {
      if (r.status.code() == StatusCode::kCancelled) return r.status;
      total += r.read;
      loaded += r.status.ok();
    }
    if (loaded == 0) {
      for (const Run& r : imported)
        if (!r.status.ok()) return r.status;
    }
    std::vector<std::string> lost;
    for (size_t i = 0; i < imported.size(); ++i) {
      if (imported[i].status.ok()) continue;
      lost.push_back(runs[i]->path + ": rank not loaded: " + imported[i].status.message());
    }
    std::erase_if(imported, [](const Run& r) { return !r.status.ok(); });
    if (total == 0)
      return NotFoundError(path + ": the *_ascend_pt folders hold no profiler output (no kernel_details.csv, "
                                  "trace_view.json or database)");
    if (runs.size() == 1) {
      *profile = std::move(imported[0].profile);
    } else {
      std::vector<const Profile*> all;
      for (const Run& r : imported) all.push_back(&r.profile);
      const bool device_index_is_rank = DevicesCollide(all);
      int32_t slot = 0;
      for (Run& r : imported)
        AppendRank(profile, std::move(r.profile), RankPlacement{r.rank, slot++, r.label, device_index_is_rank});
      profile->metadata.erase("rank_id");
    }
    for (const std::string& why : lost) {
      profile->CountLoss(LossKind::kFileUnreadable, "multi-rank: a rank's folder did not load", why);
      profile->notes.push_back(why);
    }
    profile->metadata["ranks"] = std::to_string(imported.size());
    profile->metadata["format"] = "ascend-pt";
    profile->metadata["clock"] = "epoch";
    return Status::Ok();
  }

  static Status ImportFile(const std::string& path, const ImportOptions& options, Profile* profile) {
    ascend::RunContext run;
    run.options = &options;
    // A file inside ASCEND_PROFILER_OUTPUT: the run's profiler_info*.json
    // (one level up) gives the versions and the rank.
    std::string dir = DirName(path);
    if (BaseName(dir) == kOutputDirName) {
      PYPTO_RETURN_IF_ERROR(ReadProfilerInfo(DirName(dir), options, profile, &run));
      if (run.device < 0) run.device = RankFromName(BaseName(DirName(dir)));
    }
    PYPTO_RETURN_IF_ERROR(ascend::ImportAscendCsv(path, run, profile));
    ascend::PlaceStepsOnTasks(profile);
    return Status::Ok();
  }
};

}  // namespace

const Importer* AscendPtImporter() {
  static const AscendPtImporterImpl importer;
  return &importer;
}

}  // namespace pypto
