#include "python/bind_text.h"

#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/bind_common.h"
#include "report/html_charts.h"
#include "report/text_table.h"

namespace py = pybind11;

namespace pypto::python {

void BindText(py::module_& m) {
  m.def("format_duration", [](double ns) { return report::FormatDuration(static_cast<TimeNs>(ns)); }, py::arg("ns"),
        "'812 ns', '12.345 µs', '3.210 ms', '1.500 s': a duration as every pypto table prints it.");
  m.def("format_percent", &report::FormatPercent, py::arg("fraction"), "'37.5%' from 0.375.");
  m.def("format_si", [](double value, const std::string& unit) { return report::FormatSi(value, unit); },
        py::arg("value"), py::arg("unit"), "'33.6 MB', '1.23 TFLOP/s': VALUE with an SI prefix on UNIT.");
  m.def("terminal_safe", [](const std::string& text) { return report::TerminalSafe(text); }, py::arg("text"),
        "TEXT with control characters, line separators and bidi overrides as visible escapes ('\\\\n', '\\\\x1b').");
  m.def("text_table",
        [](const std::vector<std::string>& headers, const std::vector<bool>& right_aligned,
           const std::vector<std::vector<std::string>>& rows, size_t indent) {
          if (right_aligned.size() != headers.size())
            throw EngineError{InvalidArgumentError("text_table: one alignment per header")};
          std::vector<report::TextTable::Column> columns;
          for (size_t i = 0; i < headers.size(); ++i)
            columns.push_back({headers[i], right_aligned[i] ? report::Align::kRight : report::Align::kLeft});
          report::TextTable table(std::move(columns));
          for (const std::vector<std::string>& row : rows) table.AddRow(row);
          return table.Render(indent);
        },
        py::arg("headers"), py::arg("right_aligned"), py::arg("rows"), py::arg("indent") = 2,
        "Rows under headers as aligned plain text (cells made terminal-safe and cut to 64 characters with '…'), "
        "as the C++ commands print their tables.");
}

}  // namespace pypto::python
