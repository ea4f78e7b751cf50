#include "analysis/kv_cache_cat.h"

#include <string_view>

namespace pypto {

std::optional<KvCacheCat> ReadKvCacheCat(const OpShapes& s) {
  const TensorShape* a = s.tensor(0);
  const TensorShape* b = s.tensor(1);
  if (!a || !b || s.tensor_count() != 2 || a->rank != b->rank || a->rank < 3) return std::nullopt;
  int diff = -1;
  for (int d = 0; d < a->rank; ++d) {
    if (a->dims[d] == b->dims[d]) continue;
    if (diff >= 0) return std::nullopt;
    diff = d;
  }
  if (diff < 0) return std::nullopt;
  const TensorShape* cache = a->dims[diff] >= b->dims[diff] ? a : b;
  const TensorShape* fresh = cache == a ? b : a;
  if (fresh->dims[diff] * 2 > cache->dims[diff]) return std::nullopt;  // not a cache + a few new tokens
  KvCacheCat c;
  c.grow_dim = diff;
  c.rank = cache->rank;
  c.cache_len = cache->dims[diff];
  c.fresh_len = fresh->dims[diff];
  c.cache_bytes = cache->bytes();
  if (c.rank == 4 && (diff == 1 || diff == 2)) {
    c.kv_heads = cache->dims[diff == 1 ? 2 : 1];
    c.head_dim = cache->dims[3];
  }
  return c;
}

std::optional<KvCacheCat> FindKvCacheCat(const Profile& p) {
  const HostOpTable& h = p.host_ops;
  for (uint32_t op = 0; op < h.size(); ++op) {
    if (h.input_dims[op] == kEmptyStr) continue;
    const std::string_view name = p.Str(h.name[op]);
    if (!name.ends_with("::cat")) continue;
    OpShapes s;
    if (!ParseHostOpShapes(p.Str(h.input_dims[op]), p.Str(h.input_types[op]), &s).ok()) continue;
    std::optional<KvCacheCat> c = ReadKvCacheCat(s);
    if (c && (c->bnsd() || c->bsnd())) return c;
  }
  return std::nullopt;
}

}  // namespace pypto
