#include "report/text_table.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "io/json_writer.h"

namespace pypto::report {
namespace {

constexpr int64_t kNsPerMicro = 1000;
constexpr int64_t kNsPerMilli = 1000 * kNsPerMicro;
constexpr int64_t kNsPerSecond = 1000 * kNsPerMilli;
constexpr std::string_view kEllipsis = "…";
constexpr std::string_view kColumnGap = "  ";

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

void AppendPadded(std::string* out, std::string_view cell, size_t width, Align align) {
  const size_t pad = width > DisplayWidth(cell) ? width - DisplayWidth(cell) : 0;
  if (align == Align::kRight) out->append(pad, ' ');
  out->append(cell);
  if (align == Align::kLeft) out->append(pad, ' ');
}

}  // namespace

std::string FormatDuration(TimeNs ns) {
  if (ns == kUnknownNs) return "-";
  const int64_t magnitude = ns < 0 ? -ns : ns;
  const double value = static_cast<double>(ns);
  if (magnitude < kNsPerMicro) return fmt::format("{} ns", ns);
  if (magnitude < kNsPerMilli) return fmt::format("{:.3f} µs", value / kNsPerMicro);
  if (magnitude < kNsPerSecond) return fmt::format("{:.3f} ms", value / kNsPerMilli);
  return fmt::format("{:.3f} s", value / kNsPerSecond);
}

std::string FormatPercent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

size_t DisplayWidth(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return !IsContinuationByte(c); }));
}

std::string Ellipsize(std::string_view text, size_t width) {
  if (DisplayWidth(text) <= width || width == 0) return std::string(text);
  // Keep width-1 code points, then the ellipsis.
  size_t kept = 0;
  size_t end = 0;
  while (end < text.size()) {
    if (!IsContinuationByte(text[end])) {
      if (kept == width - 1) break;
      ++kept;
    }
    ++end;
  }
  std::string cut(text.substr(0, end));
  cut.append(kEllipsis);
  return cut;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n') out.append("\\n");
      else if (c == '\r') out.append("\\r");
      else if (c == '\t') out.append("\\t");
      else if (c < 0x20 || c == 0x7f) out.append(fmt::format("\\x{:02x}", c));
      else out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const int length = io::Utf8SequenceAt(text, i);
    if (length <= 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      i += static_cast<size_t>(-length);
      continue;
    }
    uint32_t code = c & (0xFFu >> (length + 1));
    for (int k = 1; k < length; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
    const bool c1 = code >= 0x80 && code <= 0x9F;
    const bool separator = code == 0x2028 || code == 0x2029;
    const bool bidi = (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
    if (c1 || separator || bidi) out.append(fmt::format("\\u{:04x}", code));
    else out.append(text.substr(i, static_cast<size_t>(length)));
    i += static_cast<size_t>(length);
  }
  return out;
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& cell : cells) cell = Ellipsize(TerminalSafe(cell), kMaxCellWidth);
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(size_t indent) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  auto render_line = [&](auto cell_of) {
    std::string line(indent, ' ');
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) line.append(kColumnGap);
      // The last left-aligned column is not padded: no trailing blanks.
      const bool last = c + 1 == columns_.size();
      if (last && columns_[c].align == Align::kLeft) line.append(cell_of(c));
      else AppendPadded(&line, cell_of(c), widths[c], columns_[c].align);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    line.push_back('\n');
    return line;
  };
  std::string out = render_line([&](size_t c) -> std::string_view { return columns_[c].header; });
  for (const auto& row : rows_) out += render_line([&](size_t c) -> std::string_view { return row[c]; });
  return out;
}

}  // namespace pypto::report
