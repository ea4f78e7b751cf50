"""pypto.serving: sampling policy, rotation, atomic writes, thread safety, failure isolation, and that a
written sample is a Kineto trace the engine loads with steps."""

import gzip
import json
import logging
import os
import sys
import threading

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import pypto  # noqa: E402
from examples.models.hf_llama import build_hf_llama, make_prompt  # noqa: E402
from pypto import serving  # noqa: E402
from pypto.errors import InvalidArgumentError  # noqa: E402
from pypto.serving import ServingProfiler, list_sample_files, profiled, sample_file_name  # noqa: E402

TINY_LLAMA = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=1, vocab_size=257)
NEW_TOKENS = 3


def small_work(x=None):
    """A request handler doing a little torch work; returns a marker value."""
    a = torch.ones(8, 8) if x is None else x
    return float(torch.mm(a, a).sum())


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def sample_names(directory):
    return [os.path.basename(p) for p, _ in list_sample_files(directory)]


def plant_sample(directory, year, seq, size):
    """A file named like a sample (an older one, written by an earlier run), of `size` bytes."""
    import datetime
    name = sample_file_name(datetime.datetime(year, 1, 1, tzinfo=datetime.timezone.utc), seq)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(b"\0" * size)
    return name


@pytest.fixture(scope="module")
def tiny_llama():
    return build_hf_llama(**TINY_LLAMA)


def tiny_generate(model, seed=0):
    prompt = make_prompt(batch=1, length=6, vocab=TINY_LLAMA["vocab_size"], seed=seed)
    with torch.no_grad():
        return model.generate(prompt, max_new_tokens=NEW_TOKENS, do_sample=False)


# ------------------------------------------------------------------ policy (no file is needed)


def test_every_n_steps_samples_the_nth_call(tmp_path, monkeypatch):
    taken = []
    monkeypatch.setattr(ServingProfiler, "_sampled_call",
                        lambda self, fn, model, reenter, args, kwargs: taken.append(args[0]) or fn(*args, **kwargs))
    fn = ServingProfiler(tmp_path, every_n_steps=4).wrap(lambda i: i * 2)
    assert [fn(i) for i in range(1, 13)] == [i * 2 for i in range(1, 13)]
    assert taken == [4, 8, 12]
    stats = fn.serving_profiler.stats()
    assert stats["steps"] == 12 and stats["samples_taken"] == 3


def test_every_seconds_with_a_fake_clock(tmp_path, monkeypatch):
    taken = []
    monkeypatch.setattr(ServingProfiler, "_sampled_call",
                        lambda self, fn, model, reenter, args, kwargs: taken.append(args[0]) or fn(*args, **kwargs))
    clock = FakeClock()
    fn = ServingProfiler(tmp_path, every_seconds=10, clock=clock).wrap(lambda t: t)
    for offset in (0, 5, 9.9, 10, 12, 19, 21, 40):
        clock.now = 1000.0 + offset
        fn(offset)
    assert taken == [10, 21, 40]   # 10 s after the start, then 10 s after each sample


def test_default_policy_is_1000_steps_or_300_seconds(tmp_path, monkeypatch):
    taken = []
    monkeypatch.setattr(ServingProfiler, "_sampled_call",
                        lambda self, fn, model, reenter, args, kwargs: taken.append(args[0]) or fn(*args, **kwargs))
    clock = FakeClock()
    sampler = ServingProfiler(tmp_path, clock=clock)
    assert (sampler.every_n_steps, sampler.every_seconds) == (serving.DEFAULT_EVERY_N_STEPS,
                                                               serving.DEFAULT_EVERY_SECONDS) == (1000, 300.0)
    fn = sampler.wrap(lambda i: i)
    for i in range(1, 1001):
        fn(i)
    assert taken == [1000]
    clock.now += 300
    fn("after 300 s")
    assert taken == [1000, "after 300 s"]


def test_quiet_false_never_samples_and_counts_skips(tmp_path, monkeypatch):
    taken = []
    monkeypatch.setattr(ServingProfiler, "_sampled_call",
                        lambda self, fn, model, reenter, args, kwargs: taken.append(1) or fn(*args, **kwargs))
    busy = {"value": True}
    fn = ServingProfiler(tmp_path, every_n_steps=2, quiet=lambda: not busy["value"]).wrap(lambda: "ok")
    for _ in range(10):
        assert fn() == "ok"
    stats = fn.serving_profiler.stats()
    assert taken == [] and stats["samples_taken"] == 0 and stats["skipped_not_quiet"] == 9
    busy["value"] = False
    fn()                                   # the sample was due all along: taken as soon as it is quiet
    assert taken == [1]


def test_raising_quiet_predicate_counts_a_failure_and_does_not_sample(tmp_path, caplog):
    def broken():
        raise RuntimeError("queue gone")

    fn = ServingProfiler(tmp_path, every_n_steps=1, quiet=broken).wrap(lambda: 7)
    with caplog.at_level(logging.WARNING, logger="pypto.serving"):
        assert fn() == 7
    stats = fn.serving_profiler.stats()
    assert stats["failures"] == 1 and stats["samples_taken"] == 0 and "queue gone" in stats["last_error"]
    assert "queue gone" in caplog.text
    assert sample_names(tmp_path) == []


def test_bad_arguments_are_clear_errors(tmp_path):
    with pytest.raises(InvalidArgumentError, match="every_n_steps"):
        ServingProfiler(tmp_path, every_n_steps=0)
    with pytest.raises(InvalidArgumentError, match="every_seconds"):
        ServingProfiler(tmp_path, every_seconds=-1)
    with pytest.raises(InvalidArgumentError, match="quiet"):
        ServingProfiler(tmp_path, quiet=True)
    with pytest.raises(InvalidArgumentError, match="max_files"):
        ServingProfiler(tmp_path, max_files=0)
    with pytest.raises(InvalidArgumentError, match="trace_level"):
        ServingProfiler(tmp_path, trace_level="everything")
    with pytest.raises(InvalidArgumentError, match="set by ServingProfiler"):
        ServingProfiler(tmp_path, profiler_options={"schedule": {}})


# ------------------------------------------------------------------ real samples


def test_sample_file_is_a_kineto_trace_with_one_step_per_forward(tmp_path, tiny_llama):
    with ServingProfiler(tmp_path, every_n_steps=2) as sampler:
        sampler.attach(tiny_llama)
        assert "generate" in tiny_llama.__dict__
        first = tiny_generate(tiny_llama, seed=1)
        second = tiny_generate(tiny_llama, seed=1)          # the sampled call
        assert torch.equal(first, second)
    assert "generate" not in tiny_llama.__dict__             # close() detached it
    names = sample_names(tmp_path)
    assert len(names) == 1 and names[0].startswith("pypto_sample_") and names[0].endswith(".json.gz")
    path = os.path.join(tmp_path, names[0])
    with gzip.open(path, "rt", encoding="utf-8") as f:
        document = json.load(f)
    assert "traceEvents" in document
    graph = pypto.load_profile(path)
    steps = graph.steps()
    assert [s["name"] for s in steps] == [f"ProfilerStep#{i}" for i in range(NEW_TOKENS)]
    assert graph.get_op_count() > 0
    stats = sampler.stats()
    assert stats["samples_written"] == 1 and stats["failures"] == 0 and stats["bytes_on_disk"] == os.path.getsize(path)
    assert os.listdir(tmp_path) == names                      # no temporary file or work directory left


def test_wrapped_function_without_model_is_one_step(tmp_path):
    @profiled(tmp_path, every_n_steps=1)
    def handle(x):
        return small_work(x)

    assert handle(torch.ones(4, 4)) == small_work(torch.ones(4, 4))
    graph = pypto.load_profile(os.path.join(tmp_path, sample_names(tmp_path)[0]))
    assert [s["name"] for s in graph.steps()] == ["ProfilerStep#0"]


def test_attach_forward_of_a_module_without_generate(tmp_path):
    layer = torch.nn.Linear(8, 8)
    sampler = ServingProfiler(tmp_path, every_n_steps=1)
    sampler.attach(layer)
    assert "forward" in layer.__dict__
    x = torch.ones(2, 8)
    assert layer(x).shape == (2, 8)
    sampler.close()
    assert "forward" not in layer.__dict__
    graph = pypto.load_profile(os.path.join(tmp_path, sample_names(tmp_path)[0]))
    assert len(graph.steps()) == 1


def test_rotation_by_count_deletes_oldest_and_keeps_foreign_files(tmp_path):
    foreign = ["notes.txt", "pypto_sample_manual.json.gz", "trace.json.gz"]
    for name in foreign:
        (tmp_path / name).write_text("not ours")
    old = [plant_sample(tmp_path, 2001, 1, 10), plant_sample(tmp_path, 2002, 2, 10)]
    fn = ServingProfiler(tmp_path, every_n_steps=1, max_files=2).wrap(small_work)
    for _ in range(3):
        fn()
    names = sample_names(tmp_path)
    assert len(names) == 2 and not set(old) & set(names)
    assert names == sorted(names) and names[-1].endswith("_000005.json.gz")   # seq continues after planted files
    assert fn.serving_profiler.stats()["files_deleted"] == 3
    for name in foreign:
        assert (tmp_path / name).read_text() == "not ours"


def test_rotation_by_bytes_deletes_oldest_first(tmp_path):
    (tmp_path / "big_foreign.bin").write_bytes(b"x" * 50_000)    # not counted, not deleted
    sampler = ServingProfiler(tmp_path, every_n_steps=1)
    fn = sampler.wrap(small_work)
    fn()
    sample_size = sampler.stats()["bytes_on_disk"]
    oldest = plant_sample(tmp_path, 2001, 90, 1000)
    middle = plant_sample(tmp_path, 2002, 91, 1000)
    newest = plant_sample(tmp_path, 2003, 92, 1000)
    sampler.max_disk_bytes = sample_size + 2500          # room for the real sample and two planted ones
    sampler._rotate()
    names = sample_names(tmp_path)
    assert oldest not in names and middle in names and newest in names and len(names) == 3
    assert sampler.stats()["bytes_on_disk"] <= sampler.max_disk_bytes
    assert (tmp_path / "big_foreign.bin").stat().st_size == 50_000


def test_write_is_atomic_rename_of_a_complete_hidden_file(tmp_path, monkeypatch):
    real_replace = os.replace
    seen = []

    def checking_replace(source, target):
        assert os.path.dirname(source) == os.path.dirname(target) == str(tmp_path)
        assert os.path.basename(source).startswith(".") and source.endswith(".partial")
        assert not os.path.exists(target)                 # the final name appears only by the rename
        with gzip.open(source, "rt", encoding="utf-8") as f:
            assert "traceEvents" in json.load(f)          # complete before it is renamed
        seen.append(target)
        return real_replace(source, target)

    monkeypatch.setattr(serving.os, "replace", checking_replace)
    fn = ServingProfiler(tmp_path, every_n_steps=1).wrap(small_work)
    fn()
    assert len(seen) == 1 and os.path.exists(seen[0])


def test_failed_write_leaves_no_file_and_returns_the_result(tmp_path, monkeypatch, caplog):
    def disk_full(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(serving.os, "replace", disk_full)
    fn = ServingProfiler(tmp_path, every_n_steps=1).wrap(small_work)
    with caplog.at_level(logging.WARNING, logger="pypto.serving"):
        assert fn() == small_work()
    stats = fn.serving_profiler.stats()
    assert stats["failures"] == 1 and stats["samples_written"] == 0 and "No space left" in stats["last_error"]
    assert os.listdir(tmp_path) == []                      # the temporary file was removed too
    assert "No space left" in caplog.text


def test_profiler_start_failure_still_runs_the_call_once(tmp_path, monkeypatch):
    calls = []

    def failing_start(self):
        raise RuntimeError("profiler busy")

    monkeypatch.setattr(serving._ThreadScopedProfiler, "start", failing_start)
    fn = ServingProfiler(tmp_path, every_n_steps=1).wrap(lambda: calls.append(1) or "result")
    assert fn() == "result" and calls == [1]
    assert fn.serving_profiler.stats()["failures"] == 1


def test_exception_of_the_sampled_call_is_raised_unchanged(tmp_path):
    error = ValueError("bad request")

    def handler():
        small_work()
        raise error

    fn = ServingProfiler(tmp_path, every_n_steps=1).wrap(handler)
    with pytest.raises(ValueError) as raised:
        fn()
    assert raised.value is error
    stats = fn.serving_profiler.stats()
    assert stats["samples_taken"] == 1 and stats["failures"] == 0 and stats["files_on_disk"] == 1


def test_threads_one_sample_at_a_time_and_every_call_accounted(tmp_path):
    threads, calls_per_thread = 4, 12
    sampler = ServingProfiler(tmp_path, every_n_steps=1)   # every call is due: they compete for the sample
    in_sample = {"now": 0, "max": 0}
    guard = threading.Lock()
    errors = []

    def handler(x):
        sampling = getattr(sampler._per_thread, "in_sample", False)
        if sampling:
            with guard:
                in_sample["now"] += 1
                in_sample["max"] = max(in_sample["max"], in_sample["now"])
        try:
            return small_work(x)
        finally:
            if sampling:
                with guard:
                    in_sample["now"] -= 1

    fn = sampler.wrap(handler)

    def worker(k):
        try:
            for i in range(calls_per_thread):
                x = torch.full((8, 8), float(k + i))
                assert fn(x) == small_work(x)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert errors == []
    stats = sampler.stats()
    total = threads * calls_per_thread
    assert stats["steps"] == total
    assert stats["samples_taken"] >= 1 and in_sample["max"] == 1
    assert stats["samples_taken"] + stats["skipped_sample_running"] == total
    assert stats["samples_written"] == stats["samples_taken"] == len(sample_names(tmp_path))
    assert stats["failures"] == 0


def test_threads_with_every_n_steps_give_the_expected_sample_count(tmp_path):
    # Serialised by a lock so that no sample overlaps another call: exactly total / N samples.
    threads, calls_per_thread, every = 3, 8, 6
    fn = ServingProfiler(tmp_path, every_n_steps=every).wrap(small_work)
    serial = threading.Lock()

    def worker():
        for _ in range(calls_per_thread):
            with serial:
                fn()

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert fn.serving_profiler.stats()["samples_written"] == threads * calls_per_thread // every
    assert len(sample_names(tmp_path)) == threads * calls_per_thread // every


def test_concurrent_generate_on_an_attached_model_keeps_steps_of_the_sampled_call_only(tmp_path, tiny_llama):
    sampler = ServingProfiler(tmp_path, every_n_steps=3)
    sampler.attach(tiny_llama)
    errors = []

    def worker(k):
        try:
            for i in range(3):
                tiny_generate(tiny_llama, seed=k * 10 + i)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    sampler.close()
    assert errors == []
    names = sample_names(tmp_path)
    assert len(names) >= 1
    for name in names:
        steps = pypto.load_profile(os.path.join(tmp_path, name)).steps()
        assert [s["name"] for s in steps] == [f"ProfilerStep#{i}" for i in range(NEW_TOKENS)]
