// Truncation and mutation sweep over every real fixture (docs/reliability.md).
//
// For each fixture file the sweep writes damaged variants into a private
// temporary copy of the fixture's folder and loads it through LoadProfile (the
// path `pypto analyze` takes), then builds the call graph on whatever loaded:
//   - truncation: the content cut at N offsets spread evenly over the file
//     (for .gz fixtures the decompressed text is cut and written plain; the
//     compressed bytes are also cut at a few offsets to exercise the gzip path);
//   - mutation: random byte edits (seeded): a random byte, a bit flip, a
//     structural character (quote, brace, comma, newline, NUL, 0xFF ...), an
//     inserted or a deleted byte; several edits per run.
// Every run must end either in a loaded profile or in an error that names the
// file; a truncation that loads must count data loss unless the cut left a
// complete document (only trailing whitespace removed, or a CSV cut on a line
// end). Crashes and hangs (a per-run watchdog) fail the run. The figures (runs,
// ok-with-loss, ok-clean, errors, distinct error reasons) are printed.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "graph/call_graph.h"
#include "importers/detect.h"
#include "io/file.h"

namespace fs = std::filesystem;
using namespace pypto;

namespace {

// Seconds one run (load + graph of one damaged input) may take before the
// sweep fails it as a hang. The slowest fixture (35 MB of JSON) loads in about
// a second in the release build and ~10 s under ASan; 120 s is far above both.
constexpr int kPerRunTimeoutSeconds = 120;

struct Config {
  std::string fixtures;
  int cuts = 1000;             // truncation offsets per fixture
  int gz_cuts = 50;            // cuts of the compressed bytes per .gz fixture
  int edits = 10000;           // byte edits per fixture (small fixtures)
  int edits_per_run = 5;       // edits applied together in one mutation run
  uint64_t big_bytes = 4u << 20;  // fixtures above this size get `big_edits`
  int big_edits = 500;         // byte edits per big fixture (each run parses the whole file)
  uint64_t seed = 20240601;
  std::string only;            // substring filter on fixture paths
  // Bytes each file's truncation runs (and, separately, its mutation runs)
  // may load in all, 0 = no cap. A run loads the whole target (a multi-file
  // unit loads every file of it), so the run count of a file is capped at
  // budget / target bytes, never below `min_runs`: the sweep's time then grows
  // with the number of fixtures, not with their size, and stays inside the CI
  // budget as fixtures are added. Deterministic (sizes, not timings).
  uint64_t budget_bytes = 0;
  int min_runs = 100;
};

// --- watchdog and crash reporting ---------------------------------------------

std::mutex g_mutex;
std::condition_variable g_cv;
std::string g_current;  // description of the run in progress
uint64_t g_generation = 0;
bool g_running = false;
bool g_stop = false;
char g_current_c[512] = "";

void CrashHandler(int sig) {
  const char prefix[] = "\nfixture_sweep: CRASH (signal) during run: ";
  (void)!::write(2, prefix, sizeof(prefix) - 1);
  (void)!::write(2, g_current_c, std::strlen(g_current_c));
  (void)!::write(2, "\n", 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void Watchdog() {
  std::unique_lock<std::mutex> lock(g_mutex);
  while (!g_stop) {
    if (!g_running) {
      g_cv.wait(lock);
      continue;
    }
    const uint64_t gen = g_generation;
    if (!g_cv.wait_for(lock, std::chrono::seconds(kPerRunTimeoutSeconds),
                       [&] { return g_stop || !g_running || g_generation != gen; })) {
      std::fprintf(stderr, "\nfixture_sweep: HANG: run exceeded %d s: %s\n", kPerRunTimeoutSeconds, g_current.c_str());
      std::_Exit(3);
    }
  }
}

void BeginRun(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_current = what;
  std::snprintf(g_current_c, sizeof(g_current_c), "%s", what.c_str());
  ++g_generation;
  g_running = true;
  g_cv.notify_all();
}

void EndRun() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_running = false;
  g_cv.notify_all();
}

// --- helpers ---------------------------------------------------------------------

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteRaw(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) {
    std::fprintf(stderr, "fixture_sweep: cannot write %s\n", path.c_str());
    std::exit(2);
  }
}

// An error reason with the run-specific parts (paths, numbers) replaced, so
// that distinct reasons can be counted.
std::string NormalizeReason(std::string message, const std::string& temp_root) {
  for (size_t at; (at = message.find(temp_root)) != std::string::npos;) message.replace(at, temp_root.size(), "<dir>");
  static const std::regex kNumber("[0-9]+");
  message = std::regex_replace(message, kNumber, "N");
  if (message.size() > 160) message = message.substr(0, 160) + "...";
  return message;
}

bool HasLocation(const std::string& message) {
  static const std::regex kPlace("(byte|line|offset|row|position) [0-9]+");
  return std::regex_search(message, kPlace);
}

bool IsCsvName(const std::string& name) { return EndsWith(name, ".csv"); }

bool OnlyWhitespace(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

// Bytes a load of `path` parses: a .gz file's uncompressed size (its gzip
// trailer's ISIZE, RFC 1952 §2.3.1: the size mod 2^32, enough for fixtures), else its size.
uint64_t LoadedBytes(const std::string& path, uint64_t file_size) {
  if (!EndsWith(path, ".gz") || file_size < 4) return file_size;
  std::ifstream in(path, std::ios::binary);
  in.seekg(-4, std::ios::end);
  unsigned char isize[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(isize), 4);
  if (!in) return file_size;
  const uint64_t size = isize[0] | (isize[1] << 8) | (isize[2] << 16) | (uint64_t{isize[3]} << 24);
  return std::max<uint64_t>(size, file_size);
}

// --- one fixture -----------------------------------------------------------------

struct Tally {
  uint64_t runs = 0, ok_loss = 0, ok_clean = 0, errors = 0, errors_with_place = 0;
  double max_ms = 0, seconds = 0;
  void Add(const Tally& o) {
    runs += o.runs, ok_loss += o.ok_loss, ok_clean += o.ok_clean, errors += o.errors;
    errors_with_place += o.errors_with_place, max_ms = std::max(max_ms, o.max_ms), seconds += o.seconds;
  }
};

struct Sweep {
  Config config;
  std::string temp_root;
  std::map<std::string, uint64_t> reasons;  // normalized error -> runs
  std::vector<std::string> failures;
  std::mt19937_64 rng;

  enum class Outcome { kOkLoss, kOkClean, kError };

  // Data loss of the undamaged input: a damaged run "counts loss" when its
  // counters differ from these (a fixture may have loss of its own).
  std::map<std::string, std::pair<uint64_t, std::string>> baseline_loss;  // reason -> (count, first place)

  // Loads `target`, builds the graph; returns the outcome and checks the error text.
  Outcome LoadOnce(const std::string& target, const std::string& file_name, const std::string& what, Tally* t) {
    BeginRun(what);
    const auto start = std::chrono::steady_clock::now();
    StatusOr<Profile> profile = LoadProfile(target);
    Outcome outcome;
    if (profile.ok()) {
      auto graph = OperatorCallGraph::Build(*profile);
      (void)graph;
      std::map<std::string, std::pair<uint64_t, std::string>> loss;
      for (const auto& [reason, entry] : profile->data_loss) loss[reason] = {entry.count, entry.first_location};
      outcome = loss != baseline_loss ? Outcome::kOkLoss : Outcome::kOkClean;
    } else {
      outcome = Outcome::kError;
      const std::string message = profile.status().message();
      if (message.empty()) failures.push_back(what + ": error with an empty message");
      else if (message.find(file_name) == std::string::npos && message.find(target) == std::string::npos)
        failures.push_back(what + ": error does not name the file: " + message);
      if (HasLocation(message)) ++t->errors_with_place;
      ++reasons[NormalizeReason(message, temp_root)];
    }
    EndRun();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    t->max_ms = std::max(t->max_ms, ms);
    t->seconds += ms / 1000;
    ++t->runs;
    if (outcome == Outcome::kOkLoss) ++t->ok_loss;
    if (outcome == Outcome::kOkClean) ++t->ok_clean;
    if (outcome == Outcome::kError) ++t->errors;
    return outcome;
  }

  // The damaged file: `file` (a path inside the temp copy); `target` what LoadProfile gets.
  // Runs allowed for `wanted` runs of a target of `target_bytes` (Config::budget_bytes).
  int CappedRuns(int wanted, uint64_t target_bytes) const {
    if (config.budget_bytes == 0 || target_bytes == 0) return wanted;
    const uint64_t cap = std::max<uint64_t>(config.budget_bytes / target_bytes, static_cast<uint64_t>(config.min_runs));
    return static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(wanted), cap));
  }

  void SweepFile(const std::string& fixture_rel, const std::string& file, const std::string& target, bool gz,
                 uint64_t target_bytes, Tally* trunc, Tally* mut) {
    const std::string original = ReadRaw(file);
    std::string content = original;
    if (gz) {
      auto text = io::ReadWholeFile(file);
      if (!text.ok()) {
        failures.push_back(fixture_rel + ": cannot decompress: " + text.status().ToString());
        return;
      }
      content = std::move(*text);
    }
    const std::string name = fs::path(file).filename().string();
    const bool csv = IsCsvName(name);

    // Baseline: the undamaged fixture must load; its own data loss is the reference.
    WriteRaw(file, content);
    if (auto undamaged = LoadProfile(target); undamaged.ok()) {
      baseline_loss.clear();
      for (const auto& [reason, entry] : undamaged->data_loss)
        baseline_loss[reason] = {entry.count, entry.first_location};
    } else {
      failures.push_back(fixture_rel + ": the undamaged fixture does not load: " + undamaged.status().ToString());
    }

    // Truncations, evenly spread over [0, size).
    const size_t size = content.size();
    // A single-file target loads its (decompressed) content.
    if (target == file) target_bytes = size;
    const int cuts = static_cast<int>(std::min<size_t>(CappedRuns(config.cuts, target_bytes), size));
    for (int i = 0; i < cuts; ++i) {
      const size_t at = static_cast<size_t>((static_cast<unsigned __int128>(size) * i) / cuts);
      WriteRaw(file, content.substr(0, at));
      const std::string what = fixture_rel + " cut at byte " + std::to_string(at) + " of " + std::to_string(size);
      if (LoadOnce(target, name, what, trunc) == Outcome::kOkClean) {
        const std::string_view rest(content.data() + at, size - at);
        // Complete documents: only trailing whitespace cut; a CSV cut at a line
        // end; a CSV cut inside the last cell of a row (writers may omit the
        // final line end -- one fixture does -- so a shorter last cell cannot
        // be told from a whole one).
        const std::string_view line_rest = rest.substr(0, rest.find('\n'));
        const bool in_last_cell = line_rest.find_first_of(",\"") == std::string_view::npos;
        const bool complete = OnlyWhitespace(rest) || (csv && (at == 0 || content[at - 1] == '\n' || in_last_cell));
        if (!complete) failures.push_back(what + ": loaded without counting any data loss");
      }
    }
    // Cuts of the compressed bytes (gzip stream ends early).
    if (gz) {
      const int gz_cuts = CappedRuns(config.gz_cuts, target_bytes);
      for (int i = 1; i <= gz_cuts; ++i) {
        const size_t at = original.size() * i / (gz_cuts + 1);
        WriteRaw(file, original.substr(0, at));
        const std::string what = fixture_rel + " gzip cut at byte " + std::to_string(at);
        if (LoadOnce(target, name, what, trunc) == Outcome::kOkClean)
          failures.push_back(what + ": loaded without counting any data loss");
      }
    }

    // Mutations.
    static constexpr char kSpecial[] = {'"', '{', '}', '[', ']', ',', ':', '\\', '\n', '\r', '\0', '\xff', '\xc3',
                                        '0', '9', '-', '.', 'e', 'N', ' ', '\t', '\x01', '\''};
    const int edits = size > config.big_bytes ? config.big_edits : config.edits;
    const int runs = CappedRuns((edits + config.edits_per_run - 1) / config.edits_per_run, target_bytes);
    for (int r = 0; r < runs && size > 0; ++r) {
      std::string data = content;
      std::string what = fixture_rel + " edits";
      for (int e = 0; e < config.edits_per_run && !data.empty(); ++e) {
        const size_t at = rng() % data.size();
        switch (rng() % 5) {
          case 0: data[at] = static_cast<char>(rng() & 0xff); what += " set@"; break;
          case 1: data[at] = static_cast<char>(data[at] ^ (1u << (rng() % 8))); what += " flip@"; break;
          case 2: data[at] = kSpecial[rng() % sizeof(kSpecial)]; what += " special@"; break;
          case 3: data.insert(data.begin() + static_cast<ptrdiff_t>(at), kSpecial[rng() % sizeof(kSpecial)]); what += " insert@"; break;
          default: data.erase(at, 1); what += " delete@"; break;
        }
        what += std::to_string(at);
      }
      WriteRaw(file, data);
      LoadOnce(target, name, what, mut);
    }
    WriteRaw(file, original);
  }
};

void PrintTally(const char* label, const std::string& name, const Tally& t) {
  std::printf("%-10s %-72s runs %6llu  ok-with-loss %6llu  ok-clean %5llu  errors %6llu (with place %6llu)  "
              "max %5.0f ms  %6.1f s\n",
              label, name.c_str(), (unsigned long long)t.runs, (unsigned long long)t.ok_loss,
              (unsigned long long)t.ok_clean, (unsigned long long)t.errors, (unsigned long long)t.errors_with_place,
              t.max_ms, t.seconds);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 && arg.size() > n && arg[n] == '=' ? arg.c_str() + n + 1 : nullptr;
    };
    if (const char* v = value("--fixtures")) config.fixtures = v;
    else if (const char* v = value("--cuts")) config.cuts = std::atoi(v);
    else if (const char* v = value("--gz-cuts")) config.gz_cuts = std::atoi(v);
    else if (const char* v = value("--edits")) config.edits = std::atoi(v);
    else if (const char* v = value("--big-edits")) config.big_edits = std::atoi(v);
    else if (const char* v = value("--edits-per-run")) config.edits_per_run = std::max(1, std::atoi(v));
    else if (const char* v = value("--seed")) config.seed = std::strtoull(v, nullptr, 10);
    else if (const char* v = value("--only")) config.only = v;
    else if (const char* v = value("--budget-mb")) config.budget_bytes = std::strtoull(v, nullptr, 10) << 20;
    else if (const char* v = value("--min-runs")) config.min_runs = std::max(1, std::atoi(v));
    else {
      std::fprintf(stderr,
                   "usage: fixture_sweep --fixtures=DIR [--cuts=N] [--gz-cuts=N] [--edits=N] [--big-edits=N]\n"
                   "                     [--edits-per-run=N] [--seed=N] [--only=SUBSTRING]\n"
                   "                     [--budget-mb=N] [--min-runs=N]\n"
                   "--budget-mb caps each file's truncation runs and mutation runs at N MB of target loaded\n"
                   "(at least --min-runs each, default 100); 0 = no cap\n");
      return 2;
    }
  }
  if (config.fixtures.empty() || !fs::is_directory(config.fixtures)) {
    std::fprintf(stderr, "fixture_sweep: --fixtures=%s is not a directory\n", config.fixtures.c_str());
    return 2;
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, CrashHandler);
  std::thread watchdog(Watchdog);

  Sweep sweep;
  sweep.config = config;
  sweep.rng.seed(config.seed);
  std::string pattern = (fs::temp_directory_path() / "pypto-sweep.XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::fprintf(stderr, "fixture_sweep: cannot create a temporary directory\n");
    return 2;
  }
  sweep.temp_root = pattern;

  // Units: fixtures/<kind>/<name>/ folders. A folder with one file is loaded as
  // that file; a folder with several (an Ascend run) is loaded as a directory.
  std::vector<fs::path> units;
  for (const auto& kind : fs::directory_iterator(config.fixtures))
    if (kind.is_directory())
      for (const auto& unit : fs::directory_iterator(kind.path()))
        if (unit.is_directory()) units.push_back(unit.path());
  std::sort(units.begin(), units.end());

  const auto start = std::chrono::steady_clock::now();
  Tally all_trunc, all_mut;
  for (const fs::path& unit : units) {
    const std::string unit_rel = fs::relative(unit, config.fixtures).string();
    const fs::path copy = fs::path(sweep.temp_root) / unit.filename();
    fs::copy(unit, copy, fs::copy_options::recursive);
    std::vector<fs::path> files;
    uint64_t unit_bytes = 0;
    for (const auto& f : fs::recursive_directory_iterator(copy))
      if (f.is_regular_file()) {
        files.push_back(f.path());
        unit_bytes += LoadedBytes(f.path().string(), f.file_size());
      }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const std::string name = file.filename().string();
      if (EndsWith(name, "-shm") || EndsWith(name, "-wal")) continue;  // SQLite side files (immutable open ignores them)
      const std::string rel = unit_rel + "/" + fs::relative(file, copy).string();
      if (!config.only.empty() && rel.find(config.only) == std::string::npos) continue;
      const std::string target = files.size() == 1 ? file.string() : copy.string();
      Tally trunc, mut;
      sweep.SweepFile(rel, file.string(), target, EndsWith(name, ".gz"), unit_bytes, &trunc, &mut);
      PrintTally("truncation", rel, trunc);
      PrintTally("mutation", rel, mut);
      std::fflush(stdout);
      all_trunc.Add(trunc);
      all_mut.Add(mut);
    }
    fs::remove_all(copy);
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_stop = true;
    g_cv.notify_all();
  }
  watchdog.join();
  fs::remove_all(sweep.temp_root);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  PrintTally("TRUNCATION", "all fixtures", all_trunc);
  PrintTally("MUTATION", "all fixtures", all_mut);
  std::printf("edits per mutation run: %d; seed %llu; budget %llu MB per file and kind (min %d runs); %.1f s\n",
              config.edits_per_run, (unsigned long long)config.seed, (unsigned long long)(config.budget_bytes >> 20),
              config.min_runs, seconds);
  std::printf("distinct error reasons: %zu\n", sweep.reasons.size());
  std::vector<std::pair<uint64_t, std::string>> by_count;
  for (const auto& [reason, n] : sweep.reasons) by_count.emplace_back(n, reason);
  std::sort(by_count.rbegin(), by_count.rend());
  for (const auto& [n, reason] : by_count) std::printf("  %7llu  %s\n", (unsigned long long)n, reason.c_str());
  if (!sweep.failures.empty()) {
    std::printf("FAILURES: %zu\n", sweep.failures.size());
    for (size_t i = 0; i < sweep.failures.size() && i < 50; ++i) std::printf("  %s\n", sweep.failures[i].c_str());
    return 1;
  }
  std::printf("no crash, no hang, every error names its file\n");
  return 0;
}
