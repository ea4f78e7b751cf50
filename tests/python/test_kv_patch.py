"""The KV-cache layout patch written by `pypto kv-patch` imports and runs on real
torch.nn decoders: a random-weight transformers LlamaForCausalLM (eager
attention) and a hand-written decoder whose cache grows with torch.cat.

Greedy generation before and after the patch must give the same tokens, and
the logits must agree within LOGIT_ATOL (fp32 on CPU; the only difference is
the order of a few reductions over masked, preallocated positions). After the
patch no torch.cat grows a KV cache (counted at the aten level with a dispatch
mode, and the profiler's aten::cat count drops)."""

import glob
import importlib.util
import os
import subprocess

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGIT_ATOL = 1e-4  # fp32 logits of a 2-layer, 64-wide model with random weights
CONFIG = dict(layers=2, heads=4, kv_heads=2, head_dim=16, max_seq=64)


def find_pypto():
    candidates = [os.environ.get("PYPTO", "")] + [os.path.join(REPO, "build", "release", "pypto")]
    candidates += sorted(glob.glob(os.path.join(REPO, "build", "*", "pypto")))
    for c in candidates:
        if c and os.access(c, os.X_OK):
            if subprocess.run([c, "kv-patch", "--help"], capture_output=True).returncode == 0:
                return c
    pytest.fail("no pypto binary with the kv-patch command (build it first, or set PYPTO)")


@pytest.fixture(scope="module")
def patch_module(tmp_path_factory):
    out = tmp_path_factory.mktemp("kv") / "kv_cache_layout_patch.py"
    cmd = [find_pypto(), "kv-patch", "-o", str(out), "--model-arch", "llama",
           "--num-layers", str(CONFIG["layers"]), "--num-heads", str(CONFIG["heads"]),
           "--num-kv-heads", str(CONFIG["kv_heads"]), "--head-dim", str(CONFIG["head_dim"]),
           "--max-seq", str(CONFIG["max_seq"])]
    subprocess.run(cmd, check=True, capture_output=True)
    # Never overwrites without --force.
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode != 0 and "exists" in again.stderr
    spec = importlib.util.spec_from_file_location("kv_cache_layout_patch", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CacheCatCounter(TorchDispatchMode):
    """Counts aten::cat calls that grow a KV cache: rank >= 3 inputs of different shapes."""

    def __init__(self):
        super().__init__()
        self.total = 0
        self.growing = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten.cat.default:
            self.total += 1
            tensors = args[0]
            if len(tensors) >= 2 and tensors[0].dim() >= 3 and len({tuple(t.shape) for t in tensors}) > 1:
                self.growing += 1
        return func(*args, **kwargs)


def profiled_cat_count(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        result = fn()
    return result, sum(1 for e in prof.events() if e.name == "aten::cat")


# ---------------------------------------------------------------- transformers


def make_llama():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=128, hidden_size=CONFIG["heads"] * CONFIG["head_dim"], intermediate_size=128,
        num_hidden_layers=CONFIG["layers"], num_attention_heads=CONFIG["heads"],
        num_key_value_heads=CONFIG["kv_heads"], max_position_embeddings=CONFIG["max_seq"])
    cfg._attn_implementation = "eager"
    return transformers.LlamaForCausalLM(cfg).eval()


def hf_generate(model, ids):
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=12, do_sample=False, output_scores=True,
                              return_dict_in_generate=True, pad_token_id=0)


def test_transformers_llama_static_bnsd_cache(patch_module):
    model = make_llama()
    ids = torch.randint(1, 128, (1, 9), generator=torch.Generator().manual_seed(1))

    before_counter = CacheCatCounter()
    with before_counter:
        before = hf_generate(model, ids)
    _, before_cats = profiled_cat_count(lambda: hf_generate(model, ids))

    # The brief's form: the patch returns the model; what it patched is kept on it.
    assert patch_module.apply_kv_cache_layout_optimization(model) is model
    info = model.pypto_kv_cache_layout
    assert info is patch_module.LAST_INFO
    assert info["mode"] == "transformers_static_cache" and info["layout"] == "BNSD"

    after_counter = CacheCatCounter()
    with after_counter:
        after = hf_generate(model, ids)
    _, after_cats = profiled_cat_count(lambda: hf_generate(model, ids))

    assert torch.equal(before.sequences, after.sequences)
    for a, b in zip(before.scores, after.scores):
        torch.testing.assert_close(a, b, atol=LOGIT_ATOL, rtol=0)
    assert before_counter.growing > 0          # DynamicCache: torch.cat per layer per token
    assert after_counter.growing == 0          # static cache: index_copy_ in place
    assert after_cats < before_cats
    # The cache is preallocated BNSD: (batch, kv_heads, capacity, head_dim).
    cache = after.past_key_values
    assert "Static" in type(cache).__name__
    keys = cache.layers[0].keys if hasattr(cache, "layers") else cache.key_cache[0]
    assert keys.shape[0] == 1 and keys.shape[1] == CONFIG["kv_heads"] and keys.shape[3] == CONFIG["head_dim"]
    assert keys.shape[2] >= ids.shape[1] + 11  # the last generated token is never fed back


# ---------------------------------------------------------------- hand-written decoder


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(torch.nn.Module):
    """Keeps its cache as BSND (batch, seq, kv_heads, head_dim), grown with torch.cat,
    transposed + made contiguous for attention every step: the anti-pattern."""

    def __init__(self, hidden, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.q = torch.nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = torch.nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.head_dim)
        k = self.k(x).view(b, s, self.kv_heads, self.head_dim)
        v = self.v(x).view(b, s, self.kv_heads, self.head_dim)
        q = q * cos[:, :, None] + rotate_half(q) * sin[:, :, None]
        k = k * cos[:, :, None] + rotate_half(k) * sin[:, :, None]
        if self.k_cache is None:
            self.k_cache, self.v_cache = k, v
        else:
            self.k_cache = torch.cat([self.k_cache, k], dim=1)
            self.v_cache = torch.cat([self.v_cache, v], dim=1)
        keys = self.k_cache.transpose(1, 2).contiguous()      # BNSD for the attention
        values = self.v_cache.transpose(1, 2).contiguous()
        rep = self.heads // self.kv_heads
        keys = keys.repeat_interleave(rep, dim=1)
        values = values.repeat_interleave(rep, dim=1)
        qh = q.transpose(1, 2)
        total = keys.shape[2]
        mask = torch.ones(s, total, dtype=torch.bool).tril(diagonal=total - s)
        out = torch.nn.functional.scaled_dot_product_attention(qh, keys, values, attn_mask=mask)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))


class Decoder(torch.nn.Module):
    def __init__(self, vocab=96, hidden=64, heads=4, kv_heads=2, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.layers = torch.nn.ModuleList(
            torch.nn.ModuleDict({"norm": torch.nn.RMSNorm(hidden), "attn": Attention(hidden, heads, kv_heads),
                                 "mlp": torch.nn.Sequential(torch.nn.Linear(hidden, 128), torch.nn.SiLU(),
                                                            torch.nn.Linear(128, hidden))})
            for _ in range(layers))
        self.norm = torch.nn.RMSNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab, bias=False)
        self.head_dim = hidden // heads

    def reset(self):
        for layer in self.layers:
            layer["attn"].k_cache = None
            layer["attn"].v_cache = None

    def forward(self, ids, start):
        pos = torch.arange(start, start + ids.shape[1], dtype=torch.float32)
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        ang = torch.outer(pos, inv)
        ang = torch.cat([ang, ang], dim=-1)[None]
        cos, sin = ang.cos(), ang.sin()
        h = self.embed(ids)
        for layer in self.layers:
            h = h + layer["attn"](layer["norm"](h), cos, sin)
            h = h + layer["mlp"](h)
        return self.head(self.norm(h))


def greedy(model, ids, steps=12):
    model.reset()
    logits_seen, out = [], ids
    with torch.no_grad():
        logits = model(ids, 0)[:, -1]
        for i in range(steps):
            logits_seen.append(logits)
            nxt = logits.argmax(-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
            logits = model(nxt, ids.shape[1] + i)[:, -1]
    return out, logits_seen


def test_hand_written_decoder_cat_cache_becomes_preallocated(patch_module):
    torch.manual_seed(0)
    model = Decoder().eval()
    ids = torch.randint(0, 96, (2, 7), generator=torch.Generator().manual_seed(2))

    before_counter = CacheCatCounter()
    with before_counter:
        before, before_logits = greedy(model, ids)
    _, before_cats = profiled_cat_count(lambda: greedy(model, ids))

    info = patch_module.apply_kv_cache_layout_optimization(model, return_info=True)
    assert info["mode"] == "preallocated_attribute_cache"
    assert len(info["patched_modules"]) == 2
    appends0 = patch_module.STATS["in_place_appends"]

    after_counter = CacheCatCounter()
    with after_counter:
        after, after_logits = greedy(model, ids)
    _, after_cats = profiled_cat_count(lambda: greedy(model, ids))

    assert torch.equal(before, after)
    for a, b in zip(before_logits, after_logits):
        torch.testing.assert_close(a, b, atol=LOGIT_ATOL, rtol=0)
    # 2 layers x 2 caches x 12 decode steps grew with cat before; none after.
    assert before_counter.growing == 2 * 2 * 12
    assert after_counter.growing == 0
    assert after_cats < before_cats
    assert patch_module.STATS["in_place_appends"] - appends0 == 2 * (2 * 2 * 12)  # two generations after patching
    # The cache is a view of a preallocated BNSD buffer; the model's transpose(1, 2)
    # of its BSND view is already contiguous (no copy for attention).
    cache = model.layers[0]["attn"].k_cache
    assert isinstance(cache, patch_module.PreallocatedKVCache)
    assert tuple(cache.shape) == (2, 7 + 12, 2, 16)
    buf = cache._pypto_state.buffer
    assert tuple(buf.shape) == (2, 2, CONFIG["max_seq"], 16)
    assert cache.transpose(1, 2).data_ptr() == buf.data_ptr()
    # The per-head rows are contiguous in the buffer: the attention's BNSD view has unit inner stride
    # and the head stride of a (cap, D) block.
    bnsd = cache.transpose(1, 2)
    assert bnsd.stride() == (2 * CONFIG["max_seq"] * 16, CONFIG["max_seq"] * 16, 16, 1)
    # Generating again reuses the buffers (no new allocation).
    allocs = patch_module.STATS["buffer_allocations"]
    greedy(model, ids)
    assert patch_module.STATS["buffer_allocations"] == allocs


def test_capacity_grows_past_max_seq(patch_module):
    torch.manual_seed(0)
    model = Decoder().eval()
    ids = torch.randint(0, 96, (1, 60), generator=torch.Generator().manual_seed(3))
    before, _ = greedy(model, ids, steps=10)      # 70 tokens > capacity 64
    patch_module.apply_kv_cache_layout_optimization(model)
    growths = patch_module.STATS["buffer_growths"]
    after, _ = greedy(model, ids, steps=10)
    assert torch.equal(before, after)
    assert patch_module.STATS["buffer_growths"] > growths


def test_applied_patch_is_credited_only_with_the_cat_it_removes():
    """apply_all_optimizations credits the applied KV patch with the findings it takes away. The
    recommendation lists two findings (the figures a diagnosis of the hand-written decoder gives: the
    cat growth, 1200 us, and the attention's own transpose + contiguous copy of the cache, 800 us);
    the patch writes new tokens in place but leaves the model's contiguous() read, so its estimate is
    the cat's 1200 us, not the recommendation's 2000 us."""
    from pypto.optimizers import apply_all_optimizations
    rec = {"hotspot_type": "kv_cache_layout", "rule_id": "kv_cache_layout.hf_static_cache",
           "actions": [{"id": "apply_kv_cache_patch"}], "estimated_saved_us": 2000.0, "action": "patch",
           "evidence": [{"op_name": "aten::cat", "issue_saved_us": 1200.0},
                        {"op_name": "aten::contiguous", "issue_saved_us": 800.0}]}
    torch.manual_seed(0)
    model = Decoder().eval()
    report = apply_all_optimizations(model, [rec], return_report=True,
                                     model_config={"num_hidden_layers": 2, "num_attention_heads": 4,
                                                   "num_key_value_heads": 2, "hidden_size": 64})
    (applied,) = report.applied
    assert applied.action_id == "kv_cache_layout"
    assert applied.estimated_saved_us == pytest.approx(1200.0)
    assert "not removed: aten::contiguous" in applied.description
    assert applied.detail["removes"] == ["aten::cat"]
