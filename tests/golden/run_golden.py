#!/usr/bin/env python3
"""Golden tests of the pypto command line (Python standard library only).

A case runs one pypto command and checks what it printed. Case files are JSON
files in the cases directory, each holding {"cases": [case, ...]}. A case has a
"name", "args" (the command line after `pypto`) and one of:

  expect_json   run with fixture paths, stdout parsed as JSON; selected values
                compared: {"<path>": {"equals": V} | {"approx": V, "rel_tol": r,
                "abs_tol": a} | {"min": lo, "max": hi}, "checked_by": "..."}.
                Every expected figure says how it was checked against the raw
                events of the fixture ("checked_by"); a value without it is an
                error in the case file.
  expect_text   stdout compared byte for byte to a stored file
                ({"golden": "text/<name>.txt"}, relative to the cases dir);
                `--update` rewrites the stored files (review the diff first).
  expect_error  bad input made at run time in a temp dir ("setup"), then the
                exit code and stderr substrings checked; stderr must be one line.
  expect_trace  `export-trace` output file checked as a Chrome trace: valid JSON,
                numeric ts, flow ids below 2^53 and paired, plus JSON paths.
  expect_same_json  {"reference_args": [...], "paths": [...], "checked_by": "..."}:
                run both commands (stdout JSON) and require every listed path
                to hold the same value in both (a derived file gives the same
                figures as the original).

A case with "output_file" (e.g. "{out_dir}/report.json") runs its command with
{out_dir} a fresh temp dir and applies expect_json to the JSON file it wrote.

A case may also have "prepare": a list of pypto command lines run first, in
order, in a fresh temp dir ({tmp}); each must succeed. The case's own command
then reads what they wrote (e.g. `export-sqlite {fixture} {tmp}/saved.db`, then
`analyze --json {tmp}/saved.db`).

Paths: `a.b[0].c`, `a["key.with.dots"]`, `rows[?name=value]` (first element
whose field equals value), `len(a.b)`. Placeholders in args: {fixture} (path
relative to the fixtures dir, which is the working directory of fixture cases),
{fixtures} (the fixtures dir), {out} (expect_trace: the trace file to write).
A case with a "setup" (required for expect_error) runs in a fresh temp dir,
where the setup makes a small input at run time: {input} is its name, {tmp}
the temp dir (nothing binary is committed for bad-input tests).

Prints one line per case, then "N passed, M failed"; exits 1 on any failure.
A missing fixtures directory is a failure, never a skip.
"""
import argparse
import difflib
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_EXACT_JSON_INTEGER = 2 ** 53
DIFF_LINES_SHOWN = 40
PATH_TOKEN = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\["([^"]*)"\]|\[\?([^=\]]+)=([^\]]*)\]')


class CaseError(Exception):
    """A check failed; the message says which and why."""


def resolve(document, path):
    """Value at `path` in a parsed JSON document (see the module docstring)."""
    want_length = path.startswith("len(") and path.endswith(")")
    if want_length:
        path = path[4:-1]
    value = document
    position = 0
    while position < len(path):
        match = PATH_TOKEN.match(path, position)
        if not match or match.end() == position:
            raise CaseError(f"bad path syntax at {path[position:]!r} in {path!r}")
        position = match.end()
        key, index, quoted_key, filter_key, filter_value = match.groups()
        try:
            if key is not None or quoted_key is not None:
                value = value[key if key is not None else quoted_key]
            elif index is not None:
                value = value[int(index)]
            else:
                value = next(item for item in value if str(item.get(filter_key)) == filter_value)
        except (KeyError, IndexError, TypeError, StopIteration):
            raise CaseError(f"{path}: not present in the output")
    return len(value) if want_length else value


def check_value(path, actual, spec):
    if "checked_by" not in spec:
        raise CaseError(f"{path}: the case file gives no 'checked_by' note for this value")
    if "equals" in spec:
        if actual != spec["equals"]:
            raise CaseError(f"{path}: expected {spec['equals']!r}, got {actual!r}")
    elif "approx" in spec:
        if not isinstance(actual, (int, float)) or not math.isclose(
                actual, spec["approx"], rel_tol=spec.get("rel_tol", 0.0), abs_tol=spec.get("abs_tol", 0.0)):
            raise CaseError(f"{path}: expected {spec['approx']} (rel_tol {spec.get('rel_tol', 0)}, "
                            f"abs_tol {spec.get('abs_tol', 0)}), got {actual!r}")
    elif "min" in spec or "max" in spec:
        low, high = spec.get("min", -math.inf), spec.get("max", math.inf)
        if not isinstance(actual, (int, float)) or not low <= actual <= high:
            raise CaseError(f"{path}: expected a number in [{low}, {high}], got {actual!r}")
    else:
        raise CaseError(f"{path}: the spec has none of equals / approx / min / max")


def check_paths(document, expectations):
    for path, spec in expectations.items():
        check_value(path, resolve(document, path), spec)


def run_pypto(pypto, args, cwd, timeout):
    try:
        return subprocess.run([pypto] + args, cwd=cwd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CaseError(f"timed out after {timeout} s")


def expand(args, **values):
    return [arg.format(**values) for arg in args]


def require_success(result):
    if result.returncode != 0:
        raise CaseError(f"exit code {result.returncode}, stderr: {result.stderr.decode(errors='replace').strip()}")


def make_input(setup, tmp, fixtures):
    """Creates the bad input an error case describes; returns its name."""
    kind = setup["kind"]
    name = setup.get("name", "input")
    path = os.path.join(tmp, name)
    if kind == "none":
        return name  # a path that does not exist
    if kind == "write":
        with open(path, "wb") as out:
            out.write(setup.get("text", "").encode())
    elif kind == "gzip_text":
        with gzip.open(path, "wb") as out:
            out.write(setup["text"].encode())
    elif kind == "truncate_fixture":
        opener = gzip.open if setup.get("decompress") else open
        with opener(os.path.join(fixtures, setup["fixture"]), "rb") as source:
            data = source.read()
        with open(path, "wb") as out:
            out.write(data[:setup["bytes"]])
    elif kind == "copy_fixture":
        shutil.copyfile(os.path.join(fixtures, setup["fixture"]), path)
    elif kind == "mkdir":
        os.makedirs(path)
        for file_name, text in setup.get("files", {}).items():
            with open(os.path.join(path, file_name), "w") as out:
                out.write(text)
    elif kind == "symlink_to_fixture":
        os.symlink(os.path.join(fixtures, setup["fixture"]), path)
    else:
        raise CaseError(f"unknown setup kind {kind!r}")
    for extra_name, text in setup.get("also_write", {}).items():
        with open(os.path.join(tmp, extra_name), "w") as out:
            out.write(text)
    return name


def check_chrome_trace(path):
    """Structural checks every exported trace must pass; returns the document."""
    with open(path, "rb") as source:
        document = json.load(source)
    events = document.get("traceEvents")
    if not isinstance(events, list) or not events:
        raise CaseError(f"{path}: no traceEvents array")
    flow_starts, flow_ends = {}, {}
    for event in events:
        phase = event.get("ph")
        if phase in ("X", "s", "f") and not isinstance(event.get("ts"), (int, float)):
            raise CaseError(f"{path}: event without numeric ts: {event}")
        if phase == "X" and not isinstance(event.get("dur"), (int, float)):
            raise CaseError(f"{path}: X event without numeric dur: {event}")
        if not isinstance(event.get("pid"), int):
            raise CaseError(f"{path}: event with a non-integer pid: {event}")
        if phase in ("s", "f"):
            flow_id = event.get("id")
            if not isinstance(flow_id, int) or not 0 <= flow_id < MAX_EXACT_JSON_INTEGER:
                raise CaseError(f"{path}: flow id not an integer below 2^53: {event}")
            (flow_starts if phase == "s" else flow_ends)[flow_id] = event
    if set(flow_starts) != set(flow_ends):
        raise CaseError(f"{path}: {len(set(flow_starts) ^ set(flow_ends))} flow ids without their pair")
    return document


def run_case(case, options, fixtures_cwd):
    if "prepare" in case:
        fixture = case.get("fixture")
        if fixture and not os.path.exists(os.path.join(fixtures_cwd, fixture)):
            raise CaseError(f"fixture {fixture} not found under {fixtures_cwd}")
        with tempfile.TemporaryDirectory(prefix="pypto_golden_prep_") as tmp:
            placeholders = dict(fixture=fixture, fixtures=fixtures_cwd, tmp=tmp)
            for step in case["prepare"]:
                result = run_pypto(options.pypto, expand(step, **placeholders), fixtures_cwd,
                                   case.get("timeout", options.timeout))
                try:
                    require_success(result)
                except CaseError as error:
                    raise CaseError(f"prepare step {step}: {error}")
            return check_case(case, options, fixtures_cwd, placeholders)
    if "setup" in case:
        with tempfile.TemporaryDirectory(prefix="pypto_golden_") as tmp:
            name = make_input(case["setup"], tmp, fixtures_cwd)
            return check_case(case, options, tmp, dict(input=name, tmp=tmp, fixtures=fixtures_cwd))
    fixture = case.get("fixture")
    if fixture and not os.path.exists(os.path.join(fixtures_cwd, fixture)):
        raise CaseError(f"fixture {fixture} not found under {fixtures_cwd}")
    return check_case(case, options, fixtures_cwd, dict(fixture=fixture, fixtures=fixtures_cwd))


def check_case(case, options, cwd, placeholders):
    args = case["args"]
    timeout = case.get("timeout", options.timeout)
    if "expect_error" in case:
        spec = case["expect_error"]
        result = run_pypto(options.pypto, expand(args, **placeholders), cwd, timeout)
        name = placeholders.get("input", "")
        stderr = result.stderr.decode(errors="replace")
        if result.returncode != spec["exit_code"]:
            raise CaseError(f"exit code {result.returncode}, expected {spec['exit_code']}; stderr: {stderr.strip()}")
        lines = stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("pypto: error: "):
            raise CaseError(f"stderr should be one 'pypto: error: ...' line, got: {stderr!r}")
        for expected in spec.get("stderr_contains", []):
            expected = expected.format(input=name)
            if expected not in stderr:
                raise CaseError(f"stderr lacks {expected!r}: {stderr.strip()}")
        if spec.get("stdout_empty", True) and result.stdout:
            raise CaseError(f"stdout should be empty, got {result.stdout[:200]!r}")
        return "ok"

    if "expect_trace" in case:
        spec = case["expect_trace"]
        with tempfile.TemporaryDirectory(prefix="pypto_golden_out_") as out_dir:
            out = os.path.join(out_dir, "trace.json")
            result = run_pypto(options.pypto, expand(args, out=out, **placeholders), cwd, timeout)
            require_success(result)
            document = check_chrome_trace(out)
            check_paths(document, spec.get("paths", {}))
            if spec.get("refuses_overwrite"):
                again = run_pypto(options.pypto, expand(args, out=out, **placeholders), cwd, timeout)
                if again.returncode != spec["refuses_overwrite"] or b"already exists" not in again.stderr:
                    raise CaseError(f"second export over {out} should fail with exit code "
                                    f"{spec['refuses_overwrite']}, got {again.returncode}: {again.stderr!r}")
        return "ok"

    if "expect_same_json" in case:
        spec = case["expect_same_json"]
        if "checked_by" not in spec:
            raise CaseError("expect_same_json gives no 'checked_by' note")
        documents = []
        for command in (args, spec["reference_args"]):
            result = run_pypto(options.pypto, expand(command, **placeholders), cwd, timeout)
            require_success(result)
            try:
                documents.append(json.loads(result.stdout))
            except json.JSONDecodeError as error:
                raise CaseError(f"stdout of {command} is not JSON: {error}")
        for path in spec["paths"]:
            actual, reference = resolve(documents[0], path), resolve(documents[1], path)
            if actual != reference:
                raise CaseError(f"{path}: {str(actual)[:200]!r} differs from the reference {str(reference)[:200]!r}")
        check_paths(documents[0], case.get("expect_json", {}))
        return "ok"

    if "output_file" in case:
        # The command writes a JSON file (e.g. `report --json -o {out_dir}/r.json`): check that file.
        with tempfile.TemporaryDirectory(prefix="pypto_golden_out_") as out_dir:
            with_out = dict(placeholders, out_dir=out_dir)
            result = run_pypto(options.pypto, expand(args, **with_out), cwd, timeout)
            require_success(result)
            path = expand([case["output_file"]], **with_out)[0]
            try:
                with open(os.path.join(cwd, path)) as source:
                    document = json.load(source)
            except (OSError, json.JSONDecodeError) as error:
                raise CaseError(f"output file {path}: {error}")
            check_paths(document, case.get("expect_json", {}))
        return "ok"

    result = run_pypto(options.pypto, expand(args, **placeholders), cwd, timeout)
    require_success(result)
    if "expect_json" in case:
        try:
            document = json.loads(result.stdout)
        except json.JSONDecodeError as error:
            raise CaseError(f"stdout is not JSON: {error}")
        check_paths(document, case["expect_json"])
        return "ok"
    if "expect_text" in case:
        golden_path = os.path.join(options.cases, case["expect_text"]["golden"])
        actual = result.stdout.decode()
        if options.update:
            os.makedirs(os.path.dirname(golden_path), exist_ok=True)
            with open(golden_path, "w") as out:
                out.write(actual)
            return "updated"
        if not os.path.exists(golden_path):
            raise CaseError(f"no golden file {golden_path} (run with --update, then review it)")
        with open(golden_path) as source:
            expected = source.read()
        if actual != expected:
            diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                             "expected", "actual", lineterm=""))
            raise CaseError("output differs from " + case["expect_text"]["golden"] + ":\n    " +
                            "\n    ".join(diff[:DIFF_LINES_SHOWN]))
        return "ok"
    raise CaseError("the case has no expect_json / expect_text / expect_error / expect_trace / expect_same_json")


def load_cases(cases_dir):
    cases = []
    for file_name in sorted(os.listdir(cases_dir)):
        if file_name.endswith(".json"):
            with open(os.path.join(cases_dir, file_name)) as source:
                for case in json.load(source)["cases"]:
                    case["file"] = file_name
                    cases.append(case)
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pypto", required=True, help="the pypto binary under test")
    parser.add_argument("--fixtures", required=True, help="the shared profiler fixtures directory")
    parser.add_argument("--cases", required=True, help="directory of case files (*.json)")
    parser.add_argument("--update", action="store_true", help="rewrite expect_text golden files")
    parser.add_argument("--filter", default="", help="run only cases whose name contains this")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per command")
    options = parser.parse_args()

    # Fail loudly: a silently skipped golden suite looks like a passing one.
    fixtures_cwd = os.path.abspath(options.fixtures)
    problems = []
    if not os.path.isdir(fixtures_cwd):
        problems.append(f"fixtures directory not found: {fixtures_cwd} (the golden tests need the shared fixtures)")
    if not os.access(options.pypto, os.X_OK):
        problems.append(f"pypto binary not found or not executable: {options.pypto}")
    if problems:
        for problem in problems:
            print(f"FAIL setup: {problem}")
        print(f"0 passed, {len(problems)} failed")
        return 1
    options.pypto = os.path.abspath(options.pypto)

    passed = failed = 0
    for case in load_cases(options.cases):
        if options.filter not in case["name"]:
            continue
        try:
            outcome = run_case(case, options, fixtures_cwd)
            print(f"{'UPDATED' if outcome == 'updated' else 'PASS'} {case['name']}")
            passed += 1
        except CaseError as error:
            print(f"FAIL {case['name']} ({case['file']}): {error}")
            failed += 1
        except (OSError, KeyError, ValueError) as error:
            print(f"FAIL {case['name']} ({case['file']}): case could not run: {error!r}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
