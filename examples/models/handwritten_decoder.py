"""A hand-written Llama-style decoder in plain torch, with the habits pypto is meant to find.

- RMS normalisation written out as pow -> mean -> rsqrt -> mul (class `RootMeanSquareScale`, whose
  name does not say "Norm", so only the op sequence reveals it);
- rotary position embedding (RoPE) by rotate-half;
- SwiGLU MLP (gate, up, down projections);
- a KV cache per layer kept as a (key, value) tensor pair in BSND layout
  (batch, sequence, kv_heads, head_dim), grown by `torch.cat` every token, so the attention has to
  transpose it to BNSD and make it contiguous every step;
- unfused attention: matmul -> scale -> mask -> softmax -> matmul.

`HandwrittenDecoder.generate(input_ids, max_new_tokens)` is a greedy loop in which each forward call
produces one token (the first forward, over the prompt, is the prefill). Weights are random and
seeded, so runs are deterministic:

    from examples.models.handwritten_decoder import build_handwritten_decoder
    model = build_handwritten_decoder()
    tokens = model.generate(model.make_prompt(batch=1, length=32), max_new_tokens=16)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch import nn

DEFAULT_WEIGHT_SEED = 0
ROPE_THETA = 10000.0              # Llama's rotary base
RMS_EPSILON = 1e-6                # Llama's rms_norm_eps


@dataclass
class DecoderConfig:
    """The fields pypto's advisor reads from a transformers config (same names)."""

    vocab_size: int = 2000
    hidden_size: int = 384            # 6 x 64: divides 64, not 128
    intermediate_size: int = 1000     # SwiGLU width, 8 x 125: no multiple of 16
    num_hidden_layers: int = 4
    num_attention_heads: int = 6      # head_dim 64
    num_key_value_heads: int = 2      # grouped-query attention
    head_dim: int = 64
    max_position_embeddings: int = 512
    model_type: str = "llama"
    torch_dtype: str = "float32"

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


class RootMeanSquareScale(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight, written out op by op (no fused norm kernel)."""

    def __init__(self, width: int, epsilon: float = RMS_EPSILON):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.epsilon = epsilon

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean_square = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(mean_square + self.epsilon) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rotary_tables(positions: torch.Tensor, head_dim: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables of shape (seq, head_dim) for the given positions."""
    inverse_frequency = 1.0 / (ROPE_THETA ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(positions.to(torch.float32), inverse_frequency)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


class CatCacheAttention(nn.Module):
    """Grouped-query attention whose KV cache is a BSND tensor pair grown with torch.cat."""

    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = config.head_dim
        hidden = config.hidden_size
        self.q_proj = nn.Linear(hidden, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, hidden, bias=False)
        self.k_cache: Optional[torch.Tensor] = None   # (batch, seq, kv_heads, head_dim)
        self.v_cache: Optional[torch.Tensor] = None

    def reset_cache(self) -> None:
        self.k_cache = None
        self.v_cache = None

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim)
        k = self.k_proj(x).view(batch, seq, self.kv_heads, self.head_dim)
        v = self.v_proj(x).view(batch, seq, self.kv_heads, self.head_dim)
        cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.k_cache is None:
            self.k_cache, self.v_cache = k, v
        else:
            self.k_cache = torch.cat([self.k_cache, k], dim=1)     # grows by one token per step
            self.v_cache = torch.cat([self.v_cache, v], dim=1)
        keys = self.k_cache.transpose(1, 2).contiguous()          # BSND -> BNSD copy, every step
        values = self.v_cache.transpose(1, 2).contiguous()
        group = self.heads // self.kv_heads
        keys = keys.repeat_interleave(group, dim=1)
        values = values.repeat_interleave(group, dim=1)
        queries = q.transpose(1, 2)                               # (batch, heads, seq, head_dim)
        total = keys.shape[2]
        scores = torch.matmul(queries, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        causal = torch.ones(seq, total, dtype=torch.bool, device=x.device).tril(diagonal=total - seq)
        scores = scores.masked_fill(~causal, float("-inf"))
        probabilities = torch.softmax(scores, dim=-1)
        context = torch.matmul(probabilities, values)
        return self.o_proj(context.transpose(1, 2).reshape(batch, seq, self.heads * self.head_dim))


class SwiGLUFeedForward(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.input_scale = RootMeanSquareScale(config.hidden_size)
        self.self_attn = CatCacheAttention(config)
        self.post_attention_scale = RootMeanSquareScale(config.hidden_size)
        self.mlp = SwiGLUFeedForward(config)

    def forward(self, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        h = h + self.self_attn(self.input_scale(h), cos, sin)
        return h + self.mlp(self.post_attention_scale(h))


class HandwrittenDecoder(nn.Module):
    """Embedding -> N decoder layers -> final RMS scale -> LM head. forward(ids, start_position)."""

    def __init__(self, config: Optional[DecoderConfig] = None):
        super().__init__()
        self.config = config or DecoderConfig()
        if self.config.num_attention_heads * self.config.head_dim <= 0:
            raise ValueError("num_attention_heads and head_dim must be positive")
        if self.config.num_attention_heads % self.config.num_key_value_heads:
            raise ValueError(f"num_attention_heads ({self.config.num_attention_heads}) must be a multiple of "
                             f"num_key_value_heads ({self.config.num_key_value_heads})")
        self.embed_tokens = nn.Embedding(self.config.vocab_size, self.config.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(self.config) for _ in range(self.config.num_hidden_layers))
        self.final_scale = RootMeanSquareScale(self.config.hidden_size)
        self.lm_head = nn.Linear(self.config.hidden_size, self.config.vocab_size, bias=False)

    def reset_cache(self) -> None:
        for layer in self.layers:
            layer.self_attn.reset_cache()

    def forward(self, input_ids: torch.Tensor, start_position: int = 0) -> torch.Tensor:
        """Logits (batch, seq, vocab) for `input_ids` placed at positions start_position.. ."""
        seq = input_ids.shape[1]
        if start_position + seq > self.config.max_position_embeddings:
            raise ValueError(f"sequence reaches position {start_position + seq}, beyond "
                             f"max_position_embeddings={self.config.max_position_embeddings}")
        positions = torch.arange(start_position, start_position + seq, device=input_ids.device)
        cos, sin = rotary_tables(positions, self.config.head_dim)
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h, cos, sin)
        return self.lm_head(self.final_scale(h))

    @torch.no_grad()
    def generate(self, input_ids: torch.Tensor, max_new_tokens: int = 16) -> torch.Tensor:
        """Greedy decoding: one forward per new token (the first over the whole prompt).

        Returns the prompt followed by the max_new_tokens generated ids.
        """
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        self.reset_cache()
        tokens: List[torch.Tensor] = [input_ids]
        logits = self(input_ids, 0)[:, -1]
        position = input_ids.shape[1]
        for index in range(max_new_tokens):
            next_token = logits.argmax(-1, keepdim=True)
            tokens.append(next_token)
            if index + 1 < max_new_tokens:
                logits = self(next_token, position)[:, -1]
                position += 1
        self.reset_cache()
        return torch.cat(tokens, dim=1)

    def make_prompt(self, batch: int = 1, length: int = 32, seed: int = 0) -> torch.Tensor:
        generator = torch.Generator().manual_seed(seed)
        return torch.randint(0, self.config.vocab_size, (batch, length), generator=generator)


def build_handwritten_decoder(seed: int = DEFAULT_WEIGHT_SEED, **overrides: Any) -> HandwrittenDecoder:
    """A HandwrittenDecoder in eval mode with seeded random weights; `overrides` set DecoderConfig fields."""
    config = DecoderConfig(**overrides)
    if "head_dim" not in overrides and "hidden_size" in overrides:
        config.head_dim = config.hidden_size // config.num_attention_heads
    torch.manual_seed(seed)
    return HandwrittenDecoder(config).eval()


__all__ = ["DecoderConfig", "RootMeanSquareScale", "CatCacheAttention", "SwiGLUFeedForward", "DecoderLayer",
           "HandwrittenDecoder", "build_handwritten_decoder", "rotary_tables", "rotate_half"]
