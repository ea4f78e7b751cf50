// A whole plain file mapped read-only, for a reader that parses in place.
//
// read() copies every byte from the page cache into the reader's buffer: on a
// warm 1 GB Kineto trace that copy was 6 % of the import's CPU samples, on the
// reading thread that shares the two cores with the parse threads. A mapping
// hands the page cache's own pages to the parser instead.
//
// A mapped file that another process truncates while it is read would raise
// SIGBUS on the first page past its new end. While a FileMapping lives, a
// SIGBUS inside it maps zero pages over the rest of the mapping instead, and
// the mapping reports the damage (Intact()), so a reader fails with a message
// rather than the process dying. A SIGBUS anywhere else goes to the handler
// installed before, or to the default action.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace pypto::io {

class FileMapping {
 public:
  // Maps `size` bytes of the open descriptor `fd` (which it does not keep).
  // nullptr when the system refuses (the caller reads instead): an empty
  // file, no address space, or too many mappings alive at once.
  static std::unique_ptr<FileMapping> Map(int fd, uint64_t size, std::string path);
  ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;

  const char* data() const { return data_; }
  uint64_t size() const { return size_; }
  // Drops this process's pages before `offset` (rounded down to a page): they
  // stay in the page cache, but no longer count in the resident set, so a
  // streaming reader holds about one window of the file, as with read().
  void ReleaseBefore(uint64_t offset);
  // Ok, or an I/O error naming the file when it shrank while mapped (the
  // bytes past its new end read as zeros).
  Status Intact() const;

 private:
  FileMapping(char* data, uint64_t size, std::string path, size_t slot)
      : data_(data), size_(size), path_(std::move(path)), slot_(slot) {}
  char* data_;
  uint64_t size_;
  std::string path_;
  size_t slot_;           // this mapping's entry in the SIGBUS handler's table
  uint64_t released_ = 0;
};

}  // namespace pypto::io
