"""The closed tuning loop (examples/closed_loop.py, `make demo`) in its small configuration:
it runs end to end on both example models, keeps the generated tokens, finds hotspots, and
writes the reports. Speed-ups are measured by the demo itself and recorded in docs, not
asserted here (timings on a shared CI machine are not a test)."""

import json
import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "examples"))
import closed_loop  # noqa: E402


def test_closed_loop_small(tmp_path, monkeypatch):
    # The demo calibrates this CPU once; keep that file out of the user's config.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert closed_loop.main(["--small", "--out", str(tmp_path)]) == 0
    results = json.load(open(tmp_path / "summary.json"))
    assert [r["model"] for r in results] == ["hf", "handwritten"]
    for r in results:
        assert r["same_tokens"], r["model"]
        assert r["kinds"], f"{r['model']}: no hotspot kind of the brief found"
        for key in ("report", "comparison"):
            html = open(r[key], encoding="utf-8").read()
            assert "<svg" in html and "</html>" in html.lower()
        assert all(t > 0 for t in r["before"]["decode"] + r["after"]["decode"])
        assert (tmp_path / r["model"] / "artifacts").is_dir()
