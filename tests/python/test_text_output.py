"""What `pypto ranks` and `pypto fleet analyze` print: aligned plain-text tables by default (also on a
terminal, never coloured), Markdown only with --markdown, JSON with --json; and the table helper."""

import json
import os
import pty
import subprocess
import sys

import pytest

from pypto._text import MAX_CELL_WIDTH, TextTable, format_bytes, format_duration, right, terminal_safe, Column

RANKS_RUN = os.path.join("ascend", "pta_level2_llm_pp2dp2_ranks1_3")
FLEET_PROFILE = os.path.join("kineto", "hta_cpu_only_gloo_2024", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")


def _env(**extra):
    env = dict(os.environ, PYPTO_PYTHON=sys.executable, PYPTO_NO_PROGRESS="1")
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def _run(cli, *args, env=None):
    done = subprocess.run([cli, *args], capture_output=True, text=True, env=env or _env())
    assert done.returncode == 0, done.stderr
    return done.stdout


def _table_rows(text):
    return [line for line in text.splitlines() if line.lstrip().startswith("|")]


def test_ranks_prints_plain_tables_by_default_and_markdown_on_request(pypto_cli, fixtures):
    run = os.path.join(fixtures, RANKS_RUN)
    plain = _run(pypto_cli, "ranks", run)
    assert "|" not in plain and not _table_rows(plain)
    lines = plain.splitlines()
    assert lines[0] == "pypto ranks: 2 rank(s) analysed"
    assert lines[1] == "Slow rank(s): 3; stragglers: none"        # the verdict first
    header = next(line for line in lines if line.lstrip().startswith("RANK  PROFILE"))
    row = next(line for line in lines if "rank_3_ascend_pt" in line)
    # Right-aligned numbers with their unit end in the same column as their header.
    assert row.split() == ["3", "rank_3_ascend_pt", "ascend-pt", "1", "810.150", "ms", "401.132", "ms",
                           "261.498", "ms", "147.520", "ms"]
    assert len(row) == len(header) and header.endswith("FREE") and row.endswith("147.520 ms")
    sendrecv = next(line for line in lines if line.lstrip().startswith("sendrecv"))
    assert "rank 1 (321.258 ms)" in sendrecv and sendrecv.rstrip().endswith("rank 3")
    assert "\x1b" not in plain

    markdown = _run(pypto_cli, "ranks", run, "--markdown")
    assert markdown.startswith("# Multi-rank analysis")
    assert "| 3 | rank_3_ascend_pt | ascend-pt | 1 | 810.150 | 401.132 | 261.498 | 147.520 |" in _table_rows(markdown)

    assert json.loads(_run(pypto_cli, "ranks", run, "--json"))["schema"] == "pypto.ranks/1"
    both = subprocess.run([pypto_cli, "ranks", run, "--json", "--markdown"], capture_output=True, text=True,
                          env=_env())
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_ranks_on_a_terminal_is_plain_and_uncoloured(pypto_cli, fixtures):
    # stdout and stderr a terminal, progress on: the progress line comes and goes, the tables stay plain.
    env = _env()
    env.pop("PYPTO_NO_PROGRESS")
    master, slave = pty.openpty()
    process = subprocess.Popen([pypto_cli, "ranks", os.path.join(fixtures, RANKS_RUN)], stdout=slave, stderr=slave,
                               stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:           # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert process.wait(timeout=120) == 0
    screen = b"".join(chunks).decode("utf-8")
    assert "pypto ranks: 1/2 ranks" in screen            # progress, on the terminal only
    assert "\x1b[" not in screen                         # no colour, no cursor control
    report = screen[screen.index("pypto ranks: 2 rank(s) analysed"):]
    assert not _table_rows(report) and "RANK  PROFILE" in report


def test_fleet_prints_plain_tables_by_default_and_markdown_on_request(pypto_cli, fixtures):
    pytest.importorskip("distributed")
    profile = os.path.join(fixtures, FLEET_PROFILE)
    plain = _run(pypto_cli, "fleet", "analyze", profile, "--workers", "1")
    assert "|" not in plain and not _table_rows(plain)
    lines = plain.splitlines()
    assert lines[0] == "pypto fleet: 1 profile(s) analysed, 0 failed"
    row = next(line for line in lines if "kineto" in line)
    # The path is longer than a cell: cut to MAX_CELL_WIDTH keeping its end; durations carry their unit.
    path_cell = row.split()[0]
    assert path_cell.startswith("…") and len(path_cell) == MAX_CELL_WIDTH and profile.endswith(path_cell[1:])
    assert row.split()[1:] == ["kineto", "34", "1", "210.109", "ms", "210.109", "ms", "0"]

    markdown = _run(pypto_cli, "fleet", "analyze", profile, "--workers", "1", "--markdown")
    assert markdown.startswith("# Fleet analysis")
    assert any(profile in row for row in _table_rows(markdown))    # Markdown keeps the whole path


def test_text_table_aligns_cuts_and_escapes():
    table = TextTable([Column("NAME"), right("TIME"), Column("PATH", keep_end=True)])
    long_name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>" * 2
    table.add_row([long_name, format_duration(1234567), "/a/" + "b" * 80 + "/trace.json"])
    table.add_row(["evil\x1b[31mred\nline|", format_duration(812), "p"])
    header, first, second = table.render()
    assert header.startswith("  NAME") and "|" not in header
    name_cell = first[2:2 + MAX_CELL_WIDTH]
    assert name_cell.endswith("…") and long_name.startswith(name_cell[:-1])
    assert first.endswith("…" + ("b" * 80 + "/trace.json")[-(MAX_CELL_WIDTH - 1):])
    assert "\x1b" not in second and "\n" not in second and "evil\\x1b[31mred\\nline|" in second
    assert first.index("1.235 ms") + len("1.235 ms") == second.index("812 ns") + len("812 ns")   # right-aligned
    assert all(line == line.rstrip() for line in (header, first, second))


def test_units():
    assert [format_duration(v) for v in (None, 812, 12345, 3.21e6, 1.5e9)] == \
        ["-", "812 ns", "12.345 µs", "3.210 ms", "1.500 s"]
    # Three significant digits with an SI prefix, as the engine prints sizes everywhere.
    assert [format_bytes(v) for v in (None, 384, 33554432, 1244659816)] == ["-", "384 B", "33.6 MB", "1.24 GB"]
    assert terminal_safe("a\u202eb\tc") == "a\\u202eb\\tc"
