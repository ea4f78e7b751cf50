#include "cli/interrupt.h"

#include <csignal>

namespace pypto::cli {
namespace {

// Lock-free, so storing to it from a signal handler is async-signal-safe.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnInterrupt(int) { g_interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

void InstallInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second Ctrl-C gets the default action (terminate)
  sigaction(SIGINT, &action, nullptr);
}

const std::atomic<bool>* InterruptFlag() { return &g_interrupted; }

bool Interrupted() { return g_interrupted.load(std::memory_order_relaxed); }

}  // namespace pypto::cli
