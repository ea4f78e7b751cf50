// One line of an import progress display ("MB done / total, MB/s"), kept apart
// from the terminal handling so that front ends share it and tests can check it.
#pragma once

#include <cstdint>
#include <string>

namespace pypto::report {

// Megabytes are 10^6 bytes (as file managers and `ls -h --si` show them).
inline constexpr double kBytesPerMegabyte = 1e6;
// Width of the [####....] bar in characters.
inline constexpr int kProgressBarWidth = 24;

// "[##########..............]  45.2 / 120.0 MB  37%  85.3 MB/s" when the total is
// known, "45.2 MB  85.3 MB/s" when it is not (total == 0). `elapsed_seconds` <= 0
// leaves the rate out.
std::string FormatProgressLine(uint64_t done_bytes, uint64_t total_bytes, double elapsed_seconds);

}  // namespace pypto::report
