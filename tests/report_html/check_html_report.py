#!/usr/bin/env python3
"""HTML report checks (ctest `report_html`):

1. hostile names: a Kineto trace whose 1,000 operators and kernels carry
   hostile names (<script>, attribute breakers, </style>, control bytes,
   lone surrogates, bidi overrides) goes through `pypto report` and
   `pypto compare --html`; the HTML is parsed back with html.parser and must
   hold only the elements and attributes the renderer writes (one <script>,
   no on* handlers, no injected tags), with every hostile name present only as
   escaped text;
2. scale: a 400-step decode trace built here; the step timeline's axis labels
   must not overlap (at least 50 px apart) and the page must stay one file;
3. headless Chromium (Debian package `chromium`, skipped with a message when
   absent): each page (hostile, 400 steps, the real --fixture profiles: a
   1-step Kineto run and an Ascend job) renders, the console shows no error, a
   screenshot is saved next to the outputs (--out-dir).
"""
import re
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "div", "span", "b", "code", "table",
    "tr", "th", "td", "br", "ul", "li", "pre", "button", "footer", "script", "svg", "g", "rect", "text", "line",
    "polyline", "circle", "details", "summary", "a",
}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background"}
HOSTILE = [
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(2)>",
    "'><svg onload=alert(3)>",
    "</style><script>alert(4)</script>",
    "</title><iframe src=javascript:alert(5)>",
    "<!-- comment --><b>bold</b>",
    "ctl\u0001\u0007\u001b[31mred\u007f",
    "bidi\u202eevil\u202c",
    "lone\ud800surrogate",
    "amp&amp;&lt;script&gt;",
    "]]><![CDATA[<x>]]>",
    "aten::mm<T>(\"q\")",
]


def hostile_trace(path, n=1000):
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000.0,
               "dur": float(n * 20 + 100), "args": {}}]
    ts = 1010.0
    for i in range(n):
        name = HOSTILE[i % len(HOSTILE)] + " #%d" % i
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 15.0,
                       "args": {"External id": i + 1, "Input Dims": [[4, 4]], "Input type": ["float"]}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 2, "dur": 5.0, "args": {"correlation": 100 + i, "External id": i + 1}})
        events.append({"ph": "X", "cat": "kernel", "name": name + " kernel", "pid": 0, "tid": 7, "ts": ts + 10,
                       "dur": 8.0, "args": {"correlation": 100 + i, "External id": i + 1, "device": 0, "stream": 7,
                                            "grid": [1, 1, 1], "block": [128, 1, 1]}})
        ts += 20
    trace = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
             "traceEvents": events}
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(json.dumps(trace, ensure_ascii=True))


def many_steps_trace(path, steps=400):
    """A decode trace of `steps` ProfilerSteps: a few ops and kernels each."""
    events, ts, corr = [], 1000.0, 1
    for step in range(steps):
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 1, "tid": 1,
                       "ts": ts, "dur": 95.0, "args": {}})
        for k in range(3):
            t0 = ts + 5 + 30 * k
            events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t0, "dur": 10.0,
                           "args": {"External id": corr, "Input Dims": [[1, 512], [512, 512]], "Input type": ["float", "float"]}})
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t0 + 2,
                           "dur": 4.0, "args": {"correlation": corr, "External id": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": "gemv_kernel", "pid": 0, "tid": 7, "ts": t0 + 8,
                           "dur": 12.0, "args": {"correlation": corr, "External id": corr, "device": 0, "stream": 7}})
            corr += 1
        ts += 100
    trace = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
             "traceEvents": events}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(trace, f)


def timeline_label_gaps(html):
    """x positions of the step timeline's axis labels (first chart after id="timeline")."""
    start = html.find('id="timeline"')
    end = html.find("</svg>", start)
    xs = [float(x) for x in re.findall(r'<text x="([0-9.]+)" y="282" text-anchor="middle">', html[start:end])]
    return [b - a for a, b in zip(xs, xs[1:])], len(xs)


class Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = {}
        self.bad = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag not in ALLOWED_TAGS:
            self.bad.append("tag <%s>" % tag)
        if tag == "a" and any(k == "href" and not (v or "").startswith("#") for k, v in attrs):
            self.bad.append("link out of the page on <a>: %r" % dict(attrs).get("href"))
        for k, v in attrs:
            # javascript: only runs from attributes that hold a URL; a tooltip
            # (title) holding the escaped text of a hostile name is inert.
            if k.startswith("on") or (k in URL_ATTRIBUTES and v and "javascript:" in v.lower()):
                self.bad.append("attribute %s=%r on <%s>" % (k, v, tag))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.bad.append("comment <!--%s-->" % data)


def check_html(path, expect_names):
    with open(path, "rb") as f:
        raw = f.read()
    html = raw.decode("utf-8")  # must be valid UTF-8
    parser = Collector()
    parser.feed(html)
    parser.close()
    problems = list(parser.bad)
    if parser.tags.get("script", 0) != 1:
        problems.append("expected exactly one <script>, found %d" % parser.tags.get("script", 0))
    for c in html:
        o = ord(c)
        if (o < 0x20 and c not in "\t\n\r") or o == 0x7F or 0x80 <= o <= 0x9F:
            problems.append("control character U+%04X in the HTML" % o)
            break
    text = "".join(parser.text)
    found = sum(1 for n in expect_names if n in text)
    if expect_names and found == 0:
        problems.append("no hostile name came back as text (escaping lost the names?)")
    return problems, parser.tags


def run_chromium(chromium, html_path, png_path):
    cmd = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
           "--screenshot=" + png_path, "--window-size=1400,3000", "file://" + os.path.abspath(html_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    errors = [l for l in proc.stderr.splitlines()
              if ("CONSOLE" in l and ("error" in l.lower() or "Uncaught" in l)) or "Uncaught" in l]
    if not os.path.exists(png_path) or os.path.getsize(png_path) < 1000:
        errors.append("no screenshot written (rc %d): %s" % (proc.returncode, proc.stderr[-500:]))
    return errors


# Cells as the report writes them, in the order the table must sort them (ascending): times with
# their units, SI-prefixed rates and sizes, percentages and plain counts.
SORT_CASES = [
    ["4.44 MFLOP/s", "2.28 GFLOP/s", "16 GFLOP/s", "16.3 TFLOP/s"],
    ["850 ns", "1.2 \u00b5s", "3.4 ms", "1.1 s"],
    ["512 B", "4.0 kB", "1.5 MB", "2.0 GB"],
    ["0.5 %", "9 %", "12.5 %"],
]


def check_sort_values(chromium, page, out_dir):
    """Runs the page's own pyptoValue (the sort key of every table) in Chromium on SORT_CASES."""
    with open(page, encoding="utf-8") as f:
        html = f.read()
    start = html.find("function pyptoValue(")
    if start < 0:
        return ["no pyptoValue sort key in %s" % os.path.basename(page)]
    depth, end = 0, start
    for end in range(html.index("{", start), len(html)):
        depth += {"{": 1, "}": -1}.get(html[end], 0)
        if depth == 0:
            break
    function = html[start:end + 1]
    probe = os.path.join(out_dir, "sort_probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><html><body><pre id=out></pre><script>%s\n"
                "document.getElementById('out').textContent=JSON.stringify(%s.map(function(c){"
                "return c.map(pyptoValue);}));</script></body></html>" % (function, json.dumps(SORT_CASES)))
    proc = subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom",
                           "file://" + os.path.abspath(probe)], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="out">(.*?)</pre>', proc.stdout, re.S)
    if not found:
        return ["sort probe: no output from chromium (rc %d)" % proc.returncode]
    problems = []
    for cells, values in zip(SORT_CASES, json.loads(found.group(1))):
        if any(v is None for v in values) or values != sorted(values):
            problems.append("table sort keys out of order: %s -> %s" % (cells, values))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pypto", required=True)
    ap.add_argument("--fixture", action="append", default=[], help="a real profile to render as well (repeatable)")
    ap.add_argument("--out-dir", default=None, help="where HTML and screenshots are kept")
    args = ap.parse_args()
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="pypto_html_")
    os.makedirs(out_dir, exist_ok=True)
    failures = []

    trace = os.path.join(out_dir, "hostile_trace.json")
    hostile_trace(trace)
    pages = []
    report = os.path.join(out_dir, "hostile_report.html")
    cmp = os.path.join(out_dir, "hostile_compare.html")
    for cmd, page in ((["report", trace, "-o", report, "--force"], report),
                      (["compare", trace, trace, "--html", cmp, "--force"], cmp)):
        proc = subprocess.run([args.pypto] + cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            failures.append("pypto %s failed: %s" % (cmd[0], proc.stderr.strip()))
            continue
        pages.append(page)
    names = [h.replace("\u0001", "\ufffd") for h in HOSTILE[:6]]
    for page in pages:
        problems, tags = check_html(page, names)
        failures += ["%s: %s" % (os.path.basename(page), p) for p in problems]
        print("%s: %d elements, tags %s" % (os.path.basename(page), sum(tags.values()), sorted(tags)))
    many = os.path.join(out_dir, "steps400_trace.json")
    many_steps_trace(many)
    many_page = os.path.join(out_dir, "steps400_report.html")
    proc = subprocess.run([args.pypto, "report", many, "-o", many_page, "--force"], capture_output=True, text=True)
    if proc.returncode != 0:
        failures.append("pypto report on the 400-step trace failed: " + proc.stderr.strip())
    else:
        with open(many_page, encoding="utf-8") as f:
            gaps, labels = timeline_label_gaps(f.read())
        print("400-step timeline: %d axis labels, smallest gap %.0f px" % (labels, min(gaps) if gaps else 0))
        if labels < 2 or (gaps and min(gaps) < 50):
            failures.append("400-step timeline: %d labels, gaps %s px: labels overlap" % (labels, sorted(gaps)[:3]))
        pages.append(many_page)
    for n, fixture in enumerate(args.fixture):
        real = os.path.join(out_dir, "fixture_report_%d.html" % n)
        proc = subprocess.run([args.pypto, "report", fixture, "-o", real, "--force"], capture_output=True, text=True)
        if proc.returncode != 0:
            failures.append("pypto report on %s failed: %s" % (fixture, proc.stderr.strip()))
        else:
            problems, _ = check_html(real, [])
            failures += ["%s: %s" % (os.path.basename(real), p) for p in problems]
            pages.append(real)

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP chromium checks: install the Debian package 'chromium' (make deps does)")
    else:
        if pages:
            failures += check_sort_values(chromium, pages[0], out_dir)
        for page in pages:
            png = os.path.splitext(page)[0] + ".png"
            errs = run_chromium(chromium, page, png)
            failures += ["%s (chromium): %s" % (os.path.basename(page), e) for e in errs]
            print("screenshot: " + png)
    if failures:
        print("FAIL\n  " + "\n  ".join(failures))
        return 1
    print("OK: %d pages" % len(pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
