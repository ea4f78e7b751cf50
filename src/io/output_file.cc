#include "io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pypto::io {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

Status RefuseExisting(const std::string& path) {
  return InvalidArgumentError(path + ": output file already exists; refusing to overwrite it (use --force)");
}

// Moves the complete temporary file to `path`; removes it on every outcome.
Status MoveIntoPlace(const std::string& temp, const std::string& path, bool overwrite) {
  if (!overwrite) {
    if (::link(temp.c_str(), path.c_str()) == 0) {
      ::unlink(temp.c_str());
      return Status::Ok();
    }
    const int link_errno = errno;
    if (link_errno == EEXIST) {
      ::unlink(temp.c_str());
      return RefuseExisting(path);
    }
    // Filesystems without hard links (EPERM, ENOTSUP): check, then rename.
    struct stat existing;
    if (::lstat(path.c_str(), &existing) == 0) {
      ::unlink(temp.c_str());
      return RefuseExisting(path);
    }
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(temp.c_str());
    return IoError(path + ": cannot move the output into place: " + ErrnoText(rename_errno));
  }
  return Status::Ok();
}

}  // namespace

Status CheckOutputPath(const std::string& path, bool overwrite) {
  struct stat existing;
  if (::lstat(path.c_str(), &existing) != 0) return Status::Ok();
  if (S_ISDIR(existing.st_mode)) return InvalidArgumentError(path + ": is a directory, not an output file");
  if (!overwrite) return RefuseExisting(path);
  return Status::Ok();
}

Status WriteAllToFd(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return IoError(path + ": write failed: " + ErrnoText(errno));
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

Status WriteOutputFile(const std::string& path, bool overwrite,
                       const std::function<Status(int fd, const std::string& temp_path)>& fill) {
  PYPTO_RETURN_IF_ERROR(CheckOutputPath(path, overwrite));
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return IoError(path + ": cannot create output file: " + ErrnoText(errno));
  ::fchmod(fd, kOutputFileMode);
  Status written = fill(fd, temp);
  if (::close(fd) != 0 && written.ok()) written = IoError(path + ": write failed: " + ErrnoText(errno));
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return written;
  }
  return MoveIntoPlace(temp, path, overwrite);
}

Status WriteTextFile(const std::string& path, std::string_view text, bool overwrite) {
  return WriteOutputFile(path, overwrite, [&](int fd, const std::string&) { return WriteAllToFd(fd, text, path); });
}

}  // namespace pypto::io
