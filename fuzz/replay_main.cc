// A plain main() for compilers without libFuzzer (gcc): feeds every file named
// on the command line, or found under a named directory, to the target's
// LLVMFuzzerTestOneInput once. Arguments starting with '-' (libFuzzer flags
// such as -runs=0) are ignored, so ctest runs both builds the same way.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Seconds one input may take before the replay fails as a hang. 60 s: the
// slowest seed takes well under a second in the ASan build; libFuzzer's own
// -timeout in `make fuzz` is 10 s.
constexpr unsigned kReplayTimeoutSeconds = 60;

const char* g_current = "";

void OnAlarm(int) {
  const char prefix[] = "replay: TIMEOUT (hang) on input ";
  (void)!::write(2, prefix, sizeof(prefix) - 1);
  (void)!::write(2, g_current, std::char_traits<char>::length(g_current));
  (void)!::write(2, "\n", 1);
  ::_exit(70);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path().string());
    } else if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", arg.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs (give corpus directories or files)\n");
    return 2;
  }
  ::signal(SIGALRM, OnAlarm);
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    g_current = file.c_str();
    ::alarm(kReplayTimeoutSeconds);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ::alarm(0);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("replay: %zu inputs, 0 crashes, 0 timeouts, %.2f s\n", files.size(), seconds);
  return 0;
}
