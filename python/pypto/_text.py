"""Terminal text of the Python commands (ranks, fleet): aligned plain tables, the same as the C++
commands print (src/report/text_table.h): a title line per section, then the table indented two
spaces, columns two spaces apart, headers in capitals, numbers right-aligned with their unit. Cells
are made safe to print (control characters, bidi overrides and line separators become visible
escapes) and cut to MAX_CELL_WIDTH code points with "…"; JSON and Markdown keep them whole. No colour.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence

#: Text cells longer than this (kernel names, paths) are cut with "…" (C++ report::kMaxCellWidth).
MAX_CELL_WIDTH = 64
ELLIPSIS = "…"
_COLUMN_GAP = "  "


def terminal_safe(text: object) -> str:
    """`text` with what could move the cursor, recolour the terminal, reorder the line or forge a
    report line shown as an escape ("\\n", "\\x1b", "\\u202e"), as the C++ report::TerminalSafe."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or code in (0x2028, 0x2029) or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:        # a lone surrogate (undecodable bytes): U+FFFD, as invalid UTF-8
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def ellipsize(text: str, width: int = MAX_CELL_WIDTH, keep_end: bool = False) -> str:
    """`text` cut to at most `width` code points with "…"; `keep_end` keeps the end (paths), else the start."""
    if width <= 0 or len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - (width - 1):] if keep_end else text[:width - 1] + ELLIPSIS


def format_duration(ns: Optional[float]) -> str:
    """"812 ns", "12.345 µs", "3.210 ms", "1.500 s"; "-" for None (C++ report::FormatDuration)."""
    if ns is None:
        return "-"
    magnitude = abs(ns)
    if magnitude < 1e3:
        return f"{int(round(ns))} ns"
    if magnitude < 1e6:
        return f"{ns / 1e3:.3f} µs"
    if magnitude < 1e9:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e9:.3f} s"


def format_bytes(count: Optional[float]) -> str:
    """Decimal units, as the bandwidths (GB/s): "512 B", "33.55 MB", "1.24 GB"; "-" for None."""
    if count is None:
        return "-"
    if abs(count) < 1000:
        return f"{int(round(count))} B"
    for unit, scale in (("kB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if abs(count) < scale * 1000:
            return f"{count / scale:.2f} {unit}"
    return f"{count / 1e12:.2f} TB"


def format_percent(fraction: float) -> str:
    """"37.5%" from 0.375."""
    return f"{fraction * 100:.1f}%"


class Column:
    """A table column: header, alignment ("left" or "right"), and whether long cells keep their end
    (paths: "…/run/rank_3_ascend_pt") rather than their start (names)."""

    def __init__(self, header: str, align: str = "left", keep_end: bool = False):
        self.header, self.align, self.keep_end = header, align, keep_end


def right(header: str) -> Column:
    return Column(header, "right")


class TextTable:
    """Rows of cells under headers, rendered as aligned plain text (no pipes, no Markdown)."""

    def __init__(self, columns: Sequence[Column]):
        self.columns = [c if isinstance(c, Column) else Column(str(c)) for c in columns]
        self.rows: List[List[str]] = []

    def add_row(self, cells: Iterable[object]) -> None:
        cells = ["" if c is None else str(c) for c in cells][:len(self.columns)]
        cells += [""] * (len(self.columns) - len(cells))
        self.rows.append([ellipsize(terminal_safe(cell), MAX_CELL_WIDTH, column.keep_end)
                          for cell, column in zip(cells, self.columns)])

    def __bool__(self) -> bool:
        return bool(self.rows)

    def render(self, indent: int = 2) -> List[str]:
        """The header and the rows, one string per line (no trailing blanks)."""
        widths = [max([len(c.header)] + [len(row[i]) for row in self.rows]) for i, c in enumerate(self.columns)]
        lines = []
        for cells in [[c.header for c in self.columns]] + self.rows:
            parts = []
            for i, (cell, column) in enumerate(zip(cells, self.columns)):
                last = i + 1 == len(self.columns)
                if column.align == "right":
                    parts.append(cell.rjust(widths[i]))
                else:
                    parts.append(cell if last else cell.ljust(widths[i]))
            lines.append((" " * indent + _COLUMN_GAP.join(parts)).rstrip())
        return lines


def markdown_cell(value: object) -> str:
    """A Markdown table cell: pipes escaped and line breaks flattened, so a name cannot break the row."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


__all__ = ["MAX_CELL_WIDTH", "terminal_safe", "ellipsize", "format_duration", "format_bytes", "format_percent",
           "Column", "right", "TextTable", "markdown_cell"]
