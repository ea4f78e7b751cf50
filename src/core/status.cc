#include "core/status.h"

namespace pypto {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kUnsupported: return "unsupported format";
    case StatusCode::kCorrupt: return "corrupt input";
    case StatusCode::kLimitExceeded: return "limit exceeded";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status NotFoundError(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
Status InvalidArgumentError(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
Status UnsupportedError(std::string m) { return Status(StatusCode::kUnsupported, std::move(m)); }
Status CorruptError(std::string m) { return Status(StatusCode::kCorrupt, std::move(m)); }
Status LimitExceededError(std::string m) { return Status(StatusCode::kLimitExceeded, std::move(m)); }
Status IoError(std::string m) { return Status(StatusCode::kIoError, std::move(m)); }
Status CancelledError(std::string m) { return Status(StatusCode::kCancelled, std::move(m)); }
Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

}  // namespace pypto
