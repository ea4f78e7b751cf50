"""Replays the atheris seeds and every finding of the Python-API fuzz target
(fuzz/python/fuzz_python_api.py) through the same entry points, in-process."""

import glob
import importlib.util
import os

import pytest

from conftest import REPO

spec = importlib.util.spec_from_file_location("fuzz_python_api", os.path.join(REPO, "fuzz", "python",
                                                                                 "fuzz_python_api.py"))
fuzz_target = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz_target)

INPUTS = sorted(glob.glob(os.path.join(REPO, "fuzz", "regressions", "python_api", "*")) +
                glob.glob(os.path.join(REPO, "fuzz", "corpus", "*", "*")))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: os.path.relpath(p, REPO))
def test_replay(path):
    with open(path, "rb") as f:
        data = f.read()
    for selector in range(len(fuzz_target.SUFFIXES)):
        fuzz_target.test_one_input(bytes([selector]) + data)
