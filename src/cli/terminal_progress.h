// Import progress on stderr: drawn only when stderr is a terminal and only once
// an import has run for more than a second, so that quick runs and pipes stay
// clean. Fed by ImportOptions::progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pypto::cli {

class TerminalProgress {
 public:
  explicit TerminalProgress(std::string label);
  ~TerminalProgress() { Finish(); }

  void Update(uint64_t done_bytes, uint64_t total_bytes);
  // Erases the bar (if drawn) so that later output starts on a clean line.
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  bool enabled_ = false;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace pypto::cli
