#include "report/html_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "io/json_writer.h"
#include "report/text_table.h"

namespace pypto::report {

void AppendEscapedHtml(std::string* out, std::string_view text) {
  static constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
  for (size_t i = 0; i < text.size();) {
    const int len = io::Utf8SequenceAt(text, i);
    if (len < 0) {
      out->append(kReplacement);
      i += static_cast<size_t>(-len);
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (len == 1) {
      switch (c) {
        case '&': out->append("&amp;"); break;
        case '<': out->append("&lt;"); break;
        case '>': out->append("&gt;"); break;
        case '"': out->append("&quot;"); break;
        case '\'': out->append("&#39;"); break;
        case '\t': case '\n': out->push_back(static_cast<char>(c)); break;
        default:
          if (c < 0x20 || c == 0x7F) out->append(kReplacement);
          else out->push_back(static_cast<char>(c));
      }
    } else {
      // C1 controls (U+0080..U+009F) are not allowed in HTML text either.
      if (len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) out->append(kReplacement);
      else out->append(text.substr(i, static_cast<size_t>(len)));
    }
    i += static_cast<size_t>(len);
  }
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  AppendEscapedHtml(&out, text);
  return out;
}

std::string FormatMs(double ns) {
  if (std::isnan(ns)) return "–";
  return fmt::format("{:.3f} ms", ns / 1e6);
}
std::string FormatUs(double ns) {
  if (std::isnan(ns)) return "–";
  return fmt::format("{:.1f} µs", ns / 1e3);
}
std::string FormatTime(double ns) {
  if (std::isnan(ns)) return "–";
  if (std::fabs(ns) < 1e6) return FormatUs(ns);
  return FormatMs(ns);
}
std::string FormatSi(double value, std::string_view unit) {
  if (std::isnan(value)) return "–";
  static constexpr const char* kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  double v = value;
  while (std::fabs(v) >= 1000 && p < 6) { v /= 1000; ++p; }
  return fmt::format("{:.3g} {}{}", v, kPrefix[p], unit);
}

namespace {

constexpr char kCss[] = R"CSS(
:root{--fg:#1d2330;--muted:#5b6475;--bg:#fff;--panel:#f6f7fa;--line:#d9dde5;--accent:#2f5fd0}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px 32px;max-width:1320px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.muted{color:var(--muted)}.small{font-size:12px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
.steptl .tl-host{fill:#9db4d6}.steptl .tl-kernel{fill:#4a78c9}.steptl .tl-comm{fill:#8e5ec2}.steptl .tl-copy{fill:#d39c3f}
.steptl .cp0{fill:#d9534f}.steptl .cp1{fill:#f0ad4e}.steptl .cp2{fill:#2f7d32}.steptl .cp3{fill:#d39c3f}
.steptl .cp4{fill:#8e5ec2}.steptl .cp5{fill:#bbbbbb}.steptl .cp6{fill:#555}.steptl .tl-finding{fill:none;stroke:#d62728;stroke-width:1.5}
th.sortable{cursor:pointer}th[data-asc="1"]::after{content:" \25B2"}th[data-asc="0"]::after{content:" \25BC"}
input.filter{margin:4px 0;padding:3px 6px;border:1px solid var(--line);border-radius:4px;font:inherit}
th{background:var(--panel);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{word-break:break-all;max-width:520px}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:6px 0}
.kv div:nth-child(odd){color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:10px 0}
.card{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:18px}
.sev-high{color:#b3261e;font-weight:600}.sev-medium{color:#a15c00;font-weight:600}.sev-low{color:var(--muted)}
.good{color:#1b7f3b;font-weight:600}.bad{color:#b3261e;font-weight:600}
.issue{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:8px 0;background:#fcfcfd}
.rec{border-left:4px solid var(--accent);padding:6px 12px;margin:10px 0;background:var(--panel)}
pre{background:#101522;color:#e8ecf5;padding:10px 12px;border-radius:6px;overflow:auto;font-size:12.5px;margin:6px 0}
button.copy{font-size:12px;padding:2px 10px;border:1px solid var(--line);border-radius:4px;background:#fff;cursor:pointer}
svg{display:block;max-width:100%;height:auto;margin:6px 0 12px;font-family:inherit}
svg text{fill:var(--fg);font-size:11px}
svg .axis{stroke:#9aa3b5;stroke-width:1}svg .grid{stroke:#e6e9ef;stroke-width:1}
svg .bar{fill:#4c78d8}svg .ceiling{stroke:#b3261e;stroke-width:2;fill:none}
svg .s0{fill:#4c78d8}svg .s1{fill:#e8a33d}svg .s2{fill:#3aa57a}svg .s3{fill:#c4504f}svg .s4{fill:#8a6cc9}svg .s5{fill:#8c8c8c}
svg .s6{fill:#2fa3b5}svg .s7{fill:#c77db3}svg .s8{fill:#7f9a3c}svg .s9{fill:#b5832f}svg .s10{fill:#56607a}svg .s11{fill:#d66a2c}svg .s12{fill:#5d9bd6}
svg circle{fill-opacity:.75;stroke:#fff;stroke-width:.5}
footer{margin-top:32px;color:var(--muted);font-size:12px}
)CSS";

// Copies the text of the <pre> named by the button's data-target. No
// network, no eval; clipboard API when allowed, else a selection fallback.
constexpr char kScript[] = R"JS(
document.addEventListener('click',function(e){var b=e.target;if(!b||!b.classList||!b.classList.contains('copy'))return;
var el=document.getElementById(b.getAttribute('data-target'));if(!el)return;var t=el.textContent;
function done(){b.textContent='copied';setTimeout(function(){b.textContent='copy';},1200);}
if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(t).then(done,function(){});}
else{var r=document.createRange();r.selectNodeContents(el);var s=window.getSelection();s.removeAllRanges();s.addRange(r);done();}});
function pyptoValue(t){t=t.trim();var m=t.match(/^[x\u00d7+]?(-?[0-9.]+(?:e[-+]?[0-9]+)?)\s*([a-z\u00b5%]*)/i);if(!m)return null;
var v=parseFloat(m[1]),u=m[2]||'';if(isNaN(v))return null;var time={'ns':1,'\u00b5s':1e3,'us':1e3,'ms':1e6,'s':1e9};
if(time.hasOwnProperty(u))return v*time[u];var si={'k':1e3,'K':1e3,'M':1e6,'G':1e9,'T':1e12,'P':1e15,'m':1e-3,'\u00b5':1e-6,'n':1e-9};
return u.length>1&&si.hasOwnProperty(u[0])?v*si[u[0]]:v;}
document.querySelectorAll('table').forEach(function(t){var head=t.rows[0];if(!head||head.cells[0].tagName!=='TH')return;
if(t.rows.length>8){var f=document.createElement('input');f.type='search';f.placeholder='filter rows';f.className='filter';
f.addEventListener('input',function(){var q=f.value.toLowerCase();for(var i=1;i<t.rows.length;i++){var r=t.rows[i];
r.style.display=r.textContent.toLowerCase().indexOf(q)>=0?'':'none';}});t.parentNode.insertBefore(f,t);}
Array.prototype.forEach.call(head.cells,function(th,c){th.classList.add('sortable');th.title='click to sort';
th.addEventListener('click',function(){var rows=Array.prototype.slice.call(t.rows,1);var asc=th.getAttribute('data-asc')!=='1';
Array.prototype.forEach.call(head.cells,function(h){h.removeAttribute('data-asc');});th.setAttribute('data-asc',asc?'1':'0');
rows.sort(function(a,b){var x=a.cells[c]?a.cells[c].textContent:'',y=b.cells[c]?b.cells[c].textContent:'';
var nx=pyptoValue(x),ny=pyptoValue(y);var d=(nx!==null&&ny!==null)?nx-ny:x.localeCompare(y);return asc?d:-d;});
rows.forEach(function(r){t.tBodies[0]?t.tBodies[0].appendChild(r):t.appendChild(r);});});});});
)JS";

std::string AxisValue(double v, bool ns, std::string_view unit) { return ns ? FormatTime(v) : FormatSi(v, unit); }

// A "nice" upper bound for a linear axis.
double NiceMax(double v) {
  if (!(v > 0)) return 1;
  const double e = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (v <= m * e) return m * e;
  return 10 * e;
}

std::string Tooltip(const std::string& text) { return "<title>" + EscapeHtml(text) + "</title>"; }

}  // namespace

std::string HtmlPageStart(std::string_view title) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">\n<title>";
  AppendEscapedHtml(&out, title);
  out += "</title>\n<style>";
  out += kCss;
  out += "</style>\n</head>\n<body>\n";
  return out;
}

std::string HtmlPageEnd() {
  std::string out = "<footer>Generated by pypto " PYPTO_VERSION ". Self-contained: no network access, no external files.</footer>\n<script>";
  out += kScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

std::string SvgHorizontalBars(const std::vector<ChartBar>& bars, std::string_view unit, bool unit_ns,
                              std::string_view aria_label) {
  constexpr int kLabelW = 300, kBarW = 560, kValueW = 120, kRowH = 20;
  const int width = kLabelW + kBarW + kValueW;
  const int height = std::max<int>(1, static_cast<int>(bars.size())) * kRowH + 10;
  double max_v = 0;
  for (const ChartBar& b : bars) if (std::isfinite(b.value)) max_v = std::max(max_v, b.value);
  if (max_v <= 0) max_v = 1;
  std::string s = fmt::format("<svg role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" aria-label=\"{}\">", width,
                              height, width, height, EscapeHtml(aria_label));
  int y = 5;
  for (const ChartBar& b : bars) {
    const double v = std::isfinite(b.value) ? std::max(0.0, b.value) : 0;
    const double w = v / max_v * kBarW;
    std::string label = b.label.size() > 48 ? b.label.substr(0, 45) + "..." : b.label;
    s += fmt::format("<g>{}<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", Tooltip(b.tooltip.empty() ? b.label : b.tooltip),
                     kLabelW - 6, y + 14, EscapeHtml(label));
    s += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"/>", kLabelW, y + 3, w, kRowH - 6);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text></g>", kLabelW + w + 4, y + 14,
                     EscapeHtml(AxisValue(b.value, unit_ns, unit)));
    y += kRowH;
  }
  s += "</svg>\n";
  return s;
}

std::string SvgStackedColumns(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                              std::string_view value_axis, bool values_ns, std::string_view aria_label) {
  constexpr int kLeft = 80, kRight = 20, kTop = 28, kBottom = 46, kPlotH = 240;
  const size_t n = labels.size();
  const int col_w = n > 0 ? std::clamp<int>(1100 / static_cast<int>(n), 3, 48) : 48;
  const int width = kLeft + kRight + std::max<int>(static_cast<int>(n) * col_w, 300);
  const int height = kTop + kPlotH + kBottom;
  double max_v = 0;
  for (size_t j = 0; j < n; ++j) {
    double sum = 0;
    for (const ChartSeries& se : series) if (j < se.values.size() && std::isfinite(se.values[j])) sum += std::max(0.0, se.values[j]);
    max_v = std::max(max_v, sum);
  }
  max_v = NiceMax(max_v);
  std::string s = fmt::format("<svg role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" aria-label=\"{}\">", width,
                              height, width, height, EscapeHtml(aria_label));
  // Legend.
  int lx = kLeft;
  for (const ChartSeries& se : series) {
    s += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"6\" width=\"12\" height=\"12\"/><text x=\"{}\" y=\"16\">{}</text>",
                     EscapeHtml(se.css_class), lx, lx + 16, EscapeHtml(se.name));
    lx += 24 + static_cast<int>(se.name.size()) * 7;
  }
  // Grid and axis labels.
  for (int g = 0; g <= 4; ++g) {
    const double v = max_v * g / 4;
    const double y = kTop + kPlotH - kPlotH * g / 4.0;
    s += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>", kLeft, y, width - kRight, y);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLeft - 4, y + 4,
                     EscapeHtml(AxisValue(v, values_ns, "")));
  }
  s += fmt::format("<text x=\"8\" y=\"{}\" transform=\"rotate(-90 8 {})\" text-anchor=\"middle\">{}</text>", kTop + kPlotH / 2,
                   kTop + kPlotH / 2, EscapeHtml(value_axis));
  // A label needs ~kLabelPx of width: label every k-th column so they never overlap.
  constexpr int kLabelPx = 56;
  const size_t label_every = std::max<size_t>(1, static_cast<size_t>((kLabelPx + col_w - 1) / std::max(1, col_w)));
  for (size_t j = 0; j < n; ++j) {
    const int x = kLeft + static_cast<int>(j) * col_w;
    double base = 0;
    std::string tip = labels[j];
    for (const ChartSeries& se : series) {
      const double v = j < se.values.size() && std::isfinite(se.values[j]) ? std::max(0.0, se.values[j]) : 0;
      const double h = v / max_v * kPlotH;
      const double y = kTop + kPlotH - (base + v) / max_v * kPlotH;
      s += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\"/>", EscapeHtml(se.css_class), x + 1,
                       y, std::max(1, col_w - 2), h);
      base += v;
      tip += "\n" + se.name + ": " + AxisValue(v, values_ns, "");
    }
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"transparent\">{}</rect>", x, kTop, col_w, kPlotH,
                     Tooltip(tip));
    if (j % label_every == 0) {
      // "ProfilerStep#12 decode" -> "#12", "12 decode" -> "12": the step
      // number tells columns apart; the phase is in the tooltip.
      const size_t hash = labels[j].rfind('#');
      const size_t from = hash != std::string::npos ? hash : 0;
      std::string l = labels[j].substr(from, labels[j].find(' ', from) - from);
      if (l.size() > 8) l = l.substr(0, 8);
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", x + col_w / 2, kTop + kPlotH + 14, EscapeHtml(l));
    }
  }
  s += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", kLeft, kTop + kPlotH, width - kRight, kTop + kPlotH);
  s += "</svg>\n";
  return s;
}

std::string SvgGroupedBars(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                           bool values_ns, std::string_view aria_label) {
  constexpr int kLabelW = 260, kBarW = 600, kValueW = 120, kBarH = 12;
  const int group_h = static_cast<int>(series.size()) * kBarH + 10;
  const int width = kLabelW + kBarW + kValueW;
  const int height = 26 + std::max<int>(1, static_cast<int>(labels.size())) * group_h;
  double max_v = 0;
  for (const ChartSeries& se : series)
    for (double v : se.values) if (std::isfinite(v)) max_v = std::max(max_v, v);
  if (max_v <= 0) max_v = 1;
  std::string s = fmt::format("<svg role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" aria-label=\"{}\">", width,
                              height, width, height, EscapeHtml(aria_label));
  int lx = kLabelW;
  for (const ChartSeries& se : series) {
    s += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"4\" width=\"12\" height=\"12\"/><text x=\"{}\" y=\"14\">{}</text>",
                     EscapeHtml(se.css_class), lx, lx + 16, EscapeHtml(se.name));
    lx += 30 + static_cast<int>(se.name.size()) * 7;
  }
  int y = 24;
  for (size_t j = 0; j < labels.size(); ++j) {
    std::string l = labels[j].size() > 40 ? labels[j].substr(0, 37) + "..." : labels[j];
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}{}</text>", kLabelW - 6, y + group_h / 2 + 2,
                     Tooltip(labels[j]), EscapeHtml(l));
    for (size_t i = 0; i < series.size(); ++i) {
      const double v = j < series[i].values.size() && std::isfinite(series[i].values[j]) ? std::max(0.0, series[i].values[j]) : 0;
      const double w = v / max_v * kBarW;
      const int by = y + static_cast<int>(i) * kBarH;
      s += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"/>", EscapeHtml(series[i].css_class),
                       kLabelW, by, w, kBarH - 2);
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>", kLabelW + w + 4, by + kBarH - 3,
                       EscapeHtml(AxisValue(v, values_ns, "")));
    }
    y += group_h;
  }
  s += "</svg>\n";
  return s;
}

std::string SvgRoofline(const std::vector<RooflinePoint>& points, double peak_flops, double bandwidth,
                        std::string_view aria_label) {
  constexpr int kLeft = 80, kRight = 30, kTop = 20, kBottom = 50, kPlotW = 820, kPlotH = 380;
  const int width = kLeft + kPlotW + kRight, height = kTop + kPlotH + kBottom;
  // Axis ranges (decades) covering the points and the ridge.
  double xmin = 1e-2, xmax = 1e4, ymin = 1e9, ymax = 1e15;
  bool any = false;
  size_t skipped = 0;
  for (const RooflinePoint& p : points) {
    if (!(p.intensity > 0) || !(p.flops > 0) || !std::isfinite(p.intensity) || !std::isfinite(p.flops)) { ++skipped; continue; }
    if (!any) { xmin = xmax = p.intensity; ymin = ymax = p.flops; any = true; }
    xmin = std::min(xmin, p.intensity); xmax = std::max(xmax, p.intensity);
    ymin = std::min(ymin, p.flops); ymax = std::max(ymax, p.flops);
  }
  if (peak_flops > 0) { ymax = std::max(ymax, peak_flops); ymin = std::min(ymin, peak_flops / 1e4); }
  if (peak_flops > 0 && bandwidth > 0) {
    const double ridge = peak_flops / bandwidth;
    xmin = std::min(xmin, ridge / 100); xmax = std::max(xmax, ridge * 10);
  }
  const double lx0 = std::floor(std::log10(xmin)), lx1 = std::max(lx0 + 1, std::ceil(std::log10(xmax)));
  const double ly0 = std::floor(std::log10(ymin)), ly1 = std::max(ly0 + 1, std::ceil(std::log10(ymax * 1.01)));
  auto X = [&](double v) { return kLeft + (std::log10(v) - lx0) / (lx1 - lx0) * kPlotW; };
  auto Y = [&](double v) { return kTop + kPlotH - (std::log10(v) - ly0) / (ly1 - ly0) * kPlotH; };
  std::string s = fmt::format("<svg role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" aria-label=\"{}\">", width,
                              height, width, height, EscapeHtml(aria_label));
  for (double d = lx0; d <= lx1 + 1e-9; d += 1) {
    const double x = kLeft + (d - lx0) / (lx1 - lx0) * kPlotW;
    s += fmt::format("<line class=\"grid\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>", x, kTop, x, kTop + kPlotH);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">1e{}</text>", x, kTop + kPlotH + 14, static_cast<int>(d));
  }
  for (double d = ly0; d <= ly1 + 1e-9; d += 1) {
    const double y = kTop + kPlotH - (d - ly0) / (ly1 - ly0) * kPlotH;
    s += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>", kLeft, y, kLeft + kPlotW, y);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLeft - 4, y + 4,
                     EscapeHtml(FormatSi(std::pow(10.0, d), "FLOP/s")));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP/B, log)</text>", kLeft + kPlotW / 2,
                   kTop + kPlotH + 34);
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" class=\"axis\" stroke=\"#9aa3b5\"/>", kLeft, kTop,
                   kPlotW, kPlotH);
  if (peak_flops > 0 && bandwidth > 0) {
    const double x0 = std::pow(10.0, lx0), x1 = std::pow(10.0, lx1);
    const double ridge = peak_flops / bandwidth;
    double start_x = x0, start_y = bandwidth * x0;
    if (start_y < std::pow(10.0, ly0)) { start_y = std::pow(10.0, ly0); start_x = start_y / bandwidth; }
    s += fmt::format("<polyline class=\"ceiling\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\">{}</polyline>", X(start_x),
                     Y(start_y), X(ridge), Y(peak_flops), X(x1), Y(peak_flops),
                     Tooltip(fmt::format("ceilings: {} peak, {} memory bandwidth, ridge {:.1f} FLOP/B", FormatSi(peak_flops, "FLOP/s"),
                                         FormatSi(bandwidth, "B/s"), ridge)));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">peak {}</text>", X(ridge) + 6, Y(peak_flops) - 5,
                     EscapeHtml(FormatSi(peak_flops, "FLOP/s")));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{} </text>", X(start_x) + 8, Y(start_y) - 8,
                     EscapeHtml(FormatSi(bandwidth, "B/s")));
  }
  for (const RooflinePoint& p : points) {
    if (!(p.intensity > 0) || !(p.flops > 0) || !std::isfinite(p.intensity) || !std::isfinite(p.flops)) continue;
    const double r = 3 + 9 * std::sqrt(std::clamp(p.weight, 0.0, 1.0));
    s += fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\">{}</circle>", EscapeHtml(p.css_class), X(p.intensity),
                     Y(p.flops), r,
                     Tooltip(fmt::format("{}\n{:.3g} FLOP/B, {}", p.label, p.intensity, FormatSi(p.flops, "FLOP/s"))));
  }
  s += "</svg>\n";
  if (skipped > 0) s += fmt::format("<p class=\"muted small\">{} ops without FLOP/byte figures are not plotted.</p>\n", skipped);
  return s;
}

}  // namespace pypto::report
