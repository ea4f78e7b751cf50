#!/usr/bin/env python3
"""Figures of the Kineto fixtures computed straight from their raw events.

This is how the expected values in cases/kineto_analyze.json were checked: it
reads each trace with Python's json module (times as exact Decimal µs, turned
into integer ns) and prints, per fixture, the figures the cases assert:
  window  max(ts+dur) - min(ts) over every X event (incl. the profiler 'Trace' span)
  busy    union of [ts, ts+dur) of kernel/memcpy/memset X events, per GPU pid
  top     device X events grouped by name, summed dur (largest two)
  steps   ProfilerStep#N X events and their dur
  links   device X events whose args.correlation equals a runtime/driver event's,
          and those launched by one hipGraphLaunch/cudaGraphLaunch
Usage: kineto_raw_figures.py FIXTURES_DIR
"""
import collections
import glob
import gzip
import json
import os
import sys
from decimal import Decimal

DEVICE_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
GRAPH_LAUNCHES = {"hipGraphLaunch", "cudaGraphLaunch"}


def ns(microseconds):
    return int(Decimal(str(microseconds)) * 1000)


def union_length(intervals):
    total, current = 0, None
    for start, end in sorted(intervals):
        if current is None or start > current[1]:
            if current:
                total += current[1] - current[0]
            current = [start, end]
        else:
            current[1] = max(current[1], end)
    return total + (current[1] - current[0] if current else 0)


def main(fixtures):
    for path in sorted(glob.glob(os.path.join(fixtures, "kineto", "*", "*.gz"))):
        document = json.load(gzip.open(path), parse_float=Decimal)
        complete = [e for e in document["traceEvents"] if e.get("ph") == "X"]
        print("==", os.path.basename(os.path.dirname(path)))
        print("  deviceProperties", len(document.get("deviceProperties", [])))
        print("  X events by cat", dict(collections.Counter(e.get("cat") for e in complete)))
        print("  window", max(ns(e["ts"]) + ns(e["dur"]) for e in complete) - min(ns(e["ts"]) for e in complete))

        device = [e for e in complete if e.get("cat") in DEVICE_CATS]
        per_pid = collections.defaultdict(list)
        totals, counts = collections.defaultdict(int), collections.Counter()
        for e in device:
            per_pid[str(e["pid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
            totals[e["name"]] += ns(e["dur"])
            counts[e["name"]] += 1
        print("  busy", {pid: union_length(v) for pid, v in per_pid.items()})
        for name, total in sorted(totals.items(), key=lambda kv: -kv[1])[:2]:
            print(f"  top {total} ns x{counts[name]} {name}")
        print("  nccl kernels", sum(1 for e in device if e["name"].startswith(("ncclKernel", "ncclDevKernel"))))
        print("  steps", [(e["name"], e.get("cat"), ns(e["dur"])) for e in complete
                          if str(e.get("name", "")).startswith("ProfilerStep#")])

        runtime = {e["args"]["correlation"]: e["name"] for e in complete
                   if e.get("cat") in RUNTIME_CATS and "correlation" in e.get("args", {})}
        linkable = [e for e in complete if e.get("cat") in DEVICE_CATS | {"cuda_sync"}]
        linked = [e for e in linkable if e.get("args", {}).get("correlation") in runtime]
        graph = collections.Counter(e["args"]["correlation"] for e in linked
                                    if runtime[e["args"]["correlation"]] in GRAPH_LAUNCHES)
        print("  links: linked", len(linked), "unmatched", len(linkable) - len(linked),
              "graph-launched", sum(graph.values()), "graph launches", len(graph))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/fixtures")
