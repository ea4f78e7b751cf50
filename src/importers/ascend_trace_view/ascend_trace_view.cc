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

#include "importers/common/ascend_vocabulary.h"
#include "importers/common/json_stream.h"
#include "importers/common/number_text.h"
#include "io/file.h"

namespace pypto {
namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kImporterName = "ascend-trace-view";

// Flow binding looks back at most this many events on a thread for the slice
// enclosing the flow's timestamp (Chrome "bp":"e" semantics). In the 2024
// fixture every flow start lies in one of its 8 nearest preceding slices;
// 512 bounds the work on pathological input.
constexpr size_t kMaxFlowBindLookback = 512;
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

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsJsonSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsJsonSpace(s.back())) s.remove_suffix(1);
  return s;
}

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
      *out = Trim(v.raw_json_token());
      return simdjson::SUCCESS;
    }
  }
}

std::string_view AsIs(std::string_view text) { return text; }

// Reads the fields of one event (opened in place by the shared JSON event
// reader) into `ev` and appends its args to `args_out`. Every text goes
// through `keep` (string_view -> string_view): the parser's views are valid
// only until the reader's next event, which AsIs keeps and a copy outlives.
template <typename Keep>
simdjson::error_code ReadEventFields(od::object& obj, EventFields* ev, std::vector<Arg>* args_out, Keep&& keep) {
  simdjson::error_code err = simdjson::SUCCESS;
  for (auto field_result : obj) {
    od::field field;
    if ((err = std::move(field_result).get(field))) return err;
    std::string_view key;
    if ((err = field.unescaped_key().get(key))) return err;
    od::value value = field.value();
    if (key == "args") {
      od::json_type type;
      if ((err = value.type().get(type))) return err;
      if (type != od::json_type::object) continue;
      od::object args;
      if ((err = value.get_object().get(args))) return err;
      for (auto arg_result : args) {
        od::field arg_field;
        if ((err = std::move(arg_result).get(arg_field))) return err;
        Arg arg;
        if ((err = arg_field.unescaped_key().get(arg.key))) return err;
        od::value arg_value = arg_field.value();
        if ((err = ScalarText(arg_value, &arg.text, &arg.type))) return err;
        args_out->push_back({keep(arg.key), keep(arg.text), arg.type});
      }
      continue;
    }
    std::string_view* target = nullptr;
    if (key == "ph") {
      std::string_view ph;
      if ((err = ScalarText(value, &ph, nullptr))) return err;
      ev->ph = ph.empty() ? '?' : ph[0];
      continue;
    }
    if (key == "name") target = &ev->name;
    else if (key == "cat") target = &ev->cat;
    else if (key == "pid") { target = &ev->pid; ev->has_pid = true; }
    else if (key == "tid") { target = &ev->tid; ev->has_tid = true; }
    else if (key == "ts") target = &ev->ts;
    else if (key == "dur") target = &ev->dur;
    else if (key == "id") {
      od::json_type type;
      if ((err = ScalarText(value, &ev->id, &type))) return err;
      ev->id = keep(ev->id);
      ev->has_id = true;
      ev->id_is_string = type == od::json_type::string;
      continue;
    }
    if (target) {
      if ((err = ScalarText(value, target, nullptr))) return err;
      *target = keep(*target);
    }
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

// ------------------------------------------------------------------ staging
// Size of a StringArena block, bytes. 1 MiB: a parse thread's share of one
// 2 MiB read buffer (json_stream::kDefaultBufferBytes) holds less text than
// that, so a batch of staged events usually fits in one block.
constexpr size_t kArenaBlockBytes = 1u << 20;

// Copies of the strings of staged events. The views ReadEventFields returns
// point into the parser's string buffer or the event text, both reused for the
// next event, so a staged event keeps its own copies; blocks never move, so
// the copies stay valid until Clear, which keeps the blocks for reuse.
class StringArena {
 public:
  std::string_view Copy(std::string_view s) {
    if (s.empty()) return {};
    while (block_ < blocks_.size() && blocks_[block_].size - used_ < s.size()) {
      ++block_;
      used_ = 0;
    }
    if (block_ == blocks_.size()) {
      const size_t size = std::max(kArenaBlockBytes, s.size());
      blocks_.push_back({std::unique_ptr<char[]>(new char[size]), size});
    }
    char* out = blocks_[block_].data.get() + used_;
    std::memcpy(out, s.data(), s.size());
    used_ += s.size();
    return {out, s.size()};
  }
  void Clear() { block_ = used_ = 0; }

 private:
  struct Block {
    std::unique_ptr<char[]> data;
    size_t size;
  };
  std::vector<Block> blocks_;
  size_t block_ = 0;  // block being filled
  size_t used_ = 0;   // bytes of it in use
};

struct StagedEvent {
  uint64_t offset = 0;     // of its '{' in the file, for data-loss locations
  EventFields fields;      // views into the stage's strings
  size_t first_arg = 0;    // its args: Stage::args[first_arg, first_arg + arg_count)
  size_t arg_count = 0;
};

// What one parse thread read since its last commit: events parsed (in file
// order), waiting to be handled on the reader thread.
struct Stage {
  std::vector<StagedEvent> events;
  std::vector<Arg> args;
  StringArena strings;
  // Repairs of the staged events (invalid UTF-8, bare N/A), counted by the
  // JSON reader; only its data_loss is used.
  Profile loss;

  void Clear() {
    events.clear();
    args.clear();
    strings.Clear();
    loss.data_loss.clear();
  }
};

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
struct LaneEntry {
  TimeNs ts;
  TimeNs end;
  uint32_t row;
  bool is_task;
};

// An HCCL Plane sub-task, held back until every Ascend Hardware task is read
// so that one written by both processes counts once (DropDuplicatePlaneTasks).
struct PlaneTask {
  DeviceTaskRow row;
  int32_t device;
  uint32_t lane;
  struct Attribute {
    StrId key, text;
    double number;
  };
  std::vector<Attribute> attributes;
};

struct FlowEnd {
  uint32_t flow_row;
  uint32_t lane;
};

class TraceViewReader {
 public:
  TraceViewReader(const std::string& path, const ImportOptions& options, Profile* profile)
      : path_(path), options_(options), p_(*profile) {}

  Status Run();
  // Reader thread, in file order: handles the events of `stage` and counts
  // its data loss, then clears it (TraceViewSink::Commit).
  void CommitStage(Stage& stage);

 private:
  // Stream options of one pass over the events array; `pass` (0 or 1) places
  // its progress in the two-pass total.
  json_stream::JsonStreamOptions PassOptions(int pass) const;
  // Pass 1: process and thread names, on one thread (few events are parsed).
  Status ReadMetadata();
  Status ReadMetadataEvent(json_stream::JsonEvent& event);
  // Pass 2: every other event, parsed on DefaultParseThreads() threads.
  Status ReadEvents();
  // Handles the event in ev_ (read at byte `offset`) by its phase.
  void HandleEvent(uint64_t offset);
  void HandleComplete(uint64_t offset);
  void HandleFlow(uint64_t offset);
  void HandleCounter(uint64_t offset);
  void AddArgs(OwnerKind owner, uint32_t row, std::initializer_list<std::string_view> skip);
  uint32_t HostTrack(const ProcessInfo& process);
  uint32_t DeviceTrackFor(const ProcessInfo& process);
  uint32_t LaneFor(std::string_view pid, std::string_view tid);
  const ProcessInfo& ProcessOf(std::string_view pid);
  Role GuessRole() const;
  std::optional<LaneEntry> Bind(uint32_t lane, TimeNs ts) const;
  void LinkFlows();
  void DropDuplicatePlaneTasks();
  std::string Where(uint64_t offset) const { return path_ + ": byte " + std::to_string(offset); }

  const std::string& path_;
  const ImportOptions& options_;
  Profile& p_;

  Event ev_;
  std::vector<Arg> metadata_args_;  // ev_.args in the first pass

  std::map<std::string, ProcessInfo, std::less<>> processes_;
  std::map<ThreadKey, std::string> thread_names_;
  std::string python_pid_;  // the single Python process, if exactly one
  ProcessInfo unnamed_;     // for events of processes without process_name

  std::map<ThreadKey, uint32_t> lanes_;
  std::vector<std::vector<LaneEntry>> lane_entries_;
  std::vector<uint32_t> flow_lane_;  // per FlowTable row added by this import
  uint32_t first_flow_row_ = 0;
  std::vector<int32_t> devices_seen_;
  std::vector<PlaneTask> plane_tasks_;
  uint64_t plane_tasks_duplicating_hardware_ = 0;

  uint64_t overlap_intervals_ = 0;
  uint64_t unpaired_flow_events_ = 0;
  uint64_t flow_link_conflicts_ = 0;
  uint64_t flows_back_in_time_ = 0;
  uint64_t linked_host_to_device_ = 0;
  uint64_t linked_async_npu_ = 0;
};

// One parse thread's sink (json_stream::StreamJsonEventsParallel): OnEvent
// only reads the event's fields into the stage, on the parse thread; all that
// has state (processes, lanes, the profile) runs at Commit, on the reader
// thread, in file order.
class TraceViewSink final : public json_stream::EventSink {
 public:
  explicit TraceViewSink(TraceViewReader* target) : target_(target) {}

  Status OnEvent(json_stream::JsonEvent& event) override {
    StagedEvent staged;
    staged.offset = event.offset;
    staged.first_arg = stage_.args.size();
    auto keep = [this](std::string_view text) { return stage_.strings.Copy(text); };
    const simdjson::error_code err = ReadEventFields(event.object, &staged.fields, &stage_.args, keep);
    // Not staged: an event that does not parse (its copied strings stay in
    // the arena until the next Clear), metadata (read in the first pass).
    if (err || staged.fields.ph == 'M') {
      stage_.args.resize(staged.first_arg);
      // kCorrupt: the reader repairs what it can (invalid UTF-8, bare N/A)
      // and tries again, else counts the event as skipped and reads on.
      if (err) return CorruptError(std::string("malformed event skipped (") + simdjson::error_message(err) + ")");
      return Status::Ok();
    }
    staged.arg_count = stage_.args.size() - staged.first_arg;
    stage_.events.push_back(staged);
    return Status::Ok();
  }
  Profile* loss_profile() override { return &stage_.loss; }
  void Commit() override { target_->CommitStage(stage_); }
  void Discard() override { stage_.Clear(); }

 private:
  TraceViewReader* target_;
  Stage stage_;
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
  // What the reader counts as damage is counted once, in pass 2.
  Profile pass_one_loss;
  auto no_top_level_keys = [](std::string_view, od::value) { return Status::Ok(); };
  auto on_event = [this](json_stream::JsonEvent& e) { return ReadMetadataEvent(e); };
  return json_stream::StreamJsonEvents(*source, stream, no_top_level_keys, on_event, &pass_one_loss).status();
}

Status TraceViewReader::ReadMetadataEvent(json_stream::JsonEvent& event) {
  // Only events holding "M" reach here (the pass's prefilter, HoldsStringM).
  ev_.Clear();
  metadata_args_.clear();
  if (ReadEventFields(event.object, &ev_, &metadata_args_, AsIs)) return Status::Ok();  // counted in pass 2
  ev_.args = metadata_args_;
  if (ev_.ph != 'M' || !ev_.has_pid) return Status::Ok();
  std::string pid(ev_.pid);
  if (ev_.name == "process_name") {
    if (const Arg* a = ev_.FindArg("name")) {
      ProcessInfo& info = processes_[pid];
      info.name = std::string(a->text);
      info.role = RoleFromProcessName(info.name);
    }
  } else if (ev_.name == "process_labels") {
    if (const Arg* a = ev_.FindArg("labels")) processes_[pid].label = std::string(a->text);
  } else if (ev_.name == "process_sort_index") {
    if (const Arg* a = ev_.FindArg("sort_index"))
      if (auto v = IntOf(a->text)) processes_[pid].sort_index = *v;
  } else if (ev_.name == "thread_name" && ev_.has_tid) {
    if (const Arg* a = ev_.FindArg("name")) thread_names_[{pid, std::string(ev_.tid)}] = std::string(a->text);
  }
  return Status::Ok();
}

const ProcessInfo& TraceViewReader::ProcessOf(std::string_view pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end() && it->second.role != Role::kUnknown) return it->second;
  // No (known) process_name: decide from the event itself.
  unnamed_ = it != processes_.end() ? it->second : ProcessInfo{};
  unnamed_.role = GuessRole();
  return unnamed_;
}

Role TraceViewReader::GuessRole() const {
  if (ev_.cat == "cpu_op" || ev_.cat == "python_function" || ev_.cat == "enqueue" || ev_.cat == "dequeue" ||
      ev_.cat == "user_annotation")
    return Role::kPython;
  if (ev_.FindArg("Task Type")) return Role::kHardware;
  if (ev_.name.find('@') != std::string_view::npos && ev_.FindArg("connection_id")) return Role::kCann;
  return Role::kUnknown;
}

uint32_t TraceViewReader::LaneFor(std::string_view pid, std::string_view tid) {
  ThreadKey key{std::string(pid), std::string(tid)};
  auto it = lanes_.find(key);
  if (it != lanes_.end()) return it->second;
  uint32_t lane = static_cast<uint32_t>(lane_entries_.size());
  lanes_.emplace(std::move(key), lane);
  lane_entries_.emplace_back();
  return lane;
}

uint32_t TraceViewReader::HostTrack(const ProcessInfo& process) {
  // CANN API events run on the threads of the profiled Python process (same
  // OS tid, pid re-encoded by the writer): put them on that process's thread
  // tracks so that nesting by time works across both (reference §6 call-graph recipe).
  std::string_view pid = ev_.pid;
  const ProcessInfo* owner = &process;
  if (process.role == Role::kCann && !python_pid_.empty()) {
    pid = python_pid_;
    owner = &processes_[python_pid_];
  }
  uint32_t track = p_.TrackFor(pid, ev_.tid, TrackKind::kHostThread);
  if (p_.tracks.process_name[track] == kEmptyStr && !owner->name.empty())
    p_.tracks.process_name[track] = p_.Intern(owner->name);
  if (p_.tracks.name[track] == kEmptyStr) {
    auto it = thread_names_.find({std::string(pid), std::string(ev_.tid)});
    if (it == thread_names_.end()) it = thread_names_.find({std::string(ev_.pid), std::string(ev_.tid)});
    if (it != thread_names_.end()) p_.tracks.name[track] = p_.Intern(it->second);
  }
  return track;
}

uint32_t TraceViewReader::DeviceTrackFor(const ProcessInfo& process) {
  int32_t device = DeviceFromPid(ev_.pid, process.sort_index);
  if (device < 0) device = 0;
  int64_t stream = -1;
  if (process.role == Role::kHardware) {
    const Arg* s = ev_.FindArg("Physic Stream Id");
    if (!s) s = ev_.FindArg("Stream Id");
    if (s) stream = IntOf(s->text).value_or(-1);
    if (stream < 0) stream = IntOf(ev_.tid).value_or(-1);
  }
  uint32_t track = p_.DeviceTrack(ev_.pid, ev_.tid, device, stream);
  if (p_.tracks.process_name[track] == kEmptyStr && !process.name.empty())
    p_.tracks.process_name[track] = p_.Intern(process.name);
  if (p_.tracks.name[track] == kEmptyStr) {
    auto it = thread_names_.find({std::string(ev_.pid), std::string(ev_.tid)});
    if (it != thread_names_.end()) p_.tracks.name[track] = p_.Intern(it->second);
  }
  if (std::find(devices_seen_.begin(), devices_seen_.end(), device) == devices_seen_.end())
    devices_seen_.push_back(device);
  return track;
}

void TraceViewReader::AddArgs(OwnerKind owner, uint32_t row, std::initializer_list<std::string_view> skip) {
  for (const Arg& a : ev_.args) {
    if (std::find(skip.begin(), skip.end(), a.key) != skip.end()) continue;
    double number = a.type == od::json_type::number ? NumberOf(a.text) : std::numeric_limits<double>::quiet_NaN();
    p_.attributes.Add(owner, row, p_.Intern(a.key), p_.Intern(a.text), number);
  }
}

Status TraceViewReader::ReadEvents() {
  PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<io::ByteSource> source, io::OpenByteSource(path_, options_.limits));
  const json_stream::JsonStreamOptions stream = PassOptions(1);
  std::vector<std::unique_ptr<TraceViewSink>> sinks;
  std::vector<json_stream::EventSink*> sink_pointers;
  for (size_t i = DefaultParseThreads(); i > 0; --i) {
    sinks.push_back(std::make_unique<TraceViewSink>(this));
    sink_pointers.push_back(sinks.back().get());
  }
  auto no_top_level_keys = [](std::string_view, od::value) { return Status::Ok(); };
  return json_stream::StreamJsonEventsParallel(*source, stream, no_top_level_keys, sink_pointers, &p_).status();
}

void TraceViewReader::CommitStage(Stage& stage) {
  for (const StagedEvent& staged : stage.events) {
    static_cast<EventFields&>(ev_) = staged.fields;
    ev_.args = std::span<const Arg>(stage.args).subspan(staged.first_arg, staged.arg_count);
    HandleEvent(staged.offset);
  }
  ev_.Clear();  // its views point into the stage
  for (const auto& [reason, entry] : stage.loss.data_loss)
    p_.CountLoss(entry.kind, reason, entry.first_location, entry.count);
  stage.Clear();
}

void TraceViewReader::HandleEvent(uint64_t offset) {
  switch (ev_.ph) {
    case 'X': HandleComplete(offset); break;
    case 's': case 'f': case 't': HandleFlow(offset); break;
    case 'C': HandleCounter(offset); break;
    case 'M': break;  // read in the first pass
    default:
      p_.CountLoss(LossKind::kRowSkipped, std::string("unsupported event phase '") + ev_.ph + "' (skipped)", Where(offset));
  }
}

void TraceViewReader::HandleComplete(uint64_t offset) {
  std::optional<int64_t> ts = number_text::MicrosToNs(ev_.ts);
  std::optional<int64_t> dur = ev_.dur.empty() ? std::optional<int64_t>(0) : number_text::MicrosToNs(ev_.dur);
  if (!ev_.has_pid || !ev_.has_tid || !ts || !dur || *dur < 0) {
    p_.CountLoss(LossKind::kRowSkipped, "complete event without valid pid/tid/ts/dur (skipped)", Where(offset));
    return;
  }
  const ProcessInfo& process = ProcessOf(ev_.pid);
  uint32_t lane = LaneFor(ev_.pid, ev_.tid);
  switch (process.role) {
    case Role::kPython:
    case Role::kPythonGc:
    case Role::kCann: {
      HostOpRow row;
      row.name = p_.Intern(ev_.name);
      row.ts = *ts;
      row.dur = *dur;
      row.track = HostTrack(process);
      if (process.role == Role::kCann) {
        row.kind = HostOpKind::kRuntime;
        size_t at = ev_.name.find('@');
        row.category = p_.Intern(at == std::string_view::npos ? std::string_view("CANN") : ev_.name.substr(0, at));
      } else if (process.role == Role::kPythonGc) {
        row.kind = HostOpKind::kOther;
        row.category = p_.Intern(ev_.cat.empty() ? std::string_view("gc") : ev_.cat);
      } else {
        row.category = p_.Intern(ev_.cat);
        if (ev_.cat == "cpu_op")
          row.kind = ev_.name.starts_with("ProfilerStep#") ? HostOpKind::kUserAnnotation : HostOpKind::kOperator;
        else if (ev_.cat == "user_annotation") row.kind = HostOpKind::kUserAnnotation;
        else if (ev_.cat == "python_function") row.kind = HostOpKind::kPython;
        else row.kind = HostOpKind::kOther;  // enqueue, dequeue: torch_npu task queue
      }
      if (const Arg* a = ev_.FindArg("Sequence number"))
        if (auto v = IntOf(a->text); v && *v >= 0) row.sequence_number = *v;
      if (const Arg* a = ev_.FindArg("Input Dims")) row.input_dims = p_.Intern(a->text);
      if (const Arg* a = ev_.FindArg("Input type")) row.input_types = p_.Intern(a->text);
      uint32_t op = p_.host_ops.Add(row);
      if (process.role == Role::kCann) {
        AddArgs(OwnerKind::kHostOp, op, {"Thread Id"});
      } else {
        for (const Arg& a : ev_.args) {
          if (a.key == "Sequence number" || a.key == "Input Dims" || a.key == "Input type") continue;
          if (a.key == "Fwd thread id" && a.text == "0") continue;  // 0 = forward op, the common case
          double number = a.type == od::json_type::number ? NumberOf(a.text) : std::numeric_limits<double>::quiet_NaN();
          p_.attributes.Add(OwnerKind::kHostOp, op, p_.Intern(a.key), p_.Intern(a.text), number);
        }
      }
      lane_entries_[lane].push_back({*ts, *ts + *dur, op, false});
      return;
    }
    case Role::kHardware:
    case Role::kCommunication: {
      DeviceTaskRow row;
      row.name = p_.Intern(ev_.name);
      row.ts = *ts;
      row.dur = *dur;
      row.track = DeviceTrackFor(process);
      if (process.role == Role::kHardware) {
        const Arg* type = ev_.FindArg("Task Type");
        std::string_view task_type = type ? type->text : std::string_view();
        ascend::TaskTypeInfo info = ascend::ClassifyTaskType(task_type);
        row.kind = type ? info.kind : DeviceTaskKind::kOther;
        row.category = p_.Intern(task_type);
        if (!info.core_type.empty()) row.core_type = p_.Intern(info.core_type);
        if (const Arg* a = ev_.FindArg("size(B)")) row.bytes = IntOf(a->text).value_or(-1);
      } else {
        row.kind = DeviceTaskKind::kCommunication;
        // Threads "Plane k" hold HCCL sub-tasks; "Group … Communication" threads the whole ops.
        std::string_view thread;
        auto it = thread_names_.find({std::string(ev_.pid), std::string(ev_.tid)});
        if (it != thread_names_.end()) thread = it->second;
        bool sub_task = thread.starts_with("Plane");
        if (sub_task) {
          const Arg* type = ev_.FindArg("task type");
          row.category = p_.Intern(type ? type->text : std::string_view("communication_task"));
        } else {
          row.category = p_.Intern("communication_op");
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
      if (process.role == Role::kCommunication && row.category != p_.Intern("communication_op")) {
        PlaneTask pending{row, p_.tracks.device[row.track], lane, {}};
        for (const Arg& a : ev_.args)
          if (keep_arg(a)) pending.attributes.push_back({p_.Intern(a.key), p_.Intern(a.text), number_of(a)});
        plane_tasks_.push_back(std::move(pending));
        return;
      }
      uint32_t task = p_.device_tasks.Add(row);
      for (const Arg& a : ev_.args)
        if (keep_arg(a)) p_.attributes.Add(OwnerKind::kDeviceTask, task, p_.Intern(a.key), p_.Intern(a.text), number_of(a));
      lane_entries_[lane].push_back({*ts, *ts + *dur, task, true});
      return;
    }
    case Role::kOverlap:
      ++overlap_intervals_;  // derived by the writer from the tasks above; recomputed by the graph layer
      return;
    default:
      p_.CountLoss(LossKind::kRowSkipped, "complete event of an unrecognised process (skipped)",
                   Where(offset) + " (process '" + process.name + "')");
  }
}

void TraceViewReader::HandleFlow(uint64_t offset) {
  std::optional<int64_t> ts = number_text::MicrosToNs(ev_.ts);
  if (!ev_.has_pid || !ev_.has_tid || !ts || !ev_.has_id) {
    p_.CountLoss(LossKind::kLinkLost, "flow event without valid pid/tid/ts/id (skipped)", Where(offset));
    return;
  }
  std::optional<uint64_t> id = number_text::ParseUint64(ev_.id);
  uint64_t flow_id = id ? *id : HashId(ev_.id);
  const ProcessInfo& process = ProcessOf(ev_.pid);
  uint32_t track;
  if (process.role == Role::kHardware || process.role == Role::kCommunication)
    track = DeviceTrackFor(process);
  else if (process.role == Role::kPython || process.role == Role::kCann || process.role == Role::kPythonGc)
    track = HostTrack(process);
  else
    track = p_.TrackFor(ev_.pid, ev_.tid, TrackKind::kOther);
  p_.flows.Add(flow_id, p_.Intern(ev_.cat), ev_.ph, track, *ts);
  flow_lane_.push_back(LaneFor(ev_.pid, ev_.tid));
}

void TraceViewReader::HandleCounter(uint64_t offset) {
  std::optional<int64_t> ts = number_text::MicrosToNs(ev_.ts);
  if (!ev_.has_pid || !ts) {
    p_.CountLoss(LossKind::kRowSkipped, "counter event without valid pid/ts (skipped)", Where(offset));
    return;
  }
  const ProcessInfo& process = ProcessOf(ev_.pid);
  uint32_t track = p_.TrackFor(ev_.pid, ev_.has_tid ? ev_.tid : std::string_view("0"), TrackKind::kOther);
  if (p_.tracks.process_name[track] == kEmptyStr && !process.name.empty())
    p_.tracks.process_name[track] = p_.Intern(process.name);
  for (const Arg& a : ev_.args) {
    double v = NumberOf(a.text);
    if (std::isnan(v)) {
      p_.CountLoss(LossKind::kRowSkipped, "counter value not a number (skipped)", Where(offset));
      continue;
    }
    std::string name(ev_.name);
    name += '/';
    name += a.key;
    p_.counters.Add(p_.Intern(name), track, *ts, v);
  }
}

std::optional<LaneEntry> TraceViewReader::Bind(uint32_t lane, TimeNs ts) const {
  const std::vector<LaneEntry>& entries = lane_entries_[lane];
  // Entries are sorted by (ts, longer first): the last one starting at or
  // before ts that still covers it is the innermost enclosing slice.
  auto it = std::upper_bound(entries.begin(), entries.end(), ts,
                             [](TimeNs t, const LaneEntry& e) { return t < e.ts; });
  for (size_t looked = 0; it != entries.begin() && looked < kMaxFlowBindLookback; ++looked) {
    --it;
    if (it->end >= ts) return *it;
  }
  return std::nullopt;
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
  auto normalized = [](std::string_view text) {
    std::string out(text);
    for (char& c : out) c = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  DeviceTaskTable& tasks = p_.device_tasks;
  // Hardware tasks by (device, start): those on HCCL process tracks are not added yet.
  std::vector<uint32_t> hardware(tasks.size());
  for (uint32_t t = 0; t < hardware.size(); ++t) hardware[t] = t;
  auto key = [&](uint32_t t) { return std::pair(p_.tracks.device[tasks.track[t]], tasks.ts[t]); };
  std::sort(hardware.begin(), hardware.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::vector<uint8_t> taken(tasks.size(), 0);
  for (PlaneTask& plane : plane_tasks_) {
    const std::string name = normalized(p_.Str(plane.row.name));
    const std::string type = normalized(p_.Str(plane.row.category));  // its "task type" argument
    const TimeNs end = plane.row.ts + plane.row.dur;
    auto it = std::lower_bound(hardware.begin(), hardware.end(),
                               std::pair(plane.device, plane.row.ts - kDuplicateTaskToleranceNs),
                               [&](uint32_t t, const std::pair<int32_t, TimeNs>& v) { return key(t) < v; });
    int64_t match = -1;
    for (; it != hardware.end() && key(*it) <= std::pair(plane.device, plane.row.ts + kDuplicateTaskToleranceNs); ++it) {
      const uint32_t t = *it;
      if (taken[t] || std::llabs(tasks.ts[t] + tasks.dur[t] - end) > kDuplicateTaskToleranceNs) continue;
      const std::string hardware_name = normalized(p_.Str(tasks.name[t]));
      const std::string hardware_type = normalized(p_.Str(tasks.category[t]));
      if (hardware_name != name && hardware_type != name && hardware_name != type && hardware_type != type) continue;
      match = t;
      break;
    }
    if (match >= 0) {
      const uint32_t t = static_cast<uint32_t>(match);
      taken[t] = 1;
      ++plane_tasks_duplicating_hardware_;
      if (tasks.bytes[t] < 0) tasks.bytes[t] = plane.row.bytes;
      for (const PlaneTask::Attribute& a : plane.attributes)
        p_.attributes.Add(OwnerKind::kDeviceTask, t, a.key, a.text, a.number);
      continue;
    }
    const uint32_t task = tasks.Add(plane.row);
    for (const PlaneTask::Attribute& a : plane.attributes)
      p_.attributes.Add(OwnerKind::kDeviceTask, task, a.key, a.text, a.number);
    lane_entries_[plane.lane].push_back({plane.row.ts, plane.row.ts + plane.row.dur, task, true});
  }
  plane_tasks_.clear();
}

void TraceViewReader::LinkFlows() {
  for (std::vector<LaneEntry>& entries : lane_entries_)
    std::sort(entries.begin(), entries.end(), [](const LaneEntry& a, const LaneEntry& b) {
      return a.ts != b.ts ? a.ts < b.ts : (a.end != b.end ? a.end > b.end : a.row < b.row);
    });
  struct Pair {
    int64_t start = -1, finish = -1;
  };
  StrId host_to_device = p_.Intern("HostToDevice");
  StrId async_npu = p_.Intern("async_npu");
  // Only the two launch categories carry host -> device links.
  std::unordered_map<uint64_t, Pair> h2d, npu;
  size_t n = flow_lane_.size();
  for (size_t k = 0; k < n; ++k) {
    uint32_t row = first_flow_row_ + static_cast<uint32_t>(k);
    StrId cat = p_.flows.category[row];
    char ph = p_.flows.phase[row];
    auto* map = cat == host_to_device ? &h2d : cat == async_npu ? &npu : nullptr;
    if (!map || (ph != 's' && ph != 'f')) continue;
    Pair& pair = (*map)[p_.flows.id[row]];
    (ph == 's' ? pair.start : pair.finish) = static_cast<int64_t>(k);
  }
  auto link = [&](std::unordered_map<uint64_t, Pair>& pairs, bool use_correlation) {
    for (auto& [id, pair] : pairs) {
      if (pair.start < 0 || pair.finish < 0) {
        ++unpaired_flow_events_;
        continue;
      }
      uint32_t srow = first_flow_row_ + static_cast<uint32_t>(pair.start);
      uint32_t frow = first_flow_row_ + static_cast<uint32_t>(pair.finish);
      std::optional<LaneEntry> from = Bind(flow_lane_[pair.start], p_.flows.ts[srow]);
      std::optional<LaneEntry> to = Bind(flow_lane_[pair.finish], p_.flows.ts[frow]);
      if (!from || !to || from->is_task || !to->is_task) {
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
      std::vector<int64_t>& host_col = use_correlation ? p_.host_ops.correlation : p_.host_ops.external_id;
      std::vector<int64_t>& task_col = use_correlation ? p_.device_tasks.correlation : p_.device_tasks.external_id;
      if (host_col[from->row] == kNoId) host_col[from->row] = value;
      if (task_col[to->row] == kNoId) task_col[to->row] = host_col[from->row];
      else if (task_col[to->row] != host_col[from->row]) ++flow_link_conflicts_;
      if (use_correlation) {
        ++linked_host_to_device_;
      } else {
        ++linked_async_npu_;
        // Without CANN data (Level0) the op -> task flow is the only launch
        // link: let it stand in for the runtime correlation as well.
        if (p_.device_tasks.correlation[to->row] == kNoId) {
          if (p_.host_ops.correlation[from->row] == kNoId) p_.host_ops.correlation[from->row] = value;
          p_.device_tasks.correlation[to->row] = p_.host_ops.correlation[from->row];
        }
      }
    }
  };
  link(h2d, true);
  link(npu, false);
}

Status TraceViewReader::Run() {
  // Pass 1: process and thread names (metadata events may come anywhere).
  PYPTO_RETURN_IF_ERROR(ReadMetadata());
  std::string only_python;
  int python_processes = 0;
  for (const auto& [pid, info] : processes_)
    if (info.role == Role::kPython) {
      ++python_processes;
      only_python = pid;
    }
  if (python_processes == 1) python_pid_ = only_python;

  // Pass 2: everything else.
  first_flow_row_ = static_cast<uint32_t>(p_.flows.size());
  PYPTO_RETURN_IF_ERROR(ReadEvents());

  DropDuplicatePlaneTasks();
  LinkFlows();

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
