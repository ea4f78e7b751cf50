#include "importers/detect.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "importers/common/shared_progress.h"
#include "model/profile_merge.h"

#include "importers/ascend_db/ascend_db.h"
#include "importers/ascend_pt/ascend_pt_importer.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/msprof/msprof_importer.h"
#include "importers/msprof_op/msprof_op_importer.h"
#include "importers/pypto_db/pypto_db_importer.h"

namespace pypto {

const std::vector<const Importer*>& AllImporters() {
  static const std::vector<const Importer*> importers = {
      KinetoImporter(),
      KinetoLegacyImporter(),
      AscendTraceViewImporter(),
      AscendDbImporter(),
      AscendPtImporter(),
      MsprofImporter(),
      MsprofOpImporter(),
      PyptoDbImporter(),
  };
  return importers;
}

const Importer* FindImporter(std::string_view name) {
  for (const Importer* importer : AllImporters())
    if (importer->name() == name) return importer;
  return nullptr;
}

namespace {

// Best-scoring importer for one path; nullptr when none claims it.
StatusOr<std::pair<const Importer*, int>> BestImporter(const std::string& path, io::PathKind kind,
                                                       const ImportOptions& options,
                                                       size_t prefix_bytes = kSniffPrefixBytes) {
  SniffInput input{path, kind, {}};
  std::string prefix;
  if (kind == io::PathKind::kFile) {
    PYPTO_ASSIGN_OR_RETURN(prefix, io::ReadPrefix(path, prefix_bytes, options.limits));
    if (prefix.empty()) return UnsupportedError(path + ": file is empty");
    input.prefix = prefix;
  }
  const Importer* best = nullptr;
  int best_score = 0;
  for (const Importer* importer : AllImporters()) {
    int score = importer->Sniff(input);
    if (score > best_score) { best = importer; best_score = score; }
  }
  return std::make_pair(best, best_score);
}

// Sniff score from which a file found by a directory walk is taken as a
// profile (importers give 80-100 to content they recognise; 10 to "a JSON
// object that might be a trace").
constexpr int kConfidentSniffScore = 50;
// How much of each file a directory walk sniffs: more than a single-file
// sniff, because a Kineto trace may open with a long user "metadata" object
// (the TraceLens H100 sample puts "traceEvents" at byte 26,260).
constexpr size_t kDirectoryScanPrefixBytes = 1u << 20;

bool HasSuffix(std::string_view name, std::string_view suffix) {
  return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

bool HasProfileExtension(std::string_view name) {
  for (std::string_view ext : {".json", ".json.gz", ".csv", ".db"})
    if (HasSuffix(name, ext)) return true;
  return false;
}

// "sampled_rank-1.json.gz", "rank3.pt.trace.json", "trace_rank_12.json" → the
// rank; -1 when the name holds no "rank" followed by digits.
int32_t RankFromFileName(std::string_view name) {
  for (size_t pos = 0; (pos = name.find("rank", pos)) != std::string_view::npos; pos += 4) {
    size_t i = pos + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_' || name[i] == ' ')) ++i;
    int32_t rank = -1;
    auto [end, ec] = std::from_chars(name.data() + i, name.data() + name.size(), rank);
    if (ec == std::errc() && end != name.data() + i && rank >= 0) return rank;
  }
  return -1;
}

std::string FileName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// What a directory walk found: the files that are profiles, and the
// rank-named files beside them that no importer recognised (a damaged rank).
struct DirectoryProfiles {
  std::vector<std::string> profiles;
  std::vector<std::string> unreadable_ranks;
};

// A directory no importer claims as a whole (a tensorboard_trace_handler
// folder, say) may hold profile files: one is what the user meant; several
// Kineto traces are the ranks of one job when their ranks differ (LoadRanks).
StatusOr<DirectoryProfiles> ProfileFilesInDirectory(const std::string& dir, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(dir));
  DirectoryProfiles out;
  std::vector<std::string> unrecognised_rank_files;
  for (const auto& e : entries) {
    if (e.kind != io::PathKind::kFile || !HasProfileExtension(e.name)) continue;
    auto best = BestImporter(e.path, e.kind, options, kDirectoryScanPrefixBytes);
    // Inside a directory only a confident match counts, or the name the
    // PyTorch trace handler gives (a trace may put traceEvents past the sniff
    // window after a long metadata object): a stray config.json is no profile.
    if (best.ok() && best->first &&
        (best->second >= kConfidentSniffScore || HasSuffix(e.name, ".pt.trace.json") ||
         HasSuffix(e.name, ".pt.trace.json.gz")))
      out.profiles.push_back(e.path);
    else if (RankFromFileName(e.name) >= 0)
      unrecognised_rank_files.push_back(e.path);
  }
  // A rank-named file counts as a damaged rank only beside rank-named profiles.
  bool ranks_by_name = !out.profiles.empty();
  for (const std::string& f : out.profiles) ranks_by_name &= RankFromFileName(FileName(f)) >= 0;
  if (ranks_by_name) out.unreadable_ranks = std::move(unrecognised_rank_files);
  if (out.profiles.empty())
    return NotFoundError(dir + ": directory holds no profile pypto can read (looked for PyTorch/Kineto "
                               "traces *.json[.gz], Ascend *_ascend_pt / PROF_* output, msprof op output)");
  return out;
}

std::string NameList(const std::vector<std::string>& paths) {
  constexpr size_t kNamesShown = 5;
  std::string names;
  for (size_t i = 0; i < paths.size() && i < kNamesShown; ++i) names += (i ? ", " : "") + FileName(paths[i]);
  if (paths.size() > kNamesShown) names += ", … " + std::to_string(paths.size() - kNamesShown) + " more";
  return names;
}

// The file or directory to import and its importer; `rank_files` set when
// the directory is several ranks of one job.
struct Resolved {
  std::string path;
  const Importer* importer = nullptr;
  std::vector<std::string> rank_files;
  std::vector<std::string> unreadable_ranks;
};

// Importers whose files hold one rank each (a job writes one trace per rank).
bool IsPerRankFormat(const Importer* importer) {
  return importer && (importer->name() == "kineto" || importer->name() == "kineto-legacy");
}

StatusOr<Resolved> Resolve(const std::string& path, const ImportOptions& options) {
  if (!options.forced_format.empty()) {
    const Importer* forced = FindImporter(options.forced_format);
    if (!forced) return InvalidArgumentError("unknown format '" + options.forced_format + "'");
    return Resolved{path, forced, {}, {}};
  }
  io::PathKind kind = io::GetPathKind(path);
  switch (kind) {
    case io::PathKind::kMissing:
      return NotFoundError(path + ": no such file or directory");
    case io::PathKind::kSymlink:
      if (!options.limits.follow_symlinks)
        return InvalidArgumentError(path + ": is a symbolic link (not followed by default; pass --follow-symlinks to allow)");
      kind = io::PathKind::kFile;
      break;
    case io::PathKind::kOther:
      return InvalidArgumentError(path + ": not a regular file or directory");
    default:
      break;
  }
  PYPTO_ASSIGN_OR_RETURN(auto best, BestImporter(path, kind, options));
  if (best.first) return Resolved{path, best.first, {}, {}};
  if (kind != io::PathKind::kDirectory)
    return UnsupportedError(path + ": unsupported format (not a PyTorch/Kineto trace or Ascend profiler output)");

  PYPTO_ASSIGN_OR_RETURN(DirectoryProfiles found, ProfileFilesInDirectory(path, options));
  if (found.profiles.size() == 1) {
    PYPTO_ASSIGN_OR_RETURN(auto inner, BestImporter(found.profiles.front(), io::PathKind::kFile, options));
    // A damaged rank beside it makes it a job of several ranks, one lost.
    if (found.unreadable_ranks.empty() || !IsPerRankFormat(inner.first))
      return Resolved{found.profiles.front(), inner.first, {}, {}};
  }
  const Importer* common = nullptr;
  bool same_format = true;
  for (const std::string& f : found.profiles) {
    auto inner = BestImporter(f, io::PathKind::kFile, options, kDirectoryScanPrefixBytes);
    const Importer* importer = inner.ok() ? inner->first : nullptr;
    // kineto and kineto-legacy traces of one job read alike: either importer takes both.
    if (!IsPerRankFormat(importer)) same_format = false;
    if (!common) common = importer;
  }
  if (same_format) return Resolved{path, common, found.profiles, found.unreadable_ranks};
  return InvalidArgumentError(path + ": directory holds " + std::to_string(found.profiles.size()) + " profiles (" +
                              NameList(found.profiles) + ") of different formats; pass one of them");
}

// One rank's trace as imported on its own.
struct RankProfile {
  std::string file;
  int32_t rank = -1;
  Profile profile;
  Status status;
};

// Several Kineto traces of one directory, one per rank: each is imported on
// its own and appended (model/profile_merge.h). Ranks come from each trace's
// distributedInfo, else from the file name. A rank that does not load is
// counted as data loss and named in the notes; files whose ranks are unknown
// or repeat are not one job and are refused with their names.
StatusOr<Profile> LoadRanks(const std::string& dir, const Resolved& resolved, const ImportOptions& options) {
  // The ranks are read side by side, one per core: each import fills only its own RankProfile.
  std::vector<RankProfile> ranks(resolved.rank_files.size());
  ImportSideBySide(ranks.size(), options, [&](size_t i, const ImportOptions& rank_options) {
    RankProfile& r = ranks[i];
    const std::string& file = resolved.rank_files[i];
    r.file = file;
    r.profile.metadata["source_path"] = file;
    auto importer = BestImporter(file, io::PathKind::kFile, rank_options, kDirectoryScanPrefixBytes);
    const Importer* chosen = importer.ok() && importer->first ? importer->first : resolved.importer;
    r.status = chosen->Import(file, rank_options, &r.profile);
    if (r.status.ok()) {
      r.profile.metadata.try_emplace("format", std::string(chosen->name()));
      auto rank_text = r.profile.metadata.find("rank");
      if (rank_text != r.profile.metadata.end()) {
        int32_t rank = -1;
        const std::string& t = rank_text->second;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), rank);
        if (ec == std::errc() && end == t.data() + t.size() && rank >= 0) r.rank = rank;
      }
    }
    if (r.rank < 0) r.rank = RankFromFileName(FileName(file));
  });
  for (const RankProfile& r : ranks)
    if (r.status.code() == StatusCode::kCancelled) return r.status;
  for (const std::string& file : resolved.unreadable_ranks) {
    RankProfile r;
    r.file = file;
    r.rank = RankFromFileName(FileName(file));
    r.status = CorruptError(file + ": byte 0: not a trace pypto recognises (no Kineto traceEvents found)");
    ranks.push_back(std::move(r));
  }

  // One job: every rank known and distinct.
  std::map<int32_t, std::string> by_rank;
  std::string why_not_one_job;
  for (const RankProfile& r : ranks) {
    if (r.rank < 0) {
      why_not_one_job = FileName(r.file) + " names no rank (no distributedInfo rank, no 'rank N' in the file name)";
      break;
    }
    auto [it, inserted] = by_rank.emplace(r.rank, r.file);
    if (!inserted) {
      why_not_one_job = FileName(it->second) + " and " + FileName(r.file) + " are both rank " + std::to_string(r.rank);
      break;
    }
  }
  std::vector<std::string> all_files = resolved.rank_files;
  all_files.insert(all_files.end(), resolved.unreadable_ranks.begin(), resolved.unreadable_ranks.end());
  if (!why_not_one_job.empty())
    return InvalidArgumentError(dir + ": directory holds " + std::to_string(all_files.size()) + " profiles (" +
                                NameList(all_files) + ") that are not the ranks of one job: " + why_not_one_job +
                                "; pass one of them");
  size_t loaded = 0;
  for (const RankProfile& r : ranks) loaded += r.status.ok();
  if (loaded == 0) {
    for (const RankProfile& r : ranks)
      if (!r.status.ok()) return r.status;
  }

  std::sort(ranks.begin(), ranks.end(), [](const RankProfile& a, const RankProfile& b) { return a.rank < b.rank; });
  Profile merged;
  merged.metadata["source_path"] = dir;
  merged.metadata["format"] = std::string(resolved.importer->name());
  std::vector<const Profile*> loaded_profiles;
  for (const RankProfile& r : ranks)
    if (r.status.ok()) loaded_profiles.push_back(&r.profile);
  const bool device_index_is_rank = DevicesCollide(loaded_profiles);
  std::string rank_list;
  int32_t slot = 0;
  for (RankProfile& r : ranks) {
    if (!r.status.ok()) {
      merged.CountLoss(LossKind::kFileUnreadable, "multi-rank: a rank's trace did not load", r.status.message());
      merged.notes.push_back(dir + ": rank " + std::to_string(r.rank) + " (" + FileName(r.file) +
                             ") not loaded: " + r.status.message());
      continue;
    }
    rank_list += (rank_list.empty() ? "" : ", ") + std::to_string(r.rank);
    AppendRank(&merged, std::move(r.profile), RankPlacement{r.rank, slot++, FileName(r.file), device_index_is_rank});
  }
  merged.metadata.erase("rank");
  merged.metadata["ranks"] = std::to_string(slot);
  merged.metadata["rank_list"] = rank_list;
  merged.notes.insert(merged.notes.begin(),
                      dir + ": " + std::to_string(slot) + " ranks of one job merged (ranks " + rank_list +
                          "); each rank's threads and streams are named 'rank N:'" +
                          (device_index_is_rank ? "; the ranks share device indices, so each rank's device is numbered by its rank" : ""));
  return merged;
}

}  // namespace

StatusOr<const Importer*> DetectFormat(const std::string& path, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(Resolved resolved, Resolve(path, options));
  return resolved.importer;
}

StatusOr<Profile> LoadProfile(const std::string& path, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(Resolved resolved, Resolve(path, options));
  if (!resolved.rank_files.empty()) return LoadRanks(path, resolved, options);
  const std::string& file = resolved.path;
  const Importer* importer = resolved.importer;
  Profile profile;
  profile.metadata["source_path"] = file;
  if (file != path) profile.notes.push_back(path + ": the directory's only profile is " + file);
  PYPTO_RETURN_IF_ERROR(importer->Import(file, options, &profile));
  if (profile.metadata.find("format") == profile.metadata.end())
    profile.metadata["format"] = std::string(importer->name());
  return profile;
}

}  // namespace pypto
