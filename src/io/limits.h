// Safety limits for untrusted input. Every limit is a named constant with its
// unit and the reason for its default; callers may override them per call.
#pragma once

#include <cstdint>

namespace pypto::io {

// Largest input file accepted, in bytes (compressed size for .gz). 64 GiB: the
// largest real LLM traces reported are a few GB per step (pytorch/kineto#760);
// anything far beyond is more likely a wrong path than a profile.
inline constexpr uint64_t kDefaultMaxInputBytes = 64ull << 30;

// Largest decompressed/compressed ratio accepted for gzip input. Real Kineto
// traces compress about 16x (pytorch/torchtitan PR #3483; the fixtures here are
// 15-30x); 200x leaves headroom and still refuses gzip bombs (~1000x) early.
inline constexpr uint64_t kDefaultMaxGzipRatio = 200;
// Below this many decompressed bytes the ratio check is not applied, so that a
// tiny but highly repetitive file (a short synthetic test trace) is not refused.
inline constexpr uint64_t kGzipRatioGraceBytes = 64ull << 20;

// Largest file read whole into memory (side files: CSV, small JSON, info files).
// 2 GiB: kernel_details.csv of a long Level2 run is a few hundred MB.
inline constexpr uint64_t kDefaultMaxWholeFileBytes = 2ull << 30;

// Most rows accepted in one table of a saved pypto profile (the SQLite file of
// `pypto export-sqlite`), rows. 2^31 - 1: the call graph indexes host ops and
// device tasks with int32 (graph/call_graph.cc refuses more), and string ids
// are uint32. A count beyond it is a corrupt or hostile file, refused before
// any table is sized from it.
inline constexpr uint64_t kMaxSavedProfileTableRows = (1ull << 31) - 1;

struct Limits {
  uint64_t max_input_bytes = kDefaultMaxInputBytes;
  uint64_t max_gzip_ratio = kDefaultMaxGzipRatio;
  uint64_t max_whole_file_bytes = kDefaultMaxWholeFileBytes;
  bool follow_symlinks = false;  // inputs are opened with O_NOFOLLOW unless asked
};

}  // namespace pypto::io
