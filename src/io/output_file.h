// Writing an output file safely: every writer of pypto (reports, traces, the
// SQLite export, advisor artifacts, calibration) goes through here, so the
// rules hold everywhere:
// - a directory is never an output file; an existing file is replaced only
//   when the caller allows it (--force);
// - the content is written to a unique temporary file beside the target and
//   moved into place only when complete, so a failed or interrupted write never
//   leaves a half file under the real name;
// - without overwrite, the move is a link(2), which fails if the target appeared
//   meanwhile: no-overwrite holds even against a concurrent writer.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace pypto::io {

// Permission bits of every output file (rw-r--r--, as `touch` under umask 022).
inline constexpr unsigned kOutputFileMode = 0644;

// Ok when `path` may be written: it does not exist, or it is a file (not a
// directory) and `overwrite` is set.
Status CheckOutputPath(const std::string& path, bool overwrite);

// Creates the temporary file, calls `fill(fd, temp_path)` to write it (through
// the descriptor, or by reopening temp_path, as SQLite does), then moves it
// into place. Errors name `path`; the temporary file never stays behind.
Status WriteOutputFile(const std::string& path, bool overwrite,
                       const std::function<Status(int fd, const std::string& temp_path)>& fill);

// Writes all of `data` to `fd`, retrying short writes; errors name `path`.
Status WriteAllToFd(int fd, std::string_view data, const std::string& path);

// The whole file at once.
Status WriteTextFile(const std::string& path, std::string_view text, bool overwrite);

}  // namespace pypto::io
