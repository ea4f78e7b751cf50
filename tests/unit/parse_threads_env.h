// Test helper: PYPTO_PARSE_THREADS (importers/common/parse_threads.h) set for
// the life of a scope, so one test can import the same input on one thread
// and on several and compare.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace pypto::testing {

class ScopedParseThreads {
 public:
  // nullptr unsets the variable (the importers' default thread count).
  explicit ScopedParseThreads(const char* value) {
    if (const char* old = std::getenv("PYPTO_PARSE_THREADS")) old_ = old;
    if (value) setenv("PYPTO_PARSE_THREADS", value, 1);
    else unsetenv("PYPTO_PARSE_THREADS");
  }
  ~ScopedParseThreads() {
    if (old_) setenv("PYPTO_PARSE_THREADS", old_->c_str(), 1);
    else unsetenv("PYPTO_PARSE_THREADS");
  }
  ScopedParseThreads(const ScopedParseThreads&) = delete;
  ScopedParseThreads& operator=(const ScopedParseThreads&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace pypto::testing
