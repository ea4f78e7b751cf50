#include "importers/msprof/msprof_importer.h"

#include <algorithm>
#include <charconv>

#include "importers/ascend_csv/ascend_tables.h"

namespace pypto {
namespace {

constexpr std::string_view kProfDirPrefix = "PROF_";
constexpr std::string_view kTextExportDir = "mindstudio_profiler_output";

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view x) { return s.size() >= x.size() && s.substr(s.size() - x.size()) == x; }
bool Contains(std::string_view s, std::string_view x) { return s.find(x) != std::string_view::npos; }

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Trailing integer of "device_3" / "info.json.3"; -1 when absent.
int32_t TrailingNumber(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == name.size()) return -1;
  int32_t v = -1;
  std::from_chars(name.data() + i, name.data() + name.size(), v);
  return v;
}

// Slice index of "op_summary_slice_3_20240101.csv"; 0 for unsliced files.
int64_t SliceIndex(std::string_view name) {
  size_t pos = name.find("slice_");
  if (pos == std::string_view::npos) return 0;
  int64_t v = 0;
  std::from_chars(name.data() + pos + 6, name.data() + name.size(), v);
  return v;
}

// Summary CSVs msprof writes, by file-name stem. task_time_*.csv (the same
// tasks as op_summary without shapes) is kept as device attributes
// "task_time/<kernel_name>/<column>"; step_trace_*.csv (graph-mode
// iterations) is listed so that the note says why it was skipped.
struct SummaryFile {
  std::string_view stem;
  ascend::CsvKind kind;
  bool read;
};
constexpr SummaryFile kSummaryFiles[] = {
    {"op_summary", ascend::CsvKind::kTaskTable, true},
    {"op_statistic", ascend::CsvKind::kOpStatistic, true},
    {"memory_record", ascend::CsvKind::kMemoryRecord, true},
    {"operator_memory", ascend::CsvKind::kOperatorMemory, true},
    {"task_time", ascend::CsvKind::kTaskTime, true},
    {"step_trace", ascend::CsvKind::kUnknown, false},
};

bool IsProfDir(const io::DirEntry& e) { return e.kind == io::PathKind::kDirectory && StartsWith(e.name, kProfDirPrefix); }

// Reads every summary CSV of one folder (slices in index order). `device` =
// device of a device_N folder, -1 for the merged text export.
StatusOr<int> ImportSummaryDir(const std::string& dir, int32_t device, const ImportOptions& options, Profile* profile) {
  PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(dir));
  int read = 0;
  for (const auto& kind : kSummaryFiles) {
    std::vector<const io::DirEntry*> files;
    for (const auto& e : entries)
      if (e.kind == io::PathKind::kFile && EndsWith(e.name, ".csv") && Contains(e.name, kind.stem)) files.push_back(&e);
    std::stable_sort(files.begin(), files.end(), [](const io::DirEntry* a, const io::DirEntry* b) {
      return SliceIndex(a->name) < SliceIndex(b->name);
    });
    for (const io::DirEntry* f : files) {
      if (!kind.read) {
        profile->notes.push_back(f->path + ": not read (graph-mode iteration trace)");
        continue;
      }
      ascend::RunContext run;
      run.options = &options;
      run.device = device;
      auto cann = profile->metadata.find("cann_version");
      if (cann != profile->metadata.end()) {
        run.cann_version = cann->second;
        run.version_source = "info.json";
      }
      PYPTO_RETURN_IF_ERROR(ascend::ImportAscendCsv(f->path, run, profile, kind.kind));
      ++read;
    }
  }
  return read;
}

// device_N/info.json.N (not the .done marker) → device attributes.
void ImportDeviceInfos(const std::string& prof, const std::vector<io::DirEntry>& entries, const ImportOptions& options,
                       Profile* profile) {
  for (const auto& e : entries) {
    if (e.kind != io::PathKind::kDirectory || !StartsWith(e.name, "device_")) continue;
    int32_t device = TrailingNumber(e.name);
    auto files = io::ListDirectory(e.path);
    if (!files.ok() || device < 0) continue;
    for (const auto& f : *files) {
      if (f.kind != io::PathKind::kFile || !StartsWith(f.name, "info.json") || EndsWith(f.name, ".done")) continue;
      Status s = ascend::ImportDeviceInfo(f.path, device, options, profile);
      if (!s.ok()) profile->CountLoss(LossKind::kFileUnreadable, "msprof: unreadable info.json", s.message());
    }
  }
}

StatusOr<int> ImportProfDir(const std::string& prof, const ImportOptions& options, Profile* profile) {
  PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(prof));
  ImportDeviceInfos(prof, entries, options, profile);
  int read = 0;
  // CANN ≥ 8.0: one merged text export for all devices.
  for (const auto& e : entries)
    if (e.kind == io::PathKind::kDirectory && e.name == kTextExportDir) {
      PYPTO_ASSIGN_OR_RETURN(int n, ImportSummaryDir(e.path, -1, options, profile));
      read += n;
    }
  if (read > 0) return read;
  // CANN 6.3-7.0: per-device summaries.
  for (const auto& e : entries) {
    if (e.kind != io::PathKind::kDirectory || !StartsWith(e.name, "device_")) continue;
    std::string summary = e.path + "/summary";
    if (io::GetPathKind(summary) != io::PathKind::kDirectory) continue;
    PYPTO_ASSIGN_OR_RETURN(int n, ImportSummaryDir(summary, TrailingNumber(e.name), options, profile));
    read += n;
  }
  if (read > 0) return read;
  // A folder holding summary CSVs directly (e.g. a copied op_summary file).
  return ImportSummaryDir(prof, -1, options, profile);
}

class MsprofImporterImpl final : public Importer {
 public:
  std::string_view name() const override { return "msprof"; }
  std::string_view description() const override {
    return "msprof output (PROF_* directories, op_summary*.csv of CANN 6.3 to 8.x)";
  }

  int Sniff(const SniffInput& input) const override {
    if (input.kind == io::PathKind::kFile) {
      auto header = ascend::HeaderOfPrefix(input.prefix);
      if (ascend::ClassifyHeader(header) == ascend::CsvKind::kTaskTable &&
          ascend::StyleOfHeader(header) == ascend::TableStyle::kOpSummary)
        return 90;
      if (ascend::ClassifyHeader(header) == ascend::CsvKind::kTaskTime) return 60;
      return 0;
    }
    if (input.kind != io::PathKind::kDirectory) return 0;
    if (StartsWith(BaseName(input.path), kProfDirPrefix)) return 90;
    auto entries = io::ListDirectory(input.path);
    if (!entries.ok()) return 0;
    for (const auto& e : *entries) {
      if (e.kind == io::PathKind::kDirectory && e.name == kTextExportDir) return 90;
      if (e.kind == io::PathKind::kDirectory && StartsWith(e.name, "device_") &&
          io::GetPathKind(e.path + "/summary") == io::PathKind::kDirectory)
        return 90;
    }
    for (const auto& e : *entries)
      if (IsProfDir(e)) return 85;
    for (const auto& e : *entries)
      if (e.kind == io::PathKind::kFile && Contains(e.name, "op_summary") && EndsWith(e.name, ".csv")) return 80;
    return 0;
  }

  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    profile->metadata["format"] = "msprof";
    profile->metadata["clock"] = "epoch";
    io::PathKind kind = io::GetPathKind(path);
    if (kind == io::PathKind::kSymlink && options.limits.follow_symlinks) kind = io::PathKind::kFile;
    if (kind == io::PathKind::kMissing) return NotFoundError(path + ": no such file or directory");
    if (kind == io::PathKind::kFile) {
      ascend::RunContext run;
      run.options = &options;
      return ascend::ImportAscendCsv(path, run, profile);
    }
    if (kind != io::PathKind::kDirectory) return InvalidArgumentError(path + ": not a regular file or directory");
    PYPTO_ASSIGN_OR_RETURN(auto entries, io::ListDirectory(path));
    int read = 0;
    if (!StartsWith(BaseName(path), kProfDirPrefix)) {
      for (const auto& e : entries) {
        if (!IsProfDir(e)) continue;
        PYPTO_ASSIGN_OR_RETURN(int n, ImportProfDir(e.path, options, profile));
        profile->notes.push_back(e.path + ": " + std::to_string(n) + " summary files");
        read += n;
      }
    }
    if (read == 0) {
      PYPTO_ASSIGN_OR_RETURN(int n, ImportProfDir(path, options, profile));
      read += n;
    }
    if (read == 0)
      return NotFoundError(path + ": no msprof summary found (looked for op_summary*.csv in "
                                  "mindstudio_profiler_output/, device_*/summary/ and PROF_* folders; export "
                                  "text with 'msprof --export=on --type=text')");
    return Status::Ok();
  }
};

}  // namespace

const Importer* MsprofImporter() {
  static const MsprofImporterImpl importer;
  return &importer;
}

}  // namespace pypto
