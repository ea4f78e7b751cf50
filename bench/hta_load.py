#!/usr/bin/env python3
"""Load one Kineto trace with HolisticTraceAnalysis (HTA), the way its docs show:
TraceAnalysis(trace_dir=DIR) on a directory holding the trace (HTA lists *.json /
*.json.gz there and takes the rank from distributedInfo). The trace is linked
into a fresh temporary directory so HTA sees only this file. Prints the number
of rows HTA built and the time it took.

usage: hta_load.py FILE[.json|.json.gz]
"""
import os
import sys
import tempfile
import time


def main(path):
    from hta.trace_analysis import TraceAnalysis  # imported here: slow (pandas, plotly)

    with tempfile.TemporaryDirectory(prefix="hta_bench_") as d:
        os.symlink(os.path.abspath(path), os.path.join(d, os.path.basename(path)))
        t0 = time.perf_counter()
        analysis = TraceAnalysis(trace_dir=d)
        secs = time.perf_counter() - t0
        rows = sum(len(df) for df in analysis.t.traces.values())
    print(f"hta: rows={rows} load_s={secs:.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1])
