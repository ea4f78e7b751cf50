#include "importers/detect.h"

#include "importers/ascend_db/ascend_db.h"
#include "importers/ascend_pt/ascend_pt_importer.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/msprof/msprof_importer.h"
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

// A directory no importer claims as a whole (a tensorboard_trace_handler
// folder, say) may hold profile files: when exactly one file in it is one,
// that file is what the user meant. Several are refused with their names
// (one rank per file is a multi-rank run: pass the file to analyse).
StatusOr<std::string> ProfileFileInDirectory(const std::string& dir, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(dir));
  std::vector<std::string> found;
  for (const auto& e : entries) {
    if (e.kind != io::PathKind::kFile || !HasProfileExtension(e.name)) continue;
    auto best = BestImporter(e.path, e.kind, options, kDirectoryScanPrefixBytes);
    if (!best.ok() || !best->first) continue;
    // Inside a directory only a confident match counts, or the name the
    // PyTorch trace handler gives (a trace may put traceEvents past the sniff
    // window after a long metadata object): a stray config.json is no profile.
    if (best->second >= kConfidentSniffScore || HasSuffix(e.name, ".pt.trace.json") ||
        HasSuffix(e.name, ".pt.trace.json.gz"))
      found.push_back(e.path);
  }
  if (found.size() == 1) return found.front();
  if (found.empty())
    return NotFoundError(dir + ": directory holds no profile pypto can read (looked for PyTorch/Kineto "
                               "traces *.json[.gz], Ascend *_ascend_pt / PROF_* output)");
  std::string names;
  constexpr size_t kNamesShown = 5;
  for (size_t i = 0; i < found.size() && i < kNamesShown; ++i)
    names += (i ? ", " : "") + found[i].substr(found[i].find_last_of('/') + 1);
  if (found.size() > kNamesShown) names += ", …";
  return InvalidArgumentError(dir + ": directory holds " + std::to_string(found.size()) + " profiles (" + names +
                              "); pass one of them");
}

// The file or directory to import and its importer.
StatusOr<std::pair<std::string, const Importer*>> Resolve(const std::string& path, const ImportOptions& options) {
  if (!options.forced_format.empty()) {
    const Importer* forced = FindImporter(options.forced_format);
    if (!forced) return InvalidArgumentError("unknown format '" + options.forced_format + "'");
    return std::make_pair(path, forced);
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
  if (best.first) return std::make_pair(path, best.first);
  if (kind == io::PathKind::kDirectory) {
    PYPTO_ASSIGN_OR_RETURN(std::string file, ProfileFileInDirectory(path, options));
    PYPTO_ASSIGN_OR_RETURN(auto inner, BestImporter(file, io::PathKind::kFile, options));
    return std::make_pair(file, inner.first);
  }
  return UnsupportedError(path + ": unsupported format (not a PyTorch/Kineto trace or Ascend profiler output)");
}

}  // namespace

StatusOr<const Importer*> DetectFormat(const std::string& path, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(auto resolved, Resolve(path, options));
  return resolved.second;
}

StatusOr<Profile> LoadProfile(const std::string& path, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(auto resolved, Resolve(path, options));
  const auto& [file, importer] = resolved;
  Profile profile;
  profile.metadata["source_path"] = file;
  if (file != path) profile.notes.push_back(path + ": the directory's only profile is " + file);
  PYPTO_RETURN_IF_ERROR(importer->Import(file, options, &profile));
  if (profile.metadata.find("format") == profile.metadata.end())
    profile.metadata["format"] = std::string(importer->name());
  return profile;
}

}  // namespace pypto
