#!/usr/bin/env python3
"""Fails when a source file includes a layer above its own.

Data flows one way through the layers of docs/architecture.md. Each folder of
src/ is a layer (importers/<format> belongs to importers); a file may include
its own layer and the layers listed before it in LAYER_ORDER, never one after.
A folder that is not listed fails too, so a new folder must be placed first.

Usage: check_layers.py [--src SRC]   (exit 0: clean, 1: violations, with each
include printed as file:line, the two layers and the include).
"""
import argparse
import pathlib
import re
import sys

# Bottom to top; the same order as docs/architecture.md.
LAYER_ORDER = [
    "core",       # Status / StatusOr
    "io",         # files, limits, output files, the JSON writer
    "kernels",    # native CPU kernels the Python package binds (no engine use)
    "model",      # Profile tables
    "importers",  # formats -> Profile
    "graph",      # OperatorCallGraph
    "hw",         # hardware table, calibration
    "analysis",   # classes, costs, detectors -> DiagnosticReport
    "advisor",    # rules -> recommendations, artifacts
    "session",    # the engine facade: profile + graph + cached products
    "compare",    # baseline vs candidate
    "report",     # renderers
    "cli",        # the pypto command
    "python",     # the pybind11 module
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')


def violations(src: pathlib.Path):
    rank = {name: i for i, name in enumerate(LAYER_ORDER)}
    found = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc", ".cpp", ".hpp") or not path.is_file():
            continue
        layer = path.relative_to(src).parts[0]
        if layer not in rank:
            found.append(f"{path}: folder '{layer}' is not a layer; add it to LAYER_ORDER in {__file__}")
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or match.group(1) not in rank:
                continue  # system header or a file of the same folder
            target = match.group(1)
            if rank[target] > rank[layer]:
                found.append(f"{path}:{number}: {layer} includes {target}, a layer above it: {line.strip()}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=str(pathlib.Path(__file__).resolve().parents[2] / "src"))
    args = parser.parse_args()
    src = pathlib.Path(args.src)
    if not src.is_dir():
        print(f"check_layers: {src}: not a folder", file=sys.stderr)
        return 2
    found = violations(src)
    for line in found:
        print(line)
    print(f"layers: {len(found)} include(s) pointing up" if found else "layers: every include points down or sideways")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
