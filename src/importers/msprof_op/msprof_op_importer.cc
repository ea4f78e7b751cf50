#include "importers/msprof_op/msprof_op_importer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include "importers/ascend_csv/ascend_tables.h"
#include "importers/common/csv_reader.h"
#include "importers/common/csv_values.h"
#include "importers/common/number_text.h"

namespace pypto {
namespace {

constexpr std::string_view kImporterName = "msprof-op";
constexpr std::string_view kBasicInfoFile = "OpBasicInfo.csv";
// The per-block metric files `msprof op` writes (CANN 8.x), one per aic-metrics group.
constexpr std::string_view kMetricFiles[] = {"PipeUtilization.csv",   "Memory.csv",
                                             "MemoryL0.csv",          "MemoryUB.csv",
                                             "L2Cache.csv",           "ArithmeticUtilization.csv",
                                             "ResourceConflictRatio.csv"};
// How deep below the given folder the op folders are looked for: OPPROF_*/
// (1), a renamed copy such as raw/Default/ (2), one more for a folder of runs.
constexpr int kMaxSearchDepth = 3;
// Entries of one folder looked at while searching (a home directory passed by
// mistake must not be walked whole).
constexpr size_t kMaxEntriesPerFolder = 4096;
// Start of an OpBasicInfo.csv header (the sniff needs no more).
constexpr std::string_view kBasicInfoHeader = "Op Name,Op Type,Task Duration(us)";

constexpr char kLossNoOp[] = "msprof-op: OpBasicInfo.csv holds no kernel row";
constexpr char kLossMetricFile[] = "msprof-op: metric file unreadable (its metrics lost)";
constexpr char kLossMetricEmpty[] = "msprof-op: metric file has a header but no block row (truncated?)";

bool EndsWith(std::string_view s, std::string_view x) { return s.size() >= x.size() && s.substr(s.size() - x.size()) == x; }

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool StartsWithBasicInfoHeader(std::string_view prefix) {
  if (prefix.starts_with("\xEF\xBB\xBF")) prefix.remove_prefix(3);  // UTF-8 byte order mark
  return prefix.starts_with(kBasicInfoHeader);
}

bool IsMetricFileName(std::string_view name) {
  return std::find(std::begin(kMetricFiles), std::end(kMetricFiles), name) != std::end(kMetricFiles);
}

// Folders under `dir` (itself included) that hold an OpBasicInfo.csv, in name order.
void FindOpFolders(const std::string& dir, int depth, std::vector<std::string>* out) {
  auto entries = io::ListDirectory(dir);
  if (!entries.ok() || entries->size() > kMaxEntriesPerFolder) return;
  std::vector<io::DirEntry> sorted = std::move(*entries);
  std::sort(sorted.begin(), sorted.end(), [](const io::DirEntry& a, const io::DirEntry& b) { return a.name < b.name; });
  for (const auto& e : sorted)
    if (e.kind == io::PathKind::kFile && e.name == kBasicInfoFile) out->push_back(dir);
  if (depth >= kMaxSearchDepth) return;
  for (const auto& e : sorted)
    if (e.kind == io::PathKind::kDirectory && e.name != "dump") FindOpFolders(e.path, depth + 1, out);
}

// "vector" / "cube" / "mix" → the core type kernel_details.csv would name.
std::string_view CoreTypeOf(std::string_view op_type, bool has_mix_blocks) {
  if (op_type == "vector") return "AI_VECTOR_CORE";
  if (op_type == "cube") return "AI_CORE";
  if (op_type == "mix") return has_mix_blocks ? "MIX_AIC" : "MIX_AIV";
  return op_type;
}

// Counts are summed over blocks; everything else (ratios, rates, bandwidths,
// per-block times) is averaged.
bool IsCountColumn(std::string_view column) {
  for (std::string_view word : {"cycles", "instructions", "instr_number", "datas", "_fops", "_hit", "_miss"})
    if (column.find(word) != std::string_view::npos) return !EndsWith(column, "rate(%)");
  return false;
}

struct OpTask {
  uint32_t task = 0;
  int32_t device = 0;
};

class OpFolderReader {
 public:
  OpFolderReader(const std::string& folder, const ImportOptions& options, Profile* profile, TimeNs* next_start)
      : folder_(folder), options_(options), p_(*profile), next_start_(*next_start) {}

  // Reads OpBasicInfo.csv (fails only when it cannot be read at all), then the metric files.
  StatusOr<size_t> Run() {
    const std::string basic = folder_ + "/" + std::string(kBasicInfoFile);
    PYPTO_RETURN_IF_ERROR(ReadBasicInfo(basic));
    if (ops_.empty()) {
      p_.CountLoss(LossKind::kFileUnreadable, kLossNoOp, basic + ": line 2");
      return size_t{0};
    }
    auto entries = io::ListDirectory(folder_);
    if (entries.ok()) {
      std::sort(entries->begin(), entries->end(),
                [](const io::DirEntry& a, const io::DirEntry& b) { return a.name < b.name; });
      for (const auto& e : *entries)
        if (e.kind == io::PathKind::kFile && IsMetricFileName(e.name)) ReadMetricFile(e.path);
    }
    if (ops_.size() > 1 && metric_files_ > 0)
      p_.notes.push_back(folder_ + ": " + std::to_string(ops_.size()) +
                         " kernels share one set of metric files; metrics kept on the first kernel only");
    return ops_.size();
  }

 private:
  Status ReadBasicInfo(const std::string& path) {
    PYPTO_ASSIGN_OR_RETURN(auto reader, csv::CsvReader::Open(path, options_.limits));
    PYPTO_ASSIGN_OR_RETURN(bool has_header, reader->Next());
    if (!has_header) return CorruptError(path + ": line 1: file is empty (expected the OpBasicInfo header)");
    std::vector<std::string> header(reader->fields().begin(), reader->fields().end());
    auto col = [&](std::string_view name) {
      auto it = std::find(header.begin(), header.end(), name);
      return it == header.end() ? -1 : static_cast<int>(it - header.begin());
    };
    const int c_name = col("Op Name"), c_type = col("Op Type"), c_dur = col("Task Duration(us)"),
              c_block = col("Block Dim"), c_mix = col("Mix Block Dim"), c_device = col("Device Id"),
              c_pid = col("Pid"), c_freq = col("Current Freq"), c_rated = col("Rated Freq");
    for (auto [c, name] : {std::pair{c_name, "Op Name"}, {c_dur, "Task Duration(us)"}})
      if (c < 0)
        return CorruptError(path + ": line 1: missing required column '" + std::string(name) +
                            "' (msprof op OpBasicInfo.csv)");
    if (reader->missing_final_newline()) p_.CountLoss(LossKind::kTruncated, ascend::kLossHeaderCut, path + ": line 1");
    p_.source_files.push_back(path);
    while (true) {
      PYPTO_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) break;
      if (!ascend::CheckRowShape(*reader, header.size(), path, &p_)) continue;
      const auto& r = *reader;
      const std::string at = path + ": line " + std::to_string(r.line());
      auto dur = number_text::MicrosToNs(r[c_dur]);
      if (!dur || *dur < 0) {
        p_.CountLoss(LossKind::kRowSkipped, ascend::kLossNoTime, at);
        continue;
      }
      auto int_cell = [&](int c) -> int64_t {
        if (c < 0 || csv::IsAbsent(r[c])) return -1;
        auto v = number_text::ParseInt64(r[c]);
        if (!v) p_.CountLoss(LossKind::kValueRepaired, ascend::kLossNotNumeric, at + ", column '" + header[c] + "'");
        return v ? *v : -1;
      };
      const int64_t device_cell = int_cell(c_device);
      const int32_t device = device_cell >= 0 && device_cell < (1 << 20) ? static_cast<int32_t>(device_cell) : 0;
      const int64_t block = int_cell(c_block), mix = int_cell(c_mix);
      const uint32_t device_row = ascend::EnsureNpuDevice(&p_, device);
      for (auto [c, key] : {std::pair{c_freq, "aic_frequency"}, {c_rated, "rated_frequency"}})
        if (c >= 0) ascend::AddNumericCell(&p_, OwnerKind::kDevice, device_row, p_.Intern(key), r[c], path, r.line(), header[c]);
      if (c_pid >= 0 && !csv::IsAbsent(r[c_pid])) p_.metadata.try_emplace("pid", std::string(r[c_pid]));

      DeviceTaskRow row;
      row.name = p_.Intern(r[c_name]);
      row.op_type = row.name;  // an Ascend C kernel is its own op type
      row.category = p_.Intern("msprof op");
      row.kind = DeviceTaskKind::kKernel;
      row.core_type = p_.Intern(CoreTypeOf(c_type >= 0 ? r[c_type] : std::string_view(), mix > 0));
      row.track = p_.DeviceTrack("NPU " + std::to_string(device), "msprof op", device, 0);
      row.ts = next_start_;
      row.dur = *dur;
      row.block_dim = block > 0 && block < INT32_MAX ? static_cast<int32_t>(block) : -1;
      row.mix_block_dim = mix > 0 && mix < INT32_MAX ? static_cast<int32_t>(mix) : -1;
      next_start_ += *dur;
      ops_.push_back({p_.device_tasks.Add(row), device});
    }
    return Status::Ok();
  }

  // One metric file: block rows folded into attributes of the folder's first kernel.
  void ReadMetricFile(const std::string& path) {
    auto reader_or = csv::CsvReader::Open(path, options_.limits);
    if (!reader_or.ok()) return p_.CountLoss(LossKind::kFileUnreadable, kLossMetricFile, reader_or.status().message());
    auto& reader = **reader_or;
    auto has_header = reader.Next();
    if (!has_header.ok()) return p_.CountLoss(LossKind::kFileUnreadable, kLossMetricFile, has_header.status().message());
    if (!*has_header) return p_.CountLoss(LossKind::kFileUnreadable, kLossMetricFile, path + ": line 1: file is empty");
    std::vector<std::string> header(reader.fields().begin(), reader.fields().end());
    if (reader.missing_final_newline()) p_.CountLoss(LossKind::kTruncated, ascend::kLossHeaderCut, path + ": line 1");
    if (header.size() < 2 || header[0] != "block_id")
      return p_.CountLoss(LossKind::kFileUnreadable, kLossMetricFile, path + ": line 1: header does not start with block_id");
    struct Fold {
      double sum = 0;
      uint64_t n = 0;
    };
    std::vector<Fold> folds(header.size());
    uint64_t blocks = 0;
    while (true) {
      auto more = reader.Next();
      if (!more.ok()) {
        p_.CountLoss(LossKind::kFileUnreadable, kLossMetricFile, more.status().message());
        break;
      }
      if (!*more) break;
      if (!ascend::CheckRowShape(reader, header.size(), path, &p_)) continue;
      ++blocks;
      for (size_t c = 2; c < header.size(); ++c) {
        if (header[c].empty() || csv::IsAbsent(reader[c])) continue;
        auto v = csv::ParseDouble(reader[c]);
        if (!v || !std::isfinite(*v)) {
          p_.CountLoss(LossKind::kValueRepaired, ascend::kLossNotNumeric,
                       path + ": line " + std::to_string(reader.line()) + ", column '" + header[c] + "'");
          continue;
        }
        folds[c].sum += *v;
        ++folds[c].n;
      }
    }
    if (blocks == 0) return p_.CountLoss(LossKind::kTruncated, kLossMetricEmpty, path + ": line 2");
    ++metric_files_;
    p_.source_files.push_back(path);
    const uint32_t task = ops_.front().task;
    for (size_t c = 2; c < header.size(); ++c) {
      if (folds[c].n == 0) continue;
      const double value = IsCountColumn(header[c]) ? folds[c].sum : folds[c].sum / static_cast<double>(folds[c].n);
      char text[32];
      std::snprintf(text, sizeof text, "%.6f", value);
      p_.attributes.Add(OwnerKind::kDeviceTask, task, p_.Intern(header[c]), p_.Intern(text), value);
    }
    if (!blocks_recorded_) {
      const std::string blocks_text = std::to_string(blocks);
      p_.attributes.Add(OwnerKind::kDeviceTask, task, p_.Intern("msprof_op/blocks"), p_.Intern(blocks_text),
                        static_cast<double>(blocks));
      blocks_recorded_ = true;
    }
  }

  const std::string& folder_;
  const ImportOptions& options_;
  Profile& p_;
  TimeNs& next_start_;
  std::vector<OpTask> ops_;
  size_t metric_files_ = 0;
  bool blocks_recorded_ = false;
};

class MsprofOpImporterImpl final : public Importer {
 public:
  std::string_view name() const override { return kImporterName; }
  std::string_view description() const override {
    return "msprof op single-operator output (OPPROF_* folders: OpBasicInfo.csv + PipeUtilization.csv …)";
  }

  int Sniff(const SniffInput& input) const override {
    if (input.kind == io::PathKind::kFile) return StartsWithBasicInfoHeader(input.prefix) ? 90 : 0;
    if (input.kind != io::PathKind::kDirectory) return 0;
    std::vector<std::string> folders;
    FindOpFolders(input.path, 0, &folders);
    return folders.empty() ? 0 : 80;
  }

  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    profile->metadata["format"] = std::string(kImporterName);
    profile->metadata["clock"] = "relative";
    io::PathKind kind = io::GetPathKind(path);
    if (kind == io::PathKind::kSymlink && options.limits.follow_symlinks) kind = io::PathKind::kFile;
    if (kind == io::PathKind::kMissing) return NotFoundError(path + ": no such file or directory");
    std::vector<std::string> folders;
    if (kind == io::PathKind::kFile) {
      const std::string dir = DirName(path);
      if (path.substr(path.find_last_of('/') + 1) != kBasicInfoFile &&
          io::GetPathKind(dir + "/" + std::string(kBasicInfoFile)) != io::PathKind::kFile)
        return NotFoundError(path + ": msprof op metrics need the OpBasicInfo.csv of the same folder, which is missing");
      folders.push_back(dir);
    } else if (kind == io::PathKind::kDirectory) {
      FindOpFolders(path, 0, &folders);
    } else {
      return InvalidArgumentError(path + ": not a regular file or directory");
    }
    if (folders.empty())
      return NotFoundError(path + ": no msprof op output found (looked for OpBasicInfo.csv up to " +
                           std::to_string(kMaxSearchDepth) + " folders down)");
    TimeNs next_start = 0;
    size_t kernels = 0;
    for (const std::string& folder : folders) {
      PYPTO_ASSIGN_OR_RETURN(size_t n, OpFolderReader(folder, options, profile, &next_start).Run());
      kernels += n;
    }
    profile->notes.push_back(path + ": msprof op output, " + std::to_string(kernels) + " kernel(s) in " +
                             std::to_string(folders.size()) +
                             " folder(s); no start times in this format, kernels laid end to end from 0");
    return Status::Ok();
  }
};

}  // namespace

const Importer* MsprofOpImporter() {
  static const MsprofOpImporterImpl importer;
  return &importer;
}

}  // namespace pypto
