#include "report/progress_line.h"

#include <algorithm>

#include <fmt/format.h>

namespace pypto::report {

std::string FormatProgressLine(uint64_t done_bytes, uint64_t total_bytes, double elapsed_seconds) {
  const double done_mb = static_cast<double>(done_bytes) / kBytesPerMegabyte;
  std::string rate;
  if (elapsed_seconds > 0) rate = fmt::format("  {:.1f} MB/s", done_mb / elapsed_seconds);
  if (total_bytes == 0) return fmt::format("{:.1f} MB{}", done_mb, rate);

  const double fraction = std::min(1.0, static_cast<double>(done_bytes) / static_cast<double>(total_bytes));
  const int filled = static_cast<int>(fraction * kProgressBarWidth);
  std::string bar(kProgressBarWidth, '.');
  std::fill_n(bar.begin(), filled, '#');
  return fmt::format("[{}]  {:.1f} / {:.1f} MB  {:3d}%{}", bar, done_mb,
                     static_cast<double>(total_bytes) / kBytesPerMegabyte,
                     static_cast<int>(fraction * 100), rate);
}

}  // namespace pypto::report
