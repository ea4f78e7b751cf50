// How many threads the importers read one file with: the parallel JSON event
// reader's parse threads, and whether the CSV and SQLite readers split and
// read rows on a helper thread ahead of the import (they do when this is > 1).
#pragma once

#include <cstddef>

namespace pypto {

// Most parse threads used by default: beyond 8 the reader thread (event bounds,
// commits) and the memory bandwidth limit the gain.
inline constexpr size_t kMaxParseThreads = 8;

// std::thread::hardware_concurrency(), capped at kMaxParseThreads; the
// environment variable PYPTO_PARSE_THREADS (1..64) overrides it (for
// measurements, and to read on one thread).
size_t DefaultParseThreads();

}  // namespace pypto
