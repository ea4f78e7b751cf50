#!/usr/bin/env python3
"""Sanity check of a generated Kineto trace: valid JSON (Python's json module),
and the invariants a real torch >= 2.4 trace holds. Prints a one-line summary;
exits 1 with the reason on the first violation.

usage: check_kineto_trace.py FILE[.gz]
"""
import collections
import gzip
import json
import sys


def fail(msg):
    print(f"check_kineto_trace: FAIL: {msg}")
    sys.exit(1)


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    for key in ("schemaVersion", "deviceProperties", "distributedInfo", "displayTimeUnit",
                "baseTimeNanoseconds", "traceEvents", "traceName"):
        if key not in doc:
            fail(f"top-level key {key!r} missing")
    if doc["deviceProperties"][0]["name"] != "NVIDIA H100 80GB HBM3":
        fail("deviceProperties is not one H100")
    ev = doc["traceEvents"]
    cats = collections.Counter(e.get("cat") for e in ev)
    for c in ("cpu_op", "user_annotation", "cuda_runtime", "kernel", "ac2g", "gpu_memcpy",
              "gpu_memset", "cpu_instant_event", "gpu_user_annotation"):
        if not cats[c]:
            fail(f"no {c} events")

    ops = [e for e in ev if e.get("cat") in ("cpu_op", "user_annotation")]
    by_ext = {e["args"]["External id"]: e for e in ops}
    if len(by_ext) != len(ops):
        fail("External id of host ops not unique")
    runtime = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
    device = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    flows = collections.Counter((e["ph"], e["id"]) for e in ev if e.get("cat") == "ac2g")
    for k in device:
        a = k["args"]
        rt = runtime.get(a["correlation"])
        if rt is None:
            fail(f"device event without runtime call: corr {a['correlation']}")
        if rt["args"]["External id"] != a["External id"]:
            fail("kernel and its launch disagree on External id")
        if k["ts"] < rt["ts"]:
            fail(f"kernel starts before its launch: corr {a['correlation']}")
        if not flows[("s", a["correlation"])] or not flows[("f", a["correlation"])]:
            fail("ac2g flow pair missing")
        op = by_ext[rt["args"]["External id"]]
        if not (op["ts"] <= rt["ts"] and rt["ts"] + rt["dur"] <= op["ts"] + op["dur"] + 0.0015):
            fail(f"launch not inside its op {op['name']}")
        if k["tid"] != 7 or a["stream"] != 7:
            fail("device event not on stream 7")

    # Kernels on one stream do not overlap.
    ks = sorted((e["ts"], e["dur"]) for e in device)
    for (t0, d0), (t1, _) in zip(ks, ks[1:]):
        if t1 < t0 + d0 - 0.0015:
            fail("overlapping device events on stream 7")

    steps = sorted((e for e in ev if e.get("cat") == "user_annotation"), key=lambda e: e["ts"])
    if not all(s["name"].startswith("ProfilerStep#") for s in steps):
        fail("user_annotation other than ProfilerStep")
    syncs = [e for e in runtime.values() if e["name"] == "cudaDeviceSynchronize"]
    if len(syncs) != len(steps):
        fail("not one cudaDeviceSynchronize per step")
    # Decode: the KV cache length (dim -2 of the first KV-cache aten::cat per step) grows.
    cat_kv = []
    for s in steps:
        end = s["ts"] + s["dur"]
        for e in ops:
            if e["name"] == "aten::cat" and s["ts"] <= e["ts"] <= end and \
                    e["args"]["Concrete Inputs"][1] == "-2":
                cat_kv.append(e["args"]["Input Dims"][0][0][2])
                break
    if len(cat_kv) > 1 and any(b <= a for a, b in zip(cat_kv, cat_kv[1:])):
        fail(f"KV length does not grow with the step: {cat_kv[:8]}")
    for e in ops:
        if e.get("cat") == "cpu_op" and "Input Dims" not in e["args"]:
            fail(f"cpu_op without Input Dims: {e['name']}")
    print(f"check_kineto_trace: OK: {len(ev)} events, {len(steps)} steps, {cats['kernel']} kernels, "
          f"{cats['cpu_op']} cpu_ops, KV length {cat_kv[0] if cat_kv else '-'} -> {cat_kv[-1] if cat_kv else '-'}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1])
