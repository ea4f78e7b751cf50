// Chrome trace / Perfetto export of any profile pypto reads (Python:
// OperatorCallGraph.export_to_chrome_trace()). The output is a JSON object
// {"traceEvents": [...], ...} that chrome://tracing and ui.perfetto.dev load:
//   - M events name every process (host process, device) and thread (host
//     thread, device stream);
//   - host ops and device tasks are X events; their args keep what the model
//     knows (shapes, correlation, External id, core type, block dim …);
//   - launch links (graph: LauncherOf) are s/f flow pairs, renumbered 1..n so
//     every id is below 2^53 (JSON readers hold numbers as doubles);
//   - the critical path is a separate "Critical path" process whose slices
//     mirror the path segments, and its events carry args.critical_path = true.
// Times are microseconds with exactly three fraction digits, printed from the
// int64 ns of the model by integer arithmetic, relative to the top-level
// "baseTimeNanoseconds" (the profile start rounded down to a whole second, as
// Kineto does), so that viewers reading doubles keep ns precision.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "graph/call_graph.h"

namespace pypto::report {

inline constexpr char kChromeTraceSchema[] = "pypto.trace/1";

struct ChromeTraceOptions {
  bool mark_critical_path = true;
  // Index into graph.Steps() whose critical path is marked; empty = whole profile.
  std::optional<size_t> critical_path_step;
};

// Receives the trace text in order, in chunks of about a megabyte.
using TraceSink = std::function<Status(std::string_view chunk)>;

Status WriteChromeTrace(const OperatorCallGraph& graph, const ChromeTraceOptions& options, const TraceSink& sink);

// The whole trace in memory (tests, small profiles).
StatusOr<std::string> ChromeTraceToString(const OperatorCallGraph& graph, const ChromeTraceOptions& options = {});

// Writes the trace to `path`. Refuses (kInvalidArgument) to replace an existing
// file unless `overwrite`. The text goes to a temporary file next to `path`
// that is moved into place at the end, so a failed export leaves no partial
// file and an existing file is never half-overwritten.
Status ExportChromeTraceFile(const OperatorCallGraph& graph, const ChromeTraceOptions& options,
                             const std::string& path, bool overwrite);

}  // namespace pypto::report
