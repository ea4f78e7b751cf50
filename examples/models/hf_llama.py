"""A small random-weight transformers LlamaForCausalLM, built from a config (nothing is downloaded).

It is what users run by default: eager attention and the dynamic KV cache (grown with torch.cat
every token). The default size makes `generate` of 16 new tokens from a 32-token prompt take about
a second on a 2-core CPU, and some dimensions deliberately do not divide common GEMM tile sizes
(64 / 128), so tiling findings are plausible:

    import torch
    from examples.models.hf_llama import build_hf_llama, make_prompt
    model = build_hf_llama()
    prompt = make_prompt(batch=1, length=32, vocab=model.config.vocab_size, seed=0)
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=16, do_sample=False, pad_token_id=0)
"""

from __future__ import annotations

from typing import Any, Dict

import torch

# Sized for ~0.3-2 s per `generate(16 new tokens, 32-token prompt)` on a 2-core CPU in fp32
# (measured about 0.4 s; ~40 M parameters, ~160 MB of weights).
DEFAULT_LLAMA_CONFIG: Dict[str, Any] = dict(
    vocab_size=7919,            # prime: the lm_head GEMM's N divides no tile size
    hidden_size=704,            # 11 x 64: divides 64, not 128
    intermediate_size=1928,     # SwiGLU width, 8 x 241: no multiple of 16 or 64
    num_hidden_layers=6,
    num_attention_heads=11,     # head_dim 64
    num_key_value_heads=1,      # grouped-query attention (11 query heads share one KV head)
    max_position_embeddings=512,
    rms_norm_eps=1e-6,
    rope_theta=10000.0,
    tie_word_embeddings=False,
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=0,
)

DEFAULT_WEIGHT_SEED = 0


def build_hf_llama(seed: int = DEFAULT_WEIGHT_SEED, **overrides: Any):
    """A transformers LlamaForCausalLM in eval mode with random weights (seeded).

    `overrides` replace fields of DEFAULT_LLAMA_CONFIG (any LlamaConfig field). Attention is
    eager and generate() uses the default dynamic cache, as in an unoptimised user setup.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    fields = dict(DEFAULT_LLAMA_CONFIG)
    fields.update(overrides)
    config = LlamaConfig(**fields)
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    # generate() must never stop early on a random eos token: the number of forwards stays fixed.
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = fields.get("pad_token_id", 0)
    return model


def make_prompt(batch: int = 1, length: int = 32, vocab: int = DEFAULT_LLAMA_CONFIG["vocab_size"],
                seed: int = 0) -> torch.Tensor:
    """Random token ids of shape (batch, length) in [3, vocab) (ids 0-2 are pad/bos/eos)."""
    if batch < 1 or length < 1 or vocab < 4:
        raise ValueError(f"make_prompt needs batch >= 1, length >= 1 and vocab >= 4 (got {batch}, {length}, {vocab})")
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab, (batch, length), generator=generator)


__all__ = ["DEFAULT_LLAMA_CONFIG", "build_hf_llama", "make_prompt"]
