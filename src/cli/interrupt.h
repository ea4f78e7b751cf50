// Ctrl-C handling: the first SIGINT sets a flag that the engine polls
// (ImportOptions::cancel) so a long import stops cleanly with a message; the
// handler then resets itself, so a second Ctrl-C kills the process at once.
#pragma once

#include <atomic>

namespace pypto::cli {

void InstallInterruptHandler();
const std::atomic<bool>* InterruptFlag();
bool Interrupted();

}  // namespace pypto::cli
