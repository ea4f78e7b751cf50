"""Terminal text of the Python commands (ranks, fleet): aligned plain tables, the same as the C++
commands print, rendered by the engine (report/text_table.h, bound in src/python/bind_text.cc): a title line per section, then the table indented two
spaces, columns two spaces apart, headers in capitals, numbers right-aligned with their unit. Cells
are made safe to print (control characters, bidi overrides and line separators become visible
escapes) and cut to MAX_CELL_WIDTH code points with "…"; JSON and Markdown keep them whole. No colour.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence

from . import _engine

#: Text cells longer than this (kernel names, paths) are cut with "…" (C++ report::kMaxCellWidth).
MAX_CELL_WIDTH = 64
ELLIPSIS = "…"


def terminal_safe(text: object) -> str:
    """`text` with what could move the cursor, recolour the terminal, reorder the line or forge a
    report line shown as an escape ("\\n", "\\x1b", "\\u202e"): the engine's report::TerminalSafe."""
    return _engine.terminal_safe(str(text))


def ellipsize_start(text: str, width: int = MAX_CELL_WIDTH) -> str:
    """`text` cut to at most `width` code points keeping its end ("…/run/rank_3_ascend_pt"): paths,
    whose start is the same on every row. (Cutting at the end is the engine table's own.)"""
    if width <= 0 or len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - (width - 1):]


def format_duration(ns: Optional[float]) -> str:
    """"812 ns", "12.345 µs", "3.210 ms", "1.500 s"; "-" for None (the engine's report::FormatDuration)."""
    return "-" if ns is None else _engine.format_duration(float(ns))


def format_bytes(count: Optional[float]) -> str:
    """"512 B", "33.6 MB" (the engine's SI formatting); "-" for None."""
    return "-" if count is None else _engine.format_si(float(count), "B")


def format_percent(fraction: float) -> str:
    """"37.5%" from 0.375 (the engine's report::FormatPercent)."""
    return _engine.format_percent(float(fraction))


class Column:
    """A table column: header, alignment ("left" or "right"), and whether long cells keep their end
    (paths: "…/run/rank_3_ascend_pt") rather than their start (names)."""

    def __init__(self, header: str, align: str = "left", keep_end: bool = False):
        self.header, self.align, self.keep_end = header, align, keep_end


def right(header: str) -> Column:
    return Column(header, "right")


class TextTable:
    """Rows of cells under headers, rendered by the engine's report::TextTable (aligned plain text,
    cells made terminal-safe and cut to MAX_CELL_WIDTH with "…"; no pipes, no Markdown)."""

    def __init__(self, columns: Sequence[Column]):
        self.columns = [c if isinstance(c, Column) else Column(str(c)) for c in columns]
        self.rows: List[List[str]] = []

    def add_row(self, cells: Iterable[object]) -> None:
        cells = ["" if c is None else str(c) for c in cells][:len(self.columns)]
        cells += [""] * (len(self.columns) - len(cells))
        self.rows.append([ellipsize_start(terminal_safe(cell)) if column.keep_end else cell
                          for cell, column in zip(cells, self.columns)])

    def __bool__(self) -> bool:
        return bool(self.rows)

    def render(self, indent: int = 2) -> List[str]:
        """The header and the rows, one string per line (no trailing blanks)."""
        text = _engine.text_table([c.header for c in self.columns], [c.align == "right" for c in self.columns],
                                  self.rows, indent)
        return [line.rstrip() for line in text.rstrip("\n").split("\n")]


def markdown_cell(value: object) -> str:
    """A Markdown table cell: pipes escaped and line breaks flattened, so a name cannot break the row."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


__all__ = ["MAX_CELL_WIDTH", "terminal_safe", "ellipsize_start", "format_duration", "format_bytes", "format_percent",
           "Column", "right", "TextTable", "markdown_cell"]
