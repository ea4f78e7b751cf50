#!/usr/bin/env python3
"""Hostile profile strings through the CLI's outputs (docs/reliability.md).

Writes a Kineto trace whose 1,000 operator names and 1,000 kernel names are
hostile: HTML/script, quotes and backslashes, pipes and Markdown, newlines,
escaped and raw control bytes, ANSI escapes, NUL, invalid UTF-8 (raw bytes),
lone surrogate escapes, bidi overrides, format strings, very long names. Then:
  - `pypto analyze --json` must print valid JSON whose top host-op and device
    kernel names are exactly the names written, with invalid UTF-8 replaced by
    U+FFFD (one per maximal invalid subpart, as Python's 'replace' decoder);
  - `pypto analyze` (text) must hold no control character but the line ends,
    be valid UTF-8, and keep one line per table row;
  - `pypto export-trace` must write valid JSON whose X events carry the names.
An event the importer could not read counts as data loss (it must appear in the
report's data-loss section) and its name is then not expected.

To add an output format (HTML, Markdown), add a checker to OUTPUT_CHECKS.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

COUNT = 1000

# Each payload is (kind, raw bytes as written inside the JSON string literal).
PAYLOADS = [
    ("html", b'<script>alert(1)</script><img src=x onerror=alert(2)>'),
    ("quotes", b'\\"double\\" \'single\' back\\\\slash \\/solidus'),
    ("markdown", b'a|b|c | --- | *bold* _it_ `code` # h [x](javascript:y)'),
    ("newlines", b'line1\\nline2\\r\\nline3\\u2028\\u2029'),
    ("escaped-controls", b''.join(b'\\u%04x' % c for c in range(1, 32)) + b'\\u007f'),
    ("ansi", b'\\u001b[31mred\\u001b[0m\\u001b]0;title\\u0007\\u001b[2J'),
    ("nul", b'before\\u0000after'),
    ("invalid-utf8", b'x\xffy\xc3(z\xe2\x82w\xed\xa0\x80v\xc0\xafu\xf8\x88\x80\x80\x80t\x80'),
    ("lone-surrogate", b'a\\ud800b\\udc00c'),
    ("unicode", b'\xe2\x80\xae RTL \xef\xbb\xbf BOM \xf0\x9f\x94\xa5 \xe4\xb8\xad\xe6\x96\x87 \xe2\x80\x8d zwj \xc2\x85 nel'),
    ("format", b'%s%n%x {} {0} {:>999999} ${HOME} $(id) `id`'),
    ("long", b'L' * 20000),
    ("raw-controls", b'tab\there\x01\x02\x1fend'),
    ("sql", b"'; DROP TABLE TASK; --"),
    ("path", b'../../../../etc/passwd\\\\..\\\\x'),
    ("empty-ish", b' '),
]


def json_decode_literal(raw):
    """What a correct reader makes of the string literal `raw`: JSON escapes
    decoded, invalid UTF-8 replaced by U+FFFD per maximal subpart, lone
    surrogates replaced by U+FFFD, raw control bytes kept."""
    text = raw.decode("utf-8", errors="replace")
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = text[i + 1]
        if e == "u":
            code = int(text[i + 2:i + 6], 16)
            out.append("\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code))
            i += 6
        else:
            out.append({"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"'}[e])
            i += 2
    return "".join(out)


def make_trace(path):
    """Returns {expected op name: kind} and {expected kernel name: kind}."""
    events = []
    ops, kernels = {}, {}
    for i in range(COUNT):
        kind, payload = PAYLOADS[i % len(PAYLOADS)]
        op_raw = b"op%04d " % i + payload
        k_raw = b"k%04d " % i + payload
        ts = 1000 + i * 100
        events.append(b'{"ph": "X", "cat": "cpu_op", "name": "' + op_raw + b'", "pid": 1, "tid": 1, "ts": %d, '
                      b'"dur": 50, "args": {"External id": %d}}' % (ts, i + 1))
        events.append(b'{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
                      b'"ts": %d, "dur": 5, "args": {"External id": %d, "correlation": %d}}' % (ts + 10, i + 1, i + 1))
        events.append(b'{"ph": "X", "cat": "kernel", "name": "' + k_raw + b'", "pid": 0, "tid": 7, "ts": %d, '
                      b'"dur": 20, "args": {"External id": %d, "correlation": %d, "device": 0, "stream": 7}}'
                      % (ts + 20, i + 1, i + 1))
        ops[json_decode_literal(op_raw)] = kind
        kernels[json_decode_literal(k_raw)] = kind
    body = b'{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": [\n'
    body += b",\n".join(events) + b"\n]}\n"
    with open(path, "wb") as f:
        f.write(body)
    return ops, kernels


def run(pypto, *args):
    p = subprocess.run([pypto, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: pypto {' '.join(args)} exited {p.returncode}: {p.stderr.decode(errors='replace')[:2000]}")
    return p.stdout


def collapse_replacements(name):
    """Runs of U+FFFD as one: the JSON writer replaces each maximal invalid
    subpart by one U+FFFD (Unicode 15 §3.9), the Kineto reader each invalid
    byte; both are correct replacements, they differ in how many U+FFFD."""
    out = []
    for c in name:
        if c == "\ufffd" and out and out[-1] == "\ufffd":
            continue
        out.append(c)
    return "".join(out)


def compare(label, expected, got, lost_events):
    """Every expected name is present (exactly, or with a different number of
    U+FFFD per invalid sequence), unless events were counted as lost."""
    loose = {collapse_replacements(n): n for n in expected}
    exact = [n for n in got if n in expected]
    replaced = [n for n in got if n not in expected and collapse_replacements(n) in loose]
    extra = [n for n in got if n not in expected and collapse_replacements(n) not in loose]
    found = set(exact) | {loose[collapse_replacements(n)] for n in replaced}
    missing = [n for n in expected if n not in found]
    by_kind = {}
    for n in missing:
        by_kind[expected[n]] = by_kind.get(expected[n], 0) + 1
    print(f"{label}: {len(exact)}/{len(expected)} names round-trip exactly, {len(replaced)} with another "
          f"U+FFFD count; missing (events counted lost) by kind {by_kind or '{}'}; unexpected names {len(extra)}")
    errors = []
    if len(missing) > lost_events:
        errors.append(f"{label}: {len(missing)} names missing but only {lost_events} events counted as lost")
    for n in extra[:5]:
        errors.append(f"{label}: unexpected name {n[:120]!r}")
    return errors


def check_analyze_json(out, ops, kernels):
    doc = json.loads(out.decode("utf-8"))  # strict: invalid UTF-8 raises
    # Events dropped and counted (replacements keep their event: not counted here).
    lost = sum(e.get("count", 0) for e in doc.get("data_loss", []) if "skipped" in e.get("reason", ""))
    host = {row["name"] for row in doc["top_host_ops"]["rows"]}
    dev = {row["name"] for row in doc["top_device_kernels"]["rows"]}
    return compare("analyze --json host ops", ops, host, lost) + \
        compare("analyze --json device kernels", kernels, dev, lost), lost


def check_text(out, row_count_hint):
    errors = []
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return [f"analyze text: not valid UTF-8: {e}"]
    bad = sorted({hex(ord(c)) for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f
                  or c in "\u2028\u2029"})
    if bad:
        errors.append(f"analyze text: raw control characters {bad[:10]}")
    lines = text.count("\n")
    print(f"analyze text: {len(out)} bytes, {lines} lines, control characters: {len(bad)}")
    return errors


def check_trace(path, ops, kernels, lost):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    names = {e.get("name") for e in doc["traceEvents"] if e.get("ph") == "X"}
    return compare("export-trace ops", ops, {n for n in names if n.startswith("op")}, lost) + \
        compare("export-trace kernels", kernels, {n for n in names if n.startswith("k")}, lost)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pypto", required=True)
    args = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "hostile.pt.trace.json")
        ops, kernels = make_trace(trace)
        print(f"wrote {COUNT} hostile operator names and {COUNT} kernel names "
              f"({len(PAYLOADS)} kinds), {os.path.getsize(trace)} bytes")
        top = str(3 * COUNT)
        out_json = run(args.pypto, "analyze", "--json", "--top", top, trace)
        json_errors, lost = check_analyze_json(out_json, ops, kernels)
        errors += json_errors
        errors += check_text(run(args.pypto, "analyze", "--top", top, trace), COUNT)
        out_trace = os.path.join(tmp, "out.json")
        run(args.pypto, "export-trace", trace, "-o", out_trace)
        errors += check_trace(out_trace, ops, kernels, lost)
        print(f"data loss counted by the importer: {lost} events")
    if errors:
        print("FAIL")
        for e in errors:
            print("  " + e)
        return 1
    print("OK: all outputs parse and the names round-trip")
    return 0


if __name__ == "__main__":
    sys.exit(main())
