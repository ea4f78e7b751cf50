// Runs independent pieces of work on a few threads: the ranks of one job are
// read side by side (each rank's import is independent and touches only its
// own Profile), the critical paths of the steps are built side by side. A hand-written loop over std::thread rather than a thread-pool
// library: the work is a handful of coarse items (one per rank, seconds
// each), so a shared atomic index is all the scheduling needed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace pypto {

// Threads used by ParallelFor when the caller does not say: one per core.
inline size_t DefaultParallelism() { return std::max<size_t>(1, std::thread::hardware_concurrency()); }

// Calls work(state, i) once for every i in [0, count), on up to max_threads
// threads (the calling thread is one of them), and returns when all calls
// returned. Each thread makes its own state with make_state() and hands it to
// every item it takes (e.g. a builder whose caches outlive one item). `work`
// must not throw; items may run in any order.
template <typename MakeState, typename Fn>
void ParallelForWithState(size_t count, size_t max_threads, MakeState make_state, Fn work) {
  const size_t threads = std::min(count, std::max<size_t>(1, max_threads));
  std::atomic<size_t> next{0};
  auto run = [&] {
    auto state = make_state();
    for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) work(state, i);
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads > 0 ? threads - 1 : 0);
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(run);
  run();
  for (std::thread& h : helpers) h.join();
}

// The same without state: work(i).
template <typename Fn>
void ParallelFor(size_t count, size_t max_threads, Fn work) {
  ParallelForWithState(count, max_threads, [] { return 0; }, [&](int, size_t i) { work(i); });
}

}  // namespace pypto
