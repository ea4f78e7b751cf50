// Progress on stderr: drawn only when stderr is a terminal and only once a
// command has run for more than a second, so that quick runs and pipes stay
// clean. The import feeds it bytes (ImportOptions::progress); the work after
// it (graph, critical paths, detectors, rendering) shows its name and the
// time it has taken, redrawn by a ticker thread, until Finish().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace pypto::cli {

class TerminalProgress {
 public:
  explicit TerminalProgress(std::string label);
  ~TerminalProgress() { Finish(); }

  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  void Update(uint64_t done_bytes, uint64_t total_bytes);
  // The import is done; `what` ("diagnosing") runs now: shown with its
  // elapsed time until Finish().
  void Working(std::string what);
  // Stops the ticker and erases the line (if drawn) so that later output
  // starts on a clean line. Call it before writing the command's output.
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  void Draw(const std::string& text);
  std::string label_;
  bool enabled_ = false;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
  std::mutex mutex_;  // the line and the ticker's state
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace pypto::cli
