#!/usr/bin/env python3
"""Turn the records bench/measure.py wrote (one JSON object per line) into the
benchmark report: the tools table, linearity, the Ascend line and the targets
with PASS/MISS. Prints it and writes it as Markdown.

usage: report.py RECORDS.jsonl OUT.md [--env KEY=VALUE ...]
"""
import argparse
import json
import sys

# Targets (from the project brief for the Kineto importer):
TARGET_MB_S = 800.0        # end-to-end `pypto analyze` throughput on uncompressed JSON, MB/s (1 MB = 1e6 B)
TARGET_RSS_PCT = 25.0      # peak RSS of `pypto analyze` as % of the uncompressed input size
TARGET_GZ_RATIO = 0.90     # `pypto analyze` on .json.gz at >= 90% of `gzip -dc` speed (same bytes out)
TARGET_DIAGNOSE_RATIO = 1.5  # `pypto diagnose` / `report` CPU time at most 1.5x `analyze` on the same file (issue: Ascend at Kineto speed)
TARGET_SHAPE_RSS_PCT = 30.0  # peak RSS of diagnose / report as % of a JSON input (same issue)
# Linearity: the marginal time per GB (extra wall time / extra size between two
# consecutive sizes, i.e. the slope, which leaves out the fixed cost of starting
# the process) may vary this much across the size steps before the scaling is
# called non-linear (noise on a shared machine is ~10-20%).
LINEARITY_TOLERANCE = 1.25

PEER_ORDER = ["pypto", "pypto_gz", "gzip", "dom", "pyjson", "hta"]


def marginal_s_per_gb(smaller, larger):
    """Extra wall seconds per extra GB from one trace size to the next."""
    extra_gb = (larger["bytes"] - smaller["bytes"]) / 1e9
    return (larger["wall_s"] - smaller["wall_s"]) / extra_gb if extra_gb > 0 else float("nan")


def linearity_table(p, title, lin):
    """The table of one input kind's sizes: s per GB, the marginal slope, CPU, RSS."""
    p(title)
    p("")
    p("| input MB | wall s | s per GB | marginal s per GB | CPU s per GB | MB/s | peak RSS MB | RSS/input % |")
    p("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, r in enumerate(lin):
        gb = r["bytes"] / 1e9
        cpu = (r.get("user_s") or 0) + (r.get("sys_s") or 0)
        marginal = marginal_s_per_gb(lin[i - 1], r) if i > 0 else None
        p(f"| {r['bytes'] / 1e6:,.0f} | {fmt(r['wall_s'])} | {fmt(r['wall_s'] / gb)} | {fmt(marginal)} | "
          f"{fmt(cpu / gb)} | {fmt(r['mb_s'], 1)} | {fmt(r['max_rss_mb'], 0)} | {fmt(r['rss_pct_of_input'], 1)} |")
    p("")
    p("marginal s per GB: (wall - wall of the size above) / (GB - GB of the size above), the slope "
      "without the fixed cost of starting the process.")
    p("")


def linearity_target(p, what, lin):
    """The PASS/MISS row: the marginal s/GB may vary LINEARITY_TOLERANCE across the size steps."""
    slopes = [marginal_s_per_gb(a_, b_) for a_, b_ in zip(lin, lin[1:])]
    if min(slopes) > 0:
        spread = max(slopes) / min(slopes)
        verdict = "PASS" if spread <= LINEARITY_TOLERANCE else "MISS"
    else:
        spread, verdict = float("inf"), "MISS"
    spg = [r["wall_s"] / (r["bytes"] / 1e9) for r in lin]
    p(f"| {what} linear time (marginal s/GB within x{LINEARITY_TOLERANCE} across size steps, "
      f"up to {lin[-1]['bytes'] / 1e9:.1f} GB) | "
      f"{', '.join(f'{v:.2f}' for v in slopes)} s/GB marginal (x{spread:.2f}); "
      f"{', '.join(f'{v:.2f}' for v in spg)} s/GB overall | {verdict} |")


def fmt(v, nd=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return str(v)


def status_text(r):
    st = r.get("status", "?")
    if st == "ok":
        return "ok"
    if st == "timeout":
        return f"did not finish in {r.get('wall_s', 0):.0f} s"
    if st == "oom":
        return f"out of memory (address space capped at {int(r.get('mem_limit_mb') or 0) / 1000:.0f} GB)"
    return st


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("records")
    ap.add_argument("out_md")
    ap.add_argument("--env", action="append", default=[])
    a = ap.parse_args()
    recs = [json.loads(line) for line in open(a.records) if line.strip()]
    by = {}
    for r in recs:
        by[r["label"]] = r  # the last record of a label wins
    lin = sorted((r for r in recs if r["label"].startswith("lin:")), key=lambda r: r["bytes"])
    # The CSV's sizes: the Ascend line and the larger csvlin: files of the same generator.
    csv_lin = sorted((r for r in recs if (r["label"] == "ascend" or r["label"].startswith("csvlin:"))
                      and r.get("status") == "ok"), key=lambda r: r["bytes"])
    if lin:
        big = dict(lin[-1])
        big["label"] = "pypto"
        by["pypto"] = big

    out = []
    p = out.append
    p("# pypto benchmark results")
    p("")
    for kv in a.env:
        k, _, v = kv.partition("=")
        p(f"- {k}: {v}")
    p("")
    p("Wall time is end to end (process start to exit, page cache warm); CPU s = user + sys of the")
    p("process; MB = 1e6 bytes of uncompressed JSON (for .json.gz and gzip -dc too, so the rates compare).")
    p("On a shared machine wall time includes waiting for a core: compare CPU s as well.")
    p("")
    p("## Tools on the largest trace")
    p("")
    p("| tool | input | wall s | MB/s | CPU s | MB per CPU s | peak RSS MB | RSS/input % | status |")
    p("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for label in PEER_ORDER:
        r = by.get(label)
        if not r:
            continue
        inp = f"{int(r['bytes']) / 1e6:,.0f} MB" + (" .json.gz" if label in ("pypto_gz", "gzip") else " .json")
        ok = r.get("status") == "ok"
        cpu = (r.get("user_s") or 0) + (r.get("sys_s") or 0)
        per_cpu = r["bytes"] / 1e6 / cpu if ok and cpu > 0 else None
        p(f"| {r.get('tool', label)} | {inp} | {fmt(r['wall_s'])} | {fmt(r['mb_s'] if ok else None, 1)} | "
          f"{fmt(cpu)} | {fmt(per_cpu, 0)} | {fmt(r['max_rss_mb'], 0)} | "
          f"{fmt(r['rss_pct_of_input'] if ok else None, 1)} | "
          f"{status_text(r)} |")
    p("")

    if lin:
        linearity_table(p, "## Linearity (`pypto analyze`, uncompressed JSON)", lin)
    if len(csv_lin) >= 2:
        linearity_table(p, "## Linearity (`pypto analyze`, Ascend kernel_details.csv)", csv_lin)

    asc = by.get("ascend")
    if asc:
        p("## Ascend kernel_details.csv (`pypto analyze` on a *_ascend_pt directory)")
        p("")
        st = asc.get("status", "")
        if st in ("exit3", "exit5") or st.startswith("skipped"):
            p("skipped: ascend importer not available")
        else:
            rows = int(asc.get("rows", 0))
            ok = st == "ok"
            p("| rows | input MB | wall s | rows/s | MB/s | CPU s | peak RSS MB | RSS/input % | status |")
            p("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            cpu = (asc.get("user_s") or 0) + (asc.get("sys_s") or 0)
            rps = rows / asc["wall_s"] if ok and asc["wall_s"] else None
            p(f"| {rows:,} | {asc['bytes'] / 1e6:,.0f} | {fmt(asc['wall_s'])} | {fmt(rps, 0)} | "
              f"{fmt(asc['mb_s'] if ok else None, 1)} | {fmt(cpu)} | {fmt(asc['max_rss_mb'], 0)} | "
              f"{fmt(asc['rss_pct_of_input'] if ok else None, 1)} | {status_text(asc)} |")
        p("")

    # The other Ascend inputs and the peer on the same data: one row per measured command.
    ascend_rows = [(label, r) for label, r in by.items() if label.startswith(("csv:", "trace_view:", "db_"))]
    if ascend_rows:
        p("## Ascend kernel_details.csv (diagnose, report), trace_view.json and profiler DB "
          "(same folder for every tool of a block)")
        p("")
        p("| command | input MB | task rows | wall s | MB/s | CPU s | peak RSS MB | RSS/input % | status |")
        p("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for label, r in ascend_rows:
            ok = r.get("status") == "ok"
            cpu = (r.get("user_s") or 0) + (r.get("sys_s") or 0)
            rows = r.get("rows")
            p(f"| {r.get('tool', label)} | {r['bytes'] / 1e6:,.0f} | {f'{int(rows):,}' if rows else '–'} | "
              f"{fmt(r['wall_s'])} | {fmt(r['mb_s'] if ok else None, 1)} | {fmt(cpu)} | {fmt(r['max_rss_mb'], 0)} | "
              f"{fmt(r['rss_pct_of_input'] if ok else None, 1)} | {status_text(r)} |")
        p("")

    # Kineto shapes: each command on the same file, diagnose and report as multiples of analyze.
    shapes = {}
    for label, r in by.items():
        if label.startswith("shape:"):
            _, shape, command = label.split(":", 2)
            shapes.setdefault(shape, {})[command] = r
    if shapes:
        p(f"## Kineto shapes (target: diagnose and report <= {TARGET_DIAGNOSE_RATIO:g}x analyze, "
          f"RSS <= {TARGET_SHAPE_RSS_PCT:.0f}% of the input for diagnose/report, {TARGET_RSS_PCT:.0f}% for analyze)")
        p("")
        p("| shape | command | input MB | wall s | CPU s | x analyze (CPU) | peak RSS MB | RSS/input % | status |")
        p("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for shape, commands in shapes.items():
            base = commands.get("analyze")
            base_cpu = (base.get("user_s") or 0) + (base.get("sys_s") or 0) if base and base.get("status") == "ok" else None
            for command, r in commands.items():
                ok = r.get("status") == "ok"
                cpu = (r.get("user_s") or 0) + (r.get("sys_s") or 0)
                ratio = cpu / base_cpu if ok and base_cpu else None
                p(f"| {shape} | {command} | {r['bytes'] / 1e6:,.0f} | {fmt(r['wall_s'])} | {fmt(cpu)} | "
                  f"{fmt(ratio)} | {fmt(r['max_rss_mb'], 0)} | {fmt(r['rss_pct_of_input'] if ok else None, 1)} | "
                  f"{status_text(r)} |")
        p("")

    p("## Targets")
    p("")
    p("| target | measured | result |")
    p("|---|---|---|")
    pp = by.get("pypto")
    if pp and pp.get("status") == "ok":
        p(f"| end to end >= {TARGET_MB_S:.0f} MB/s on uncompressed JSON ({pp['bytes'] / 1e6:,.0f} MB) | "
          f"{pp['mb_s']:,.1f} MB/s | {'PASS' if pp['mb_s'] >= TARGET_MB_S else 'MISS'} |")
        p(f"| peak RSS <= {TARGET_RSS_PCT:.0f}% of input | {pp['rss_pct_of_input']:.1f}% "
          f"({pp['max_rss_mb']:,.0f} MB) | {'PASS' if pp['rss_pct_of_input'] <= TARGET_RSS_PCT else 'MISS'} |")
    else:
        p("| end to end / peak RSS | pypto analyze did not run | MISS |")
    gz, pg = by.get("gzip"), by.get("pypto_gz")
    if gz and pg and gz.get("status") == "ok":
        if pg.get("status") == "ok":
            ratio = gz["wall_s"] / pg["wall_s"]
            cpu_ratio = (gz["user_s"] + gz["sys_s"]) / max(pg["user_s"] + pg["sys_s"], 1e-9)
            p(f"| .json.gz >= {TARGET_GZ_RATIO * 100:.0f}% of gzip -dc speed | {ratio * 100:.0f}% "
              f"({pg['mb_s']:,.1f} vs {gz['mb_s']:,.1f} MB/s; by CPU time {cpu_ratio * 100:.0f}%) | "
              f"{'PASS' if ratio >= TARGET_GZ_RATIO else 'MISS'} |")
        else:
            p(f"| .json.gz >= {TARGET_GZ_RATIO * 100:.0f}% of gzip -dc speed | {status_text(pg)} | MISS |")
    if len(lin) >= 2:
        linearity_target(p, "Kineto JSON", lin)
    if len(csv_lin) >= 2:
        linearity_target(p, "kernel_details.csv", csv_lin)
    p("")

    text = "\n".join(out)
    with open(a.out_md, "w") as f:
        f.write(text + "\n")
    print(text)
    print(f"\n[bench] written to {a.out_md}", file=sys.stderr)


if __name__ == "__main__":
    main()
