#include "cli/exit_codes.h"

namespace pypto::cli {

int ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kNotFound: return kExitNotFound;
    case StatusCode::kInvalidArgument: return kExitInvalidArgument;
    case StatusCode::kUnsupported: return kExitUnsupported;
    case StatusCode::kCorrupt: return kExitCorrupt;
    case StatusCode::kLimitExceeded: return kExitLimitExceeded;
    case StatusCode::kIoError: return kExitIoError;
    case StatusCode::kCancelled: return kExitCancelled;
    case StatusCode::kInternal: return kExitInternal;
  }
  return kExitInternal;
}

std::string ExitCodeHelp() {
  return "Exit codes:\n"
         "  0    success\n"
         "  2    bad command line\n"
         "  3    not found: path missing, or a directory without a profile\n"
         "  4    invalid argument: unusable option value, output exists (use --force), symlink input\n"
         "  5    unsupported format: the file is not a profile pypto reads\n"
         "  6    corrupt input: a known format, truncated or malformed\n"
         "  7    limit exceeded: input larger than --max-input-bytes, or a gzip bomb\n"
         "  8    I/O error: the OS refused a read or write\n"
         "  9    internal error (a bug in pypto; please report it)\n"
         "  10   regression: compare --fail-on-regression found the candidate significantly slower\n"
         "  130  interrupted by Ctrl-C\n";
}

}  // namespace pypto::cli
