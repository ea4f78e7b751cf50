"""`pypto compare --fail-on-regression [PCT]`: a performance gate for someone else's CI.

Two generated decode traces of the same model (bench/gen_kineto_trace, same seed): one with fused
SDPA attention, one with eager attention (softmax, bmm and masking kernels per layer instead of one).
The eager run's decode steps are slower; how much is read from the comparison's own JSON
(step_latency.relative_delta, Welch t on the per-step latencies) and the gate is checked against it
on both sides of the threshold."""

import json
import os
import subprocess

import pytest

from conftest import REPO

GENERATOR = os.path.join(REPO, "build", "release", "bench", "gen_kineto_trace")
EXIT_REGRESSION = 10
EXIT_INVALID_ARGUMENT = 4


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    if not os.access(GENERATOR, os.X_OK):
        pytest.skip("gen_kineto_trace not built (make build)")
    d = tmp_path_factory.mktemp("gate")
    paths = {}
    for name, extra in (("sdpa", []), ("eager", ["--attention", "eager"])):
        paths[name] = str(d / f"{name}.json")
        subprocess.run([GENERATOR, "--out", paths[name], "--steps", "12", "--seed", "3", "--quiet", *extra], check=True)
    return paths


def compare(cli, a, b, *args):
    return subprocess.run([cli, "compare", a, b, *args], capture_output=True, text=True)


def test_a_significant_slowdown_over_the_allowed_percent_fails_with_its_own_code(pypto_cli, traces):
    doc = json.loads(compare(pypto_cli, traces["sdpa"], traces["eager"], "--json").stdout)
    latency = doc["step_latency"]
    assert latency["verdict"] == "slower" and latency["significant"]
    slower_pct = latency["relative_delta"] * 100
    assert slower_pct > 0

    gated = compare(pypto_cli, traces["sdpa"], traces["eager"], "--fail-on-regression")
    assert gated.returncode == EXIT_REGRESSION
    assert gated.stdout.startswith("Verdict: slower")          # the report is printed first, verdict first
    (line,) = gated.stderr.strip().splitlines()
    assert line.startswith("pypto compare: regression: per-step latency ")
    assert f"{slower_pct:.1f} % slower" in line and "over the 0.0 % allowed" in line

    # Allowed a little more than the slowdown: passes; a little less: fails.
    assert compare(pypto_cli, traces["sdpa"], traces["eager"], "--fail-on-regression",
                   f"{slower_pct + 0.5:.2f}").returncode == 0
    assert compare(pypto_cli, traces["sdpa"], traces["eager"], "--json", "--fail-on-regression",
                   f"{max(slower_pct - 0.5, 0):.2f}").returncode == EXIT_REGRESSION


def test_a_faster_candidate_and_an_identical_run_pass(pypto_cli, traces):
    faster = compare(pypto_cli, traces["eager"], traces["sdpa"], "--fail-on-regression")
    assert faster.returncode == 0 and faster.stdout.startswith("Verdict: faster")
    same = compare(pypto_cli, traces["sdpa"], traces["sdpa"], "--fail-on-regression", "0")
    assert same.returncode == 0


def test_a_percent_that_is_not_one_is_refused(pypto_cli, traces):
    bad = compare(pypto_cli, traces["sdpa"], traces["eager"], "--fail-on-regression=-3")
    assert bad.returncode == EXIT_INVALID_ARGUMENT
    assert bad.stderr.strip() == "pypto compare: error: --fail-on-regression -3: expected a percent >= 0, e.g. 5"
