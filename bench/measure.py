#!/usr/bin/env python3
"""Run one command and report its wall time, throughput over an input size and
peak resident memory (max RSS of the child and its waited-for descendants, from
os.wait4 / getrusage). Prints one line of key=value pairs and, with --json-out,
appends the same as a JSON object to a file.

usage: measure.py [--bytes N | --input FILE] [--label L] [--timeout S]
                  [--mem-limit-mb M] [--stderr-log FILE] [--json-out FILE]
                  [--repeat N] [--quiet] [--extra K=V ...] -- CMD ARGS...

  --input FILE   throughput is over FILE's size (uncompressed size for .gz
                 files is NOT used: pass --bytes for that)
  --bytes N      throughput over N bytes
  --timeout S    kill the command (its whole process group) after S seconds;
                 reported as status=timeout
  --mem-limit-mb M  cap the command's address space (RLIMIT_AS) at M MB, so a
                 tool that needs more fails (status=oom) instead of pushing a
                 shared machine into swap or the OOM killer
  --stderr-log F write the command's stderr to F instead of the terminal
  --quiet        discard the command's stdout
  --extra K=V    copied into the JSON record (e.g. tool=pypto size_mb=300)
  --repeat N     run the command N times in a row (default 1) and report the
                 median wall time, the CPU time (user, sys) of the run with the
                 median user+sys, and the largest peak RSS; every run's wall
                 and CPU time go to the record as wall_runs / cpu_runs. On a
                 shared machine one run can be off by 30 % either way.

Exit status: 0 when the command ran to completion with status 0, else 1.
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time


def run_once(cmd, a):
    """One run: (status, wall seconds, exit code, rusage, peak RSS in MB)."""
    t0 = time.perf_counter()
    # Own process group, so a timeout can stop the command and its children.
    def limit_memory():
        if a.mem_limit_mb:
            lim = a.mem_limit_mb * 1000 * 1000
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    err = open(a.stderr_log, "wb") if a.stderr_log else None
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL if a.quiet else None, stderr=err,
                            start_new_session=True, preexec_fn=limit_memory)
    status = "ok"
    deadline = t0 + a.timeout if a.timeout > 0 else None
    while True:
        pid, wstatus, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline and time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, wstatus, ru = os.wait4(proc.pid, 0)
            status = "timeout"
            break
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(wstatus)
    if err:
        err.close()
    if status == "ok" and proc.returncode != 0:
        status = f"exit{proc.returncode}"
        if a.mem_limit_mb and a.stderr_log:
            with open(a.stderr_log, "rb") as f:
                text = f.read()
            if b"MemoryError" in text or b"std::bad_alloc" in text or b"Unable to allocate" in text:
                status = "oom"
    # ru_maxrss is in KiB on Linux. wait4 gives the child's own peak; a child
    # that runs its own children (e.g. a shell) is covered by RUSAGE_CHILDREN.
    rss_kib = max(ru.ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    rss_mb = rss_kib * 1024 / 1e6
    return status, wall, proc.returncode, ru, rss_mb


def main():
    ap = argparse.ArgumentParser(add_help=True)
    ap.add_argument("--bytes", type=int, default=0)
    ap.add_argument("--input")
    ap.add_argument("--label", default="")
    ap.add_argument("--timeout", type=float, default=0)
    ap.add_argument("--json-out")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--mem-limit-mb", type=int, default=0)
    ap.add_argument("--stderr-log")
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")
    nbytes = a.bytes or (os.path.getsize(a.input) if a.input else 0)

    runs = []
    for _ in range(max(1, a.repeat)):
        runs.append(run_once(cmd, a))
        if runs[-1][0] != "ok":  # a failure (timeout, exit, oom) is not retried
            break
    status = runs[-1][0]
    walls = sorted(r[1] for r in runs)
    wall = walls[len(walls) // 2]
    by_cpu = sorted(runs, key=lambda r: r[3].ru_utime + r[3].ru_stime)
    ru = by_cpu[len(by_cpu) // 2][3]
    rss_mb = max(r[4] for r in runs)
    res = {
        "label": a.label,
        "status": status,
        "wall_s": round(wall, 3),
        "bytes": nbytes,
        "mb_s": round(nbytes / 1e6 / wall, 1) if nbytes and wall > 0 else None,
        "max_rss_mb": round(rss_mb, 1),
        "rss_pct_of_input": round(100.0 * rss_mb * 1e6 / nbytes, 1) if nbytes else None,
        "user_s": round(ru.ru_utime, 3),
        "sys_s": round(ru.ru_stime, 3),
        "mem_limit_mb": a.mem_limit_mb or None,
        "cmd": " ".join(cmd),
    }
    if len(runs) > 1:
        res["wall_runs"] = [round(r[1], 3) for r in runs]
        res["cpu_runs"] = [round(r[3].ru_utime + r[3].ru_stime, 3) for r in runs]
    for kv in a.extra:
        k, _, v = kv.partition("=")
        res[k] = v
    print("  " + " ".join(f"{k}={res[k]}" for k in ("label", "status", "wall_s", "mb_s", "max_rss_mb",
                                                   "user_s", "sys_s")), file=sys.stderr)
    if a.json_out:
        with open(a.json_out, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0 if status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
