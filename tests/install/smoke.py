"""Smoke test of an installed pypto (`make test-install`): package, CLI and typed errors.

Run with the Python of the venv pypto was installed into. Checks that the installed
package (not a source tree) is imported, that the `pypto` command of that venv runs, and
that the CLI and the Python API give the same diagnosis of real fixtures.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", required=True)
    args = ap.parse_args()

    import pypto
    from pypto.diagnostics import HotspotDetector
    from pypto.parser import CANNProfileParser

    site = os.path.dirname(os.path.dirname(pypto.__file__))
    assert "site-packages" in site, f"pypto imported from {pypto.__file__}, not an installed package"
    cli = os.path.join(os.path.dirname(sys.executable), "pypto")
    assert os.access(cli, os.X_OK), f"the pypto command is not installed next to {sys.executable}"
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert pypto.__version__ in version, (version, pypto.__version__)

    cases = [
        os.path.join(args.fixtures, "kineto", "tracelens_h100_qwen1.5_0.5b_hf_inference"),
        os.path.join(args.fixtures, "ascend", "pta_level2_llm_cann83"),
    ]
    for path in cases:
        graph = CANNProfileParser(path).parse()
        py_doc = HotspotDetector().detect(graph).data
        out = subprocess.run([cli, "diagnose", "--json", path], capture_output=True, text=True, check=True).stdout
        cli_doc = json.loads(out)
        assert py_doc == cli_doc, f"{path}: CLI and Python diagnoses differ"
        print(f"[install] {os.path.basename(path)}: {graph.get_op_count()} ops, "
              f"{len(py_doc['issues'])} issues, CLI == Python")

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write('{"traceEvents": 5}')
        bad = f.name
    try:
        CANNProfileParser(bad).parse()
        raise AssertionError("a JSON file without a trace was accepted")
    except pypto.ProfileFormatError as e:
        assert os.path.basename(bad) in str(e), str(e)
        print(f"[install] typed error: {type(e).__name__}: {e}")
    finally:
        os.unlink(bad)
    print(f"[install] ok: pypto {pypto.__version__} from {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
