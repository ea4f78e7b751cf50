#include "importers/detect.h"

#include "importers/ascend_db/ascend_db.h"
#include "importers/ascend_pt/ascend_pt_importer.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/msprof/msprof_importer.h"

namespace pypto {

const std::vector<const Importer*>& AllImporters() {
  static const std::vector<const Importer*> importers = {
      KinetoImporter(),
      KinetoLegacyImporter(),
      AscendTraceViewImporter(),
      AscendDbImporter(),
      AscendPtImporter(),
      MsprofImporter(),
  };
  return importers;
}

const Importer* FindImporter(std::string_view name) {
  for (const Importer* importer : AllImporters())
    if (importer->name() == name) return importer;
  return nullptr;
}

StatusOr<const Importer*> DetectFormat(const std::string& path, const ImportOptions& options) {
  if (!options.forced_format.empty()) {
    const Importer* forced = FindImporter(options.forced_format);
    if (!forced) return InvalidArgumentError("unknown format '" + options.forced_format + "'");
    return forced;
  }
  SniffInput input{path, io::GetPathKind(path), {}};
  std::string prefix;
  switch (input.kind) {
    case io::PathKind::kMissing:
      return NotFoundError(path + ": no such file or directory");
    case io::PathKind::kSymlink:
      if (!options.limits.follow_symlinks)
        return InvalidArgumentError(path + ": is a symbolic link (not followed by default; pass --follow-symlinks to allow)");
      input.kind = io::PathKind::kFile;
      [[fallthrough]];
    case io::PathKind::kFile: {
      PYPTO_ASSIGN_OR_RETURN(prefix, io::ReadPrefix(path, kSniffPrefixBytes, options.limits));
      if (prefix.empty()) return UnsupportedError(path + ": file is empty");
      input.prefix = prefix;
      break;
    }
    case io::PathKind::kDirectory:
      break;
    case io::PathKind::kOther:
      return InvalidArgumentError(path + ": not a regular file or directory");
  }
  const Importer* best = nullptr;
  int best_score = 0;
  for (const Importer* importer : AllImporters()) {
    int score = importer->Sniff(input);
    if (score > best_score) { best = importer; best_score = score; }
  }
  if (!best) {
    if (input.kind == io::PathKind::kDirectory)
      return NotFoundError(path + ": directory holds no profile pypto can read (looked for PyTorch/Kineto "
                                  "traces *.json[.gz], Ascend *_ascend_pt / PROF_* output)");
    return UnsupportedError(path + ": unsupported format (not a PyTorch/Kineto trace or Ascend profiler output)");
  }
  return best;
}

StatusOr<Profile> LoadProfile(const std::string& path, const ImportOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(const Importer* importer, DetectFormat(path, options));
  Profile profile;
  profile.metadata["source_path"] = path;
  PYPTO_RETURN_IF_ERROR(importer->Import(path, options, &profile));
  if (profile.metadata.find("format") == profile.metadata.end())
    profile.metadata["format"] = std::string(importer->name());
  return profile;
}

}  // namespace pypto
