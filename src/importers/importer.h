// The importer contract. One folder per format under importers/; each provides
// an Importer that sniffs by content and fills a Profile. Format detection and
// directory discovery (importers/detect.h) try every registered importer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/file.h"
#include "model/profile.h"

namespace pypto {

// Called with (bytes done, bytes total) as an import advances; total may be 0
// when unknown. Called at most every few MB, from the importing thread.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

struct ImportOptions {
  io::Limits limits;
  std::string forced_format;   // "" = detect; else an Importer::name()
  std::string cann_version;    // "" = read from the profile / infer; Ascend adapters only
  ProgressFn progress;         // optional
  const std::atomic<bool>* cancel = nullptr;  // optional; set to true to stop early (kCancelled)
};

// What a sniffer sees: a path, what kind it is, and the first bytes of a file
// (decompressed; empty for directories).
struct SniffInput {
  std::string path;
  io::PathKind kind;
  std::string_view prefix;
};

class Importer {
 public:
  virtual ~Importer() = default;
  // Stable short name: "kineto", "kineto-legacy", "ascend-pt", "msprof", "ascend-db", "pypto".
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // 0 = not mine; higher = more certain. Must not read beyond `input.prefix`
  // for files; may list a directory for directories.
  virtual int Sniff(const SniffInput& input) const = 0;
  // Reads `path` into `profile` (which may already hold data from other files
  // of the same run). Non-fatal problems go to profile->data_loss.
  virtual Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const = 0;
};

}  // namespace pypto
