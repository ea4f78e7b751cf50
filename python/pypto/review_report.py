"""Review report of the history (Markdown or one self-contained HTML file): runs, trends, drift flags,
quarantined profiles and the actions waiting for review. Every string that comes from a profile
(paths, op names, error messages) is escaped: profiles are untrusted input."""

from __future__ import annotations

import html
import os
import tempfile
from typing import Any, Dict, List, Optional, Sequence

from .drift import DriftResult, detect_drift
from .history import HistoryStore, utc_now

#: Runs shown in the runs table and trends (most recent); older runs stay in the database.
MAX_REPORT_RUNS = 50
#: Ops whose per-step time trend is shown (largest in the latest run).
TREND_OPS = 8


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _per_step_ops(store: HistoryStore, run: Dict[str, Any]) -> Dict[str, float]:
    rows = store.op_stats(run["id"])
    source = "device_kernel" if any(r["source"] == "device_kernel" for r in rows) else "host_operator"
    steps = max(run["step_count"], 1)
    return {r["op_name"]: r["total_ns"] / steps / 1e3 for r in rows if r["source"] == source}


def collect(store: HistoryStore, drift: Optional[DriftResult]) -> Dict[str, Any]:
    runs = store.runs()[-MAX_REPORT_RUNS:]
    op_tables = {r["id"]: _per_step_ops(store, r) for r in runs}
    trend_ops: List[str] = []
    if runs:
        latest = op_tables[runs[-1]["id"]]
        trend_ops = [n for n, _ in sorted(latest.items(), key=lambda kv: -kv[1])[:TREND_OPS]]
    return {
        "generated_at": utc_now(), "db": store.path, "runs": runs,
        "issue_counts": {r["id"]: len(store.issues(r["id"])) for r in runs},
        "trend_ops": trend_ops,
        "op_trends": {n: [op_tables[r["id"]].get(n) for r in runs] for n in trend_ops},
        "drift": drift if drift is not None else detect_drift(store),
        "quarantine": store.quarantined(),
        "actions": store.actions(),
    }


# ------------------------------------------------------------------------------ Markdown
def _md(text: Any) -> str:
    """Escapes a value for a Markdown table cell: HTML special characters, pipes, backticks, newlines."""
    s = html.escape(str(text), quote=True)
    for ch in ("\\", "|", "`", "*", "_", "[", "]"):
        s = s.replace(ch, "\\" + ch)
    return s.replace("\r", " ").replace("\n", "<br>")


def render_markdown(data: Dict[str, Any]) -> str:
    out = ["# pypto pipeline review", "", f"Generated {data['generated_at']}; {len(data['runs'])} runs shown.", ""]
    out += ["## Runs", "", "| run | ingested | profile | format | hardware | steps | per-token p50 / p90 / p99 ms | issues |",
            "|---:|---|---|---|---|---:|---|---:|"]
    for r in data["runs"]:
        out.append(f"| {r['id']} | {_md(r['ingested_at'])} | {_md(os.path.basename(r['path']))} | {_md(r['format'])} | "
                   f"{_md(r['hardware'])} | {r['step_count']} | {_fmt(r['per_token_p50_ms'])} / "
                   f"{_fmt(r['per_token_p90_ms'])} / {_fmt(r['per_token_p99_ms'])} | {data['issue_counts'][r['id']]} |")
    out += ["", "## Trends", "", "Per-op time per step (us), largest ops of the latest run:", ""]
    if data["trend_ops"]:
        ids = [r["id"] for r in data["runs"]]
        out.append("| op | " + " | ".join(f"run {i}" for i in ids) + " |")
        out.append("|---|" + "---:|" * len(ids))
        for name in data["trend_ops"]:
            out.append(f"| {_md(name)} | " + " | ".join(_fmt(v, 1) for v in data["op_trends"][name]) + " |")
    else:
        out.append("No op statistics yet.")
    drift: DriftResult = data["drift"]
    out += ["", "## Drift and regressions", ""]
    if drift.run_id is None:
        out.append("No run yet.")
    else:
        out.append(f"Run {drift.run_id} against runs {', '.join(map(str, drift.baseline_run_ids)) or '(none)'} "
                   f"(noise model: docs/pipeline.md).")
        out.append("")
        if not drift.flags:
            out.append("Nothing beyond the noise model.")
        for f in drift.flags:
            out.append(f"- **{_md(f.kind)}** {_md(f.message)}")
        for n in drift.notes:
            out.append(f"- note: {_md(n)}")
    out += ["", "## Quarantined profiles", ""]
    if not data["quarantine"]:
        out.append("None.")
    else:
        out += ["| profile | error | at |", "|---|---|---|"]
        for q in data["quarantine"]:
            out.append(f"| {_md(q['path'])} | {_md(q['error_type'] + ': ' + q['error'])} | {_md(q['quarantined_at'])} |")
    out += ["", "## Actions for review", "",
            "Approve with `pypto actions approve ID --reviewer NAME`, then `pypto actions export -o actions.json`.", ""]
    if not data["actions"]:
        out.append("None proposed.")
    else:
        out += ["| id | status | kind | hotspot | description | action | seen in runs |", "|---:|---|---|---|---|---|---:|"]
        for a in data["actions"]:
            p = a["payload"]
            out.append(f"| {a['id']} | {_md(a['status'])} | {_md(a['kind'])} | {_md(p['hotspot_type'])} | "
                       f"{_md(p['description'])} | {_md(p['action'])} | {a.get('seen_count', 1)} |")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ HTML
def _h(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _sparkline(values: Sequence[Optional[float]], width: int = 160, height: int = 28) -> str:
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return ""
    lo, hi = min(v for _, v in points), max(v for _, v in points)
    span = (hi - lo) or 1.0
    step = width / max(len(values) - 1, 1)
    coords = " ".join(f"{i * step:.1f},{height - 2 - (v - lo) / span * (height - 4):.1f}" for i, v in points)
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
            f'<polyline fill="none" stroke="#2a6fdb" stroke-width="1.5" points="{coords}"/></svg>')


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.n{text-align:right}pre{margin:0;white-space:pre-wrap}.flag{color:#b00020}.muted{color:#777}"""


def render_html(data: Dict[str, Any]) -> str:
    runs = data["runs"]
    o = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
         "<title>pypto pipeline review</title>", f"<style>{_CSS}</style></head><body>",
         "<h1>pypto pipeline review</h1>",
         f'<p class="muted">Generated {_h(data["generated_at"])}; {len(runs)} runs shown.</p>', "<h2>Runs</h2>"]
    o.append("<table><tr><th>run</th><th>ingested</th><th>profile</th><th>format</th><th>hardware</th><th>steps</th>"
             "<th>per-token p50 ms</th><th>p90</th><th>p99</th><th>issues</th></tr>")
    for r in runs:
        o.append(f'<tr><td class="n">{r["id"]}</td><td>{_h(r["ingested_at"])}</td><td title="{_h(r["path"])}">'
                 f'{_h(os.path.basename(r["path"]))}</td><td>{_h(r["format"])}</td><td>{_h(r["hardware"])}</td>'
                 f'<td class="n">{r["step_count"]}</td><td class="n">{_fmt(r["per_token_p50_ms"])}</td>'
                 f'<td class="n">{_fmt(r["per_token_p90_ms"])}</td><td class="n">{_fmt(r["per_token_p99_ms"])}</td>'
                 f'<td class="n">{data["issue_counts"][r["id"]]}</td></tr>')
    o.append("</table><h2>Trends</h2>")
    o.append(f"<p>Per-token latency p50 over runs: {_sparkline([r['per_token_p50_ms'] for r in runs])}</p>")
    if data["trend_ops"]:
        o.append("<table><tr><th>op (largest in the latest run)</th><th>us per step, latest</th><th>trend</th></tr>")
        for name in data["trend_ops"]:
            values = data["op_trends"][name]
            o.append(f"<tr><td>{_h(name)}</td><td class=\"n\">{_fmt(values[-1], 1)}</td>"
                     f"<td>{_sparkline(values)}</td></tr>")
        o.append("</table>")
    drift: DriftResult = data["drift"]
    o.append("<h2>Drift and regressions</h2>")
    if drift.run_id is None:
        o.append("<p>No run yet.</p>")
    else:
        o.append(f"<p>Run {drift.run_id} against runs {_h(', '.join(map(str, drift.baseline_run_ids)) or '(none)')} "
                 f"(noise model: docs/pipeline.md).</p><ul>")
        if not drift.flags:
            o.append("<li>Nothing beyond the noise model.</li>")
        for f in drift.flags:
            o.append(f'<li class="flag"><b>{_h(f.kind)}</b> {_h(f.message)}</li>')
        for n in drift.notes:
            o.append(f'<li class="muted">note: {_h(n)}</li>')
        o.append("</ul>")
    o.append("<h2>Quarantined profiles</h2>")
    if not data["quarantine"]:
        o.append("<p>None.</p>")
    else:
        o.append("<table><tr><th>profile</th><th>error</th><th>at</th></tr>")
        for q in data["quarantine"]:
            o.append(f"<tr><td>{_h(q['path'])}</td><td><pre>{_h(q['error_type'] + ': ' + q['error'])}</pre></td>"
                     f"<td>{_h(q['quarantined_at'])}</td></tr>")
        o.append("</table>")
    o.append("<h2>Actions for review</h2><p>Approve with <code>pypto actions approve ID --reviewer NAME</code>, then "
             "<code>pypto actions export -o actions.json</code>.</p>")
    if not data["actions"]:
        o.append("<p>None proposed.</p>")
    else:
        o.append("<table><tr><th>id</th><th>status</th><th>kind</th><th>hotspot</th><th>description</th><th>action</th>"
                 "<th>seen in runs</th></tr>")
        for a in data["actions"]:
            p = a["payload"]
            o.append(f'<tr><td class="n">{a["id"]}</td><td>{_h(a["status"])}</td><td>{_h(a["kind"])}</td>'
                     f'<td>{_h(p["hotspot_type"])}</td><td>{_h(p["description"])}</td><td><pre>{_h(p["action"])}</pre>'
                     f'</td><td class="n">{a.get("seen_count", 1)}</td></tr>')
        o.append("</table>")
    o.append("</body></html>")
    return "\n".join(o) + "\n"


def write_report(store: HistoryStore, path: str, drift: Optional[DriftResult] = None, force: bool = False) -> str:
    """Writes the report; the format follows the suffix (.html/.htm or .md/.markdown)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".html", ".htm"):
        render = render_html
    elif suffix in (".md", ".markdown"):
        render = render_markdown
    else:
        raise ValueError(f"{path}: report format unknown from the suffix (use .html or .md)")
    if os.path.lexists(path) and not force:
        raise FileExistsError(f"{path}: exists; pass --force to overwrite")
    text = render(collect(store, drift))
    fd, tmp = tempfile.mkstemp(prefix=".pypto-report-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


__all__ = ["write_report", "render_html", "render_markdown", "collect"]
