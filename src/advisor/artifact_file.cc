#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "advisor/optimizers.h"

namespace pypto::advisor {

Status WriteArtifactFile(const std::string& path, std::string_view text, bool force) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return InvalidArgumentError(path + ": is a directory, not an output file");
    if (!force) return InvalidArgumentError(path + ": exists (pass --force to overwrite)");
  }
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return IoError(path + ": cannot create: " + std::strerror(errno));
  ::fchmod(fd, 0644);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return IoError(path + ": write failed: " + err);
    }
    done += size_t(n);
  }
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    return IoError(path + ": write failed");
  }
  if (force) {
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      const std::string err = std::strerror(errno);
      ::unlink(temp.c_str());
      return IoError(path + ": cannot move into place: " + err);
    }
    return Status::Ok();
  }
  // link() fails with EEXIST if the path appeared meanwhile: no overwrite, no symlink followed.
  const int rc = ::link(temp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(temp.c_str());
  if (rc != 0) {
    if (link_errno == EEXIST) return InvalidArgumentError(path + ": exists (pass --force to overwrite)");
    return IoError(path + ": cannot create: " + std::strerror(link_errno));
  }
  return Status::Ok();
}

}  // namespace pypto::advisor
