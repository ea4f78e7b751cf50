#include "io/file_mapping.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace pypto::io {
namespace {

// Mappings alive at once that the SIGBUS handler can repair. Each import maps
// one file at a time (a multi-rank folder: one per parse worker), so this is
// far above need; past it, Map() refuses and the caller reads instead.
constexpr size_t kMaxLiveMappings = 64;

// The handler's table. Written with atomics only, so the handler can read it
// at any moment: `end` is published last on register and cleared first on
// release, and the handler only acts on an address inside [begin, end).
struct LiveMapping {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> damaged{false};
  std::atomic<bool> in_use{false};
};
LiveMapping g_live[kMaxLiveMappings];

struct sigaction g_previous_action {};
std::once_flag g_install_once;
bool g_installed = false;

uintptr_t PageSize() {
  static const uintptr_t size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

void ForwardToPrevious(int sig, siginfo_t* info, void* context) {
  if ((g_previous_action.sa_flags & SA_SIGINFO) && g_previous_action.sa_sigaction) {
    g_previous_action.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous_action.sa_handler == SIG_IGN) return;
  if (g_previous_action.sa_handler != SIG_DFL && g_previous_action.sa_handler) {
    g_previous_action.sa_handler(sig);
    return;
  }
  // The default action: restore it and return, so the faulting access runs
  // again and ends the process as it would have without this handler.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(SIGBUS, &default_action, nullptr);
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (LiveMapping& live : g_live) {
    const uintptr_t end = live.end.load(std::memory_order_acquire);
    const uintptr_t begin = live.begin.load(std::memory_order_acquire);
    if (end == 0 || address < begin || address >= end) continue;
    // The file shrank under the mapping: every page from here on is past its
    // end. Zero pages in their place let the access go on; the reader then
    // asks Intact() and fails. mmap is a plain system call, safe here.
    const uintptr_t page = address & ~(PageSize() - 1);
    void* zeros = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros != MAP_FAILED) {
      live.damaged.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  ForwardToPrevious(sig, info, context);
}

void InstallHandler() {
  struct sigaction action {};
  action.sa_sigaction = OnSigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  g_installed = ::sigaction(SIGBUS, &action, &g_previous_action) == 0;
}

}  // namespace

std::unique_ptr<FileMapping> FileMapping::Map(int fd, uint64_t size, std::string path) {
  if (size == 0 || size > static_cast<uint64_t>(SIZE_MAX)) return nullptr;
  std::call_once(g_install_once, InstallHandler);
  if (!g_installed) return nullptr;
  size_t slot = kMaxLiveMappings;
  for (size_t i = 0; i < kMaxLiveMappings; ++i) {
    bool expected = false;
    if (g_live[i].in_use.compare_exchange_strong(expected, true)) { slot = i; break; }
  }
  if (slot == kMaxLiveMappings) return nullptr;
  void* data = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    g_live[slot].in_use.store(false);
    return nullptr;
  }
  // Read ahead of the parser, and drop pages behind it sooner.
  ::madvise(data, static_cast<size_t>(size), MADV_SEQUENTIAL);
  LiveMapping& live = g_live[slot];
  live.damaged.store(false, std::memory_order_relaxed);
  live.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
  live.end.store(reinterpret_cast<uintptr_t>(data) + static_cast<uintptr_t>(size), std::memory_order_release);
  return std::unique_ptr<FileMapping>(new FileMapping(static_cast<char*>(data), size, std::move(path), slot));
}

FileMapping::~FileMapping() {
  LiveMapping& live = g_live[slot_];
  live.end.store(0, std::memory_order_release);
  live.begin.store(0, std::memory_order_release);
  ::munmap(data_, static_cast<size_t>(size_));
  live.in_use.store(false, std::memory_order_release);
}

void FileMapping::ReleaseBefore(uint64_t offset) {
  const uint64_t to = std::min(offset, size_) & ~static_cast<uint64_t>(PageSize() - 1);
  if (to <= released_) return;
  ::madvise(data_ + released_, static_cast<size_t>(to - released_), MADV_DONTNEED);
  released_ = to;
}

Status FileMapping::Intact() const {
  if (!g_live[slot_].damaged.load(std::memory_order_acquire)) return Status::Ok();
  return IoError(path_ + ": the file shrank while it was read (another process truncated or rewrote it); "
                 "read it again once it is complete");
}

}  // namespace pypto::io
