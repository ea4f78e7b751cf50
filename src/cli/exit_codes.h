// Process exit codes of the pypto CLI: one per engine StatusCode, so scripts can
// tell a wrong path from a corrupt file without parsing messages. The table is
// documented in docs/cli.md and printed by `pypto --help`.
#pragma once

#include <string>

#include "core/status.h"

namespace pypto::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;            // bad command line (CLI11 parse error)
inline constexpr int kExitNotFound = 3;         // path missing / directory without a profile
inline constexpr int kExitInvalidArgument = 4;  // unusable option value, output exists without --force, symlink
inline constexpr int kExitUnsupported = 5;      // content is not a format pypto reads
inline constexpr int kExitCorrupt = 6;          // known format, malformed or truncated
inline constexpr int kExitLimitExceeded = 7;    // a safety limit (size, gzip ratio) was hit
inline constexpr int kExitIoError = 8;          // the OS refused a read or write
inline constexpr int kExitInternal = 9;         // a bug in pypto
// compare --fail-on-regression: the candidate is significantly slower than allowed (a
// performance gate in a CI pipeline; the report is printed as usual before).
inline constexpr int kExitRegression = 10;
// 128 + SIGINT, the shell convention for "killed by Ctrl-C".
inline constexpr int kExitCancelled = 130;

int ExitCodeFor(StatusCode code);

// The exit-code table as help text (one line per code).
std::string ExitCodeHelp();

}  // namespace pypto::cli
