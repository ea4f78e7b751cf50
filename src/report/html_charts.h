// Building blocks of the single-file HTML reports (pypto report, compare
// --html): escaping of untrusted profile text, the page shell (inline CSS, a
// few lines of inline JS for copy buttons, no network), and inline SVG charts
// drawn from numbers the caller already computed. Nothing here computes a
// metric: charts only scale the values they are given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/text_table.h"

namespace pypto::report {

// Escapes text for HTML element content and quoted attribute values:
// & < > " ' become entities, every invalid UTF-8 sequence becomes U+FFFD (as
// in json_writer.h), and control characters other than tab/newline become
// U+FFFD (they are not allowed in HTML text). Safe inside SVG <text> too.
std::string EscapeHtml(std::string_view text);
void AppendEscapedHtml(std::string* out, std::string_view text);

// Number formatting for tables and axis labels.
std::string FormatMs(double ns);          // "12.345 ms" from ns (NaN: "–")
std::string FormatUs(double ns);          // "12.3 µs" from ns
std::string FormatTime(double ns);        // µs below 1 ms, else ms; sign kept
std::string FormatSi(double value, std::string_view unit);  // "1.23 TFLOP/s"
// FormatPercent: report/text_table.h.

// <!DOCTYPE html> … <body>: title escaped, inline CSS and the copy-button script.
std::string HtmlPageStart(std::string_view title);
std::string HtmlPageEnd();

// One bar of a chart.
struct ChartBar {
  std::string label;     // untrusted: escaped
  double value = 0;
  std::string tooltip;   // untrusted: escaped; "" = label + value
};

// Horizontal bars (label, bar, value text), scaled to the largest value.
// `unit_ns`: values are ns and printed as times; else printed with FormatSi(value, unit).
std::string SvgHorizontalBars(const std::vector<ChartBar>& bars, std::string_view unit, bool unit_ns,
                              std::string_view aria_label);

// Stacked vertical bars: one column per label, segment values per series
// (series[i][j] = value of series i in column j), with a legend.
struct ChartSeries {
  std::string name;
  std::string css_class;  // "s0".."s5" colour classes of the page CSS
  std::vector<double> values;
};
std::string SvgStackedColumns(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                              std::string_view value_axis, bool values_ns, std::string_view aria_label);
// Grouped horizontal bars: per label one bar per series (before/after).
std::string SvgGroupedBars(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                           bool values_ns, std::string_view aria_label);

// Log-log roofline: points (x = arithmetic intensity FLOP/B, y = achieved
// FLOP/s) under the ceilings min(peak, bandwidth · x). Non-positive or NaN
// points are skipped (the count is printed under the chart).
struct RooflinePoint {
  std::string label;     // untrusted: escaped
  double intensity = 0;  // FLOP/B
  double flops = 0;      // FLOP/s achieved
  double weight = 0;     // time share in [0, 1]: dot size
  std::string css_class; // colour class (by op class)
};
std::string SvgRoofline(const std::vector<RooflinePoint>& points, double peak_flops, double bandwidth,
                        std::string_view aria_label);

}  // namespace pypto::report
