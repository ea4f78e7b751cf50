"""The offline pipeline: ingest + quarantine, idempotent re-runs, crash safety, schema migration,
drift flags (planted regression vs rerun), actions approve/export, report escaping, watch + SIGTERM."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import REPO

from pypto import history as history_mod
from pypto.drift import detect_drift, ks_two_sample, student_t_two_sided_p, welch_t_test
from pypto.history import MIGRATIONS, SCHEMA_VERSION, HistoryStore
from pypto.pipeline import EXIT_OK, EXIT_PARTIAL, main, run_pipeline

GENERATOR = os.path.join(REPO, "build", "release", "bench", "gen_kineto_trace")
PYTHON = sys.executable
CLI = "import sys; from pypto.pipeline import main; sys.exit(main(sys.argv[1:]))"
HOSTILE_NAME = "<img src=x onerror=alert(1)>.json"


def generate(path, seed, steps=6, layers=4, prompt=None):
    if not os.access(GENERATOR, os.X_OK):
        pytest.skip("gen_kineto_trace not built (make build)")
    cmd = [GENERATOR, "--out", str(path), "--steps", str(steps), "--seed", str(seed), "--layers", str(layers), "--quiet"]
    if prompt is not None:
        cmd += ["--prompt", str(prompt)]
    subprocess.run(cmd, check=True)
    return path


@pytest.fixture()
def baseline_dir(tmp_path):
    d = tmp_path / "profiles"
    d.mkdir()
    for seed in (1, 2, 3):
        generate(d / f"decode_seed{seed}.json.gz", seed)
    (d / HOSTILE_NAME).write_text("this is not a profile\n")
    return d


def count(db, table):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def test_ingest_quarantines_garbage_and_stores_the_rest(baseline_dir, tmp_path):
    db = tmp_path / "h.db"
    result = run_pipeline(baseline_dir, db)
    assert result.count("stored") == 3 and result.count("quarantined") == 1
    assert result.exit_code == EXIT_PARTIAL
    with HistoryStore(db) as store:
        runs = store.runs()
        assert [os.path.basename(r["path"]) for r in runs] == [f"decode_seed{s}.json.gz" for s in (1, 2, 3)]
        r = runs[0]
        assert r["format"] == "kineto" and r["step_count"] == 6 and r["decode_step_count"] == 5
        assert r["per_token_p50_ms"] > 0 and r["hardware"]
        assert len(store.step_latencies(r["id"], "decode")) == 5
        assert store.op_stats(r["id"]) and store.issues(r["id"])
        shapes = store.request_shapes(r["id"])
        assert shapes[0]["phase"] == "prefill" and shapes[0]["query_len"] == 512 and shapes[0]["batch"] == 8
        assert [s["kv_len"] for s in shapes[1:]] == [513, 514, 515, 516, 517]
        assert store.length_histogram(r["id"]) == [(512, 1024, 48)]
        assert count(db, "recommendations") > 0
        q = store.quarantined()
        assert len(q) == 1 and q[0]["error_type"] == "ProfileFormatError"
        assert HOSTILE_NAME in q[0]["error"]                     # the error names the file
        assert store.actions(), "recommendations with env/config/artifact actions propose actions"
    # the command line says partial through its exit status (fresh database: the garbage is new again)
    assert main(["pipeline", str(baseline_dir), "--db", str(tmp_path / "cli.db"), "-q"]) == EXIT_PARTIAL


def test_rerun_ingests_nothing_new(baseline_dir, tmp_path):
    db = tmp_path / "h.db"
    run_pipeline(baseline_dir, db)
    again = run_pipeline(baseline_dir, db)
    assert again.count("stored") == 0 and again.count("quarantined") == 0 and again.count("skipped") == 4
    assert again.exit_code == EXIT_OK
    assert count(db, "runs") == 3 and count(db, "quarantine") == 1
    # a copy under another name has the same content: not ingested twice
    (baseline_dir / "copy.json.gz").write_bytes((baseline_dir / "decode_seed1.json.gz").read_bytes())
    assert run_pipeline(baseline_dir, db).count("stored") == 0


def test_failure_mid_ingest_leaves_history_intact(baseline_dir, tmp_path, monkeypatch):
    db = tmp_path / "h.db"
    run_pipeline(baseline_dir, db)
    before = {t: count(db, t) for t in ("runs", "step_latencies", "op_stats", "issues", "recommendations",
                                          "request_shapes", "actions")}
    generate(baseline_dir / "decode_seed9.json.gz", 9)

    def explode(self, run_id, actions):
        raise sqlite3.OperationalError("disk I/O error (injected after the run and its children were written)")

    monkeypatch.setattr(HistoryStore, "_upsert_actions", explode)
    with pytest.raises(sqlite3.OperationalError):
        run_pipeline(baseline_dir, db)
    after = {t: count(db, t) for t in before}
    assert after == before
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    monkeypatch.undo()
    # the next run picks the profile up
    assert run_pipeline(baseline_dir, db).count("stored") == 1


def test_non_database_failure_of_one_profile_is_quarantined_and_others_continue(baseline_dir, tmp_path, monkeypatch):
    import pypto.pipeline as pipeline_mod
    real = pipeline_mod.extract_run

    def flaky(path, digest):
        if path.endswith("decode_seed2.json.gz"):
            raise RuntimeError("injected analysis failure")
        return real(path, digest)

    monkeypatch.setattr(pipeline_mod, "extract_run", flaky)
    result = run_pipeline(baseline_dir, tmp_path / "h.db")
    assert result.count("stored") == 2 and result.count("quarantined") == 2
    errors = {os.path.basename(o.path): o.error for o in result.outcomes if o.status == "quarantined"}
    assert "injected analysis failure" in errors["decode_seed2.json.gz"]
    assert "decode_seed2.json.gz" in errors["decode_seed2.json.gz"]


def test_v1_database_migrates_to_current(tmp_path):
    db = tmp_path / "old.db"
    with HistoryStore(db, migrations=MIGRATIONS[:1]) as v1:
        assert v1.conn.execute("PRAGMA user_version").fetchone()[0] == 1
        v1.conn.execute("INSERT INTO runs(path, content_hash, format, ingested_at, step_count, decode_step_count, "
                        "hardware, metadata_json) VALUES ('a', 'sha256:x', 'kineto', 't', 1, 0, '', '{}')")
        v1.conn.execute("INSERT INTO actions(action_key, kind, payload_json, source_run_id, status, created_at) "
                        "VALUES ('env:k', 'env', '{}', 1, 'proposed', 't')")
    with HistoryStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION >= 2
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0] == \
            f"pypto.history/{SCHEMA_VERSION}"
        assert [r["path"] for r in store.runs()] == ["a"]
        (action,) = store.actions()
        assert action["last_seen_run_id"] == 1 and action["seen_count"] == 1
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # a database newer than this code is refused with a clear error
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(history_mod.HistoryError, match="newer"):
        HistoryStore(db)


def test_drift_flags_planted_regression_but_not_a_rerun(baseline_dir, tmp_path):
    db = tmp_path / "h.db"
    run_pipeline(baseline_dir, db)
    generate(baseline_dir / "rerun_seed4.json.gz", 4)               # same workload, new seed
    quiet = run_pipeline(baseline_dir, db)
    assert quiet.count("stored") == 1
    assert quiet.drift.flags == [], [f.message for f in quiet.drift.flags]

    generate(baseline_dir / "regressed.json.gz", 5, layers=6, prompt=2048)   # longer prompts, more layers
    drifted = run_pipeline(baseline_dir, db).drift
    kinds = {f.kind for f in drifted.flags}
    assert {"per_token_latency", "input_length", "op_time"} <= kinds, [f.message for f in drifted.flags]
    latency = next(f for f in drifted.flags if f.kind == "per_token_latency")
    assert latency.figures["method"] == "median_mad" and latency.figures["relative_change"] > 0.1
    lengths = next(f for f in drifted.flags if f.kind == "input_length")
    assert lengths.figures["median_latest"] > 2000 > lengths.figures["median_baseline"]
    # with fewer than MIN_RUNS_FOR_MAD earlier runs the Welch test is used
    with HistoryStore(db) as store:
        early = detect_drift(store, run_id=store.runs()[2]["id"])
        assert early.flags == [] and len(early.baseline_run_ids) == 2
    # history drift --json prints the same flags
    out = subprocess.run([PYTHON, "-c", CLI, "history", "drift", "--db", str(db), "--json"], capture_output=True,
                         text=True, cwd=REPO, check=True).stdout
    assert {f["kind"] for f in json.loads(out)["flags"]} == kinds


def test_statistics_helpers():
    a = [10.0, 10.1, 9.9, 10.05, 9.95]
    assert welch_t_test(a, a)["p_value"] == pytest.approx(1.0)
    shifted = welch_t_test(a, [x + 1.0 for x in a])
    assert shifted["p_value"] < 1e-6 and shifted["t"] > 0
    # critical values of Student's t (two-sided), from any t table: df 10 -> 2.228 (p 0.05), 3.169 (p 0.01);
    # df 1 -> 12.706 (p 0.05); df 30 -> 2.042 (p 0.05)
    for t, df, p in ((2.228, 10, 0.05), (3.169, 10, 0.01), (12.706, 1, 0.05), (2.042, 30, 0.05)):
        assert student_t_two_sided_p(t, df) == pytest.approx(p, abs=2e-4)
    # Welch by hand: means 3 and 6.2, variances 2.5 and 12.2, n 5 and 5 -> t = 3.2 / sqrt(2.94),
    # df = 2.94^2 / (0.5^2/4 + 2.44^2/4)
    w = welch_t_test([1, 2, 3, 4, 5], [2, 4, 6, 8, 11])
    assert w["t"] == pytest.approx(3.2 / 2.94 ** 0.5) and w["df"] == pytest.approx(2.94 ** 2 / (0.0625 + 1.4884))
    assert w["p_value"] == pytest.approx(student_t_two_sided_p(w["t"], w["df"]))
    assert ks_two_sample(list(range(50)), list(range(50)))["d"] == 0.0
    ks = ks_two_sample(list(range(50)), list(range(100, 150)))
    assert ks["d"] == 1.0 and ks["p_value"] < 1e-10


def test_actions_approve_export_round_trip(baseline_dir, tmp_path, capsys):
    db = str(tmp_path / "h.db")
    run_pipeline(baseline_dir, db)
    assert main(["actions", "list", "--db", db, "--json"]) == 0
    actions = json.loads(capsys.readouterr().out)
    assert actions and all(a["status"] == "proposed" for a in actions)
    env = next((a for a in actions if a["kind"] == "env"), None)
    other = next(a for a in actions if a["kind"] != "env")
    out = tmp_path / "actions.json"
    assert main(["actions", "export", "-o", str(out), "--db", db]) == 2          # nothing approved yet
    assert not out.exists()
    ids = [str(other["id"])] + ([str(env["id"])] if env else [])
    assert main(["actions", "approve", *ids, "--reviewer", "alice", "--db", db]) == 0
    assert main(["actions", "export", "-o", str(out), "--db", db]) == 0
    config = json.loads(out.read_text())
    assert config["schema"] == "pypto.actions/1"
    assert sorted(a["id"] for a in config["actions"]) == sorted(int(i) for i in ids)
    assert all(a["reviewer"] == "alice" for a in config["actions"])
    assert config[other["kind"]][0]["action"] == other["payload"]["action"]
    if env:
        assert set(config["env_unset"]) | set(config["env"]) == set(env["payload"]["env"])
    # never overwrite without --force
    before = out.read_text()
    assert main(["actions", "export", "-o", str(out), "--db", db]) == 2
    assert "exists" in capsys.readouterr().err and out.read_text() == before
    assert main(["actions", "export", "-o", str(out), "--db", db, "--force"]) == 0
    with HistoryStore(db) as store:
        statuses = {a["id"]: a["status"] for a in store.actions()}
    assert all(statuses[int(i)] == "exported" for i in ids)
    assert all(s == "proposed" for i, s in statuses.items() if str(i) not in ids)
    assert main(["actions", "approve", "9999", "--db", db]) == 2


def test_report_escapes_hostile_names(baseline_dir, tmp_path):
    db = tmp_path / "h.db"
    html_path, md_path = tmp_path / "review.html", tmp_path / "review.md"
    run_pipeline(baseline_dir, db, report=html_path)
    assert main(["history", "report", "-o", str(md_path), "--db", str(db)]) == 0
    page = html_path.read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")   # self-contained
    for section in ("Runs", "Trends", "Drift and regressions", "Quarantined profiles", "Actions for review"):
        assert section in page
    md = md_path.read_text()
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    assert main(["history", "report", "-o", str(md_path), "--db", str(db)]) == 2     # exists, no --force


def test_help_and_usage_errors(capsys, tmp_path):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for word in ("pipeline", "watch", "actions", "history", "exit status"):
        assert word in text
    assert main(["pipeline", "--help"]) == 0
    assert "--report" in capsys.readouterr().out
    assert main(["pipeline", str(tmp_path / "missing"), "--db", str(tmp_path / "h.db")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["history", "drift", "--db", str(tmp_path / "none.db")]) == 2


def test_watch_ingests_new_files_and_stops_on_sigterm(tmp_path):
    d = tmp_path / "incoming"
    d.mkdir()
    db = tmp_path / "h.db"
    proc = subprocess.Popen([PYTHON, "-c", CLI, "watch", str(d), "--db", str(db), "--interval", "0.2"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        generate(tmp_path / "staging.json.gz", 1)
        (d / "partial.json.gz.part").write_bytes(b"\x1f\x8b half written")          # temp name: ignored
        os.replace(tmp_path / "staging.json.gz", d / "run1.json.gz")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if os.path.exists(db) and count(db, "runs") == 1:
                    break
            except sqlite3.OperationalError:
                pass                      # the watcher is still creating the schema
            time.sleep(0.1)
        assert count(db, "runs") == 1
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        assert time.monotonic() - sent < 2.5
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "watch stopped (SIGTERM)" in out
    assert count(db, "quarantine") == 0
