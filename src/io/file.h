// Safe file access: no-follow opens checked on the descriptor, size caps,
// streaming reads of plain or gzip input through caller-owned buffers.
// This layer moves bytes; it never interprets them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/file_mapping.h"
#include "io/limits.h"

namespace pypto::io {

enum class Compression { kNone, kGzip };

// A sequential source of (decompressed) bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `capacity` bytes into `buffer`. Returns 0 at end of input.
  virtual StatusOr<size_t> Read(char* buffer, size_t capacity) = 0;
  // Bytes of the underlying file consumed so far (compressed bytes for gzip):
  // what a progress bar should compare against file_size().
  virtual uint64_t raw_bytes_consumed() const = 0;
  virtual uint64_t file_size() const = 0;
  virtual Compression compression() const = 0;
  virtual const std::string& path() const = 0;
  // The whole file mapped read-only, for a reader that parses in place
  // rather than copying (file_mapping.h); nullptr for compressed input or
  // when the system refuses, and then the caller reads.
  virtual std::unique_ptr<FileMapping> MapWhole() { return nullptr; }
};

// Opens `path` for streaming. Compression is sniffed from the content (gzip
// magic 1f 8b), never from the extension. Refuses symlinks (unless
// limits.follow_symlinks), non-regular files and files above the size cap.
StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path,
                                                     const Limits& limits = {});

// Reads a whole (decompressed) file into memory, up to limits.max_whole_file_bytes.
StatusOr<std::string> ReadWholeFile(const std::string& path, const Limits& limits = {});

// Reads at most `n` leading decompressed bytes (for format sniffing).
StatusOr<std::string> ReadPrefix(const std::string& path, size_t n, const Limits& limits = {});

enum class PathKind { kMissing, kFile, kDirectory, kSymlink, kOther };
// lstat-based: a symlink is reported as kSymlink, never followed.
PathKind GetPathKind(const std::string& path);

struct DirEntry {
  std::string name;  // file name only
  std::string path;  // directory + "/" + name
  PathKind kind;
};
// Lists a directory (sorted by name, "." and ".." omitted, symlinks reported as such).
StatusOr<std::vector<DirEntry>> ListDirectory(const std::string& path);

}  // namespace pypto::io
