// Phase timings for performance work: with the environment variable
// PYPTO_TIMINGS=1, each PhaseTimer scope prints one line to stderr when it ends:
//
//   pypto timing: graph.nest          wall   123.4 ms  cpu   120.1 ms  rss   180 MB  peak   210 MB
//
// wall = elapsed time of the scope; cpu = process CPU time (user + sys, all
// threads) spent during it, so a parallel phase shows cpu > wall; rss = resident
// memory at the end of the scope; peak = the process's peak resident memory so
// far. Scopes nest (inner lines come first). Off by default: the check is one
// cached getenv, so timers may stay in product code.
#pragma once

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pypto {

class PhaseTimer {
 public:
  explicit PhaseTimer(const char* phase) : phase_(phase) {
    if (!Enabled()) return;
    wall_start_ = Now(CLOCK_MONOTONIC);
    cpu_start_ = Now(CLOCK_PROCESS_CPUTIME_ID);
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() { Stop(); }

  // Ends the scope early (prints once).
  void Stop() {
    if (!Enabled() || stopped_) return;
    stopped_ = true;
    const double wall_ms = (Now(CLOCK_MONOTONIC) - wall_start_) * 1e3;
    const double cpu_ms = (Now(CLOCK_PROCESS_CPUTIME_ID) - cpu_start_) * 1e3;
    std::fprintf(stderr, "pypto timing: %-28s wall %9.1f ms  cpu %9.1f ms  rss %6.0f MB  peak %6.0f MB\n", phase_,
                 wall_ms, cpu_ms, CurrentRssMb(), PeakRssMb());
  }

  static bool Enabled() {
    static const bool enabled = [] {
      const char* value = std::getenv("PYPTO_TIMINGS");
      return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
    }();
    return enabled;
  }

 private:
  static double Now(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  // MB = 10^6 bytes, as in the bench tables.
  static double CurrentRssMb() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
      std::fclose(f);
    }
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
  }
  static double PeakRssMb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6;  // ru_maxrss is in KiB on Linux
  }

  const char* phase_;
  double wall_start_ = 0;
  double cpu_start_ = 0;
  bool stopped_ = false;
};

}  // namespace pypto
