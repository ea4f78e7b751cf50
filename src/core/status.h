// Status / StatusOr: the engine's error values. The engine never throws across
// layer boundaries; every fallible call returns one of these. Messages name the
// file, the place (byte offset or line) and the reason, ready to print as one line.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace pypto {

enum class StatusCode {
  kOk = 0,
  kNotFound,         // path does not exist / no profile in a directory
  kInvalidArgument,  // caller passed something unusable
  kUnsupported,      // content is not a format pypto reads
  kCorrupt,          // content is a known format but malformed beyond recovery
  kLimitExceeded,    // a configured safety limit (size, depth, ratio) was hit
  kIoError,          // the OS refused a read/write
  kCancelled,        // the caller asked to stop (e.g. Ctrl-C)
  kInternal,         // a bug in pypto
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "corrupt: trace.json: byte 1234: unterminated string"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status NotFoundError(std::string message);
Status InvalidArgumentError(std::string message);
Status UnsupportedError(std::string message);
Status CorruptError(std::string message);
Status LimitExceededError(std::string message);
Status IoError(std::string message);
Status CancelledError(std::string message);
Status InternalError(std::string message);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : value_(std::move(status)) { assert(!std::get<Status>(value_).ok()); }
  StatusOr(T value) : value_(std::move(value)) {}

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(value_); }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> value_;
};

}  // namespace pypto

#define PYPTO_RETURN_IF_ERROR(expr)             \
  do {                                          \
    ::pypto::Status _pypto_status = (expr);     \
    if (!_pypto_status.ok()) return _pypto_status; \
  } while (0)

#define PYPTO_CONCAT_INNER(a, b) a##b
#define PYPTO_CONCAT(a, b) PYPTO_CONCAT_INNER(a, b)
#define PYPTO_ASSIGN_OR_RETURN(lhs, expr) \
  PYPTO_ASSIGN_OR_RETURN_IMPL(PYPTO_CONCAT(_pypto_or_, __LINE__), lhs, expr)
#define PYPTO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
