#include "fuzz/fuzz_common.h"

#include <fcntl.h>
#include <unistd.h>

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "graph/call_graph.h"
#include "report/analysis_json.h"
#include "report/analysis_summary.h"
#include "report/analysis_text.h"
#include "report/chrome_trace_export.h"

namespace pypto::fuzz {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::abort();
}

std::string& TempDir() {
  static std::string dir;
  return dir;
}

void RemoveTempDir() {
  std::error_code ec;
  if (!TempDir().empty()) std::filesystem::remove_all(TempDir(), ec);
}

const std::string& EnsureTempDir() {
  std::string& dir = TempDir();
  if (dir.empty()) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/pypto-fuzz.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) Die("cannot create a temporary directory under " + pattern);
    dir = pattern;
    std::atexit(RemoveTempDir);
  }
  return dir;
}

}  // namespace

std::string WriteInput(const uint8_t* data, size_t size, std::string_view file_name) {
  const std::string path = EnsureTempDir() + "/" + std::string(file_name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) Die("cannot write " + path);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) Die("short write to " + path);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return path;
}

ImportOptions FuzzImportOptions() { return ImportOptions{}; }

void RequireValidJson(std::string_view text, const char* what) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  if (auto error = parser.parse(padded).get(root); error)
    Die(std::string(what) + " is not valid JSON: " + simdjson::error_message(error));
}

void RunGraphAndReports(Profile& profile) {
  auto graph = OperatorCallGraph::Build(profile);
  if (!graph.ok()) return;
  auto summary = report::SummarizeAnalysis(*graph);
  if (summary.ok()) {
    RequireValidJson(report::RenderAnalysisJson(*summary), "analyze --json output");
    const std::string text = report::RenderAnalysisText(*summary);
    if (text.empty()) Die("analyze text output is empty");
  }
  auto trace = report::ChromeTraceToString(*graph);
  if (trace.ok()) RequireValidJson(*trace, "Chrome trace export");
}

}  // namespace pypto::fuzz
