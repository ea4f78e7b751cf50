// naive_dom_load: the baseline a user would write first. Read the whole trace
// into memory (gunzip into memory first for .gz) and parse it with simdjson's
// DOM API, then walk traceEvents counting events per phase. Memory is the file
// plus simdjson's tape/string buffers (several times the input); the figure to
// beat for a streaming importer.
//
// usage: naive_dom_load FILE[.json|.json.gz]
// prints: events=N X=N ... bytes=N parse_s=S

#include <simdjson.h>
#include <zlib.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace {

constexpr size_t kGunzipChunk = 1 << 20;  // 1 MiB reads from zlib

// Decompresses a gzip file into a padded buffer (growing it as needed).
bool GunzipAll(const char* path, simdjson::padded_string* out) {
  gzFile g = gzopen(path, "rb");
  if (!g) return false;
  gzbuffer(g, kGunzipChunk);
  std::string data;
  std::string chunk(kGunzipChunk, '\0');
  int n;
  while ((n = gzread(g, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) data.append(chunk.data(), n);
  const bool ok = n == 0;
  gzclose(g);
  *out = simdjson::padded_string(data);  // one more copy: what naive code does
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: naive_dom_load FILE[.json|.json.gz]\n");
    return 2;
  }
  const char* path = argv[1];
  const auto t0 = std::chrono::steady_clock::now();
  simdjson::padded_string json;
  const size_t len = std::strlen(path);
  if (len > 3 && std::strcmp(path + len - 3, ".gz") == 0) {
    if (!GunzipAll(path, &json)) {
      std::fprintf(stderr, "naive_dom_load: cannot gunzip %s\n", path);
      return 1;
    }
  } else {
    auto loaded = simdjson::padded_string::load(path);
    if (loaded.error()) {
      std::fprintf(stderr, "naive_dom_load: %s: %s\n", path, simdjson::error_message(loaded.error()));
      return 1;
    }
    json = std::move(loaded).value_unsafe();
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(json).get(doc)) {
    std::fprintf(stderr, "naive_dom_load: %s: %s\n", path, simdjson::error_message(err));
    return 1;
  }
  simdjson::dom::array events;
  if (auto err = doc["traceEvents"].get_array().get(events)) {
    std::fprintf(stderr, "naive_dom_load: %s: traceEvents: %s\n", path, simdjson::error_message(err));
    return 1;
  }
  uint64_t total = 0, x = 0, instant = 0, flow = 0, meta = 0, kernels = 0;
  for (simdjson::dom::element e : events) {
    ++total;
    std::string_view ph;
    if (e["ph"].get_string().get(ph)) continue;
    if (ph == "X") {
      ++x;
      std::string_view cat;
      if (!e["cat"].get_string().get(cat) && cat == "kernel") ++kernels;
    } else if (ph == "i") {
      ++instant;
    } else if (ph == "s" || ph == "f") {
      ++flow;
    } else if (ph == "M") {
      ++meta;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("events=%" PRIu64 " X=%" PRIu64 " kernels=%" PRIu64 " i=%" PRIu64 " flows=%" PRIu64 " M=%" PRIu64
              " bytes=%zu parse_s=%.3f\n",
              total, x, kernels, instant, flow, meta, json.size(), secs);
  return 0;
}
