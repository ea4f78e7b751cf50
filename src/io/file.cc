#include "io/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pypto::io {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Owns a file descriptor opened with O_NOFOLLOW and checked with fstat.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept {
    if (this != &o) { Close(); fd_ = std::exchange(o.fd_, -1); }
    return *this;
  }
  ~FileDescriptor() { Close(); }
  int get() const { return fd_; }

 private:
  void Close() { if (fd_ >= 0) ::close(fd_); fd_ = -1; }
  int fd_ = -1;
};

struct OpenedFile {
  FileDescriptor fd;
  uint64_t size = 0;
};

StatusOr<OpenedFile> OpenChecked(const std::string& path, const Limits& limits) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;  // O_NONBLOCK: a FIFO must not block the open
  if (!limits.follow_symlinks) flags |= O_NOFOLLOW;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFoundError(path + ": no such file or directory");
    if (err == ELOOP) return InvalidArgumentError(path + ": is a symbolic link (not followed by default; pass --follow-symlinks to allow)");
    return IoError(path + ": cannot open: " + ErrnoText(err));
  }
  OpenedFile file{FileDescriptor(fd), 0};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return IoError(path + ": cannot stat: " + ErrnoText(errno));
  if (S_ISDIR(st.st_mode)) return InvalidArgumentError(path + ": is a directory, expected a file");
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + ": not a regular file");
  // Back to blocking reads now that we know it is a regular file.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file.size = static_cast<uint64_t>(st.st_size);
  if (file.size > limits.max_input_bytes) {
    return LimitExceededError(path + ": file is " + std::to_string(file.size) +
                              " bytes, above the input size limit of " +
                              std::to_string(limits.max_input_bytes) + " bytes (--max-input-bytes)");
  }
  return file;
}

StatusOr<size_t> ReadSome(int fd, char* buffer, size_t capacity, const std::string& path) {
  while (true) {
    ssize_t n = ::read(fd, buffer, capacity);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    return IoError(path + ": read failed: " + ErrnoText(errno));
  }
}

class PlainSource final : public ByteSource {
 public:
  PlainSource(std::string path, OpenedFile file) : path_(std::move(path)), file_(std::move(file)) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    auto n = ReadSome(file_.fd.get(), buffer, capacity, path_);
    if (n.ok()) consumed_ += *n;
    return n;
  }
  uint64_t raw_bytes_consumed() const override { return consumed_; }
  uint64_t file_size() const override { return file_.size; }
  Compression compression() const override { return Compression::kNone; }
  const std::string& path() const override { return path_; }
  std::unique_ptr<FileMapping> MapWhole() override { return FileMapping::Map(file_.fd.get(), file_.size, path_); }

 private:
  std::string path_;
  OpenedFile file_;
  uint64_t consumed_ = 0;
};

// Streaming gzip (RFC 1952) through zlib's inflate; accepts concatenated members.
class GzipSource final : public ByteSource {
 public:
  static constexpr size_t kInputChunkBytes = 1 << 20;

  GzipSource(std::string path, OpenedFile file, const Limits& limits)
      : path_(std::move(path)), file_(std::move(file)), limits_(limits), in_(kInputChunkBytes) {}
  ~GzipSource() override { if (initialized_) inflateEnd(&zs_); }

  Status Init() {
    std::memset(&zs_, 0, sizeof(zs_));
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return InternalError(path_ + ": zlib init failed");
    initialized_ = true;
    return Status::Ok();
  }

  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    if (finished_ || capacity == 0) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(buffer);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0) {
        auto n = ReadSome(file_.fd.get(), reinterpret_cast<char*>(in_.data()), in_.size(), path_);
        if (!n.ok()) return n.status();
        if (*n == 0) {
          if (!stream_end_) {
            return CorruptError(path_ + ": byte " + std::to_string(consumed_) +
                                ": gzip stream truncated (unexpected end of compressed data)");
          }
          finished_ = true;
          break;
        }
        consumed_ += *n;
        zs_.next_in = in_.data();
        zs_.avail_in = static_cast<uInt>(*n);
      }
      if (stream_end_) {
        // Another gzip member follows (concatenated .gz); skip zero padding.
        while (zs_.avail_in > 0 && *zs_.next_in == 0) { ++zs_.next_in; --zs_.avail_in; }
        if (zs_.avail_in == 0) continue;
        inflateReset(&zs_);
        stream_end_ = false;
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_end_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        uint64_t at = consumed_ - zs_.avail_in;
        return CorruptError(path_ + ": byte " + std::to_string(at) + ": corrupt gzip data (" +
                            (zs_.msg ? zs_.msg : "inflate error") + ")");
      }
    }
    size_t produced = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - buffer);
    produced_ += produced;
    if (produced_ > kGzipRatioGraceBytes && produced_ > limits_.max_gzip_ratio * std::max<uint64_t>(consumed_, 1)) {
      return LimitExceededError(path_ + ": gzip expands more than " + std::to_string(limits_.max_gzip_ratio) +
                                "x (" + std::to_string(produced_) + " bytes from " + std::to_string(consumed_) +
                                "); refusing a likely gzip bomb (--max-gzip-ratio)");
    }
    return produced;
  }
  uint64_t raw_bytes_consumed() const override { return consumed_ - zs_.avail_in; }
  uint64_t file_size() const override { return file_.size; }
  Compression compression() const override { return Compression::kGzip; }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  OpenedFile file_;
  Limits limits_;
  std::vector<Bytef> in_;
  z_stream zs_{};
  bool initialized_ = false;
  bool stream_end_ = false;
  bool finished_ = false;
  uint64_t consumed_ = 0;
  uint64_t produced_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path, const Limits& limits) {
  auto opened = OpenChecked(path, limits);
  if (!opened.ok()) return opened.status();
  unsigned char magic[2] = {0, 0};
  ssize_t n = ::pread(opened->fd.get(), magic, 2, 0);
  if (n < 0) return IoError(path + ": read failed: " + ErrnoText(errno));
  if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    auto source = std::make_unique<GzipSource>(path, std::move(opened).value(), limits);
    PYPTO_RETURN_IF_ERROR(source->Init());
    return std::unique_ptr<ByteSource>(std::move(source));
  }
  return std::unique_ptr<ByteSource>(std::make_unique<PlainSource>(path, std::move(opened).value()));
}

StatusOr<std::string> ReadWholeFile(const std::string& path, const Limits& limits) {
  PYPTO_ASSIGN_OR_RETURN(auto source, OpenByteSource(path, limits));
  std::string data;
  if (source->compression() == Compression::kNone) data.reserve(source->file_size());
  constexpr size_t kStep = 1 << 20;
  while (true) {
    size_t old = data.size();
    data.resize(old + kStep);
    PYPTO_ASSIGN_OR_RETURN(size_t n, source->Read(data.data() + old, kStep));
    data.resize(old + n);
    if (n == 0) break;
    if (data.size() > limits.max_whole_file_bytes) {
      return LimitExceededError(path + ": larger than " + std::to_string(limits.max_whole_file_bytes) +
                                " bytes, the limit for a side file read whole");
    }
  }
  return data;
}

StatusOr<std::string> ReadPrefix(const std::string& path, size_t n, const Limits& limits) {
  PYPTO_ASSIGN_OR_RETURN(auto source, OpenByteSource(path, limits));
  std::string data(n, '\0');
  size_t got = 0;
  while (got < n) {
    auto r = source->Read(data.data() + got, n - got);
    if (!r.ok()) {
      if (got > 0) break;  // a truncated gzip still gives a usable prefix for sniffing
      return r.status();
    }
    if (*r == 0) break;
    got += *r;
  }
  data.resize(got);
  return data;
}

PathKind GetPathKind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return PathKind::kMissing;
  if (S_ISLNK(st.st_mode)) return PathKind::kSymlink;
  if (S_ISREG(st.st_mode)) return PathKind::kFile;
  if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
  return PathKind::kOther;
}

StatusOr<std::vector<DirEntry>> ListDirectory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(path + ": no such file or directory");
    if (errno == ENOTDIR) return InvalidArgumentError(path + ": not a directory");
    return IoError(path + ": cannot open directory: " + ErrnoText(errno));
  }
  DIR* dir = ::fdopendir(fd);
  if (!dir) { ::close(fd); return IoError(path + ": cannot read directory: " + ErrnoText(errno)); }
  std::vector<DirEntry> entries;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string full = path.empty() || path.back() == '/' ? path + name : path + "/" + name;
    entries.push_back({name, full, GetPathKind(full)});
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

}  // namespace pypto::io
