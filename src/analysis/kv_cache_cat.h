// A KV cache grown by torch.cat: the cat's shapes say the cache's layout.
// Shared by the kv_cache_layout detector and the advisor's layout picture, so
// that both read the layout the profile shows, not one assumed.
#pragma once

#include <cstdint>
#include <optional>

#include "analysis/shapes.h"
#include "model/profile.h"

namespace pypto {

struct KvCacheCat {
  int grow_dim = -1;        // the sequence dim the cat grows
  int rank = 0;
  int64_t cache_len = 0;    // sequence length of the cache input
  int64_t fresh_len = 0;    // of the new tokens
  // Rank-4 caches: grow_dim 1 is [B, S, N, D] (BSND, token-major), 2 is
  // [B, N, S, D] (BNSD, head-major); the KV heads and head_dim (else -1).
  int64_t kv_heads = -1;
  int64_t head_dim = -1;
  double cache_bytes = 0;   // 0 when the dtype is unknown
  bool bnsd() const { return rank == 4 && grow_dim == 2; }
  bool bsnd() const { return rank == 4 && grow_dim == 1; }
};

// Two inputs of rank >= 3 that agree on every dim but one, where the larger
// (the cache) is at least twice the other (a few new tokens); else nullopt.
std::optional<KvCacheCat> ReadKvCacheCat(const OpShapes& shapes);

// The layout of the profile's KV cache: the first aten::cat whose shapes read
// as a cache of rank 4 growing along dim 1 or 2; nullopt when none does.
std::optional<KvCacheCat> FindKvCacheCat(const Profile& profile);

}  // namespace pypto
