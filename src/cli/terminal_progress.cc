#include "cli/terminal_progress.h"

#include <cstdlib>

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "report/progress_line.h"

namespace pypto::cli {
namespace {

// Imports shorter than this show no bar at all.
constexpr auto kShowAfter = std::chrono::seconds(1);
// Redraw at most ten times a second: enough to look live, cheap on slow terminals.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

}  // namespace

TerminalProgress::TerminalProgress(std::string label)
    : label_(std::move(label)),
      // A terminal only, and not when the user turned progress off (PYPTO_NO_PROGRESS, as the Python commands).
      enabled_(isatty(STDERR_FILENO) == 1 && (std::getenv("PYPTO_NO_PROGRESS") == nullptr ||
                                               *std::getenv("PYPTO_NO_PROGRESS") == '\0')),
      start_(Clock::now()) {}

void TerminalProgress::Draw(const std::string& text) {
  // \r returns to the line start, \x1b[K clears what a longer previous line left.
  std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void TerminalProgress::Update(uint64_t done_bytes, uint64_t total_bytes) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - start_ < kShowAfter || now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::lock_guard<std::mutex> lock(mutex_);
  Draw(label_ + "  " + report::FormatProgressLine(done_bytes, total_bytes, elapsed));
}

void TerminalProgress::Working(std::string what) {
  if (!enabled_ || ticker_.joinable()) return;
  const Clock::time_point since = Clock::now();
  ticker_ = std::thread([this, what = std::move(what), since] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, kRedrawInterval, [this] { return stop_; })) {
      const auto now = Clock::now();
      if (now - start_ < kShowAfter) continue;
      Draw(fmt::format("{}: {} … {:.1f} s", label_, what, std::chrono::duration<double>(now - since).count()));
    }
  });
}

void TerminalProgress::Finish() {
  if (ticker_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    ticker_.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace pypto::cli
