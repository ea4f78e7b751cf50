#include "importers/kineto/kineto_importer.h"

#include <array>
#include <cmath>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "importers/common/json_stream.h"
#include "importers/common/number_text.h"
#include "importers/common/staged_rows.h"

namespace pypto {
namespace kineto {

// Kernel-name prefixes of communication libraries (data, not logic): NCCL
// before and after its 2.19 rename (HTA #360), RCCL's own kernels.
constexpr std::array<std::string_view, 4> kCommunicationKernelPrefixes = {
    "ncclKernel_", "ncclDevKernel_", "rccl", "ncclDevFunc_"};

bool IsCommunicationKernelName(std::string_view name) {
  // Some builds prefix "void " (demangled signatures).
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  for (std::string_view prefix : kCommunicationKernelPrefixes)
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

}  // namespace kineto

namespace {

using json_stream::Eq;
using json_stream::RawKey;
using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

// Average bytes per event of real Kineto traces (fixtures: 305,654 B / 1,348 ev
// = 227 to 35,154,637 B / 75,718 ev = 464); used to reserve table capacity.
constexpr uint64_t kTypicalBytesPerEvent = 350;
// Share of events that become host ops / device tasks in LLM traces (fixtures:
// ~55% host, ~15% device); reservations overshoot slightly rather than regrow.
constexpr double kHostOpShare = 0.6;
constexpr double kDeviceTaskShare = 0.3;
// Record Window End more than this after the first event is bogus (TB drops
// it when > 24 h after Iteration Start; reference kineto-format.md §10.10).
constexpr int64_t kBogusWindowEndNs = int64_t{24} * 3600 * 1000000000;
// A trace without baseTimeNanoseconds is on the epoch clock when its times are
// after 2001-01-01 (epoch µs in Kineto ≤ 2.3); legacy exports start near 0.
constexpr int64_t kEpochThresholdNs = int64_t{978307200} * 1000000000;

// Flow categories that only repeat a launch correlation (reference §7.2/§8):
// counted in metadata, not stored (see FlowTable).
bool IsLaunchFlowCategory(std::string_view cat) {
  return Eq(cat, "ac2g") || Eq(cat, "async_cpu_to_gpu") || Eq(cat, "async_gpu") || Eq(cat, "async") ||
         Eq(cat, "cpu_to_cuda");
}

// NCCL/collective args kept as attributes (appendCollectiveArgs, kineto #821 … #1300).
constexpr std::array<std::string_view, 20> kCollectiveArgKeys = {
    "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "In split size",
    "Out split size", "Process Group Name", "Process Group Description", "Process Group Ranks",
    "Src Rank", "Dst Rank", "Seq", "Comms Id", "Global rank start", "Global rank stride",
    "Input Tensors start", "Output Tensors start", "Rank", "Is async"};
// ROCm launch config on the hipLaunchKernel runtime event (reference §6).
constexpr std::array<std::string_view, 5> kRocmLaunchArgKeys = {"kernel", "grid", "block", "shared memory", "cid"};

template <size_t N>
constexpr uint64_t LengthMask(const std::array<std::string_view, N>& keys) {
  uint64_t mask = 0;
  for (std::string_view k : keys) mask |= uint64_t{1} << (k.size() & 63);
  return mask;
}

// Most args keys are neither: reject them by length before comparing text
// (this runs for every args key of every event).
template <const auto& keys>
bool Contains(std::string_view key) {
  static constexpr uint64_t kLengths = LengthMask(keys);
  if (key.size() >= 64 || !((kLengths >> key.size()) & 1)) return false;
  for (std::string_view k : keys)
    if (k.size() == key.size() && k[0] == key[0] && k == key) return true;
  return false;
}

enum class Side : uint8_t { kHost, kDevice, kSkip };

struct CategoryInfo {
  Side side;
  HostOpKind host_kind;
  DeviceTaskKind device_kind;
  uint8_t era_bits;
};

enum EraBits : uint8_t {
  kEraLegacyCats = 1,     // Operator/Runtime/Kernel… (torch 1.8–1.10)
  kEraModernCats = 2,     // cpu_op/kernel… (≥ 1.11)
  kEraTorch20 = 4,        // cuda_driver, cuda_sync, ac2g/fwdbwd, Ev Idx (≥ 2.0)
  kEraAsyncGpuFlow = 8,   // async_cpu_to_gpu flows (1.11–1.13)
  kEraFloatTs = 16,       // ns-precision float ts (≥ 2.4)
};

CategoryInfo Classify(std::string_view cat) {
  using H = HostOpKind;
  using D = DeviceTaskKind;
  switch (cat.size()) {
    case 0: return {Side::kHost, H::kOperator, D::kOther, 0};  // legacy export: no cat
    case 4:
      if (Eq(cat, "Trace")) break;
      break;
    default: break;
  }
  if (Eq(cat, "cpu_op")) return {Side::kHost, H::kOperator, D::kOther, kEraModernCats};
  if (Eq(cat, "cuda_runtime")) return {Side::kHost, H::kRuntime, D::kOther, kEraModernCats};
  if (Eq(cat, "kernel")) return {Side::kDevice, H::kOther, D::kKernel, kEraModernCats};
  if (Eq(cat, "python_function")) return {Side::kHost, H::kPython, D::kOther, kEraModernCats};
  if (Eq(cat, "user_annotation")) return {Side::kHost, H::kUserAnnotation, D::kOther, kEraModernCats};
  if (Eq(cat, "gpu_memcpy")) return {Side::kDevice, H::kOther, D::kMemcpy, kEraModernCats};
  if (Eq(cat, "gpu_memset")) return {Side::kDevice, H::kOther, D::kMemset, kEraModernCats};
  if (Eq(cat, "gpu_user_annotation")) return {Side::kDevice, H::kOther, D::kAnnotation, kEraModernCats};
  if (Eq(cat, "cuda_driver")) return {Side::kHost, H::kDriver, D::kOther, kEraTorch20};
  if (Eq(cat, "cuda_sync")) return {Side::kDevice, H::kOther, D::kSync, kEraTorch20};
  if (Eq(cat, "Operator")) return {Side::kHost, H::kOperator, D::kOther, kEraLegacyCats};
  if (Eq(cat, "Runtime")) return {Side::kHost, H::kRuntime, D::kOther, kEraLegacyCats};
  if (Eq(cat, "Kernel")) return {Side::kDevice, H::kOther, D::kKernel, kEraLegacyCats};
  if (Eq(cat, "Memcpy")) return {Side::kDevice, H::kOther, D::kMemcpy, kEraLegacyCats};
  if (Eq(cat, "Memset")) return {Side::kDevice, H::kOther, D::kMemset, kEraLegacyCats};
  if (Eq(cat, "Python")) return {Side::kHost, H::kPython, D::kOther, kEraLegacyCats};
  if (Eq(cat, "xpu_runtime") || Eq(cat, "privateuse1_runtime") || Eq(cat, "mtia_runtime"))
    return {Side::kHost, H::kRuntime, D::kOther, 0};
  if (Eq(cat, "xpu_driver") || Eq(cat, "privateuse1_driver")) return {Side::kHost, H::kDriver, D::kOther, 0};
  if (Eq(cat, "xpu_sync")) return {Side::kDevice, H::kOther, D::kSync, 0};
  if (Eq(cat, "cuda_event")) return {Side::kDevice, H::kOther, D::kOther, 0};
  return {Side::kHost, H::kOther, D::kOther, 0};  // Trace spans, unknown categories: kept as kOther
}

// "0x1f" / "0X1F" (1 to 16 hex digits) as the id's bits; false otherwise.
bool ParseHexId(std::string_view text, uint64_t* out) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return false;
  auto [ptr, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), *out, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// Exact integers from a JSON number token (or a string's text); false for
// floats, junk and overflow.
bool ParseInt64(std::string_view text, int64_t* out) {
  std::optional<int64_t> v = number_text::ParseInt64(text);
  if (v) *out = *v;
  return v.has_value();
}

bool ParseUint64(std::string_view text, uint64_t* out) {
  std::optional<uint64_t> v = number_text::ParseUint64(text);
  if (v) *out = *v;
  return v.has_value();
}

// A value's text: string contents (unescaped) or the raw token of a scalar;
// containers come back compacted in `scratch`.
simdjson::error_code ValueText(value& v, std::string_view* text, bool* is_string, std::string* scratch) {
  json_type type;
  if (auto e = v.type().get(type)) return e;
  *is_string = false;
  switch (type) {
    case json_type::string:
      *is_string = true;
      return v.get_string().get(*text);
    case json_type::array: {
      simdjson::ondemand::array a;
      std::string_view raw;
      if (auto e = v.get_array().get(a)) return e;
      if (auto e = a.raw_json().get(raw)) return e;
      scratch->clear();
      json_stream::AppendCompactJson(raw, scratch);
      *text = *scratch;
      return simdjson::SUCCESS;
    }
    case json_type::object: {
      simdjson::ondemand::object o;
      std::string_view raw;
      if (auto e = v.get_object().get(o)) return e;
      if (auto e = o.raw_json().get(raw)) return e;
      scratch->clear();
      json_stream::AppendCompactJson(raw, scratch);
      *text = *scratch;
      return simdjson::SUCCESS;
    }
    default:
      *text = json_stream::TrimToken(v.raw_json_token());
      return simdjson::SUCCESS;
  }
}

// The value of a JSON number token, NaN for anything else. std::from_chars
// (correctly rounded, no locale, no copy) instead of strtod, which took ~3% of
// a Kineto import with memory events (three numbers each).
double NumberOf(std::string_view text, bool is_string) {
  if (is_string || text.empty()) return std::nan("");
  double d = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, d);
  return ec == std::errc() && ptr == end ? d : std::nan("");
}

struct PendingAttribute {
  StrId key;
  StrId text;
  double number;
};

// Everything one event says, gathered before any row is written, so that an
// event that turns out malformed leaves no partial rows behind.
struct Event {
  char phase = 0;
  std::string_view cat, name, pid, tid, id_text, scope;
  bool has_cat = false, has_ts = false, has_dur = false, has_id = false, pid_is_string = false;
  std::string_view ts_text, dur_text;
  // args
  int64_t external_id = kNoId, correlation = kNoId, sequence_number = kNoId, bytes = -1;
  int64_t device = -1, stream = -1;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  StrId input_dims = kEmptyStr, input_types = kEmptyStr;
  std::string_view meta_name;  // M events: args.name
  bool has_memory_total_allocated = false, has_memory_total_reserved = false, has_memory_bytes = false;
  double total_allocated = 0, total_reserved = 0, memory_bytes = 0;
  uint8_t era_bits = 0;
};

// Cache of shape-list texts per reader: 1024 slots (a decode trace has a few
// hundred distinct "Input Dims"), texts up to 512 bytes (longer ones are rare
// and not worth keeping a copy of).
constexpr size_t kRawTextCacheSlots = 1024;
constexpr size_t kRawTextCacheMaxBytes = 512;

// Sides of a track key: an event's (pid, tid) names a host thread, a device
// stream or a counter track.
constexpr char kHostSide = 'H';
constexpr char kDeviceSide = 'D';
constexpr char kCounterSide = 'O';

// Reads events into `profile`. Used in two roles:
//  - the import's reader: top-level keys, Finish, and (single-thread import)
//    every event, straight into the result;
//  - a parse thread's reader (`staging` = true): events into a thread-local
//    profile whose strings and tracks are its own, committed into the import's
//    reader by CommitStaged in file order. Thread-local tables because
//    interning into one shared table would need a lock per string, and names
//    repeat so much that each local table stays small (a few thousand strings).
class KinetoReader {
 public:
  KinetoReader(Profile* profile, std::string display_name, bool staging = false)
      : profile_(profile), display_(std::move(display_name)), staging_(staging) {
    host_start_ = profile->host_ops.size();
    device_start_ = profile->device_tasks.size();
    flow_start_ = profile->flows.size();
    counter_start_ = profile->counters.size();
    track_start_ = profile->tracks.size();
    device_row_start_ = profile->devices.size();
  }

  Status OnTopLevel(std::string_view key, value v);
  Status OnEvent(json_stream::JsonEvent& event);
  Status Finish(const json_stream::JsonStreamStats& stats, bool legacy_importer);
  // Appends what `staged` (a staging reader) read since its last commit to
  // this reader's profile, as if this reader had read those events, then
  // clears it (its strings and tracks stay, with their ids in this profile).
  void CommitStaged(KinetoReader& staged);

 private:
  // A (pid, tid, side) first seen by a staging reader, replayed at commit.
  struct TrackLogEntry {
    uint32_t local_track;
    char side;
    int32_t device;
    int64_t stream;
    StrId pid, tid;  // local string ids
  };

  std::string Where(uint64_t offset) const { return display_ + ": byte " + std::to_string(offset); }
  Status Bad(simdjson::error_code e) const {
    return CorruptError(std::string("malformed event skipped (") + simdjson::error_message(e) + ")");
  }
  // OnEvent's steps. Fields are read into an Event first, then the event's
  // phase picks the handler that writes its rows.
  Status ReadEventFields(json_stream::JsonEvent& event, Event* ev);
  // A ts/dur text in µs as ns; a negative time is clamped to 0, an unusable
  // one drops the event (false), each counted as a loss.
  bool ParseTime(std::string_view text, const char* what, uint64_t offset, int64_t* ns);
  void OnMetadataEvent(const Event& ev);                             // ph M
  void OnCompleteOrInstantEvent(const Event& ev, uint64_t offset);  // ph X, i, I
  // Instant events that are markers, not ops ([memory], Record Window End,
  // Iteration Start): records what they say, false for any other event.
  bool OnInstantMarker(const Event& ev, int64_t ts, uint64_t offset);
  void AddDeviceTask(const Event& ev, const CategoryInfo& info, int64_t ts, int64_t dur);
  void AddHostOp(const Event& ev, const CategoryInfo& info, bool instant, int64_t ts, int64_t dur);
  void OnFlowEvent(const Event& ev, uint64_t offset);               // ph s, f
  void OnCounterEvent(const Event& ev, uint64_t offset);            // ph C
  void OnUnsupportedPhase(char phase, uint64_t offset);
  Status ReadArgs(value& v, Event* ev, uint64_t offset);
  // "Input Dims" / "Input type": the value's compact text, interned.
  Status InternShapeList(value& v, StrId* out);
  Status ReadDims(value& v, int32_t out[3]);
  // Track of an event's (pid, tid) on a side; the first sighting of each
  // (pid, tid, side) adds or finds it in the profile (device side: with its
  // device and stream), later ones come from a cache.
  uint32_t Track(const Event& ev, char side);
  // deviceProperties lists the devices visible to the process by their
  // logical index (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES renumber from
  // 0), while device events carry the physical index (e.g. device 9 on a node
  // of 16 GPUs; tracelens_mi300x_sglang_qwen3_8b_decode). When the trace has
  // exactly one described device and device events use exactly one other
  // index, that index is the described device: relabel the device row so the
  // device's name and properties reach the tasks, and say so in a note.
  void ReconcileDeviceIndices() {
    std::set<int32_t> task_devices;
    for (size_t t = track_start_; t < profile_->tracks.size(); ++t)
      if (profile_->tracks.kind[t] == TrackKind::kDeviceStream && profile_->tracks.device[t] >= 0)
        task_devices.insert(profile_->tracks.device[t]);
    const size_t described = profile_->devices.size() - device_row_start_;
    if (described != 1 || task_devices.size() != 1) return;
    DeviceRow& row = profile_->devices.rows[device_row_start_];
    const int32_t used = *task_devices.begin();
    if (row.index == used) return;
    profile_->notes.push_back(display_ + ": device events use device " + std::to_string(used) +
                              " but deviceProperties describes only device " + std::to_string(row.index) +
                              " (a renumbered visible device); treated as the same device");
    row.index = used;  // device attributes are keyed by device row, so they follow
  }

  Status ReadDeviceProperties(value v);

  Profile* profile_;
  std::string display_;
  size_t host_start_, device_start_, flow_start_, counter_start_, track_start_, device_row_start_;
  std::vector<PendingAttribute> pending_;
  std::string scratch_, scratch2_, key_buf_;
  // Raw JSON text of a shape list -> its interned compact text, direct-mapped.
  struct RawTextEntry {
    std::string raw;
    StrId id = kEmptyStr;
  };
  std::vector<RawTextEntry> raw_text_cache_ = std::vector<RawTextEntry>(kRawTextCacheSlots);
  // (pid, tid, side) -> track; a tiny cache before the profile's map.
  std::unordered_map<std::string, uint32_t> track_cache_;
  std::string last_track_key_;
  uint32_t last_track_ = 0;
  std::map<std::string, std::string> process_names_;                        // pid -> name
  std::map<std::pair<std::string, std::string>, std::string> thread_names_;  // (pid, tid) -> name
  // Top-level facts.
  bool has_base_ = false;
  int64_t base_ns_ = 0;
  bool rocm_hint_ = false;
  bool saw_cpu_functions_pid_ = false;
  bool saw_any_cat_ = false;
  uint8_t era_bits_ = 0;
  uint64_t launch_flows_ = 0;
  int64_t min_ts_ = std::numeric_limits<int64_t>::max();
  bool has_window_end_ = false;
  int64_t window_end_ns_ = 0;
  uint64_t window_end_offset_ = 0;
  bool has_iteration_start_ = false;
  int64_t iteration_start_ns_ = 0;
  uint64_t events_without_external_id_ = 0;
  // Staging role.
  bool staging_ = false;
  std::vector<TrackLogEntry> track_log_;  // since the last commit
  std::vector<StrId> string_remap_;       // local StrId -> committed profile's StrId
  std::vector<uint32_t> track_remap_;     // local track -> committed profile's track
};

void KinetoReader::CommitStaged(KinetoReader& staged) {
  Profile& from = *staged.profile_;
  Profile& to = *profile_;
  // Strings first seen by the staging reader, in its first-seen order (which
  // is file order within its ranges): the ids come out as a one-thread read
  // would give them.
  staged_rows::ExtendStringRemap(from, &to, &staged.string_remap_);
  // Tracks: replay first sightings through this reader's cache so the first
  // sighting in the file decides (kind, device, stream), as in Track().
  for (const TrackLogEntry& e : staged.track_log_) {
    std::string_view pid = from.Str(e.pid), tid = from.Str(e.tid);
    key_buf_.assign(pid);
    key_buf_.push_back('\x1f');
    key_buf_.append(tid);
    key_buf_.push_back(e.side);
    uint32_t track;
    if (auto it = track_cache_.find(key_buf_); it != track_cache_.end()) {
      track = it->second;
    } else {
      track = e.side == kDeviceSide ? to.DeviceTrack(pid, tid, e.device, e.stream)
                                    : to.TrackFor(pid, tid, e.side == kCounterSide ? TrackKind::kOther
                                                                                   : TrackKind::kHostThread);
      track_cache_.emplace(key_buf_, track);
    }
    if (staged.track_remap_.size() <= e.local_track) staged.track_remap_.resize(e.local_track + 1, 0);
    staged.track_remap_[e.local_track] = track;
  }
  last_track_key_.clear();
  staged_rows::Append(from, staged.string_remap_, staged.track_remap_, &to);
  // Event facts: sums, ORs, minimum; "last one wins" facts in commit (= file) order.
  for (auto& [pid, name] : staged.process_names_) process_names_[pid] = std::move(name);
  for (auto& [key, name] : staged.thread_names_) thread_names_[key] = std::move(name);
  saw_cpu_functions_pid_ |= staged.saw_cpu_functions_pid_;
  saw_any_cat_ |= staged.saw_any_cat_;
  era_bits_ |= staged.era_bits_;
  launch_flows_ += staged.launch_flows_;
  min_ts_ = std::min(min_ts_, staged.min_ts_);
  if (staged.has_window_end_) {
    has_window_end_ = true;
    window_end_ns_ = staged.window_end_ns_;
    window_end_offset_ = staged.window_end_offset_;
  }
  if (staged.has_iteration_start_) {
    has_iteration_start_ = true;
    iteration_start_ns_ = staged.iteration_start_ns_;
  }
  events_without_external_id_ += staged.events_without_external_id_;

  staged_rows::Clear(&from);
  staged.track_log_.clear();
  staged.process_names_.clear();
  staged.thread_names_.clear();
  staged.saw_cpu_functions_pid_ = staged.saw_any_cat_ = false;
  staged.era_bits_ = 0;
  staged.launch_flows_ = 0;
  staged.min_ts_ = std::numeric_limits<int64_t>::max();
  staged.has_window_end_ = staged.has_iteration_start_ = false;
  staged.events_without_external_id_ = 0;
}

// One parse thread's sink: a staging reader over a thread-local profile.
class KinetoSink final : public json_stream::EventSink {
 public:
  KinetoSink(KinetoReader* target, std::string display_name)
      : target_(target), display_(std::move(display_name)) {
    Reset();
  }
  Status OnEvent(json_stream::JsonEvent& event) override { return reader_->OnEvent(event); }
  Profile* loss_profile() override { return staging_.get(); }
  void Commit() override { target_->CommitStaged(*reader_); }
  // Rare (a malformed event in a parallel range): start over with empty
  // tables, so that strings seen only in the discarded events get no ids.
  void Discard() override { Reset(); }

 private:
  void Reset() {
    reader_.reset();
    staging_ = std::make_unique<Profile>();
    reader_ = std::make_unique<KinetoReader>(staging_.get(), display_, /*staging=*/true);
  }
  KinetoReader* target_;
  std::string display_;
  std::unique_ptr<Profile> staging_;
  std::unique_ptr<KinetoReader> reader_;
};

Status KinetoReader::ReadDims(value& v, int32_t out[3]) {
  simdjson::ondemand::array a;
  if (auto e = v.get_array().get(a)) return Bad(e);
  int i = 0;
  for (auto element : a) {
    int64_t x;
    if (auto e = element.get_int64().get(x)) return Bad(e);
    if (i < 3) out[i++] = static_cast<int32_t>(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX));
  }
  return Status::Ok();
}

Status KinetoReader::InternShapeList(value& v, StrId* out) {
  // Arrays (the usual case) by their raw text first: the same few shapes repeat
  // on every op, so most lookups skip compacting and interning the text.
  simdjson::ondemand::json_type type;
  if (auto e = v.type().get(type)) return Bad(e);
  if (type == simdjson::ondemand::json_type::array) {
    simdjson::ondemand::array a;
    std::string_view raw;
    if (auto e = v.get_array().get(a)) return Bad(e);
    if (auto e = a.raw_json().get(raw)) return Bad(e);
    RawTextEntry& entry = raw_text_cache_[HashString(raw) & (kRawTextCacheSlots - 1)];
    if (entry.id != kEmptyStr && entry.raw == raw) {
      *out = entry.id;
      return Status::Ok();
    }
    scratch_.clear();
    json_stream::AppendCompactJson(raw, &scratch_);
    *out = profile_->Intern(scratch_);
    if (raw.size() <= kRawTextCacheMaxBytes) {
      entry.raw.assign(raw);
      entry.id = *out;
    }
    return Status::Ok();
  }
  std::string_view text;
  bool is_string;
  if (auto e = ValueText(v, &text, &is_string, &scratch_)) return Bad(e);
  *out = profile_->Intern(text);
  return Status::Ok();
}

Status KinetoReader::ReadArgs(value& v, Event* ev, uint64_t offset) {
  simdjson::ondemand::object args;
  if (auto e = v.get_object().get(args)) return Bad(e);
  uint32_t seen = 0;  // known keys met, for duplicate detection
  auto once = [&](int bit) {
    if (seen & (1u << bit)) profile_->CountLoss(LossKind::kValueIgnored, "duplicate key in an event (last value wins)", Where(offset));
    seen |= 1u << bit;
  };
  auto read_id = [&](value& x, int64_t* out) -> Status {
    std::string_view text;
    bool is_string;
    if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
    if (!ParseInt64(text, out)) {
      uint64_t u;
      if (!is_string && ParseUint64(text, &u)) {
        // Above int64: keep the bits (ids are compared, never added).
        *out = static_cast<int64_t>(u);
      } else if (is_string && ParseHexId(text, &u)) {
        // ROCm traces write some ids as hex strings ("stream": "0x0"): an id, not damage.
        *out = static_cast<int64_t>(u);
      } else {
        *out = kNoId;
        profile_->CountLoss(LossKind::kValueIgnored, "id that is not an integer ignored", Where(offset));
      }
    }
    return Status::Ok();
  };
  for (auto field_result : args) {
    // References, not copies: copying On-Demand's iterator structs costs a
    // store-forwarding stall per field with GCC (measured with perf annotate).
    if (auto e = field_result.error()) return Bad(e);
    simdjson::ondemand::field& field = field_result.value_unsafe();
    const std::string_view key = RawKey(field);
    value& x = field.value();
    switch (key.size()) {
      case 4:
        if (Eq(key, "grid")) { once(0); PYPTO_RETURN_IF_ERROR(ReadDims(x, ev->grid)); continue; }
        if (Eq(key, "name")) {
          once(1);
          bool is_string;
          if (auto e = ValueText(x, &ev->meta_name, &is_string, &scratch_)) return Bad(e);
          if (!is_string) { scratch2_.assign(ev->meta_name); ev->meta_name = scratch2_; }
          continue;
        }
        break;
      case 5:
        if (Eq(key, "block")) { once(2); PYPTO_RETURN_IF_ERROR(ReadDims(x, ev->block)); continue; }
        if (Eq(key, "bytes") || Eq(key, "Bytes")) {
          once(3);
          std::string_view text;
          bool is_string;
          if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
          int64_t b;
          if (ParseInt64(text, &b)) ev->bytes = b;
          if (Eq(key, "Bytes")) { ev->has_memory_bytes = true; ev->memory_bytes = NumberOf(text, is_string); }
          continue;
        }
        break;
      case 6:
        if (Eq(key, "device")) {
          once(4);
          int64_t d;
          PYPTO_RETURN_IF_ERROR(read_id(x, &d));
          ev->device = d;
          continue;
        }
        if (Eq(key, "stream")) {
          once(5);
          int64_t s;
          PYPTO_RETURN_IF_ERROR(read_id(x, &s));
          ev->stream = s;
          continue;
        }
        if (Eq(key, "Ev Idx")) { ev->era_bits |= kEraTorch20; continue; }
        break;
      case 10:
        if (Eq(key, "Input Dims")) {
          once(6);
          PYPTO_RETURN_IF_ERROR(InternShapeList(x, &ev->input_dims));
          continue;
        }
        if (Eq(key, "Input type")) {
          once(7);
          PYPTO_RETURN_IF_ERROR(InternShapeList(x, &ev->input_types));
          continue;
        }
        break;
      case 11:
        if (Eq(key, "External id") || Eq(key, "external id")) {
          once(8);
          PYPTO_RETURN_IF_ERROR(read_id(x, &ev->external_id));
          continue;
        }
        if (Eq(key, "correlation")) { once(9); PYPTO_RETURN_IF_ERROR(read_id(x, &ev->correlation)); continue; }
        break;
      case 14:
        if (Eq(key, "Total Reserved")) {
          once(10);
          std::string_view text;
          bool is_string;
          if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
          ev->has_memory_total_reserved = true;
          ev->total_reserved = NumberOf(text, is_string);
          continue;
        }
        break;
      case 15:
        if (Eq(key, "Sequence number")) { once(11); PYPTO_RETURN_IF_ERROR(read_id(x, &ev->sequence_number)); continue; }
        if (Eq(key, "Total Allocated")) {
          once(12);
          std::string_view text;
          bool is_string;
          if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
          ev->has_memory_total_allocated = true;
          ev->total_allocated = NumberOf(text, is_string);
          continue;
        }
        break;
      case 18:
        if (Eq(key, "Record function id")) { ev->era_bits |= kEraTorch20; continue; }
        break;
      default:
        break;
    }
    bool collective = Contains<kCollectiveArgKeys>(key);
    bool rocm = !collective && Contains<kRocmLaunchArgKeys>(key);
    if (collective || rocm || ev->phase == 'C') {
      std::string_view text;
      bool is_string;
      // `key` lives in simdjson's string buffer for the whole document.
      if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
      // ROCm launch keys matter on runtime calls only; filtered when the row is written.
      pending_.push_back({profile_->Intern(key), profile_->Intern(text), NumberOf(text, is_string)});
    }
  }
  return Status::Ok();
}

uint32_t KinetoReader::Track(const Event& ev, char side) {
  key_buf_.assign(ev.pid);
  key_buf_.push_back('\x1f');
  key_buf_.append(ev.tid);
  key_buf_.push_back(side);
  if (key_buf_ == last_track_key_) return last_track_;
  auto it = track_cache_.find(key_buf_);
  uint32_t track;
  if (it != track_cache_.end()) {
    track = it->second;
  } else {
    int64_t device = -1, stream = -1;
    if (side == kDeviceSide) {
      device = ev.device;
      stream = ev.stream;
      if (device < 0 && !ParseInt64(ev.pid, &device)) device = -1;
      if (stream < 0) {
        std::string_view tid = ev.tid;
        if (tid.substr(0, 7) == "stream ") tid.remove_prefix(7);
        if (!ParseInt64(json_stream::TrimToken(tid), &stream)) stream = -1;
      }
      track = profile_->DeviceTrack(ev.pid, ev.tid, static_cast<int32_t>(device), stream);
    } else {
      // Counter tracks ('C') are found or added as kOther, host tracks as threads.
      track = profile_->TrackFor(ev.pid, ev.tid, side == kCounterSide ? TrackKind::kOther : TrackKind::kHostThread);
    }
    track_cache_.emplace(key_buf_, track);
    if (staging_) {
      track_log_.push_back({track, side, static_cast<int32_t>(device), stream, profile_->strings.Find(ev.pid),
                            profile_->strings.Find(ev.tid)});
    }
  }
  last_track_key_ = key_buf_;
  last_track_ = track;
  return track;
}

Status KinetoReader::OnEvent(json_stream::JsonEvent& event) {
  Event ev;
  PYPTO_RETURN_IF_ERROR(ReadEventFields(event, &ev));
  if (ev.phase == 0) {
    profile_->CountLoss(LossKind::kRowSkipped, "event without \"ph\" skipped", Where(event.offset));
    return Status::Ok();
  }
  if (Eq(ev.pid, "CPU functions")) saw_cpu_functions_pid_ = true;
  if (ev.has_cat && ev.phase == 'X') saw_any_cat_ = true;
  era_bits_ |= ev.era_bits;
  switch (ev.phase) {
    case 'M': OnMetadataEvent(ev); break;
    case 'X':
    case 'i':
    case 'I': OnCompleteOrInstantEvent(ev, event.offset); break;
    case 's':
    case 'f': OnFlowEvent(ev, event.offset); break;
    case 'C': OnCounterEvent(ev, event.offset); break;
    default: OnUnsupportedPhase(ev.phase, event.offset); break;
  }
  return Status::Ok();
}

// Views into `scratch_` may be overwritten by a later container value; the
// views kept in ev (pid, tid, ts text) are of scalars, so they point into the
// document or simdjson's string buffer, never into scratch_.
Status KinetoReader::ReadEventFields(json_stream::JsonEvent& event, Event* ev) {
  pending_.clear();
  uint32_t seen = 0;
  for (auto field_result : event.object) {
    // References, not copies: copying On-Demand's iterator structs costs a
    // store-forwarding stall per field with GCC (measured with perf annotate).
    if (auto e = field_result.error()) return Bad(e);
    simdjson::ondemand::field& field = field_result.value_unsafe();
    const std::string_view key = RawKey(field);
    value& x = field.value();
    int bit = -1;
    if (Eq(key, "ph")) {
      bit = 0;
      std::string_view ph;
      if (auto e = x.get_string().get(ph)) return Bad(e);
      ev->phase = ph.size() == 1 ? ph[0] : '?';
    } else if (Eq(key, "cat")) {
      bit = 1;
      if (auto e = x.get_string().get(ev->cat)) return Bad(e);
      ev->has_cat = true;
    } else if (Eq(key, "name")) {
      bit = 2;
      if (auto e = x.get_string().get(ev->name)) return Bad(e);
    } else if (Eq(key, "pid") || Eq(key, "tid")) {
      bit = key[0] == 'p' ? 3 : 4;
      std::string_view text;
      bool is_string;
      if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
      (key[0] == 'p' ? ev->pid : ev->tid) = text;
      if (key[0] == 'p') ev->pid_is_string = is_string;
    } else if (Eq(key, "ts") || Eq(key, "dur")) {
      bit = Eq(key, "ts") ? 5 : 6;
      std::string_view text;
      bool is_string;
      if (auto e = ValueText(x, &text, &is_string, &scratch_)) return Bad(e);
      if (Eq(key, "ts")) { ev->ts_text = text; ev->has_ts = true; } else { ev->dur_text = text; ev->has_dur = true; }
      if (!is_string && text.find('.') != std::string_view::npos) ev->era_bits |= kEraFloatTs;
    } else if (Eq(key, "id")) {
      bit = 7;
      bool is_string;
      if (auto e = ValueText(x, &ev->id_text, &is_string, &scratch_)) return Bad(e);
      ev->has_id = true;
    } else if (Eq(key, "s")) {
      if (auto e = x.get_string().get(ev->scope)) return Bad(e);
    } else if (Eq(key, "args")) {
      bit = 8;
      // Args are read in place now (On-Demand is forward-only); what they hold
      // is interpreted once the event's phase and category are known.
      PYPTO_RETURN_IF_ERROR(ReadArgs(x, ev, event.offset));
    }
    if (bit >= 0) {
      if (seen & (1u << bit)) profile_->CountLoss(LossKind::kValueIgnored, "duplicate key in an event (last value wins)", Where(event.offset));
      seen |= 1u << bit;
    }
  }
  return Status::Ok();
}

bool KinetoReader::ParseTime(std::string_view text, const char* what, uint64_t offset, int64_t* ns) {
  switch (number_text::ParseScaledDecimal(text, 3, ns)) {
    case number_text::NumberParse::kOk:
      if (*ns < 0) {
        profile_->CountLoss(LossKind::kValueRepaired, std::string("negative ") + what + " clamped to 0", Where(offset));
        *ns = 0;
      }
      return true;
    case number_text::NumberParse::kOverflow:
      profile_->CountLoss(LossKind::kRowSkipped, std::string(what) + " overflows int64 nanoseconds; event dropped", Where(offset));
      return false;
    case number_text::NumberParse::kInvalid:
      profile_->CountLoss(LossKind::kRowSkipped, std::string(what) + " is not a number; event dropped", Where(offset));
      return false;
  }
  return false;
}

void KinetoReader::OnMetadataEvent(const Event& ev) {
  // Only names are kept: labels and sort indices carry no timing facts.
  if (Eq(ev.name, "process_name")) {
    process_names_[std::string(ev.pid)] = std::string(ev.meta_name);
  } else if (Eq(ev.name, "thread_name")) {
    thread_names_[{std::string(ev.pid), std::string(ev.tid)}] = std::string(ev.meta_name);
  }
}

void KinetoReader::OnCompleteOrInstantEvent(const Event& ev, uint64_t offset) {
  int64_t ts = 0, dur = 0;
  if (!ev.has_ts) {
    profile_->CountLoss(LossKind::kRowSkipped, "event without \"ts\" dropped", Where(offset));
    return;
  }
  if (!ParseTime(ev.ts_text, "ts", offset, &ts)) return;
  if (ev.phase == 'X' && ev.has_dur && !ParseTime(ev.dur_text, "dur", offset, &dur)) return;
  const bool instant = ev.phase != 'X';
  if (instant && OnInstantMarker(ev, ts, offset)) return;
  min_ts_ = std::min(min_ts_, ts);
  CategoryInfo info = Classify(ev.cat);
  era_bits_ |= info.era_bits;
  if (info.side == Side::kDevice && !instant) {
    AddDeviceTask(ev, info, ts, dur);
  } else {
    AddHostOp(ev, info, instant, ts, dur);
  }
}

bool KinetoReader::OnInstantMarker(const Event& ev, int64_t ts, uint64_t offset) {
  if (Eq(ev.name, "[memory]")) {
    uint32_t track = Track(ev, kHostSide);
    if (ev.has_memory_total_allocated)
      profile_->counters.Add(profile_->Intern("Total Allocated"), track, ts, ev.total_allocated);
    if (ev.has_memory_total_reserved)
      profile_->counters.Add(profile_->Intern("Total Reserved"), track, ts, ev.total_reserved);
    if (ev.has_memory_bytes)
      profile_->counters.Add(profile_->Intern("Allocation Bytes"), track, ts, ev.memory_bytes);
    return true;
  }
  if (Eq(ev.name, "Record Window End")) {
    has_window_end_ = true;
    window_end_ns_ = ts;
    window_end_offset_ = offset;
    return true;
  }
  if (ev.name.substr(0, 15) == "Iteration Start") {
    has_iteration_start_ = true;
    iteration_start_ns_ = ts;
    return true;
  }
  return false;
}

void KinetoReader::AddDeviceTask(const Event& ev, const CategoryInfo& info, int64_t ts, int64_t dur) {
  DeviceTaskRow row;
  row.name = profile_->Intern(ev.name);
  row.category = profile_->Intern(ev.cat);
  row.kind = info.device_kind;
  if (row.kind == DeviceTaskKind::kKernel && kineto::IsCommunicationKernelName(ev.name))
    row.kind = DeviceTaskKind::kCommunication;
  row.track = Track(ev, kDeviceSide);
  row.ts = ts;
  row.dur = dur;
  row.correlation = ev.correlation;
  row.external_id = ev.external_id;
  if (ev.external_id == kNoId) ++events_without_external_id_;
  for (int k = 0; k < 3; ++k) { row.grid[k] = ev.grid[k]; row.block[k] = ev.block[k]; }
  if (row.kind == DeviceTaskKind::kMemcpy || row.kind == DeviceTaskKind::kMemset ||
      row.kind == DeviceTaskKind::kCommunication)
    row.bytes = ev.bytes;
  uint32_t r = profile_->device_tasks.Add(row);
  for (const PendingAttribute& a : pending_) {
    if (Contains<kRocmLaunchArgKeys>(profile_->Str(a.key))) continue;  // grid/block are columns here
    profile_->attributes.Add(OwnerKind::kDeviceTask, r, a.key, a.text, a.number);
  }
}

void KinetoReader::AddHostOp(const Event& ev, const CategoryInfo& info, bool instant, int64_t ts, int64_t dur) {
  HostOpRow row;
  row.name = profile_->Intern(ev.name);
  row.category = profile_->Intern(ev.cat);
  row.kind = instant ? HostOpKind::kOther : info.host_kind;
  // torch 1.8/1.9 wrote ProfilerStep#N with category "Operator" (the
  // legacy export with none): it marks a step, it is not an operator
  // (it ranked among the top operators by self time).
  if (row.kind == HostOpKind::kOperator && ev.name.size() > 13 && ev.name.substr(0, 13) == "ProfilerStep#")
    row.kind = HostOpKind::kUserAnnotation;
  row.track = Track(ev, kHostSide);
  row.ts = ts;
  row.dur = dur;
  row.input_dims = ev.input_dims;
  row.input_types = ev.input_types;
  row.correlation = ev.correlation;
  row.external_id = ev.external_id;
  row.sequence_number = ev.sequence_number;
  uint32_t r = profile_->host_ops.Add(row);
  bool runtime = row.kind == HostOpKind::kRuntime || row.kind == HostOpKind::kDriver;
  for (const PendingAttribute& a : pending_) {
    if (!runtime && Contains<kRocmLaunchArgKeys>(profile_->Str(a.key))) continue;
    profile_->attributes.Add(OwnerKind::kHostOp, r, a.key, a.text, a.number);
  }
}

void KinetoReader::OnFlowEvent(const Event& ev, uint64_t offset) {
  if (IsLaunchFlowCategory(ev.cat)) {
    ++launch_flows_;
    if (Eq(ev.cat, "ac2g")) era_bits_ |= kEraTorch20;
    else if (Eq(ev.cat, "async_cpu_to_gpu") || Eq(ev.cat, "async_gpu")) era_bits_ |= kEraAsyncGpuFlow;
    return;
  }
  if (Eq(ev.cat, "fwdbwd")) era_bits_ |= kEraTorch20;
  uint64_t id;
  if (!ev.has_id || !ParseUint64(ev.id_text, &id)) {
    profile_->CountLoss(LossKind::kLinkLost, "flow without a usable id dropped", Where(offset));
    return;
  }
  int64_t ts = 0;
  if (!ev.has_ts || !ParseTime(ev.ts_text, "ts", offset, &ts)) return;
  profile_->flows.Add(id, profile_->Intern(ev.cat), ev.phase, Track(ev, kHostSide), ts);
}

void KinetoReader::OnCounterEvent(const Event& ev, uint64_t offset) {
  int64_t ts = 0;
  if (!ev.has_ts || !ParseTime(ev.ts_text, "ts", offset, &ts)) return;
  uint32_t track = Track(ev, kCounterSide);
  for (const PendingAttribute& a : pending_) {
    if (std::isnan(a.number)) continue;
    std::string name(ev.name);
    if (pending_.size() > 1) name += " " + std::string(profile_->Str(a.key));
    profile_->counters.Add(profile_->Intern(name), track, ts, a.number);
  }
}

void KinetoReader::OnUnsupportedPhase(char phase, uint64_t offset) {
  std::string reason = "unsupported phase '";
  reason += phase;
  reason += "' skipped";
  profile_->CountLoss(LossKind::kRowSkipped, reason, Where(offset));
}

Status KinetoReader::ReadDeviceProperties(value v) {
  simdjson::ondemand::array devices;
  if (v.get_array().get(devices)) return CorruptError("deviceProperties is not an array");
  for (auto item : devices) {
    simdjson::ondemand::object props;
    if (item.get_object().get(props)) return CorruptError("deviceProperties entry is not an object");
    DeviceRow row;
    row.kind = DeviceKind::kCuda;
    std::vector<PendingAttribute> attributes;
    for (auto field_result : props) {
      simdjson::ondemand::field field;
      if (std::move(field_result).get(field)) return CorruptError("bad deviceProperties");
      std::string_view key;
      if (field.unescaped_key().get(key)) return CorruptError("bad deviceProperties");
      std::string key_copy(key);
      std::string_view text;
      bool is_string;
      if (ValueText(field.value(), &text, &is_string, &scratch_)) return CorruptError("bad deviceProperties");
      if (key_copy == "id") {
        int64_t id;
        row.index = ParseInt64(text, &id) ? static_cast<int32_t>(id) : 0;
      } else if (key_copy == "name") {
        row.name = profile_->Intern(text);
      } else {
        if (key_copy == "maxSharedMemoryPerMultiProcessor") rocm_hint_ = true;
        if (key_copy == "maxComputeUnits") row.kind = DeviceKind::kOther;  // XPU
        attributes.push_back({profile_->Intern(key_copy), profile_->Intern(text), NumberOf(text, is_string)});
      }
    }
    uint32_t r = static_cast<uint32_t>(profile_->devices.size());
    profile_->devices.rows.push_back(row);
    for (const auto& a : attributes) profile_->attributes.Add(OwnerKind::kDevice, r, a.key, a.text, a.number);
  }
  return Status::Ok();
}

Status KinetoReader::OnTopLevel(std::string_view key_view, value v) {
  std::string key(key_view);
  if (Eq(key, "deviceProperties")) return ReadDeviceProperties(v);
  if (Eq(key, "distributedInfo")) {
    simdjson::ondemand::object info;
    if (v.get_object().get(info)) return CorruptError("distributedInfo is not an object");
    for (auto field_result : info) {
      simdjson::ondemand::field field;
      if (std::move(field_result).get(field)) return CorruptError("bad distributedInfo");
      std::string_view k;
      if (field.unescaped_key().get(k)) return CorruptError("bad distributedInfo");
      std::string name(k);
      if (name != "rank" && name != "world_size" && name != "backend" && name != "nccl_version" && name != "pg_count")
        continue;
      std::string_view text;
      bool is_string;
      if (ValueText(field.value(), &text, &is_string, &scratch_)) return CorruptError("bad distributedInfo");
      profile_->metadata[name] = std::string(text);
    }
    return Status::Ok();
  }
  if (Eq(key, "baseTimeNanoseconds")) {
    std::string_view text;
    bool is_string;
    if (ValueText(v, &text, &is_string, &scratch_) || !ParseInt64(text, &base_ns_)) {
      profile_->CountLoss(LossKind::kValueIgnored, "baseTimeNanoseconds is not an integer; times kept relative", display_);
      return Status::Ok();
    }
    has_base_ = true;
    profile_->metadata["base_time_ns"] = std::string(text);
    return Status::Ok();
  }
  static const std::map<std::string, std::string> kScalarKeys = {
      {"schemaVersion", "schema_version"}, {"displayTimeUnit", "display_time_unit"}, {"traceName", "trace_name"},
      {"trace_id", "trace_id"}, {"cuda_runtime_version", "cuda_runtime_version"},
      {"cuda_driver_version", "cuda_driver_version"}, {"cupti_version", "cupti_version"},
      {"roctracer_version", "roctracer_version"}, {"hip_runtime_version", "hip_runtime_version"},
      {"hip_driver_version", "hip_driver_version"}, {"record_shapes", "record_shapes"},
      {"with_stack", "with_stack"}, {"profile_memory", "profile_memory"}, {"with_flops", "with_flops"},
      {"with_modules", "with_modules"}};
  auto it = kScalarKeys.find(key);
  if (it == kScalarKeys.end()) return Status::Ok();  // unknown keys: ignored (reference §2)
  if (key.substr(0, 4) == "hip_" || Eq(key, "roctracer_version")) rocm_hint_ = true;
  std::string_view text;
  bool is_string;
  if (ValueText(v, &text, &is_string, &scratch_)) return CorruptError("bad value");
  profile_->metadata[it->second] = std::string(text);
  return Status::Ok();
}

Status KinetoReader::Finish(const json_stream::JsonStreamStats& stats, bool legacy_importer) {
  bool legacy = stats.root_is_array && (legacy_importer || (saw_cpu_functions_pid_ && !saw_any_cat_));
  // Times were stored relative to baseTimeNanoseconds (which may follow the
  // events); add it now in one pass over the time columns.
  if (has_base_) {
    uint64_t overflowed = 0;
    auto shift = [&](std::vector<TimeNs>& column, size_t from) {
      for (size_t i = from; i < column.size(); ++i)
        if (__builtin_add_overflow(column[i], base_ns_, &column[i])) {
          column[i] = base_ns_ > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
          ++overflowed;
        }
    };
    shift(profile_->host_ops.ts, host_start_);
    shift(profile_->device_tasks.ts, device_start_);
    shift(profile_->flows.ts, flow_start_);
    overflowed += profile_->counters.ShiftTimes(counter_start_, base_ns_);
    if (overflowed) profile_->CountLoss(LossKind::kValueRepaired, "ts + baseTimeNanoseconds overflows int64; clamped", display_, overflowed);
  }
  // Names from M events, keyed by the source tokens.
  for (size_t t = track_start_; t < profile_->tracks.size(); ++t) {
    std::string pid(profile_->Str(profile_->tracks.pid_token[t]));
    std::string tid(profile_->Str(profile_->tracks.tid_token[t]));
    if (auto p = process_names_.find(pid); p != process_names_.end())
      profile_->tracks.process_name[t] = profile_->Intern(p->second);
    if (auto n = thread_names_.find({pid, tid}); n != thread_names_.end())
      profile_->tracks.name[t] = profile_->Intern(n->second);
  }
  bool rocm = rocm_hint_;
  for (size_t d = device_row_start_; d < profile_->devices.size(); ++d) {
    std::string_view name = profile_->Str(profile_->devices.rows[d].name);
    if (name.find("AMD") != std::string_view::npos || name.find("Instinct") != std::string_view::npos ||
        name.find("Radeon") != std::string_view::npos)
      rocm = true;
  }
  for (size_t d = device_row_start_; d < profile_->devices.size(); ++d)
    if (rocm && profile_->devices.rows[d].kind == DeviceKind::kCuda) profile_->devices.rows[d].kind = DeviceKind::kRocm;
  ReconcileDeviceIndices();
  // Marker events: the window end is kept unless bogus (reference §10.10).
  if (has_window_end_) {
    int64_t start = has_iteration_start_ ? iteration_start_ns_ : min_ts_;
    if (start != std::numeric_limits<int64_t>::max() && window_end_ns_ - start > kBogusWindowEndNs) {
      profile_->CountLoss(LossKind::kValueIgnored, "bogus Record Window End (more than 24 h after the trace start) ignored",
                          Where(window_end_offset_));
    } else {
      profile_->metadata["record_window_end_ns"] = std::to_string(window_end_ns_ + (has_base_ ? base_ns_ : 0));
    }
  }
  auto& meta = profile_->metadata;
  meta["format"] = legacy ? "kineto-legacy" : "kineto";
  std::string era;
  if (legacy) era = "legacy-export";
  else if (era_bits_ & kEraLegacyCats) era = "torch-1.8-1.10";
  else if (has_base_ || (era_bits_ & kEraFloatTs)) era = "torch-2.4+";
  else if (era_bits_ & kEraTorch20) era = "torch-2.0-2.3";
  else if (era_bits_ & (kEraAsyncGpuFlow | kEraModernCats)) era = "torch-1.11-1.13";
  else era = "unknown";
  meta["format_version"] = era;
  bool epoch = !legacy && (has_base_ || (min_ts_ != std::numeric_limits<int64_t>::max() && min_ts_ >= kEpochThresholdNs));
  meta["clock"] = epoch ? "epoch" : "relative";
  meta["launch_flows_not_stored"] = std::to_string(launch_flows_);
  meta["device_tasks_without_external_id"] = std::to_string(events_without_external_id_);
  if (legacy) profile_->notes.push_back("shapes unavailable in legacy export (torch without Kineto writes no args)");
  if (stats.root_is_array && stats.events == 0 && stats.non_object_elements > 0)
    return UnsupportedError(display_ + ": JSON array but not a trace (no event objects)");
  return Status::Ok();
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status ImportKineto(const std::string& path, const ImportOptions& options, Profile* profile, bool legacy) {
  PYPTO_ASSIGN_OR_RETURN(auto source, io::OpenByteSource(path, options.limits));
  json_stream::JsonStreamOptions stream_options;
  stream_options.display_name = BaseName(path);
  stream_options.progress = options.progress;
  stream_options.cancel = options.cancel;
  // Reserve from an estimate of the event count so that the columns do not
  // double-and-copy at the end.
  uint64_t estimated_bytes = json_stream::EstimatedTextBytes(*source);
  uint64_t events = estimated_bytes / kTypicalBytesPerEvent;
  profile->host_ops.Reserve(profile->host_ops.size() + static_cast<size_t>(events * kHostOpShare));
  profile->device_tasks.Reserve(profile->device_tasks.size() + static_cast<size_t>(events * kDeviceTaskShare));
  KinetoReader reader(profile, stream_options.display_name);
  auto on_key = [&](std::string_view key, value v) { return reader.OnTopLevel(key, v); };
  const size_t threads = DefaultParseThreads();
  StatusOr<json_stream::JsonStreamStats> stats = [&]() -> StatusOr<json_stream::JsonStreamStats> {
    if (threads <= 1) {
      return json_stream::StreamJsonEvents(
          *source, stream_options, on_key, [&](json_stream::JsonEvent& event) { return reader.OnEvent(event); },
          profile);
    }
    std::vector<std::unique_ptr<KinetoSink>> sinks;
    std::vector<json_stream::EventSink*> sink_pointers;
    for (size_t i = 0; i < threads; ++i) {
      sinks.push_back(std::make_unique<KinetoSink>(&reader, stream_options.display_name));
      sink_pointers.push_back(sinks.back().get());
    }
    return json_stream::StreamJsonEventsParallel(*source, stream_options, on_key, sink_pointers, profile);
  }();
  if (!stats.ok()) return stats.status();
  profile->source_files.push_back(path);
  return reader.Finish(*stats, legacy);
}

// ---------------------------------------------------------------- sniffing
bool Near(std::string_view prefix, std::string_view needle) { return prefix.find(needle) != std::string_view::npos; }

std::string_view SkipBlank(std::string_view s) {
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  while (!s.empty() && (s[0] == ' ' || s[0] == '\n' || s[0] == '\r' || s[0] == '\t')) s.remove_prefix(1);
  return s;
}

// Ascend trace_view.json / msprof json: bare arrays with string ts and CANN
// process names (reference ascend-formats.md §6) — never ours.
bool LooksAscend(std::string_view prefix) {
  return Near(prefix, "\"ts\": \"") || Near(prefix, "\"ts\":\"") || Near(prefix, "Ascend Hardware") ||
         Near(prefix, "\"CANN\"") || Near(prefix, "Task Type") || Near(prefix, "Stream Id") ||
         Near(prefix, "AscendCL") || Near(prefix, "HCCL");
}

// Kineto never writes pid "CPU functions"; the legacy export always does.
bool LooksLegacy(std::string_view prefix) { return Near(prefix, "\"CPU functions\""); }

int SniffKineto(const SniffInput& input) {
  if (input.kind != io::PathKind::kFile) return 0;
  std::string_view s = SkipBlank(input.prefix);
  if (s.empty()) return 0;
  if (s[0] == '{') {
    if (Near(s, "\"traceEvents\"") || Near(s, "\"schemaVersion\"") || Near(s, "\"deviceProperties\"")) return 100;
    // A Kineto object may open with a long user "metadata" object (TraceLens
    // samples); claim any other object weakly and let Import say "unsupported".
    return 10;
  }
  if (s[0] == '[') {
    if (LooksAscend(s) || LooksLegacy(s)) return 0;
    if (Near(s, "\"ph\"") && (Near(s, "\"cat\"") || Near(s, "\"pid\""))) return 60;
  }
  return 0;
}

class Kineto final : public Importer {
 public:
  std::string_view name() const override { return "kineto"; }
  std::string_view description() const override { return "PyTorch profiler / Kineto Chrome trace (.json, .json.gz)"; }
  int Sniff(const SniffInput& input) const override { return SniffKineto(input); }
  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    return ImportKineto(path, options, profile, false);
  }
};

class KinetoLegacy final : public Importer {
 public:
  std::string_view name() const override { return "kineto-legacy"; }
  std::string_view description() const override {
    return "PyTorch legacy Chrome export of builds without Kineto (bare array, pid \"CPU functions\")";
  }
  int Sniff(const SniffInput& input) const override {
    if (input.kind != io::PathKind::kFile) return 0;
    std::string_view s = SkipBlank(input.prefix);
    return !s.empty() && s[0] == '[' && LooksLegacy(s) ? 100 : 0;
  }
  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    return ImportKineto(path, options, profile, true);
  }
};

}  // namespace

const Importer* KinetoImporter() {
  static const Kineto importer;
  return &importer;
}

const Importer* KinetoLegacyImporter() {
  static const KinetoLegacy importer;
  return &importer;
}

}  // namespace pypto
