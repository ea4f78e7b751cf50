"""History database of the offline pipeline: runs, per-op statistics, issues, recommendations,
request shapes, quarantined profiles and reviewed actions (docs/history-schema.md).

SQLite (stdlib `sqlite3`), WAL journal. The schema version is `PRAGMA user_version`; `MIGRATIONS`
is the ordered list of steps that bring a database from version N-1 to N. Opening a database runs
the missing steps, each in its own transaction, so an old history is upgraded in place and a
failed upgrade leaves the previous version intact.

Every profile is stored in ONE transaction (`HistoryStore.store_run`): a failure half way (bad
data, a full disk, a killed process) rolls back to the history as it was before that profile.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

#: Names the schema in the `meta` table; bumps with the version below.
SCHEMA_NAME = "pypto.history"

#: How long a writer waits for another process's write lock before failing (ms). 5 s covers one
#: profile's transaction, which takes milliseconds; a longer wait means a stuck writer.
BUSY_TIMEOUT_MS = 5000

ACTION_STATUSES = ("proposed", "approved", "rejected", "exported")

_V1_CREATE = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    format TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    step_count INTEGER NOT NULL,
    decode_step_count INTEGER NOT NULL,
    per_token_p50_ms REAL, per_token_p90_ms REAL, per_token_p99_ms REAL, per_token_mean_ms REAL,
    prefill_mean_ms REAL,
    step_time_us REAL,
    hardware TEXT NOT NULL,
    layers INTEGER,
    estimated_speedup REAL,
    metadata_json TEXT NOT NULL
);
CREATE TABLE step_latencies (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_number INTEGER, name TEXT NOT NULL, phase TEXT NOT NULL, latency_ns INTEGER NOT NULL
);
CREATE TABLE op_stats (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    source TEXT NOT NULL,            -- device_kernel | host_operator
    op_name TEXT NOT NULL, op_class TEXT NOT NULL,
    count INTEGER NOT NULL, total_ns INTEGER NOT NULL, mean_ns INTEGER NOT NULL
);
CREATE TABLE issues (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    issue_type TEXT NOT NULL, severity TEXT NOT NULL, op_name TEXT NOT NULL, op_type TEXT NOT NULL,
    phase TEXT NOT NULL, affected_us REAL, affected_share REAL, estimated_saved_us REAL, detail TEXT NOT NULL
);
CREATE TABLE recommendations (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rank INTEGER NOT NULL, hotspot_type TEXT NOT NULL, rule_id TEXT NOT NULL, severity TEXT NOT NULL,
    description TEXT NOT NULL, action TEXT NOT NULL, estimated_speedup REAL, estimated_saved_us REAL,
    raw_json TEXT NOT NULL
);
CREATE TABLE request_shapes (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_number INTEGER, phase TEXT NOT NULL,
    batch INTEGER, query_len INTEGER, kv_len INTEGER, source TEXT NOT NULL
);
CREATE TABLE request_length_histogram (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    bucket_low INTEGER NOT NULL, bucket_high INTEGER NOT NULL, count INTEGER NOT NULL
);
CREATE TABLE quarantine (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL, content_hash TEXT NOT NULL UNIQUE, error_type TEXT NOT NULL, error TEXT NOT NULL,
    quarantined_at TEXT NOT NULL
);
CREATE TABLE actions (
    id INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    source_run_id INTEGER REFERENCES runs(id),
    status TEXT NOT NULL CHECK (status IN ('proposed', 'approved', 'rejected', 'exported')),
    reviewer TEXT,
    created_at TEXT NOT NULL, reviewed_at TEXT, exported_at TEXT
);
CREATE INDEX step_latencies_run ON step_latencies(run_id);
CREATE INDEX op_stats_run ON op_stats(run_id);
CREATE INDEX issues_run ON issues(run_id);
CREATE INDEX recommendations_run ON recommendations(run_id);
CREATE INDEX request_shapes_run ON request_shapes(run_id);
"""

_V2_ACTIONS_SEEN_AND_OP_INDEX = """
ALTER TABLE actions ADD COLUMN last_seen_run_id INTEGER REFERENCES runs(id);
ALTER TABLE actions ADD COLUMN seen_count INTEGER NOT NULL DEFAULT 1;
UPDATE actions SET last_seen_run_id = source_run_id;
CREATE INDEX op_stats_name ON op_stats(op_name, source);
"""


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sql: str


#: Ordered schema steps: MIGRATIONS[i] brings a database from version i to i + 1. Append only;
#: never edit a released step (old databases have already run it).
MIGRATIONS: Tuple[Migration, ...] = (
    Migration(1, "create runs, step_latencies, op_stats, issues, recommendations, request_shapes, "
                 "request_length_histogram, quarantine, actions", _V1_CREATE),
    Migration(2, "actions remember the last run that proposed them again (last_seen_run_id, seen_count); "
                 "index op_stats by op name for trends", _V2_ACTIONS_SEEN_AND_OP_INDEX),
)

SCHEMA_VERSION = MIGRATIONS[-1].version


class HistoryError(Exception):
    """The history database cannot be used (newer schema, not a history file, corrupt)."""


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class RunRecord:
    """Everything the pipeline stores about one ingested profile (one row of `runs` + children)."""

    path: str
    content_hash: str
    format: str
    hardware: str
    step_count: int
    decode_step_count: int
    per_token: Dict[str, Optional[float]]          # p50_ms, p90_ms, p99_ms, mean_ms
    prefill_mean_ms: Optional[float]
    step_time_us: Optional[float]
    layers: Optional[int]
    estimated_speedup: Optional[float]
    metadata: Dict[str, Any]
    steps: List[Dict[str, Any]] = field(default_factory=list)           # step_number, name, phase, latency_ns
    op_stats: List[Dict[str, Any]] = field(default_factory=list)        # source, op_name, op_class, count, total_ns, mean_ns
    issues: List[Dict[str, Any]] = field(default_factory=list)
    recommendations: List[Dict[str, Any]] = field(default_factory=list)
    request_shapes: List[Dict[str, Any]] = field(default_factory=list)  # step_number, phase, batch, query_len, kv_len, source
    length_histogram: List[Tuple[int, int, int]] = field(default_factory=list)
    actions: List[Dict[str, Any]] = field(default_factory=list)         # action_key, kind, payload


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Runs the steps the database lacks, each in one transaction; returns the final version."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    latest = migrations[-1].version if migrations else 0
    if current > latest:
        raise HistoryError(f"history schema version {current} is newer than this pypto understands "
                           f"({latest}); upgrade pypto")
    for step in migrations:
        if step.version <= current:
            continue
        try:
            conn.execute("BEGIN IMMEDIATE")
            for statement in _split_sql(step.sql):
                conn.execute(statement)
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)",
                         (f"{SCHEMA_NAME}/{step.version}",))
            conn.execute(f"PRAGMA user_version = {int(step.version)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        current = step.version
    return current


def _split_sql(script: str) -> List[str]:
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class HistoryStore:
    """The history database. `HistoryStore(path)` creates or upgrades it; use as a context manager."""

    def __init__(self, path: Union[str, os.PathLike], migrations: Sequence[Migration] = MIGRATIONS):
        self.path = os.fspath(path)
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)
        try:
            # isolation_level=None: transactions are explicit (BEGIN/COMMIT below), never implicit.
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")   # WAL + NORMAL: durable across app crashes
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.schema_version = migrate(self.conn, migrations)
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"{self.path}: not a usable history database ({exc})") from exc

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "HistoryStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- ingest bookkeeping
    def known_hashes(self) -> Dict[str, str]:
        """content hash -> 'run' or 'quarantine' for everything already seen."""
        seen = {r[0]: "run" for r in self.conn.execute("SELECT content_hash FROM runs")}
        seen.update({r[0]: "quarantine" for r in self.conn.execute("SELECT content_hash FROM quarantine")})
        return seen

    def store_run(self, record: RunRecord) -> int:
        """Stores one profile and its children in ONE transaction; returns the run id."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            run_id = self._insert_run(record)
            self._insert_children(run_id, record)
            self._upsert_actions(run_id, record.actions)
            conn.execute("COMMIT")
            return run_id
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _insert_run(self, r: RunRecord) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs(path, content_hash, format, ingested_at, step_count, decode_step_count, "
            "per_token_p50_ms, per_token_p90_ms, per_token_p99_ms, per_token_mean_ms, prefill_mean_ms, "
            "step_time_us, hardware, layers, estimated_speedup, metadata_json) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (r.path, r.content_hash, r.format, utc_now(), r.step_count, r.decode_step_count,
             r.per_token.get("p50_ms"), r.per_token.get("p90_ms"), r.per_token.get("p99_ms"),
             r.per_token.get("mean_ms"), r.prefill_mean_ms, r.step_time_us, r.hardware, r.layers,
             r.estimated_speedup, json.dumps(r.metadata, sort_keys=True)))
        return int(cur.lastrowid)

    def _insert_children(self, run_id: int, r: RunRecord) -> None:
        c = self.conn
        c.executemany("INSERT INTO step_latencies VALUES (?,?,?,?,?)",
                      [(run_id, s["step_number"], s["name"], s["phase"], s["latency_ns"]) for s in r.steps])
        c.executemany("INSERT INTO op_stats VALUES (?,?,?,?,?,?,?)",
                      [(run_id, o["source"], o["op_name"], o["op_class"], o["count"], o["total_ns"], o["mean_ns"])
                       for o in r.op_stats])
        c.executemany("INSERT INTO issues VALUES (?,?,?,?,?,?,?,?,?,?)",
                      [(run_id, i["issue_type"], i["severity"], i["op_name"], i["op_type"], i["phase"],
                        i.get("affected_us"), i.get("affected_share"), i.get("estimated_saved_us"), i["detail"])
                       for i in r.issues])
        c.executemany("INSERT INTO recommendations VALUES (?,?,?,?,?,?,?,?,?,?)",
                      [(run_id, x["rank"], x["hotspot_type"], x["rule_id"], x["severity"], x["description"],
                        x["action"], x.get("estimated_speedup"), x.get("estimated_saved_us"), x["raw_json"])
                       for x in r.recommendations])
        c.executemany("INSERT INTO request_shapes VALUES (?,?,?,?,?,?,?)",
                      [(run_id, s["step_number"], s["phase"], s.get("batch"), s.get("query_len"), s.get("kv_len"),
                        s["source"]) for s in r.request_shapes])
        c.executemany("INSERT INTO request_length_histogram VALUES (?,?,?,?)",
                      [(run_id, lo, hi, n) for lo, hi, n in r.length_histogram])

    def _upsert_actions(self, run_id: int, actions: Iterable[Dict[str, Any]]) -> None:
        now = utc_now()
        for a in actions:
            row = self.conn.execute("SELECT id FROM actions WHERE action_key = ?", (a["action_key"],)).fetchone()
            if row is None:
                self.conn.execute(
                    "INSERT INTO actions(action_key, kind, payload_json, source_run_id, status, created_at, "
                    "last_seen_run_id, seen_count) VALUES (?,?,?,?, 'proposed', ?, ?, 1)",
                    (a["action_key"], a["kind"], json.dumps(a["payload"], sort_keys=True), run_id, now, run_id))
            else:
                self.conn.execute("UPDATE actions SET last_seen_run_id = ?, seen_count = seen_count + 1 WHERE id = ?",
                                  (run_id, row[0]))

    def quarantine(self, path: str, content_hash: str, error_type: str, error: str) -> None:
        """Records a profile that could not be ingested (its own transaction; replaces an older entry)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute(
                "INSERT OR REPLACE INTO quarantine(path, content_hash, error_type, error, quarantined_at) "
                "VALUES (?,?,?,?,?)", (path, content_hash, error_type, error, utc_now()))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    # ---------------------------------------------------------------- queries
    def runs(self) -> List[Dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM runs ORDER BY id")]

    def quarantined(self) -> List[Dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM quarantine ORDER BY id")]

    def step_latencies(self, run_id: int, phase: Optional[str] = None) -> List[int]:
        sql = "SELECT latency_ns FROM step_latencies WHERE run_id = ?"
        args: Tuple[Any, ...] = (run_id,)
        if phase is not None:
            sql += " AND phase = ?"
            args += (phase,)
        return [r[0] for r in self.conn.execute(sql + " ORDER BY rowid", args)]

    def op_stats(self, run_id: int) -> List[Dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM op_stats WHERE run_id = ?", (run_id,))]

    def issues(self, run_id: int) -> List[Dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM issues WHERE run_id = ?", (run_id,))]

    def request_shapes(self, run_id: int) -> List[Dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM request_shapes WHERE run_id = ? ORDER BY rowid",
                                                   (run_id,))]

    def length_histogram(self, run_id: int) -> List[Tuple[int, int, int]]:
        return [tuple(r) for r in self.conn.execute(
            "SELECT bucket_low, bucket_high, count FROM request_length_histogram WHERE run_id = ? ORDER BY bucket_low",
            (run_id,))]

    def actions(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        sql, args = "SELECT * FROM actions", ()
        if status is not None:
            sql, args = sql + " WHERE status = ?", (status,)
        out = []
        for r in self.conn.execute(sql + " ORDER BY id", args):
            d = dict(r)
            d["payload"] = json.loads(d.pop("payload_json"))
            out.append(d)
        return out

    def set_action_status(self, action_id: int, status: str, reviewer: Optional[str] = None,
                          allowed_from: Sequence[str] = ACTION_STATUSES) -> Dict[str, Any]:
        if status not in ACTION_STATUSES:
            raise ValueError(f"unknown action status {status!r} (one of {', '.join(ACTION_STATUSES)})")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            row = self.conn.execute("SELECT status FROM actions WHERE id = ?", (action_id,)).fetchone()
            if row is None:
                raise KeyError(f"no action with id {action_id} in {self.path}")
            if row[0] not in allowed_from:
                raise ValueError(f"action {action_id} is {row[0]}; only {'/'.join(allowed_from)} actions can become "
                                 f"{status}")
            column = "exported_at" if status == "exported" else "reviewed_at"
            if status == "exported":
                self.conn.execute(f"UPDATE actions SET status = ?, {column} = ? WHERE id = ?",
                                  (status, utc_now(), action_id))
            else:
                self.conn.execute(f"UPDATE actions SET status = ?, reviewer = ?, {column} = ? WHERE id = ?",
                                  (status, reviewer, utc_now(), action_id))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return next(a for a in self.actions() if a["id"] == action_id)


__all__ = ["HistoryStore", "HistoryError", "RunRecord", "Migration", "MIGRATIONS", "SCHEMA_VERSION", "migrate",
           "ACTION_STATUSES"]
