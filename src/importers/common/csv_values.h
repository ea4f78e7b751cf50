// Exact parsing of the text cells profiler CSVs hold. Times are decimal text in
// microseconds; converting them through double loses nanoseconds (epoch µs ×
// 1000 ≈ 1.7e18 > 2^53), so they are parsed digit by digit into int64 ns.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pypto::csv {

// Cells that mean "no value" (not zero): empty, "N/A", "NA", "None", "-".
bool IsAbsent(std::string_view cell);

// Decimal microseconds ("1764246877073569.640", "1881.080000", "-3",
// "231290.09999999995", "1e-05") → nanoseconds, rounded half away from zero.
// nullopt when the text is not a number or overflows int64 ns.
std::optional<int64_t> ParseMicrosToNs(std::string_view cell);
// Same for milliseconds → ns.
std::optional<int64_t> ParseMillisToNs(std::string_view cell);

std::optional<int64_t> ParseInt64(std::string_view cell);  // "4294967295", "-1"; not "1.5"
std::optional<double> ParseDouble(std::string_view cell);  // "0.052", "1e-05", "95.517"

// Removes every '"' from a shape/type list cell (Ascend writes the list as a
// quoted string inside a quoted CSV cell) and a "FORMAT_" prefix of each
// ';'-separated entry when `strip_format_prefix`.
std::string NormalizeListCell(std::string_view cell, bool strip_format_prefix = false);

}  // namespace pypto::csv
