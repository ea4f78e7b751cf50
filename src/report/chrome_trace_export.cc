#include "report/chrome_trace_export.h"


#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "report/analysis_summary.h"
#include "io/json_writer.h"
#include "io/output_file.h"

namespace pypto::report {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
// Integers above 2^53 lose digits in JSON readers that use doubles (all
// browsers, Perfetto's JSON importer); such ids are written as strings.
constexpr int64_t kMaxExactJsonInteger = int64_t{1} << 53;
// Flush the buffer to the sink at about this size.
constexpr size_t kChunkBytes = 1 << 20;
// Sort order of the process rows in the viewer: host, then devices, then the path.
constexpr int kHostSortBase = 0;
constexpr int kDeviceSortBase = 1000;
constexpr int kCriticalPathSortIndex = 1000000;
// Output file mode (before umask is not applied: mkstemp creates 0600).

constexpr std::string_view kLaunchFlowCategory = "ac2g";
constexpr std::string_view kLaunchFlowName = "launch";
constexpr std::string_view kCriticalPathProcessName = "Critical path";

int64_t FloorToWholeSecond(TimeNs ns) {
  int64_t seconds = ns / kNsPerSecond;
  if (ns % kNsPerSecond < 0) --seconds;  // floor, not truncation, for times before the epoch
  return seconds * kNsPerSecond;
}

void KeyId(io::JsonWriter& json, std::string_view key, int64_t id) {
  json.Key(key);
  if (id > kMaxExactJsonInteger || id < -kMaxExactJsonInteger) json.String(std::to_string(id));
  else json.Int(id);
}

// Attribute rows grouped by owner (CSR), for one owner kind.
struct AttributeIndex {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> rows;

  AttributeIndex(const AttributeTable& table, OwnerKind kind, size_t owners) : offsets(owners + 1, 0) {
    for (size_t r = 0; r < table.run_count(); ++r) {
      const AttributeTable::OwnerRun run = table.run(r);
      if (run.kind == kind && run.owner < owners) offsets[run.owner + 1] += static_cast<uint32_t>(run.end - run.begin);
    }
    for (size_t i = 0; i < owners; ++i) offsets[i + 1] += offsets[i];
    rows.resize(offsets[owners]);
    std::vector<uint32_t> next(offsets.begin(), offsets.end() - 1);
    table.ForEachRow([&](size_t i, OwnerKind row_kind, uint32_t owner) {
      if (row_kind == kind && owner < owners) rows[next[owner]++] = static_cast<uint32_t>(i);
    });
  }
};

class TraceWriter {
 public:
  TraceWriter(const OperatorCallGraph& graph, const ChromeTraceOptions& options, const TraceSink& sink)
      : graph_(graph), profile_(graph.profile()), options_(options), sink_(sink), json_(&buffer_) {}

  Status Write() {
    AssignProcessIds();
    PYPTO_RETURN_IF_ERROR(MarkCriticalPath());
    base_ns_ = FloorToWholeSecond(graph_.WholeWindow().start);

    json_.BeginObject();
    json_.KeyString("displayTimeUnit", "ms");
    json_.KeyInt("baseTimeNanoseconds", base_ns_);
    WriteOtherData();
    json_.Key("traceEvents");
    json_.BeginArray();
    WriteMetadataEvents();
    PYPTO_RETURN_IF_ERROR(Flush(false));
    for (uint32_t op = 0; op < profile_.host_ops.size(); ++op) {
      WriteHostOp(op);
      PYPTO_RETURN_IF_ERROR(Flush(false));
    }
    for (uint32_t task = 0; task < profile_.device_tasks.size(); ++task) {
      WriteDeviceTask(task);
      PYPTO_RETURN_IF_ERROR(Flush(false));
    }
    PYPTO_RETURN_IF_ERROR(WriteLaunchFlows());
    WriteCriticalPathSlices();
    json_.EndArray();
    json_.EndObject();
    buffer_.push_back('\n');
    return Flush(true);
  }

 private:
  Status Flush(bool final) {
    if (!final && buffer_.size() < kChunkBytes) return Status::Ok();
    if (buffer_.empty()) return Status::Ok();
    PYPTO_RETURN_IF_ERROR(sink_(buffer_));
    buffer_.clear();
    return Status::Ok();
  }

  // Viewer pids/tids must be numbers; the source tokens may be strings
  // ("Spans", "stream 7") and a host pid may equal a device index. So every
  // process (source pid token, host or device side) gets a number 1..n in
  // order of appearance, and every track its row number + 1 as tid (unique
  // across processes).
  void AssignProcessIds() {
    const TrackTable& tracks = profile_.tracks;
    track_pid_.resize(tracks.size());
    std::map<std::pair<StrId, bool>, int> pid_of_process;
    for (size_t t = 0; t < tracks.size(); ++t) {
      const bool device_side = tracks.kind[t] == TrackKind::kDeviceStream;
      auto [it, inserted] = pid_of_process.try_emplace({tracks.pid_token[t], device_side}, 0);
      if (inserted) {
        it->second = static_cast<int>(processes_.size()) + 1;
        processes_.push_back({static_cast<uint32_t>(t), device_side});
      }
      track_pid_[t] = it->second;
    }
    critical_path_pid_ = static_cast<int>(processes_.size()) + 1;
    critical_path_tid_ = static_cast<int64_t>(tracks.size()) + 1;
  }

  static int64_t TidOf(uint32_t track) { return static_cast<int64_t>(track) + 1; }

  // Device rows are named after the device ("Device 0: NVIDIA A100"): Kineto
  // gives GPU pids the host process name, which would make two rows look alike.
  std::string ProcessName(uint32_t track, bool device_side) const {
    const TrackTable& tracks = profile_.tracks;
    if (device_side && tracks.device[track] >= 0) {
      std::string name = "Device " + std::to_string(tracks.device[track]);
      for (const DeviceRow& device : profile_.devices.rows)
        if (device.index == tracks.device[track] && device.name != kEmptyStr)
          return name + ": " + std::string(profile_.Str(device.name));
      return name;
    }
    std::string_view name = profile_.Str(tracks.process_name[track]);
    if (!name.empty()) return std::string(name);
    return "Process " + std::string(profile_.Str(tracks.pid_token[track]));
  }

  std::string ThreadName(uint32_t track) const {
    const TrackTable& tracks = profile_.tracks;
    std::string_view name = profile_.Str(tracks.name[track]);
    if (!name.empty()) return std::string(name);
    if (tracks.kind[track] == TrackKind::kDeviceStream && tracks.stream[track] >= 0)
      return "Stream " + std::to_string(tracks.stream[track]);
    return "Thread " + std::string(profile_.Str(tracks.tid_token[track]));
  }

  void WriteOtherData() {
    json_.Key("otherData");
    json_.BeginObject();
    json_.KeyString("schema", kChromeTraceSchema);
    json_.KeyString("generator", std::string("pypto ") + PYPTO_VERSION);
    for (const auto& [key, value] : profile_.metadata) json_.KeyString(key, value);
    json_.EndObject();
  }

  void BeginMetadataEvent(std::string_view name, int pid, std::optional<int64_t> tid) {
    json_.BeginObject();
    json_.KeyString("ph", "M");
    json_.KeyString("name", name);
    json_.KeyInt("pid", pid);
    if (tid) json_.KeyInt("tid", *tid);
    json_.KeyInt("ts", 0);
    json_.Key("args");
    json_.BeginObject();
  }

  void EndMetadataEvent() {
    json_.EndObject();
    json_.EndObject();
  }

  void WriteMetadataEvents() {
    int host_rank = 0;
    int device_rank = 0;
    for (size_t p = 0; p < processes_.size(); ++p) {
      const int pid = static_cast<int>(p) + 1;
      BeginMetadataEvent("process_name", pid, std::nullopt);
      json_.KeyString("name", ProcessName(processes_[p].first_track, processes_[p].device_side));
      EndMetadataEvent();
      BeginMetadataEvent("process_sort_index", pid, std::nullopt);
      json_.KeyInt("sort_index", processes_[p].device_side ? kDeviceSortBase + device_rank++ : kHostSortBase + host_rank++);
      EndMetadataEvent();
    }
    for (uint32_t t = 0; t < profile_.tracks.size(); ++t) {
      BeginMetadataEvent("thread_name", track_pid_[t], TidOf(t));
      json_.KeyString("name", ThreadName(t));
      EndMetadataEvent();
      BeginMetadataEvent("thread_sort_index", track_pid_[t], TidOf(t));
      json_.KeyInt("sort_index", t);
      EndMetadataEvent();
    }
    if (!critical_path_.segments.empty()) {
      BeginMetadataEvent("process_name", critical_path_pid_, std::nullopt);
      json_.KeyString("name", kCriticalPathProcessName);
      EndMetadataEvent();
      BeginMetadataEvent("process_sort_index", critical_path_pid_, std::nullopt);
      json_.KeyInt("sort_index", kCriticalPathSortIndex);
      EndMetadataEvent();
      BeginMetadataEvent("thread_name", critical_path_pid_, critical_path_tid_);
      json_.KeyString("name", "segments");
      EndMetadataEvent();
    }
  }

  void BeginCompleteEvent(std::string_view name, std::string_view category, int pid, int64_t tid, TimeNs ts,
                          TimeNs dur) {
    json_.BeginObject();
    json_.KeyString("ph", "X");
    json_.KeyString("cat", category);
    json_.KeyString("name", name);
    json_.KeyInt("pid", pid);
    json_.KeyInt("tid", tid);
    json_.KeyMicrosFromNs("ts", ts - base_ns_);
    json_.KeyMicrosFromNs("dur", dur);
    json_.Key("args");
    json_.BeginObject();
  }

  void EndCompleteEvent() {
    json_.EndObject();
    json_.EndObject();
  }

  void KeyStrIfSet(std::string_view key, StrId id) {
    if (id != kEmptyStr) json_.KeyString(key, profile_.Str(id));
  }

  void KeyIdIfSet(std::string_view key, int64_t id) {
    if (id != kNoId) KeyId(json_, key, id);
  }

  void WriteAttributes(const AttributeIndex& index, uint32_t owner) {
    const AttributeTable& attributes = profile_.attributes;
    for (uint32_t i = index.offsets[owner]; i < index.offsets[owner + 1]; ++i) {
      const uint32_t row = index.rows[i];
      json_.KeyString(profile_.Str(attributes.key(row)), profile_.AttributeText(row));
    }
  }

  void WriteHostOp(uint32_t op) {
    const HostOpTable& ops = profile_.host_ops;
    if (!host_attributes_) host_attributes_.emplace(profile_.attributes, OwnerKind::kHostOp, ops.size());
    const std::string_view category = ops.category[op] != kEmptyStr ? profile_.Str(ops.category[op])
                                                                     : std::string_view(HostOpKindName(ops.kind[op]));
    BeginCompleteEvent(profile_.Str(ops.name[op]), category, track_pid_[ops.track[op]], TidOf(ops.track[op]),
                       ops.ts[op], ops.dur[op]);
    json_.KeyString("kind", HostOpKindName(ops.kind[op]));
    KeyStrIfSet("Input Dims", ops.input_dims[op]);
    KeyStrIfSet("Input type", ops.input_types[op]);
    KeyIdIfSet("correlation", ops.correlation[op]);
    KeyIdIfSet("External id", ops.external_id[op]);
    KeyIdIfSet("Sequence number", ops.sequence_number[op]);
    WriteAttributes(*host_attributes_, op);
    if (host_on_path_[op]) json_.KeyBool("critical_path", true);
    EndCompleteEvent();
  }

  void KeyTriple(std::string_view key, const std::array<int32_t, 3>& value) {
    if (value[0] == 0 && value[1] == 0 && value[2] == 0) return;
    json_.Key(key);
    json_.BeginArray();
    for (int32_t v : value) json_.Int(v);
    json_.EndArray();
  }

  void WriteDeviceTask(uint32_t task) {
    const DeviceTaskTable& tasks = profile_.device_tasks;
    if (!task_attributes_) task_attributes_.emplace(profile_.attributes, OwnerKind::kDeviceTask, tasks.size());
    const uint32_t track = tasks.track[task];
    const std::string_view category = tasks.category[task] != kEmptyStr
                                          ? profile_.Str(tasks.category[task])
                                          : std::string_view(DeviceTaskKindName(tasks.kind[task]));
    BeginCompleteEvent(profile_.Str(tasks.name[task]), category, track_pid_[track], TidOf(track), tasks.ts[task],
                       tasks.dur[task]);
    json_.KeyString("kind", DeviceTaskKindName(tasks.kind[task]));
    if (profile_.tracks.device[track] >= 0) json_.KeyInt("device", profile_.tracks.device[track]);
    if (profile_.tracks.stream[track] >= 0) json_.KeyInt("stream", profile_.tracks.stream[track]);
    KeyIdIfSet("correlation", tasks.correlation[task]);
    KeyIdIfSet("External id", tasks.external_id[task]);
    KeyTriple("grid", tasks.grid(task));
    KeyTriple("block", tasks.block(task));
    if (tasks.bytes[task] >= 0) json_.KeyInt("bytes", tasks.bytes[task]);
    KeyStrIfSet("core_type", tasks.core_type[task]);
    if (tasks.block_dim(task) >= 0) json_.KeyInt("block_dim", tasks.block_dim(task));
    if (tasks.mix_block_dim(task) >= 0) json_.KeyInt("mix_block_dim", tasks.mix_block_dim(task));
    KeyStrIfSet("op_type", tasks.op_type(task));
    KeyStrIfSet("input_shapes", tasks.input_shapes(task));
    KeyStrIfSet("input_types", tasks.input_types(task));
    KeyStrIfSet("input_formats", tasks.input_formats(task));
    KeyStrIfSet("output_shapes", tasks.output_shapes(task));
    KeyStrIfSet("output_types", tasks.output_types(task));
    KeyStrIfSet("output_formats", tasks.output_formats(task));
    if (graph_.IsGraphLaunched(task)) json_.KeyBool("graph_launched", true);
    json_.KeyString("link", TaskLinkName(graph_.LinkOf(task)));
    const int32_t op = graph_.OperatorOf(task);
    if (op != kNoIndex) json_.KeyString("operator", profile_.Str(profile_.host_ops.name[op]));
    WriteAttributes(*task_attributes_, task);
    if (task_on_path_[task]) json_.KeyBool("critical_path", true);
    EndCompleteEvent();
  }

  void WriteFlowEvent(char phase, uint64_t id, uint32_t track, TimeNs ts) {
    json_.BeginObject();
    json_.KeyString("ph", std::string_view(&phase, 1));
    json_.KeyUint("id", id);
    json_.KeyString("cat", kLaunchFlowCategory);
    json_.KeyString("name", kLaunchFlowName);
    json_.KeyInt("pid", track_pid_[track]);
    json_.KeyInt("tid", TidOf(track));
    json_.KeyMicrosFromNs("ts", ts - base_ns_);
    // The flow end binds to the enclosing slice (the device task), Kineto style.
    if (phase == 'f') json_.KeyString("bp", "e");
    json_.EndObject();
  }

  Status WriteLaunchFlows() {
    const DeviceTaskTable& tasks = profile_.device_tasks;
    const HostOpTable& ops = profile_.host_ops;
    uint64_t next_id = 1;  // renumbered: source ids may exceed 2^53
    for (uint32_t task = 0; task < tasks.size(); ++task) {
      const int32_t launcher = graph_.LauncherOf(task);
      if (launcher == kNoIndex) continue;
      const uint64_t id = next_id++;
      WriteFlowEvent('s', id, ops.track[launcher], ops.ts[launcher]);
      WriteFlowEvent('f', id, tasks.track[task], tasks.ts[task]);
      PYPTO_RETURN_IF_ERROR(Flush(false));
    }
    return Status::Ok();
  }

  Status MarkCriticalPath() {
    host_on_path_.assign(profile_.host_ops.size(), 0);
    task_on_path_.assign(profile_.device_tasks.size(), 0);
    if (!options_.mark_critical_path) return Status::Ok();
    PYPTO_ASSIGN_OR_RETURN(critical_path_, graph_.ComputeCriticalPath(options_.critical_path_step));
    for (const PathSegment& segment : critical_path_.segments) {
      if (segment.host_op != kNoIndex) host_on_path_[segment.host_op] = 1;
      if (segment.device_task != kNoIndex) task_on_path_[segment.device_task] = 1;
    }
    return Status::Ok();
  }

  void WriteCriticalPathSlices() {
    for (const PathSegment& segment : critical_path_.segments) {
      const std::string_view kind = PathSegmentKindName(segment.kind);
      std::string name(kind);
      std::string_view subject;
      if (segment.device_task != kNoIndex) subject = profile_.Str(profile_.device_tasks.name[segment.device_task]);
      else if (segment.host_op != kNoIndex) subject = profile_.Str(profile_.host_ops.name[segment.host_op]);
      if (!subject.empty()) name = std::string(kind) + ": " + std::string(subject);
      BeginCompleteEvent(name, kind, critical_path_pid_, critical_path_tid_, segment.start, segment.dur);
      json_.KeyString("segment_kind", kind);
      if (segment.host_op != kNoIndex) json_.KeyString("host_op", profile_.Str(profile_.host_ops.name[segment.host_op]));
      if (segment.device_task != kNoIndex)
        json_.KeyString("device_task", profile_.Str(profile_.device_tasks.name[segment.device_task]));
      json_.KeyBool("critical_path", true);
      EndCompleteEvent();
    }
  }

  struct Process {
    uint32_t first_track;
    bool device_side;
  };

  const OperatorCallGraph& graph_;
  const Profile& profile_;
  const ChromeTraceOptions& options_;
  const TraceSink& sink_;
  std::string buffer_;
  io::JsonWriter json_;
  TimeNs base_ns_ = 0;
  std::vector<Process> processes_;
  std::vector<int> track_pid_;
  int critical_path_pid_ = 0;
  int64_t critical_path_tid_ = 0;
  CriticalPath critical_path_;
  std::vector<uint8_t> host_on_path_;
  std::vector<uint8_t> task_on_path_;
  std::optional<AttributeIndex> host_attributes_;
  std::optional<AttributeIndex> task_attributes_;
};

}  // namespace

Status WriteChromeTrace(const OperatorCallGraph& graph, const ChromeTraceOptions& options, const TraceSink& sink) {
  TraceWriter writer(graph, options, sink);
  return writer.Write();
}

StatusOr<std::string> ChromeTraceToString(const OperatorCallGraph& graph, const ChromeTraceOptions& options) {
  std::string text;
  PYPTO_RETURN_IF_ERROR(WriteChromeTrace(graph, options, [&](std::string_view chunk) {
    text.append(chunk);
    return Status::Ok();
  }));
  return text;
}

Status ExportChromeTraceFile(const OperatorCallGraph& graph, const ChromeTraceOptions& options,
                             const std::string& path, bool overwrite) {
  return io::WriteOutputFile(path, overwrite, [&](int fd, const std::string&) {
    return WriteChromeTrace(graph, options, [&](std::string_view chunk) { return io::WriteAllToFd(fd, chunk, path); });
  });
}

}  // namespace pypto::report
