#include "importers/common/ascend_vocabulary.h"

#include <array>

namespace pypto::ascend {

TaskTypeInfo ClassifyTaskType(std::string_view t) {
  using K = DeviceTaskKind;
  struct Entry { std::string_view type; K kind; std::string_view core; };
  static constexpr std::array<Entry, 33> kTable = {{
      // compute
      {"AI_CORE", K::kKernel, "AI_CORE"},
      {"AI_VECTOR_CORE", K::kKernel, "AI_VECTOR_CORE"},
      {"MIX_AIC", K::kKernel, "MIX_AIC"},
      {"MIX_AIV", K::kKernel, "MIX_AIV"},
      {"AI_CPU", K::kKernel, "AI_CPU"},
      {"KERNEL_AICORE", K::kKernel, "AI_CORE"},
      {"KERNEL_AIVEC", K::kKernel, "AI_VECTOR_CORE"},
      {"KERNEL_MIX_AIC", K::kKernel, "MIX_AIC"},
      {"KERNEL_MIX_AIV", K::kKernel, "MIX_AIV"},
      {"KERNEL_AICPU", K::kKernel, "AI_CPU"},
      {"DSA_SQE", K::kKernel, "DSA_SQE"},        // random / bitmask generator
      {"STARS_COMMON", K::kKernel, ""},          // DB name of DSA tasks in the 2025 sample
      {"Other", K::kKernel, ""},                 // 2024 trace_view: AI Core kernels (reference §5.1)
      // data movement
      {"MEMCPY_ASYNC", K::kMemcpy, ""},
      {"SDMA_SQE", K::kMemcpy, ""},
      {"PCIE_DMA_SQE", K::kMemcpy, ""},
      // synchronisation
      {"EVENT_RECORD_SQE", K::kSync, ""},
      {"EVENT_WAIT_SQE", K::kSync, ""},
      {"EVENT_RECORD", K::kSync, ""},
      {"EVENT_WAIT", K::kSync, ""},
      {"NOTIFY_RECORD", K::kSync, ""},
      {"NOTIFY_WAIT", K::kSync, ""},
      // communication (whole ops and HCCL sub-tasks)
      {"HCCL", K::kCommunication, ""},
      {"COMMUNICATION", K::kCommunication, ""},
      {"SDMA", K::kCommunication, ""},
      {"RDMA", K::kCommunication, ""},
      {"Notify Wait", K::kCommunication, ""},
      {"Notify Record", K::kCommunication, ""},
      {"Write Value", K::kCommunication, ""},
      {"Reduce_Inline", K::kCommunication, ""},
      // bookkeeping
      {"PLACE_HOLDER_SQE", K::kOther, ""},
      // The profiler's own start/stop markers: not work. As tasks they opened
      // and closed the DB's timeline, so the path ran from one to the other
      // (a 172 ms "kernel-to-kernel gap" over the Level1 AlexNet DB).
      {"PROFILING_ENABLE", K::kAnnotation, ""},
      {"PROFILING_DISABLE", K::kAnnotation, ""},
  }};
  for (const Entry& e : kTable)
    if (e.type == t) return {e.kind, e.core};
  return {K::kOther, ""};
}

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// a * 10 + d with overflow check (a, d >= 0).
bool MulAdd(int64_t& a, int d) {
  if (a > (INT64_MAX - d) / 10) return false;
  a = a * 10 + d;
  return true;
}

}  // namespace

std::optional<int64_t> ParseMicrosToNs(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (s[i] == '-' || s[i] == '+') { negative = s[i] == '-'; ++i; }
  // Collect the significant digits and the position of the decimal point.
  std::array<char, 40> digits{};
  size_t ndigits = 0;
  int64_t point = -1;  // number of integer digits
  int64_t dropped_int_digits = 0;  // integer digits beyond the buffer (overflow)
  bool any_digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (IsDigit(c)) {
      any_digit = true;
      if (ndigits == 0 && c == '0' && point < 0) continue;  // leading zeros of the integer part
      if (ndigits < digits.size()) digits[ndigits++] = c;
      else if (point < 0) ++dropped_int_digits;
    } else if (c == '.' && point < 0) {
      point = static_cast<int64_t>(ndigits);
    } else {
      break;
    }
  }
  if (!any_digit) return std::nullopt;
  if (point < 0) point = static_cast<int64_t>(ndigits);
  point += dropped_int_digits;
  // Leading zeros right after the point ("0.001") were kept as digits; fine.
  int64_t exponent = 0;
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return std::nullopt;
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) { exp_negative = s[i] == '-'; ++i; }
    if (i >= s.size()) return std::nullopt;
    for (; i < s.size(); ++i) {
      if (!IsDigit(s[i])) return std::nullopt;
      if (exponent < 100000) exponent = exponent * 10 + (s[i] - '0');
    }
    if (exp_negative) exponent = -exponent;
  }
  // value = 0.d1d2d3... * 10^(point + exponent) µs = that * 10^3 ns.
  int64_t int_digits = point + exponent + 3;  // digits before the ns point
  if (int_digits > 19) {
    if (ndigits == 0) return 0;
    return std::nullopt;
  }
  int64_t ns = 0;
  for (int64_t k = 0; k < int_digits; ++k) {
    int d = (k >= 0 && k < static_cast<int64_t>(ndigits)) ? digits[k] - '0' : 0;
    if (!MulAdd(ns, d)) return std::nullopt;
  }
  // Round half away from zero on the first dropped digit.
  int64_t first_dropped = int_digits < 0 ? -1 : int_digits;
  if (int_digits >= 0 && first_dropped < static_cast<int64_t>(ndigits) && digits[first_dropped] >= '5') {
    if (ns == INT64_MAX) return std::nullopt;
    ++ns;
  }
  return negative ? -ns : ns;
}

std::optional<uint64_t> ParseUint64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

}  // namespace pypto::ascend
