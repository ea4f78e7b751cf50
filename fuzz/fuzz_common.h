// Shared plumbing of the fuzz targets (see docs/reliability.md). The importers
// read files through io:: (no-follow opens, size caps), so a target writes its
// input bytes to a file in a private temporary directory and imports that file:
// the bytes take exactly the path a user's file takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "importers/importer.h"

namespace pypto::fuzz {

// Largest input a target looks at, bytes. libFuzzer's default -max_len is 4096
// and the seeds are below 8 KiB; 1 MiB keeps a replayed regression input whole
// while bounding the time one input can take.
inline constexpr size_t kMaxFuzzInputBytes = 1u << 20;

// Writes `data` to `<private temp dir>/<file_name>` (created once per process,
// removed at exit) and returns the path. Aborts if the file cannot be written:
// a fuzzer that silently tests nothing is worse than one that stops.
std::string WriteInput(const uint8_t* data, size_t size, std::string_view file_name);

// Import options for fuzzing: the production defaults (the limits under test
// are the ones users get), nothing forced.
ImportOptions FuzzImportOptions();

// Aborts with `what` when `text` is not one valid JSON document (the renderers'
// output must always parse back, whatever the input held).
void RequireValidJson(std::string_view text, const char* what);

// The graph + report path on a loaded profile: builds the call graph, the
// analysis summary, the text and JSON reports and the Chrome trace, and checks
// that both JSON outputs parse. Errors from the graph/summary are allowed (they
// are Status values); crashes and invalid JSON are not.
void RunGraphAndReports(Profile& profile);

}  // namespace pypto::fuzz
