"""Shared paths for the Python tests: the repository, the fixtures beside it, the CLI."""

import glob
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(os.path.dirname(REPO), "shared", "fixtures")


@pytest.fixture(scope="session")
def fixtures():
    if not os.path.isdir(FIXTURES):
        pytest.fail(f"fixtures directory {FIXTURES} is missing (it must sit beside the checkout)")
    return FIXTURES


@pytest.fixture(scope="session")
def pypto_cli():
    candidates = [os.environ.get("PYPTO", ""), os.path.join(REPO, "build", "release", "pypto")]
    candidates += sorted(glob.glob(os.path.join(REPO, "build", "*", "pypto")))
    for c in candidates:
        if c and os.access(c, os.X_OK) and subprocess.run([c, "--version"], capture_output=True).returncode == 0:
            return c
    pytest.fail("no pypto binary (run make build, or set PYPTO)")
