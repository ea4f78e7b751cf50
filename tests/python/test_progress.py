"""The progress line of the Python commands: shown on a terminal only, rewritten in place, cleared."""
import io

from pypto._progress import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_counts_and_clears(monkeypatch):
    monkeypatch.delenv("PYPTO_NO_PROGRESS", raising=False)
    out = _Tty()
    with Progress("pypto ranks", total=2, unit="ranks", stream=out) as p:
        p.advance("/jobs/rank_0_ascend_pt/")
        p.advance("/jobs/rank_1_ascend_pt")
    text = out.getvalue()
    assert "\rpypto ranks: 1/2 ranks, rank_0_ascend_pt" in text
    assert "pypto ranks: 2/2 ranks, rank_1_ascend_pt" in text
    assert text.endswith("\r")  # the line is wiped at the end


def test_progress_is_silent_in_pipes_and_with_no_progress(monkeypatch):
    pipe = io.StringIO()
    Progress("pypto fleet", total=3, stream=pipe).advance("a")
    assert pipe.getvalue() == ""
    monkeypatch.setenv("PYPTO_NO_PROGRESS", "1")
    tty = _Tty()
    Progress("pypto fleet", total=3, stream=tty).advance("a")
    assert tty.getvalue() == ""
