#include "importers/ascend_trace_view/ascend_trace_view.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/adaptive_sort.h"
#include "core/parallel.h"
#include "importers/common/ascend_vocabulary.h"
#include "importers/common/json_stream.h"
#include "importers/common/number_text.h"
#include "importers/common/staged_rows.h"
#include "io/file.h"
#include "model/phase_timer.h"

namespace pypto {
namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kImporterName = "ascend-trace-view";

// Flow binding looks back at most this many events on a thread for the slice
// enclosing the flow's timestamp (Chrome "bp":"e" semantics). In the 2024
// fixture every flow start lies in one of its 8 nearest preceding slices;
// 512 bounds the work on pathological input.
constexpr size_t kMaxFlowBindLookback = 512;
// Flows bound per work item when binding runs on several threads (LinkFlows):
// 4096, so that taking an item (one atomic add) costs nothing against its
// binary searches, and a 300 MB trace's ~250k flows still make ~60 items.
constexpr size_t kFlowBindChunk = 4096;
// A launch flow whose host side starts more than this after its task (ns) is
// taken as clock skew, not as the launch (LinkFlows). 1 µs: the timestamps'
// resolution in trace_view (µs with 3 decimals, rounding on both clocks).
constexpr int64_t kFlowSkewToleranceNs = 1000;
// An HCCL "Plane k" sub-task whose start and end each lie within this (ns) of
// an Ascend Hardware task of the same device with the same name or task type
// is that task written twice (Level1 timelines: "Notify_Wait" under HCCL,
// "Notify Wait" under Ascend Hardware): it counts once. 1 µs, the resolution
// of trace_view times, as above; both rows come from one device record.
constexpr int64_t kDuplicateTaskToleranceNs = 1000;
// Table capacity reserved before pass 2, from the file's size, so that the
// columns do not double-and-copy while a large trace is read (each doubling
// holds the old and the new copy at once: 31 MB of the 207 MB peak on a
// 300 MB generated trace, MB of 10^6 bytes). Average bytes per event: 173 in the 2024 fixture
// (635,433 B / 3,670 events), 208 in bench/gen_ascend_trace_view; the lower
// figure, so that the reservation overshoots (capacity never touched is not
// resident). A gzip file's text is estimated as the Kineto importer's is
// (json_stream::EstimatedTextBytes).
constexpr uint64_t kTypicalBytesPerEvent = 170;
// Rows per event, rounded up from the 2024 fixture and the generator:
// host ops 38 % / 41 %, device tasks 7.5 % / 9.8 %, flow rows 39 % / 36 %,
// attribute rows 0.83 / 1.76 per event.
constexpr double kHostOpsPerEvent = 0.45;
constexpr double kDeviceTasksPerEvent = 0.12;
constexpr double kFlowRowsPerEvent = 0.42;
constexpr double kAttributeRowsPerEvent = 1.9;

bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// ------------------------------------------------------------------ events
struct Arg {
  std::string_view key;
  std::string_view text;  // string content, or the raw JSON of a number/bool/array/object
  od::json_type type;
};

struct EventFields {
  char ph = 0;
  std::string_view name, cat, pid, tid, ts, dur, id;
  bool has_pid = false, has_tid = false, has_id = false, id_is_string = false;
};

struct Event : EventFields {
  std::span<const Arg> args;

  void Clear() { *this = Event{}; }
  const Arg* FindArg(std::string_view key) const {
    for (const Arg& a : args)
      if (a.key == key) return &a;
    return nullptr;
  }
};

// Reads a scalar as text: string content, or the trimmed raw token otherwise.
simdjson::error_code ScalarText(od::value& v, std::string_view* out, od::json_type* type_out) {
  od::json_type type;
  auto err = v.type().get(type);
  if (err) return err;
  if (type_out) *type_out = type;
  switch (type) {
    case od::json_type::string:
      return v.get_string().get(*out);
    case od::json_type::array: {
      od::array a;
      if ((err = v.get_array().get(a))) return err;
      return a.raw_json().get(*out);
    }
    case od::json_type::object: {
      od::object o;
      if ((err = v.get_object().get(o))) return err;
      return o.raw_json().get(*out);
    }
    default: {
      *out = json_stream::TrimToken(v.raw_json_token());
      return simdjson::SUCCESS;
    }
  }
}

using json_stream::Eq;
using json_stream::RawKey;

// Reads the fields of one event (opened in place by the shared JSON event
// reader) into `ev` and appends its args to `args_out`. The views point into
// the event's text or the parser's string buffer: valid until the reader's
// next event. Fields are taken by reference and keys compared as written
// (json_stream::RawKey), as the Kineto importer does: copying On-Demand's
// field structs and unescaping every key cost a quarter of the parse.
simdjson::error_code ReadEventFields(od::object& obj, EventFields* ev, std::vector<Arg>* args_out) {
  simdjson::error_code err = simdjson::SUCCESS;
  for (auto field_result : obj) {
    if ((err = field_result.error())) return err;
    od::field& field = field_result.value_unsafe();
    const std::string_view key = RawKey(field);
    od::value& value = field.value();
    if (Eq(key, "args")) {
      od::json_type type;
      if ((err = value.type().get(type))) return err;
      if (type != od::json_type::object) continue;
      od::object args;
      if ((err = value.get_object().get(args))) return err;
      for (auto arg_result : args) {
        if ((err = arg_result.error())) return err;
        od::field& arg_field = arg_result.value_unsafe();
        Arg arg;
        arg.key = RawKey(arg_field);
        // Kept as attribute keys, so an escaped key is stored unescaped.
        if (arg.key.find('\\') != std::string_view::npos && (err = arg_field.unescaped_key().get(arg.key))) return err;
        if ((err = ScalarText(arg_field.value(), &arg.text, &arg.type))) return err;
        args_out->push_back(arg);
      }
      continue;
    }
    std::string_view* target = nullptr;
    if (Eq(key, "ph")) {
      std::string_view ph;
      if ((err = ScalarText(value, &ph, nullptr))) return err;
      ev->ph = ph.empty() ? '?' : ph[0];
      continue;
    }
    if (Eq(key, "name")) target = &ev->name;
    else if (Eq(key, "cat")) target = &ev->cat;
    else if (Eq(key, "pid")) { target = &ev->pid; ev->has_pid = true; }
    else if (Eq(key, "tid")) { target = &ev->tid; ev->has_tid = true; }
    else if (Eq(key, "ts")) target = &ev->ts;
    else if (Eq(key, "dur")) target = &ev->dur;
    else if (Eq(key, "id")) {
      od::json_type type;
      if ((err = ScalarText(value, &ev->id, &type))) return err;
      ev->has_id = true;
      ev->id_is_string = type == od::json_type::string;
      continue;
    }
    if (target && (err = ScalarText(value, target, nullptr))) return err;
  }
  return simdjson::SUCCESS;
}

// True when `text` holds the JSON string "M" (the phase of metadata events),
// as text.find("\"M\"") would say, but faster: it stops at each rare 'M'
// rather than at each quote (a quote comes every few bytes).
bool HoldsStringM(std::string_view text) {
  for (size_t at = text.find('M', 1); at != std::string_view::npos; at = text.find('M', at + 1))
    if (text[at - 1] == '"' && at + 1 < text.size() && text[at + 1] == '"') return true;
  return false;
}

// ------------------------------------------------------------------ processes
enum class Role : uint8_t { kUnknown, kPython, kPythonGc, kCann, kHardware, kCommunication, kOverlap, kCounterOnly };

Role RoleFromProcessName(std::string_view n) {
  if (n == "Python") return Role::kPython;
  if (n == "Python GC") return Role::kPythonGc;
  if (n == "CANN") return Role::kCann;
  if (n == "Ascend Hardware") return Role::kHardware;
  if (n == "HCCL" || n == "Communication") return Role::kCommunication;
  if (n == "Overlap Analysis") return Role::kOverlap;
  return Role::kUnknown;
}

struct ProcessInfo {
  std::string name;
  std::string label;        // CPU / NPU
  int64_t sort_index = -1;
  Role role = Role::kUnknown;
};

struct ThreadKey {
  std::string pid, tid;
  bool operator<(const ThreadKey& o) const { return pid != o.pid ? pid < o.pid : tid < o.tid; }
};

// Device index of an NPU process. Process identity comes from process_name, but
// the device index is only written into the pid: current torch_npu uses
// pid = (process_pid << 10) | (sort_index << 5) | device_id; the 2024 sample
// writes the decimal concatenation of [pid] sort_index and a 2-digit device id
// (reference §6, "pid encoding"). Returns -1 when neither scheme fits.
int32_t DeviceFromPid(std::string_view pid_text, int64_t sort_index) {
  std::optional<uint64_t> pid = number_text::ParseUint64(pid_text);
  if (!pid || sort_index < 0) return -1;
  if (static_cast<int64_t>((*pid >> 5) & 31) == sort_index) return static_cast<int32_t>(*pid & 31);
  std::string suffix = std::to_string(sort_index);
  std::string text(pid_text);
  if (text.size() >= suffix.size() + 2 && text.compare(text.size() - 2 - suffix.size(), suffix.size(), suffix) == 0)
    return static_cast<int32_t>(*pid % 100);
  return -1;
}

double NumberOf(std::string_view text) {
  double v = std::numeric_limits<double>::quiet_NaN();
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size()) return std::numeric_limits<double>::quiet_NaN();
  return v;
}

std::optional<int64_t> IntOf(std::string_view text) {
  int64_t v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// FNV-1a: flow ids that are not decimal integers still need a stable uint64.
uint64_t HashId(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// ------------------------------------------------------------------ importer state
// A slice of a lane: its host op or task row. Its start and end are read from
// that row when flows are bound (24 bytes an entry with them, ~18 MB on a
// 300 MB file, and twice that while a lane's list doubled).
struct LaneEntry {
  uint32_t row;
  bool is_task;
};

// An HCCL Plane sub-task, held back until every Ascend Hardware task is read
// so that one written by both processes counts once (DropDuplicatePlaneTasks).
// Its arguments wait in a table of their own, owned by the plane task's index
// (a device task's encoded rows: ~6 bytes an argument, not a 24-byte struct
// that AttributeTable::Add encodes serially at the end).
struct PlaneTask {
  DeviceTaskRow row;
  int32_t device;
  uint32_t lane;
};

// Process and thread names, read in pass 1; read-only while pass 2's threads run.
struct ProcessDirectory {
  std::map<std::string, ProcessInfo, std::less<>> processes;
  std::map<ThreadKey, std::string> thread_names;
  std::string python_pid;  // the single Python process, if exactly one

  const ProcessInfo* Find(std::string_view pid) const {
    auto it = processes.find(pid);
    return it == processes.end() ? nullptr : &it->second;
  }
  const std::string* ThreadName(std::string_view pid, std::string_view tid) const {
    auto it = thread_names.find({std::string(pid), std::string(tid)});
    return it == thread_names.end() ? nullptr : &it->second;
  }
};

// Sides of a track a parse thread asks for; each side has its own rule for
// the track (TraceViewReader::ResolveTrack).
enum class TrackSide : char {
  kHost = 'H',         // Python / CANN thread (CANN on the Python process's threads)
  kDevice = 'D',       // Ascend Hardware stream or HCCL thread
  kFlowOther = 'F',    // a flow event of a process of no known role
  kCounter = 'C',      // a counter event's (pid, tid or "0")
};

// A track first used by one parse thread (in its file order): what the
// reader thread needs to find or add it in the import's profile.
struct TrackRequest {
  uint32_t local_track;
  TrackSide side;
  std::string pid, tid;
  Role role = Role::kUnknown;  // kHost: kCann events go on the Python process's threads
  std::string process_name;    // the event's process (for the track's process name)
  int32_t device = -1;         // kDevice
  int64_t stream = -1;         // kDevice
};

// A (pid, tid) lane first used by one parse thread.
struct LaneRequest {
  uint32_t local_lane;
  std::string pid, tid;
};

class TraceViewReader;

// One parse thread's sink of pass 1: the process and thread names of its
// events, copied out of their text, and applied to the directory at Commit,
// on the reader thread in file order (a later name overrides an earlier one,
// as when one thread reads the file). Only events holding "M" reach OnEvent
// (the pass's prefilter, HoldsStringM).
class MetadataSink final : public json_stream::EventSink {
 public:
  explicit MetadataSink(ProcessDirectory* directory) : directory_(*directory) {}

  Status OnEvent(json_stream::JsonEvent& event) override {
    ev_.Clear();
    args_.clear();
    if (ReadEventFields(event.object, &ev_, &args_)) return Status::Ok();  // counted in pass 2
    ev_.args = args_;
    if (ev_.ph != 'M' || !ev_.has_pid) return Status::Ok();
    Kind kind;
    const char* arg_key;
    if (ev_.name == "process_name") kind = Kind::kProcessName, arg_key = "name";
    else if (ev_.name == "process_labels") kind = Kind::kProcessLabels, arg_key = "labels";
    else if (ev_.name == "process_sort_index") kind = Kind::kProcessSortIndex, arg_key = "sort_index";
    else if (ev_.name == "thread_name" && ev_.has_tid) kind = Kind::kThreadName, arg_key = "name";
    else return Status::Ok();
    if (const Arg* a = ev_.FindArg(arg_key))
      staged_.push_back({kind, std::string(ev_.pid), std::string(ev_.tid), std::string(a->text)});
    return Status::Ok();
  }
  // What the reader counts as damage is counted once, in pass 2.
  Profile* loss_profile() override { return &ignored_loss_; }
  void Commit() override {
    for (const Entry& e : staged_) Apply(e);
    staged_.clear();
  }
  void Discard() override { staged_.clear(); }

 private:
  enum class Kind : uint8_t { kProcessName, kProcessLabels, kProcessSortIndex, kThreadName };
  struct Entry {
    Kind kind;
    std::string pid, tid, value;
  };
  void Apply(const Entry& e) {
    switch (e.kind) {
      case Kind::kProcessName: {
        ProcessInfo& info = directory_.processes[e.pid];
        info.name = e.value;
        info.role = RoleFromProcessName(info.name);
        break;
      }
      case Kind::kProcessLabels: directory_.processes[e.pid].label = e.value; break;
      case Kind::kProcessSortIndex:
        if (auto v = IntOf(e.value)) directory_.processes[e.pid].sort_index = *v;
        break;
      case Kind::kThreadName: directory_.thread_names[{e.pid, e.tid}] = e.value; break;
    }
  }

  ProcessDirectory& directory_;
  Event ev_;
  std::vector<Arg> args_;
  std::vector<Entry> staged_;
  Profile ignored_loss_;
};

// What one parse thread makes of its events in pass 2 (every event but
// metadata): rows in a profile of its own, with its own string ids, tracks and
// lanes (flow-binding timelines), appended to the import's profile by
// TraceViewReader::Commit in file order (importers/common/staged_rows.h).
// Events are handled where they are parsed, so nothing is copied to wait for
// the reader thread, and the two cores share the handling as well as the parse.
class EventHandler {
 public:
  EventHandler(const ProcessDirectory& directory, const std::string& path) : directory_(directory), path_(path) {}

  Status OnEvent(json_stream::JsonEvent& event);
  Profile& rows() { return rows_; }

 private:
  friend class TraceViewReader;

  void HandleComplete(uint64_t offset);
  void HandleFlow(uint64_t offset);
  void HandleCounter(uint64_t offset);
  void AddArgs(OwnerKind owner, uint32_t row, std::initializer_list<std::string_view> skip);
  // The event's process: its process_name entry, else one guessed from the
  // event itself (GuessRole), kept in unnamed_.
  const ProcessInfo& ProcessOf(std::string_view pid);
  Role GuessRole() const;
  // This thread's track / lane for the event's (pid, tid); the first use of
  // each is logged for the reader thread.
  uint32_t Track(TrackSide side, const ProcessInfo& process, std::string_view pid, std::string_view tid,
                 int32_t device = -1, int64_t stream = -1);
  uint32_t Lane(std::string_view pid, std::string_view tid);
  // The event's device stream track: device from the pid, stream from its args.
  uint32_t DeviceTrack(const ProcessInfo& process);
  std::string Where(uint64_t offset) const { return path_ + ": byte " + std::to_string(offset); }

  const ProcessDirectory& directory_;
  const std::string& path_;
  Profile rows_;
  Event ev_;
  std::vector<Arg> args_;  // ev_.args of the event being handled
  ProcessInfo unnamed_;

  // Tracks: key (side, pid, tid) -> local track; requests since the last
  // commit; local track -> the import's track and device (persist).
  std::unordered_map<std::string, uint32_t> track_cache_;
  std::string last_track_key_;  // the last key looked up, and its track: most events
  uint32_t last_track_ = 0;     // follow one of the same thread, so no hash is needed
  std::string key_buf_;
  std::vector<TrackRequest> track_log_;
  std::vector<uint32_t> track_remap_;
  std::vector<int32_t> track_device_;
  // Lanes, the same way; entries since the last commit, by local lane, with
  // rows local to rows_.
  std::unordered_map<std::string, uint32_t> lane_cache_;
  std::string last_lane_key_;
  uint32_t last_lane_ = 0;
  std::vector<LaneRequest> lane_log_;
  std::vector<uint32_t> lane_remap_;
  std::vector<std::vector<LaneEntry>> lane_entries_;
  std::vector<StrId> string_remap_;
  std::vector<PlaneTask> plane_tasks_;  // local string ids, tracks and lanes
  AttributeTable plane_attributes_;     // by index in plane_tasks_, local string ids
  std::vector<uint32_t> flow_lane_;     // local lane per flow row of rows_
  uint64_t overlap_intervals_ = 0;
};

class TraceViewReader {
 public:
  TraceViewReader(const std::string& path, const ImportOptions& options, Profile* profile)
      : path_(path), options_(options), p_(*profile) {}

  Status Run();
  // Reader thread, in file order: appends what `handler` read since its last
  // commit to the profile (TraceViewSink::Commit), then clears it.
  void Commit(EventHandler& handler);

 private:
  // Stream options of one pass over the events array; `pass` (0 or 1) places
  // its progress in the two-pass total.
  json_stream::JsonStreamOptions PassOptions(int pass) const;
  // Pass 1: process and thread names, on DefaultParseThreads() threads (they
  // find the events' ends; few events are parsed).
  Status ReadMetadata();
  // Pass 2: every other event, parsed and handled on DefaultParseThreads() threads.
  Status ReadEvents();
  // The import's track for a parse thread's request (first use in file order
  // decides, as a one-thread read would).
  uint32_t ResolveTrack(const TrackRequest& request);
  uint32_t LaneFor(const std::string& pid, const std::string& tid);
  std::optional<LaneEntry> Bind(uint32_t lane, TimeNs ts) const;
  TimeNs StartOf(const LaneEntry& e) const { return e.is_task ? p_.device_tasks.ts[e.row] : p_.host_ops.ts[e.row]; }
  TimeNs EndOf(const LaneEntry& e) const {
    return StartOf(e) + (e.is_task ? p_.device_tasks.dur[e.row] : p_.host_ops.dur[e.row]);
  }
  void LinkFlows();
  void DropDuplicatePlaneTasks();

  const std::string& path_;
  const ImportOptions& options_;
  Profile& p_;

  ProcessDirectory directory_;

  std::map<ThreadKey, uint32_t> lanes_;
  std::vector<std::vector<LaneEntry>> lane_entries_;
  std::vector<uint32_t> flow_lane_;  // per FlowTable row added by this import
  uint32_t first_flow_row_ = 0;
  std::vector<int32_t> devices_seen_;
  std::vector<PlaneTask> plane_tasks_;
  AttributeTable plane_attributes_;  // by index in plane_tasks_
  uint64_t plane_tasks_duplicating_hardware_ = 0;

  uint64_t overlap_intervals_ = 0;
  uint64_t unpaired_flow_events_ = 0;
  uint64_t flow_link_conflicts_ = 0;
  uint64_t flows_back_in_time_ = 0;
  uint64_t linked_host_to_device_ = 0;
  uint64_t linked_async_npu_ = 0;
};

// One parse thread's sink (json_stream::StreamJsonEventsParallel) over an
// EventHandler.
class TraceViewSink final : public json_stream::EventSink {
 public:
  TraceViewSink(TraceViewReader* target, const ProcessDirectory& directory, const std::string& path)
      : target_(target), directory_(directory), path_(path) {
    Reset();
  }

  Status OnEvent(json_stream::JsonEvent& event) override { return handler_->OnEvent(event); }
  Profile* loss_profile() override { return &handler_->rows(); }
  void Commit() override { target_->Commit(*handler_); }
  // Rare (a malformed event in a parallel range): start over with empty
  // tables, so that strings, tracks and lanes seen only in the discarded
  // events are not added.
  void Discard() override { Reset(); }

 private:
  void Reset() { handler_ = std::make_unique<EventHandler>(directory_, path_); }
  TraceViewReader* target_;
  const ProcessDirectory& directory_;
  const std::string& path_;
  std::unique_ptr<EventHandler> handler_;
};

json_stream::JsonStreamOptions TraceViewReader::PassOptions(int pass) const {
  json_stream::JsonStreamOptions stream;
  stream.display_name = path_;
  stream.root_must_be_array = true;
  stream.cancel = options_.cancel;
  if (options_.progress)
    stream.progress = [this, pass](uint64_t done, uint64_t size) {
      options_.progress(static_cast<uint64_t>(pass) * size + done, 2 * size);
    };
  return stream;
}

Status TraceViewReader::ReadMetadata() {
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<io::ByteSource> source, io::OpenByteSource(path_, options_.limits));
  json_stream::JsonStreamOptions stream = PassOptions(0);
  // Cheap text filter: metadata events are the only ones with "M" as a value;
  // the others are not parsed in this pass.
  stream.prefilter = HoldsStringM;
  std::vector<std::unique_ptr<MetadataSink>> sinks;
  std::vector<json_stream::EventSink*> sink_pointers;
  for (size_t i = DefaultParseThreads(); i > 0; --i) {
    sinks.push_back(std::make_unique<MetadataSink>(&directory_));
    sink_pointers.push_back(sinks.back().get());
  }
  // What the reader counts as damage is counted once, in pass 2.
  Profile pass_one_loss;
  auto no_top_level_keys = [](std::string_view, od::value) { return Status::Ok(); };
  return json_stream::StreamJsonEventsParallel(*source, stream, no_top_level_keys, sink_pointers, &pass_one_loss)
      .status();
}

Status TraceViewReader::ReadEvents() {
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<io::ByteSource> source, io::OpenByteSource(path_, options_.limits));
  const json_stream::JsonStreamOptions stream = PassOptions(1);
  const double events = static_cast<double>(json_stream::EstimatedTextBytes(*source) / kTypicalBytesPerEvent);
  p_.host_ops.Reserve(p_.host_ops.size() + static_cast<size_t>(events * kHostOpsPerEvent));
  p_.device_tasks.Reserve(p_.device_tasks.size() + static_cast<size_t>(events * kDeviceTasksPerEvent));
  p_.flows.Reserve(p_.flows.size() + static_cast<size_t>(events * kFlowRowsPerEvent));
  p_.attributes.Reserve(p_.attributes.size() + static_cast<size_t>(events * kAttributeRowsPerEvent));
  std::vector<std::unique_ptr<TraceViewSink>> sinks;
  std::vector<json_stream::EventSink*> sink_pointers;
  for (size_t i = DefaultParseThreads(); i > 0; --i) {
    sinks.push_back(std::make_unique<TraceViewSink>(this, directory_, path_));
    sink_pointers.push_back(sinks.back().get());
  }
  auto no_top_level_keys = [](std::string_view, od::value) { return Status::Ok(); };
  return json_stream::StreamJsonEventsParallel(*source, stream, no_top_level_keys, sink_pointers, &p_).status();
}

uint32_t TraceViewReader::ResolveTrack(const TrackRequest& r) {
  switch (r.side) {
    case TrackSide::kHost: {
      // CANN API events run on the threads of the profiled Python process
      // (same OS tid, pid re-encoded by the writer): put them on that
      // process's thread tracks so that nesting by time works across both
      // (reference §6 call-graph recipe).
      std::string_view pid = r.pid;
      std::string_view owner_name = r.process_name;
      if (r.role == Role::kCann && !directory_.python_pid.empty()) {
        pid = directory_.python_pid;
        const ProcessInfo* python = directory_.Find(pid);
        owner_name = python ? std::string_view(python->name) : std::string_view();
      }
      uint32_t track = p_.TrackFor(pid, r.tid, TrackKind::kHostThread);
      if (p_.tracks.process_name[track] == kEmptyStr && !owner_name.empty())
        p_.tracks.process_name[track] = p_.Intern(owner_name);
      if (p_.tracks.name[track] == kEmptyStr) {
        const std::string* name = directory_.ThreadName(pid, r.tid);
        if (!name) name = directory_.ThreadName(r.pid, r.tid);
        if (name) p_.tracks.name[track] = p_.Intern(*name);
      }
      return track;
    }
    case TrackSide::kDevice: {
      uint32_t track = p_.DeviceTrack(r.pid, r.tid, r.device, r.stream);
      if (p_.tracks.process_name[track] == kEmptyStr && !r.process_name.empty())
        p_.tracks.process_name[track] = p_.Intern(r.process_name);
      if (p_.tracks.name[track] == kEmptyStr)
        if (const std::string* name = directory_.ThreadName(r.pid, r.tid)) p_.tracks.name[track] = p_.Intern(*name);
      if (std::find(devices_seen_.begin(), devices_seen_.end(), r.device) == devices_seen_.end())
        devices_seen_.push_back(r.device);
      return track;
    }
    case TrackSide::kFlowOther:
      return p_.TrackFor(r.pid, r.tid, TrackKind::kOther);
    case TrackSide::kCounter: {
      uint32_t track = p_.TrackFor(r.pid, r.tid, TrackKind::kOther);
      if (p_.tracks.process_name[track] == kEmptyStr && !r.process_name.empty())
        p_.tracks.process_name[track] = p_.Intern(r.process_name);
      return track;
    }
  }
  return 0;
}

uint32_t TraceViewReader::LaneFor(const std::string& pid, const std::string& tid) {
  auto [it, inserted] = lanes_.try_emplace(ThreadKey{pid, tid}, static_cast<uint32_t>(lane_entries_.size()));
  if (inserted) lane_entries_.emplace_back();
  return it->second;
}

void TraceViewReader::Commit(EventHandler& h) {
  Profile& from = h.rows_;
  staged_rows::ExtendStringRemap(from, &p_, &h.string_remap_);
  for (const TrackRequest& request : h.track_log_) h.track_remap_[request.local_track] = ResolveTrack(request);
  h.track_log_.clear();
  for (const LaneRequest& request : h.lane_log_) h.lane_remap_[request.local_lane] = LaneFor(request.pid, request.tid);
  h.lane_log_.clear();

  const uint32_t host_base = static_cast<uint32_t>(p_.host_ops.size());
  const uint32_t task_base = static_cast<uint32_t>(p_.device_tasks.size());
  staged_rows::Append(from, h.string_remap_, h.track_remap_, &p_);
  for (uint32_t lane = 0; lane < h.lane_entries_.size(); ++lane) {
    std::vector<LaneEntry>& local = h.lane_entries_[lane];
    std::vector<LaneEntry>& global = lane_entries_[h.lane_remap_[lane]];
    for (const LaneEntry& e : local) global.push_back({e.row + (e.is_task ? task_base : host_base), e.is_task});
    local.clear();
  }
  for (uint32_t lane : h.flow_lane_) flow_lane_.push_back(h.lane_remap_[lane]);
  h.flow_lane_.clear();
  auto s = [&](StrId id) { return h.string_remap_[id]; };
  const uint32_t plane_base = static_cast<uint32_t>(plane_tasks_.size());
  plane_attributes_.AppendFrom(h.plane_attributes_, &h.string_remap_,
                               [&](OwnerKind, uint32_t plane) { return plane_base + plane; });
  h.plane_attributes_.Clear();
  for (PlaneTask& plane : h.plane_tasks_) {
    DeviceTaskRow& row = plane.row;
    for (StrId* id : {&row.name, &row.category, &row.core_type, &row.op_type, &row.input_shapes, &row.input_types,
                      &row.input_formats, &row.output_shapes, &row.output_types, &row.output_formats})
      *id = s(*id);
    row.track = h.track_remap_[row.track];
    plane.lane = h.lane_remap_[plane.lane];
    plane_tasks_.push_back(plane);
  }
  h.plane_tasks_.clear();
  overlap_intervals_ += h.overlap_intervals_;
  h.overlap_intervals_ = 0;
  staged_rows::Clear(&from);
}

// ------------------------------------------------------------------ pass 2, on the parse threads
Status EventHandler::OnEvent(json_stream::JsonEvent& event) {
  ev_.Clear();
  args_.clear();
  const simdjson::error_code err = ReadEventFields(event.object, &ev_, &args_);
  // kCorrupt: the reader repairs what it can (invalid UTF-8, bare N/A) and
  // tries again, else counts the event as skipped and reads on.
  if (err) return CorruptError(std::string("malformed event skipped (") + simdjson::error_message(err) + ")");
  ev_.args = args_;
  switch (ev_.ph) {
    case 'X': HandleComplete(event.offset); break;
    case 's': case 'f': case 't': HandleFlow(event.offset); break;
    case 'C': HandleCounter(event.offset); break;
    case 'M': break;  // read in pass 1
    default:
      rows_.CountLoss(LossKind::kRowSkipped, std::string("unsupported event phase '") + ev_.ph + "' (skipped)",
                      Where(event.offset));
  }
  ev_.Clear();  // its views point into the parser's buffers
  return Status::Ok();
}

const ProcessInfo& EventHandler::ProcessOf(std::string_view pid) {
  const ProcessInfo* known = directory_.Find(pid);
  if (known && known->role != Role::kUnknown) return *known;
  // No (known) process_name: decide from the event itself.
  unnamed_ = known ? *known : ProcessInfo{};
  unnamed_.role = GuessRole();
  return unnamed_;
}

Role EventHandler::GuessRole() const {
  if (ev_.cat == "cpu_op" || ev_.cat == "python_function" || ev_.cat == "enqueue" || ev_.cat == "dequeue" ||
      ev_.cat == "user_annotation")
    return Role::kPython;
  if (ev_.FindArg("Task Type")) return Role::kHardware;
  if (ev_.name.find('@') != std::string_view::npos && ev_.FindArg("connection_id")) return Role::kCann;
  return Role::kUnknown;
}

uint32_t EventHandler::Track(TrackSide side, const ProcessInfo& process, std::string_view pid, std::string_view tid,
                             int32_t device, int64_t stream) {
  // The key holds what ResolveTrack's result depends on: the role (a CANN
  // thread goes on the Python process; an unnamed process's role is guessed
  // per event) and the stream (a device track records its stream).
  key_buf_.assign(1, static_cast<char>(side));
  key_buf_.push_back(static_cast<char>(process.role));
  key_buf_.append(pid);
  key_buf_.push_back('\x1f');
  key_buf_.append(tid);
  if (side == TrackSide::kDevice) {
    key_buf_.push_back('\x1f');
    key_buf_.append(std::to_string(stream));
  }
  if (key_buf_ == last_track_key_) return last_track_;  // consecutive events of one thread or stream
  auto [it, inserted] = track_cache_.try_emplace(key_buf_, static_cast<uint32_t>(track_remap_.size()));
  if (inserted) {
    track_log_.push_back({it->second, side, std::string(pid), std::string(tid), process.role, process.name, device, stream});
    track_remap_.push_back(0);
    track_device_.push_back(device);
  }
  last_track_key_ = key_buf_;
  last_track_ = it->second;
  return it->second;
}

uint32_t EventHandler::Lane(std::string_view pid, std::string_view tid) {
  key_buf_.assign(pid);
  key_buf_.push_back('\x1f');
  key_buf_.append(tid);
  if (key_buf_ == last_lane_key_) return last_lane_;
  auto [it, inserted] = lane_cache_.try_emplace(key_buf_, static_cast<uint32_t>(lane_remap_.size()));
  if (inserted) {
    lane_log_.push_back({it->second, std::string(pid), std::string(tid)});
    lane_remap_.push_back(0);
    lane_entries_.emplace_back();
  }
  last_lane_key_ = key_buf_;
  last_lane_ = it->second;
  return it->second;
}

void EventHandler::AddArgs(OwnerKind owner, uint32_t row, std::initializer_list<std::string_view> skip) {
  for (const Arg& a : ev_.args) {
    if (std::find(skip.begin(), skip.end(), a.key) != skip.end()) continue;
    double number = a.type == od::json_type::number ? NumberOf(a.text) : std::numeric_limits<double>::quiet_NaN();
    rows_.AddAttribute(owner, row, rows_.Intern(a.key), a.text, number);
  }
}

uint32_t EventHandler::DeviceTrack(const ProcessInfo& process) {
  int32_t device = DeviceFromPid(ev_.pid, process.sort_index);
  if (device < 0) device = 0;
  int64_t stream = -1;
  if (process.role == Role::kHardware) {
    const Arg* s = ev_.FindArg("Physic Stream Id");
    if (!s) s = ev_.FindArg("Stream Id");
    if (s) stream = IntOf(s->text).value_or(-1);
    if (stream < 0) stream = IntOf(ev_.tid).value_or(-1);
  }
  return Track(TrackSide::kDevice, process, ev_.pid, ev_.tid, device, stream);
}

void EventHandler::HandleComplete(uint64_t offset) {
  std::optional<int64_t> ts = number_text::MicrosToNs(ev_.ts);
  std::optional<int64_t> dur = ev_.dur.empty() ? std::optional<int64_t>(0) : number_text::MicrosToNs(ev_.dur);
  if (!ev_.has_pid || !ev_.has_tid || !ts || !dur || *dur < 0) {
    rows_.CountLoss(LossKind::kRowSkipped, "complete event without valid pid/tid/ts/dur (skipped)", Where(offset));
    return;
  }
  const ProcessInfo& process = ProcessOf(ev_.pid);
  uint32_t lane = Lane(ev_.pid, ev_.tid);
  switch (process.role) {
    case Role::kPython:
    case Role::kPythonGc:
    case Role::kCann: {
      HostOpRow row;
      row.name = rows_.Intern(ev_.name);
      row.ts = *ts;
      row.dur = *dur;
      row.track = Track(TrackSide::kHost, process, ev_.pid, ev_.tid);
      if (process.role == Role::kCann) {
        row.kind = HostOpKind::kRuntime;
        size_t at = ev_.name.find('@');
        row.category = rows_.Intern(at == std::string_view::npos ? std::string_view("CANN") : ev_.name.substr(0, at));
      } else if (process.role == Role::kPythonGc) {
        row.kind = HostOpKind::kOther;
        row.category = rows_.Intern(ev_.cat.empty() ? std::string_view("gc") : ev_.cat);
      } else {
        row.category = rows_.Intern(ev_.cat);
        if (ev_.cat == "cpu_op")
          row.kind = ev_.name.starts_with("ProfilerStep#") ? HostOpKind::kUserAnnotation : HostOpKind::kOperator;
        else if (ev_.cat == "user_annotation") row.kind = HostOpKind::kUserAnnotation;
        else if (ev_.cat == "python_function") row.kind = HostOpKind::kPython;
        else row.kind = HostOpKind::kOther;  // enqueue, dequeue: torch_npu task queue
      }
      if (const Arg* a = ev_.FindArg("Sequence number"))
        if (auto v = IntOf(a->text); v && *v >= 0) row.sequence_number = *v;
      if (const Arg* a = ev_.FindArg("Input Dims")) row.input_dims = rows_.Intern(a->text);
      if (const Arg* a = ev_.FindArg("Input type")) row.input_types = rows_.Intern(a->text);
      uint32_t op = rows_.host_ops.Add(row);
      if (process.role == Role::kCann) {
        AddArgs(OwnerKind::kHostOp, op, {"Thread Id"});
      } else {
        for (const Arg& a : ev_.args) {
          if (a.key == "Sequence number" || a.key == "Input Dims" || a.key == "Input type") continue;
          if (a.key == "Fwd thread id" && a.text == "0") continue;  // 0 = forward op, the common case
          double number = a.type == od::json_type::number ? NumberOf(a.text) : std::numeric_limits<double>::quiet_NaN();
          rows_.AddAttribute(OwnerKind::kHostOp, op, rows_.Intern(a.key), a.text, number);
        }
      }
      lane_entries_[lane].push_back({op, false});
      return;
    }
    case Role::kHardware:
    case Role::kCommunication: {
      DeviceTaskRow row;
      row.name = rows_.Intern(ev_.name);
      row.ts = *ts;
      row.dur = *dur;
      row.track = DeviceTrack(process);
      if (process.role == Role::kHardware) {
        const Arg* type = ev_.FindArg("Task Type");
        std::string_view task_type = type ? type->text : std::string_view();
        ascend::TaskTypeInfo info = ascend::ClassifyTaskType(task_type);
        row.kind = type ? info.kind : DeviceTaskKind::kOther;
        row.category = rows_.Intern(task_type);
        if (!info.core_type.empty()) row.core_type = rows_.Intern(info.core_type);
        if (const Arg* a = ev_.FindArg("size(B)")) row.bytes = IntOf(a->text).value_or(-1);
      } else {
        row.kind = DeviceTaskKind::kCommunication;
        // Threads "Plane k" hold HCCL sub-tasks; "Group … Communication" threads the whole ops.
        std::string_view thread;
        if (const std::string* name = directory_.ThreadName(ev_.pid, ev_.tid)) thread = *name;
        bool sub_task = thread.starts_with("Plane");
        if (sub_task) {
          const Arg* type = ev_.FindArg("task type");
          row.category = rows_.Intern(type ? type->text : std::string_view("communication_task"));
        } else {
          row.category = rows_.Intern("communication_op");
        }
        if (const Arg* a = ev_.FindArg("size(Byte)")) row.bytes = IntOf(a->text).value_or(-1);
      }
      auto keep_arg = [](const Arg& a) {
        if (a.key == "Task Type" || a.key == "Stream Id" || a.key == "Physic Stream Id" || a.key == "size(B)" ||
            a.key == "size(Byte)")
          return false;
        return !((a.key == "Model Id" || a.key == "Subtask Id" || a.key == "model id") &&
                 IntOf(a.text) == ascend::kNotApplicableU32);
      };
      auto number_of = [](const Arg& a) {
        return a.type == od::json_type::number ? NumberOf(a.text) : std::numeric_limits<double>::quiet_NaN();
      };
      if (process.role == Role::kCommunication && row.category != rows_.Intern("communication_op")) {
        // Held until the end of pass 2 (~50k in a 300 MB Level1 trace).
        const uint32_t plane = static_cast<uint32_t>(plane_tasks_.size());
        plane_tasks_.push_back({row, track_device_[row.track], lane});
        for (const Arg& a : ev_.args)
          if (keep_arg(a)) {
            const double number = number_of(a);
            const StrId key = rows_.Intern(a.key);  // before the text: the strings' order is the file's
            const Profile::AttributeTextRef text = rows_.AttributeTextOf(a.text, number);
            plane_attributes_.Add(OwnerKind::kDeviceTask, plane, key, text.text, number, text.form);
          }
        return;
      }
      uint32_t task = rows_.device_tasks.Add(row);
      for (const Arg& a : ev_.args)
        if (keep_arg(a)) {
          const double number = number_of(a);
          rows_.AddAttribute(OwnerKind::kDeviceTask, task, rows_.Intern(a.key), a.text, number);
        }
      lane_entries_[lane].push_back({task, true});
      return;
    }
    case Role::kOverlap:
      ++overlap_intervals_;  // derived by the writer from the tasks above; recomputed by the graph layer
      return;
    default:
      rows_.CountLoss(LossKind::kRowSkipped, "complete event of an unrecognised process (skipped)",
                   Where(offset) + " (process '" + process.name + "')");
  }
}

void EventHandler::HandleFlow(uint64_t offset) {
  std::optional<int64_t> ts = number_text::MicrosToNs(ev_.ts);
  if (!ev_.has_pid || !ev_.has_tid || !ts || !ev_.has_id) {
    rows_.CountLoss(LossKind::kLinkLost, "flow event without valid pid/tid/ts/id (skipped)", Where(offset));
    return;
  }
  std::optional<uint64_t> id = number_text::ParseUint64(ev_.id);
  uint64_t flow_id = id ? *id : HashId(ev_.id);
  const ProcessInfo& process = ProcessOf(ev_.pid);
  uint32_t track;
  if (process.role == Role::kHardware || process.role == Role::kCommunication)
    track = DeviceTrack(process);
  else if (process.role == Role::kPython || process.role == Role::kCann || process.role == Role::kPythonGc)
    track = Track(TrackSide::kHost, process, ev_.pid, ev_.tid);
  else
    track = Track(TrackSide::kFlowOther, process, ev_.pid, ev_.tid);
  rows_.flows.Add(flow_id, rows_.Intern(ev_.cat), ev_.ph, track, *ts);
  flow_lane_.push_back(Lane(ev_.pid, ev_.tid));
}

void EventHandler::HandleCounter(uint64_t offset) {
  std::optional<int64_t> ts = number_text::MicrosToNs(ev_.ts);
  if (!ev_.has_pid || !ts) {
    rows_.CountLoss(LossKind::kRowSkipped, "counter event without valid pid/ts (skipped)", Where(offset));
    return;
  }
  const ProcessInfo& process = ProcessOf(ev_.pid);
  uint32_t track = Track(TrackSide::kCounter, process, ev_.pid, ev_.has_tid ? ev_.tid : std::string_view("0"));
  for (const Arg& a : ev_.args) {
    double v = NumberOf(a.text);
    if (std::isnan(v)) {
      rows_.CountLoss(LossKind::kRowSkipped, "counter value not a number (skipped)", Where(offset));
      continue;
    }
    std::string name(ev_.name);
    name += '/';
    name += a.key;
    rows_.counters.Add(rows_.Intern(name), track, *ts, v);
  }
}


std::optional<LaneEntry> TraceViewReader::Bind(uint32_t lane, TimeNs ts) const {
  const std::vector<LaneEntry>& entries = lane_entries_[lane];
  // Entries are sorted by (ts, longer first): the last one starting at or
  // before ts that still covers it is the innermost enclosing slice.
  auto it = std::upper_bound(entries.begin(), entries.end(), ts,
                             [&](TimeNs t, const LaneEntry& e) { return t < StartOf(e); });
  for (size_t looked = 0; it != entries.begin() && looked < kMaxFlowBindLookback; ++looked) {
    --it;
    if (EndOf(*it) >= ts) return *it;
  }
  return std::nullopt;
}

// Task names equal but for case and '_' against ' ' ("Notify_Wait" =
// "Notify Wait"), compared in place: a plane task is compared with each
// hardware task that starts near it, tens of thousands of times a file.
bool SameTaskName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto fold = [](char c) { return c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (size_t i = 0; i < a.size(); ++i)
    if (fold(a[i]) != fold(b[i])) return false;
  return true;
}

// Level1 timelines write each HCCL sub-task twice: under the HCCL process
// ("Plane k" threads, with ranks, transport and size) and under Ascend
// Hardware (its stream, its task type). Counting both doubled communication
// time. A Plane task that matches a Hardware task of the same device in start,
// end (kDuplicateTaskToleranceNs) and name ("Notify_Wait" = "Notify Wait",
// case and '_' ignored; its name or task type against the Hardware task's name
// or task type) is not added; its arguments go to the Hardware task. Unmatched ones are added.
void TraceViewReader::DropDuplicatePlaneTasks() {
  if (plane_tasks_.empty()) return;
  DeviceTaskTable& tasks = p_.device_tasks;
  // Hardware tasks by (device, start, row): those on HCCL process tracks are
  // not added yet. The keys are kept beside the rows, so that the sort and
  // each plane task's search read one array, not two columns and the track
  // table per comparison (the sort: 6.1 -> 0.4 ms over 141 k hardware tasks);
  // the row breaks ties, so an equal start finds the earliest row first.
  struct HardwareKey {
    int32_t device;
    uint32_t row;
    TimeNs ts;
  };
  auto before = [](const HardwareKey& a, const HardwareKey& b) {
    if (a.device != b.device) return a.device < b.device;
    return a.ts != b.ts ? a.ts < b.ts : a.row < b.row;
  };
  std::vector<HardwareKey> hardware(tasks.size());
  for (uint32_t t = 0; t < hardware.size(); ++t) hardware[t] = {p_.tracks.device[tasks.track[t]], t, tasks.ts[t]};
  SortUnlessSorted(hardware.begin(), hardware.end(), before);
  std::vector<uint8_t> taken(tasks.size(), 0);
  // The task each plane task's arguments go to: the hardware task it repeats,
  // else the task it becomes. They are appended after the loop, in plane
  // order as before (the loop adds tasks, not attribute rows).
  std::vector<uint32_t> task_of_plane(plane_tasks_.size());
  for (size_t index = 0; index < plane_tasks_.size(); ++index) {
    const PlaneTask& plane = plane_tasks_[index];
    const std::string_view name = p_.Str(plane.row.name);
    const std::string_view type = p_.Str(plane.row.category);  // its "task type" argument
    const TimeNs end = plane.row.ts + plane.row.dur;
    const std::pair<int32_t, TimeNs> first(plane.device, plane.row.ts - kDuplicateTaskToleranceNs);
    const std::pair<int32_t, TimeNs> last(plane.device, plane.row.ts + kDuplicateTaskToleranceNs);
    auto it = std::lower_bound(hardware.begin(), hardware.end(), first,
                               [](const HardwareKey& h, const std::pair<int32_t, TimeNs>& v) {
                                 return std::pair(h.device, h.ts) < v;
                               });
    int64_t match = -1;
    for (; it != hardware.end() && std::pair(it->device, it->ts) <= last; ++it) {
      const uint32_t t = it->row;
      if (taken[t] || std::llabs(tasks.ts[t] + tasks.dur[t] - end) > kDuplicateTaskToleranceNs) continue;
      const std::string_view hardware_name = p_.Str(tasks.name[t]);
      const std::string_view hardware_type = p_.Str(tasks.category[t]);
      if (!SameTaskName(hardware_name, name) && !SameTaskName(hardware_type, name) &&
          !SameTaskName(hardware_name, type) && !SameTaskName(hardware_type, type))
        continue;
      match = t;
      break;
    }
    if (match >= 0) {
      const uint32_t t = static_cast<uint32_t>(match);
      taken[t] = 1;
      ++plane_tasks_duplicating_hardware_;
      if (tasks.bytes[t] < 0) tasks.bytes.set(t, plane.row.bytes);
      task_of_plane[index] = t;
      continue;
    }
    const uint32_t task = tasks.Add(plane.row);
    task_of_plane[index] = task;
    lane_entries_[plane.lane].push_back({task, true});
  }
  p_.attributes.AppendFrom(plane_attributes_, nullptr, [&](OwnerKind, uint32_t plane) { return task_of_plane[plane]; });
  // Freed before LinkFlows builds its maps.
  std::vector<PlaneTask>().swap(plane_tasks_);
  plane_attributes_ = AttributeTable();
}

void TraceViewReader::LinkFlows() {
  // A lane's slices, the ends of a category's flows by id and the bound flows
  // by start come mostly in order (a writer's events follow time, and flow ids
  // grow with it): each sort below is a check or a few merges then
  // (core/adaptive_sort.h), every order total, so the result is std::sort's.
  ParallelFor(lane_entries_.size(), DefaultParseThreads(), [&](size_t lane) {
    std::vector<LaneEntry>& entries = lane_entries_[lane];
    SortUnlessSorted(entries.begin(), entries.end(), [&](const LaneEntry& a, const LaneEntry& b) {
      const TimeNs a_ts = StartOf(a), b_ts = StartOf(b);
      if (a_ts != b_ts) return a_ts < b_ts;
      const TimeNs a_end = EndOf(a), b_end = EndOf(b);
      return a_end != b_end ? a_end > b_end : a.row < b.row;
    });
  });
  StrId host_to_device = p_.Intern("HostToDevice");
  StrId async_npu = p_.Intern("async_npu");
  // Both ends of every paired flow, bound to their slices on all cores (binding
  // only reads the lanes; it is most of the work), then linked in order.
  struct End {
    uint32_t row = 0;
    bool bound = false, is_task = false;
  };
  auto end_of = [](const std::optional<LaneEntry>& e) { return e ? End{e->row, true, e->is_task} : End{}; };
  struct Bound {
    uint64_t id;
    uint32_t start, finish;  // flow rows since first_flow_row_
    End from, to;
  };
  // The paired flows of one launch category (only the two launch categories
  // carry host -> device links), in the order their start events were read.
  // An id's start and finish are the last 's' and 'f' read with it. The ends
  // are paired by sorting (16 bytes an event), not in a hash map (about 50
  // bytes an id, two maps and two bound lists alive at once: the import's
  // peak memory on a large trace_view), and one category is bound and linked
  // before the next is gathered.
  auto bind_all = [&](StrId category) {
    struct FlowEnd {
      uint64_t id;
      uint32_t k;  // flow row since first_flow_row_
      bool start;
    };
    const size_t n = flow_lane_.size();
    auto is_end = [&](uint32_t row) {
      const char ph = p_.flows.phase[row];
      return p_.flows.category[row] == category && (ph == 's' || ph == 'f');
    };
    size_t count = 0;  // counted first: grown by doubling, the list would be held twice at times
    for (size_t k = 0; k < n; ++k) count += is_end(first_flow_row_ + static_cast<uint32_t>(k));
    std::vector<FlowEnd> ends;
    ends.reserve(count);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t row = first_flow_row_ + static_cast<uint32_t>(k);
      if (is_end(row)) ends.push_back({p_.flows.id[row], static_cast<uint32_t>(k), p_.flows.phase[row] == 's'});
    }
    SortUnlessSorted(ends.begin(), ends.end(),
                     [](const FlowEnd& a, const FlowEnd& b) { return a.id != b.id ? a.id < b.id : a.k < b.k; });
    std::vector<Bound> bound;
    bound.reserve(ends.size() / 2);  // an id's two ends, most often
    for (size_t i = 0; i < ends.size();) {
      const uint64_t id = ends[i].id;
      int64_t start = -1, finish = -1;
      for (; i < ends.size() && ends[i].id == id; ++i) (ends[i].start ? start : finish) = ends[i].k;
      if (start < 0 || finish < 0) {
        ++unpaired_flow_events_;
        continue;
      }
      bound.push_back({id, static_cast<uint32_t>(start), static_cast<uint32_t>(finish), {}, {}});
    }
    std::vector<FlowEnd>().swap(ends);
    // Starts are distinct flow rows: a total order.
    SortUnlessSorted(bound.begin(), bound.end(), [](const Bound& a, const Bound& b) { return a.start < b.start; });
    const size_t chunks = (bound.size() + kFlowBindChunk - 1) / kFlowBindChunk;
    ParallelFor(chunks, DefaultParseThreads(), [&](size_t chunk) {
      const size_t end = std::min(bound.size(), (chunk + 1) * kFlowBindChunk);
      for (size_t i = chunk * kFlowBindChunk; i < end; ++i) {
        Bound& b = bound[i];
        b.from = end_of(Bind(flow_lane_[b.start], p_.flows.ts[first_flow_row_ + b.start]));
        b.to = end_of(Bind(flow_lane_[b.finish], p_.flows.ts[first_flow_row_ + b.finish]));
      }
    });
    return bound;
  };
  auto link = [&](const std::vector<Bound>& bound, bool use_correlation) {
    for (const Bound& b : bound) {
      const uint64_t id = b.id;
      const uint32_t srow = first_flow_row_ + b.start;
      const End* from = &b.from;
      const End* to = &b.to;
      if (!from->bound || !to->bound || from->is_task || !to->is_task) {
        p_.CountLoss(LossKind::kLinkLost, "launch flow not bound to a host event and a device task (link lost)",
                     path_ + ": flow " + std::string(p_.Str(p_.flows.category[srow])) + " id " + std::to_string(id));
        continue;
      }
      // A HostToDevice flow from a runtime call that starts after the task
      // it launches: the host and device clocks disagree (seen: the dequeue
      // thread's AscendCL@aclnn* call 4-17 µs after its task on 94 of 274
      // tasks). The task is then linked through its async_npu flow from the
      // operator that queued it, which the device clock puts before it.
      if (use_correlation && p_.host_ops.ts[from->row] > p_.device_tasks.ts[to->row] + kFlowSkewToleranceNs) {
        ++flows_back_in_time_;
        continue;
      }
      // Many tasks may hang off one host event: the host event's value, once
      // set, is the one every linked task gets (as all kernels of one CUDA
      // graph launch share its correlation).
      int64_t value = static_cast<int64_t>(id & static_cast<uint64_t>(INT64_MAX));
      IdColumn& host_col = use_correlation ? p_.host_ops.correlation : p_.host_ops.external_id;
      IdColumn& task_col = use_correlation ? p_.device_tasks.correlation : p_.device_tasks.external_id;
      if (host_col[from->row] == kNoId) host_col.set(from->row, value);
      if (task_col[to->row] == kNoId) task_col.set(to->row, host_col[from->row]);
      else if (task_col[to->row] != host_col[from->row]) ++flow_link_conflicts_;
      if (use_correlation) {
        ++linked_host_to_device_;
      } else {
        ++linked_async_npu_;
        // Without CANN data (Level0) the op -> task flow is the only launch
        // link: let it stand in for the runtime correlation as well.
        if (p_.device_tasks.correlation[to->row] == kNoId) {
          if (p_.host_ops.correlation[from->row] == kNoId) p_.host_ops.correlation.set(from->row, value);
          p_.device_tasks.correlation.set(to->row, p_.host_ops.correlation[from->row]);
        }
      }
    }
  };
  link(bind_all(host_to_device), true);
  link(bind_all(async_npu), false);
}

Status TraceViewReader::Run() {
  // Pass 1: process and thread names (metadata events may come anywhere).
  PhaseTimer metadata_timer("import.trace_view.metadata");
  PYPTO_RETURN_IF_ERROR(ReadMetadata());
  metadata_timer.Stop();
  std::string only_python;
  int python_processes = 0;
  for (const auto& [pid, info] : directory_.processes)
    if (info.role == Role::kPython) {
      ++python_processes;
      only_python = pid;
    }
  if (python_processes == 1) directory_.python_pid = only_python;

  // Pass 2: everything else.
  first_flow_row_ = static_cast<uint32_t>(p_.flows.size());
  PhaseTimer events_timer("import.trace_view.events");
  PYPTO_RETURN_IF_ERROR(ReadEvents());
  events_timer.Stop();

  PhaseTimer link_timer("import.trace_view.link");
  DropDuplicatePlaneTasks();
  LinkFlows();
  link_timer.Stop();

  for (int32_t device : devices_seen_) {
    bool known = false;
    for (const DeviceRow& d : p_.devices.rows) known = known || (d.kind == DeviceKind::kNpu && d.index == device);
    if (!known) p_.devices.rows.push_back(DeviceRow{device, DeviceKind::kNpu, kEmptyStr});
  }
  p_.metadata.emplace("format", std::string(kImporterName));
  p_.metadata.emplace("clock", "epoch");
  auto count = [&](const char* key, uint64_t v) { p_.metadata[std::string("ascend_trace_view.") + key] = std::to_string(v); };
  count("overlap_analysis_intervals_skipped", overlap_intervals_);
  count("unpaired_launch_flows", unpaired_flow_events_);
  count("flow_link_conflicts", flow_link_conflicts_);
  count("host_to_device_links", linked_host_to_device_);
  count("async_npu_links", linked_async_npu_);
  count("host_to_device_flows_back_in_time", flows_back_in_time_);
  count("hccl_plane_tasks_duplicating_hardware", plane_tasks_duplicating_hardware_);
  if (plane_tasks_duplicating_hardware_ > 0)
    p_.notes.push_back(path_ + ": " + std::to_string(plane_tasks_duplicating_hardware_) +
                       " HCCL Plane tasks are also Ascend Hardware tasks (same device, start, end and name): "
                       "counted once, as the Hardware task, with the Plane task's arguments");
  if (flows_back_in_time_ > 0)
    p_.notes.push_back(path_ + ": " + std::to_string(flows_back_in_time_) +
                       " HostToDevice flows start after the task they launch (host and device clocks skewed): "
                       "those tasks are linked to the operator that queued them (async_npu flow)");
  if (overlap_intervals_ > 0)
    p_.notes.push_back(path_ + ": " + std::to_string(overlap_intervals_) +
                       " 'Overlap Analysis' intervals not imported (derived from the device tasks)");
  p_.source_files.push_back(path_);
  return Status::Ok();
}

// ------------------------------------------------------------------ sniffing
class AscendTraceView final : public Importer {
 public:
  std::string_view name() const override { return kImporterName; }
  std::string_view description() const override {
    return "Ascend timeline JSON: torch_npu trace_view.json, msprof msprof_*.json";
  }
  int Sniff(const SniffInput& input) const override {
    if (input.kind != io::PathKind::kFile) return 0;
    std::string_view s = input.prefix;
    if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);
    while (!s.empty() && IsJsonSpace(s.front())) s.remove_prefix(1);
    if (!s.starts_with("[")) return 0;  // Kineto traces are objects ({"traceEvents": …})
    // Ascend writers put timestamps in JSON strings ("ts": "1704….491"); the
    // legacy torch array export uses numbers.
    bool string_ts = s.find("\"ts\": \"") != std::string_view::npos || s.find("\"ts\":\"") != std::string_view::npos;
    static constexpr std::string_view kMarkers[] = {
        "\"Ascend Hardware\"", "\"CANN\"", "\"Overlap Analysis\"", "\"Task Type\"", "\"connection_id\"",
        "\"HostToDevice\"", "\"async_npu\"", "AscendCL@", "\"AI Core Freq\"", "\"Stream Id\""};
    bool marker = false;
    for (std::string_view m : kMarkers) marker = marker || s.find(m) != std::string_view::npos;
    if (string_ts && marker) return 95;
    if (string_ts || marker) return 80;
    return 0;
  }
  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    return ImportAscendTraceView(path, options, profile);
  }
};

}  // namespace

const Importer* AscendTraceViewImporter() {
  static const AscendTraceView importer;
  return &importer;
}

Status ImportAscendTraceView(const std::string& path, const ImportOptions& options, Profile* profile) {
  TraceViewReader reader(path, options, profile);
  return reader.Run();
}

}  // namespace pypto
