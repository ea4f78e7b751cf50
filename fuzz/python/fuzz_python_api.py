"""atheris fuzz target for pypto's Python entry points (`make fuzz`).

Each input is written to a file and goes through what a user calls: load_profile
(format detection into every importer), the graph queries, the diagnosis, the
advisor, the report and the saved-profile export, loaded back. Expected outcomes
are a result or a pypto.PyptoError subclass carrying the engine's message; any
other exception, a crash or a hang is a finding. The C++ engine inside is fuzzed
with libFuzzer under sanitizers (fuzz/*_fuzzer.cc); this target covers the
binding layer: argument conversion, error translation, object lifetimes.

Run: python fuzz/python/fuzz_python_api.py -max_total_time=60 fuzz/corpus/*/
"""

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports():
    import pypto
    from pypto.advisor import TuningAdvisor
    from pypto.diagnostics import HotspotDetector

WORK = tempfile.mkdtemp(prefix="pypto-atheris-")
# The suffix decides nothing (formats are detected by content) but a .gz name
# makes the reader try the gzip path on gzip magic; both are exercised.
SUFFIXES = (".json", ".json.gz", ".csv", ".db")


def exercise(path: str) -> None:
    try:
        graph = pypto.load_profile(path)
    except pypto.PyptoError as error:
        assert str(error), "an engine error without a message"
        return
    graph.get_op_count()
    graph.steps()
    graph.get_ai_core_utilization()
    graph.summary()
    try:
        graph.get_critical_path_latency()
        HotspotDetector().detect(graph)
        TuningAdvisor(graph).generate_recommendations()
        graph.report(format="json")
        saved = path + ".saved.db"
        graph.export_to_sqlite(saved, force=True)
        pypto.load_profile(saved).get_op_count()
    except pypto.PyptoError as error:
        assert str(error), "an engine error without a message"


def test_one_input(data: bytes) -> None:
    if not data:
        return
    path = os.path.join(WORK, "input" + SUFFIXES[data[0] % len(SUFFIXES)])
    with open(path, "wb") as f:
        f.write(data[1:])
    exercise(path)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
