// The profile model: what every importer fills and every analysis reads.
// Columnar tables (one vector per field), strings interned in one StringTable,
// times as int64 nanoseconds since the Unix epoch when the source gives an
// absolute clock (else since the profiler start; see Metadata "clock").
// Each event costs a fixed number of bytes: no per-event heap allocation.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/counter_table.h"
#include "model/defaulted_column.h"
#include "model/packed_values.h"
#include "model/string_table.h"

namespace pypto {

using TimeNs = int64_t;
inline constexpr int64_t kNoId = std::numeric_limits<int64_t>::min();  // "id absent"
inline constexpr int32_t kNoIndex = -1;                                 // "row absent"

// A column of 64-bit ids (correlation, external id, sequence number), kept in
// 4 bytes a row while every id fits in 32 bits (Kineto numbers them up from
// 0), and in 8 for every row from the first id that does not (an Ascend flow
// id, a hashed id). kNoId is kept as a marker in both. While every row is
// kNoId (an Ascend kernel_details.csv has no ids) no storage is kept.
class IdColumn {
 public:
  int64_t operator[](size_t row) const { return wide_ ? wide_values_[row] : FromNarrow(narrow_[row]); }
  void set(size_t row, int64_t id) {
    if (!wide_ && !Fits(id)) Widen();
    if (wide_) wide_values_[row] = id;
    else narrow_.set(row, ToNarrow(id));
  }
  void push_back(int64_t id) {
    if (!wide_ && !Fits(id)) Widen();
    if (wide_) wide_values_.push_back(id);
    else narrow_.push_back(ToNarrow(id));
  }
  void Append(const IdColumn& other);
  size_t size() const { return wide_ ? wide_values_.size() : narrow_.size(); }
  void reserve(size_t n) { wide_ ? wide_values_.reserve(n) : narrow_.reserve(n); }
  void clear() {
    narrow_.clear();
    std::vector<int64_t>().swap(wide_values_);
    wide_ = false;
  }
  size_t MemoryBytes() const { return narrow_.MemoryBytes() + wide_values_.capacity() * sizeof(int64_t); }
  bool operator==(const IdColumn& other) const;  // the same ids, however kept

 private:
  static constexpr int32_t kNarrowNoId = std::numeric_limits<int32_t>::min();
  static bool Fits(int64_t id) {
    return id == kNoId || (id > std::numeric_limits<int32_t>::min() && id <= std::numeric_limits<int32_t>::max());
  }
  static int32_t ToNarrow(int64_t id) { return id == kNoId ? kNarrowNoId : static_cast<int32_t>(id); }
  static int64_t FromNarrow(int32_t value) { return value == kNarrowNoId ? kNoId : value; }
  void Widen();

  bool wide_ = false;
  DefaultedColumn<int32_t, kNarrowNoId> narrow_;  // nothing kept while every id is kNoId
  std::vector<int64_t> wide_values_;
};

// ---------------------------------------------------------------- tracks
// A track is one timeline row: a host thread or a device stream. Source
// pid/tid tokens are kept as opaque interned text (they may be strings).
enum class TrackKind : uint8_t { kHostThread, kDeviceStream, kOther };
// Stable snake_case names of the model's enums (the SQLite export, the JSON
// schema and the Python tables spell them so); Parse* reverses them.
const char* TrackKindName(TrackKind kind);                      // "host_thread", "device_stream", "other"
std::optional<TrackKind> ParseTrackKind(std::string_view name);

struct TrackTable {
  std::vector<StrId> pid_token;   // source pid as written ("1234", "Spans", "0")
  std::vector<StrId> tid_token;   // source tid as written ("5678", "stream 7")
  std::vector<StrId> name;        // thread/stream name from metadata events, if any
  std::vector<StrId> process_name;
  std::vector<TrackKind> kind;
  std::vector<int32_t> device;    // device index for device streams, else -1
  std::vector<int64_t> stream;    // stream id for device streams, else -1

  size_t size() const { return kind.size(); }
};

// ---------------------------------------------------------------- host ops
enum class HostOpKind : uint8_t {
  kOperator,        // aten / torch op (cpu_op, Operator), aclnn op
  kUserAnnotation,  // record_function ranges, ProfilerStep#N
  kRuntime,         // cudaLaunchKernel, hipGraphLaunch, aclrtLaunchKernel … (CUDA/HIP/CANN API)
  kDriver,          // cuLaunchKernel …
  kPython,          // python_function frames
  kOther,
};
inline constexpr size_t kHostOpKindCount = 6;
const char* HostOpKindName(HostOpKind kind);                    // "operator", "user_annotation", …
std::optional<HostOpKind> ParseHostOpKind(std::string_view name);

struct HostOpRow {
  StrId name = kEmptyStr;
  StrId category = kEmptyStr;   // source category as written ("cpu_op", "cuda_runtime")
  HostOpKind kind = HostOpKind::kOther;
  uint32_t track = 0;
  TimeNs ts = 0;
  TimeNs dur = 0;
  StrId input_dims = kEmptyStr;   // shapes as text, e.g. "[[4096, 1024], [1024]]"
  StrId input_types = kEmptyStr;  // e.g. "[\"c10::BFloat16\", \"Scalar\"]"
  int64_t correlation = kNoId;    // runtime calls: CUPTI/roctracer correlation
  int64_t external_id = kNoId;    // "External id" / "external id"
  int64_t sequence_number = kNoId;
};

struct HostOpTable {
  std::vector<StrId> name;
  std::vector<StrId> category;
  std::vector<HostOpKind> kind;
  std::vector<uint32_t> track;
  std::vector<TimeNs> ts;
  std::vector<TimeNs> dur;
  std::vector<uint16_t> depth;     // nesting depth on its track (filled by the graph builder)
  std::vector<int32_t> parent;     // enclosing host op row or kNoIndex (graph builder)
  std::vector<StrId> input_dims;
  std::vector<StrId> input_types;
  IdColumn correlation;
  IdColumn external_id;
  IdColumn sequence_number;

  size_t size() const { return ts.size(); }
  uint32_t Add(const HostOpRow& row);
  void Reserve(size_t n);
};

// ---------------------------------------------------------------- device tasks
enum class DeviceTaskKind : uint8_t {
  kKernel,          // CUDA/HIP kernel, Ascend AI Core / AI Vector / MIX / AI CPU task
  kMemcpy,
  kMemset,
  kCommunication,   // NCCL/RCCL kernels, HCCL tasks
  kSync,            // cuda_sync rows (stream/event/context sync)
  kAnnotation,      // gpu_user_annotation (device projection of ProfilerStep#N)
  kOther,
};
inline constexpr size_t kDeviceTaskKindCount = 7;
const char* DeviceTaskKindName(DeviceTaskKind kind);            // "kernel", "memcpy", …, "annotation", "other"
std::optional<DeviceTaskKind> ParseDeviceTaskKind(std::string_view name);

struct DeviceTaskRow {
  StrId name = kEmptyStr;
  StrId category = kEmptyStr;   // source category / task type as written
  DeviceTaskKind kind = DeviceTaskKind::kOther;
  uint32_t track = 0;             // from Profile::DeviceTrack (which records device and stream)
  TimeNs ts = 0;
  TimeNs dur = 0;
  int64_t correlation = kNoId;
  int64_t external_id = kNoId;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int64_t bytes = -1;              // memcpy/memset/communication payload, -1 unknown
  StrId core_type = kEmptyStr;     // Ascend "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "AI_CPU", …
  int32_t block_dim = -1;          // Ascend Block Dim / Block Num
  int32_t mix_block_dim = -1;      // Ascend Mix Block Dim
  StrId op_type = kEmptyStr;       // Ascend OP Type (MatMulV2 …)
  StrId input_shapes = kEmptyStr;  // Ascend Input Shapes text
  StrId input_types = kEmptyStr;   // Ascend Input Data Types
  StrId input_formats = kEmptyStr; // Ascend Input Formats
  StrId output_shapes = kEmptyStr;
  StrId output_types = kEmptyStr;  // Ascend Output Data Types
  StrId output_formats = kEmptyStr; // Ascend Output Formats
  bool graph_launched = false;     // launched by a CUDA/HIP graph replay
};

// Ascend-only facts of a task, kept aside so CUDA tasks do not pay for them,
// and once per distinct set among recent tasks: the kernels of a decode step
// repeat every step with the same facts (36 bytes a task when kept per task).
struct DeviceTaskDetailTable {
  struct Facts {
    int32_t block_dim = -1;
    int32_t mix_block_dim = -1;
    StrId op_type = kEmptyStr;
    StrId input_shapes = kEmptyStr;
    StrId input_types = kEmptyStr;
    StrId input_formats = kEmptyStr;
    StrId output_shapes = kEmptyStr;
    StrId output_types = kEmptyStr;
    StrId output_formats = kEmptyStr;
    bool operator==(const Facts&) const = default;
    static Facts Of(const DeviceTaskRow& r) {
      return {r.block_dim,     r.mix_block_dim, r.op_type,      r.input_shapes,  r.input_types,
              r.input_formats, r.output_shapes, r.output_types, r.output_formats};
    }
  };
  Facts Get(size_t row) const {
    return {block_dim[row],     mix_block_dim[row], op_type[row],       input_shapes[row],  input_types[row],
            input_formats[row], output_shapes[row], output_types[row], output_formats[row]};
  }
  // A row holding `facts`: the one a recent task with the same facts got
  // (found by hash in a small table of recent rows), else a new one. Rows
  // are never changed once added, as tasks share them.
  int32_t RowOf(const Facts& facts);
  void Clear();

  std::vector<int32_t> block_dim;
  std::vector<int32_t> mix_block_dim;
  std::vector<StrId> op_type;
  std::vector<StrId> input_shapes;
  std::vector<StrId> input_types;
  std::vector<StrId> input_formats;
  std::vector<StrId> output_shapes;
  std::vector<StrId> output_types;
  std::vector<StrId> output_formats;
  size_t size() const { return op_type.size(); }

 private:
  std::vector<int32_t> recent_row_;  // by the facts' hash: the last row added with that hash, or -1
};

// CUDA/HIP launch dimensions of tasks, kept once per distinct (grid, block):
// a trace has a few thousand over millions of tasks, and two columns of them
// cost 24 bytes a task (zeros on Ascend and CPU profiles). Id 0 is all zeros.
class LaunchDimsTable {
 public:
  struct Dims {
    std::array<int32_t, 3> grid{0, 0, 0};
    std::array<int32_t, 3> block{0, 0, 0};
    auto operator<=>(const Dims&) const = default;
  };
  LaunchDimsTable() { Clear(); }
  // The id of `dims`, added when new.
  uint32_t IdOf(const Dims& dims);
  const Dims& operator[](uint32_t id) const { return dims_[id]; }
  size_t size() const { return dims_.size(); }
  void Clear();
  size_t MemoryBytes() const;

 private:
  std::vector<Dims> dims_;
  std::map<Dims, uint32_t> id_of_;  // few entries
  uint32_t last_ = 0;  // consecutive kernels mostly repeat the dims before them
};

struct DeviceTaskTable {
  std::vector<StrId> name;
  std::vector<StrId> category;
  std::vector<DeviceTaskKind> kind;
  std::vector<uint32_t> track;     // device and stream come from the track
  std::vector<TimeNs> ts;
  std::vector<TimeNs> dur;
  IdColumn correlation;
  IdColumn external_id;
  // Columns some formats never fill (an Ascend CSV: none of these four) keep
  // no storage while every row holds the default.
  DefaultedColumn<uint32_t, 0> launch_dims;  // id in launch_dims_table (0: all zeros)
  LaunchDimsTable launch_dims_table;
  DefaultedColumn<int64_t, -1> bytes;
  std::vector<StrId> core_type;
  DefaultedColumn<uint8_t, 0> graph_launched;
  DefaultedColumn<int32_t, kNoIndex> launcher;  // launching host op row (runtime call); graph builder
  std::vector<int32_t> detail;     // row in `details`, kNoIndex when the task has none
  DeviceTaskDetailTable details;

  size_t size() const { return ts.size(); }
  uint32_t Add(const DeviceTaskRow& row);
  void Reserve(size_t n);
  // Grid and block dimensions of a CUDA/HIP kernel launch (zeros when unknown).
  const std::array<int32_t, 3>& grid(size_t row) const { return launch_dims_table[launch_dims[row]].grid; }
  const std::array<int32_t, 3>& block(size_t row) const { return launch_dims_table[launch_dims[row]].block; }
  // Accessors that hide the side table (return -1 / kEmptyStr when absent).
  int32_t block_dim(size_t row) const { return detail[row] < 0 ? -1 : details.block_dim[detail[row]]; }
  int32_t mix_block_dim(size_t row) const { return detail[row] < 0 ? -1 : details.mix_block_dim[detail[row]]; }
  StrId op_type(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.op_type[detail[row]]; }
  StrId input_shapes(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.input_shapes[detail[row]]; }
  StrId input_types(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.input_types[detail[row]]; }
  StrId input_formats(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.input_formats[detail[row]]; }
  StrId output_shapes(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.output_shapes[detail[row]]; }
  StrId output_types(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.output_types[detail[row]]; }
  StrId output_formats(size_t row) const { return detail[row] < 0 ? kEmptyStr : details.output_formats[detail[row]]; }
};

// ---------------------------------------------------------------- attributes
// Extra key/value facts of one event that not every event has (NCCL args,
// Ascend PMU ratios, unknown CSV columns). One row per fact.
enum class OwnerKind : uint8_t { kHostOp, kDeviceTask, kTrack, kDevice, kStep };
const char* OwnerKindName(OwnerKind kind);                      // "host_op", "device_task", "track", "device", "step"
std::optional<OwnerKind> ParseOwnerKind(std::string_view name);

// The owner runs of an attribute table: where each run of consecutive rows of
// one owner begins, and its owner. Kept in 4 bytes a run when, as in a
// kernel_details.csv, run r belongs to device task r (one run per task, in
// task order; 16 bytes a run as a struct): the begin's low 32 bits (rows past
// 2^32 are told by the few runs where the high part grows), and the owner and
// kind only where they differ from that.
class OwnerRunTable {
 public:
  size_t size() const { return begin_low_.size(); }
  size_t begin(size_t r) const {
    size_t high = 0;
    while (high < high_starts_.size() && high_starts_[high] <= r) ++high;  // empty below 2^32 rows
    return begin_low_[r] + (high << 32);
  }
  uint32_t owner(size_t r) const { return static_cast<uint32_t>(r) + owner_offset_[r]; }
  OwnerKind kind(size_t r) const { return kind_[r]; }
  void push_back(size_t begin, OwnerKind kind, uint32_t owner) {
    const size_t r = size();
    while ((begin >> 32) > high_starts_.size()) high_starts_.push_back(r);
    begin_low_.push_back(static_cast<uint32_t>(begin));
    owner_offset_.push_back(owner - static_cast<uint32_t>(r));  // modulo 2^32: owner() adds it back
    kind_.push_back(kind);
  }
  // The last run that begins at or before `row` (a row of the table).
  size_t RunOf(size_t row) const;
  void clear() {
    std::vector<uint32_t>().swap(begin_low_);
    std::vector<size_t>().swap(high_starts_);
    owner_offset_.clear();
    kind_.clear();
  }
  size_t MemoryBytes() const {
    return begin_low_.capacity() * sizeof(uint32_t) + high_starts_.capacity() * sizeof(size_t) +
           owner_offset_.MemoryBytes() + kind_.MemoryBytes();
  }
  bool operator==(const OwnerRunTable&) const = default;

 private:
  std::vector<uint32_t> begin_low_;
  std::vector<size_t> high_starts_;  // the k-th: the first run whose begin is at least (k + 1) * 2^32
  DefaultedColumn<uint32_t, 0> owner_offset_;  // owner - run index, modulo 2^32
  DefaultedColumn<OwnerKind, OwnerKind::kDeviceTask> kind_;
};

// How a number's text is written when no string is kept for it (a number's
// text form): its shortest round-trip form ("0.599", "81431"), or fixed
// notation with D digits after the point, form 1 + D ("0.000", "1.200").
// CANN writes most PMU cells in one of the two.
inline constexpr uint8_t kShortestNumberText = 0;
inline constexpr uint8_t kMaxFixedDecimals = 40;  // longer fractions are kept as text
inline constexpr uint8_t kNoNumberTextForm = 0xFF;  // neither: the text is kept as a string

// Rows are kept in the order they were added. The storage is compact because
// a kernel_details.csv gives ~30 facts a task and millions of tasks (21 bytes
// a row as five plain columns was three quarters of such a profile):
// - the owner is kept once per run of consecutive rows of one owner;
// - a number that is a decimal m / 10^s with m fitting 32 bits and s small
//   (PMU ratios "0.599", cycle counts "81431": all but a few of such a
//   table's numbers) is kept as m, with s in the row's encoding byte; any
//   other number whole, in a sparse list (8 bytes and its row);
// - a number's text is its text form (part of the encoding byte);
// - a text that is not a number is its string id, and the rare text of a
//   number in neither text form sits in a sparse list;
// - m or the string id is kept in 0, 1, 2 or 4 bytes by its size
//   (PackedValues: most PMU figures are 0 or below 65536);
// - the key and the encoding (how the value reads, its text form) share one
//   byte while the table has at most 256 distinct pairs of them; past that
//   the encoding has a byte and the key is a 1-byte slot in the table's list
//   of distinct keys (2 bytes when there are more than 256, 4 when there are
//   more than 65536);
// so a kernel_details.csv's row costs its value (0-4 bytes, 0.9 on average,
// and half a byte of index) and one byte for its key and encoding.
class AttributeTable {
 public:
  // Consecutive rows [begin, end) of one owner.
  struct OwnerRun {
    OwnerKind kind;
    uint32_t owner;
    size_t begin;
    size_t end;
  };

  size_t size() const { return value_.size(); }
  size_t run_count() const { return runs_.size(); }
  OwnerRun run(size_t r) const {
    return {runs_.kind(r), runs_.owner(r), runs_.begin(r), r + 1 < runs_.size() ? runs_.begin(r + 1) : size()};
  }
  // Random access to a row's owner searches the runs (O(log runs)); loops over
  // every row read the runs instead (ForEachRow).
  OwnerKind owner_kind(size_t row) const { return runs_.kind(runs_.RunOf(row)); }
  uint32_t owner(size_t row) const { return runs_.owner(runs_.RunOf(row)); }
  StrId key(size_t row) const {
    switch (key_width_) {
      case KeyWidth::kPairCode: return slot_key_[pairs_[pair_code_[row]].slot];
      case KeyWidth::kByteSlot: return slot_key_[key_byte_slot_[row]];
      case KeyWidth::kShortSlot: return slot_key_[key_slot_[row]];
      default: return key_wide_[row];
    }
  }
  // Value as written. kEmptyStr together with a number means the text is the
  // number in its text form (number_text_form; Profile::AddAttribute): a
  // kernel_details.csv carries millions of distinct PMU figures, and interning
  // each one cost a quarter of the import and most of the string table.
  // Read the value as text with Profile::AttributeText, never Str(text(i)).
  StrId text(size_t row) const;
  double number(size_t row) const;  // value as number, NaN if not numeric
  uint8_t number_text_form(size_t row) const;

  // Calls f(row, kind, owner) for every row in order.
  template <class F>
  void ForEachRow(F&& f) const {
    for (size_t r = 0; r < runs_.size(); ++r) {
      const OwnerRun run_rows = run(r);
      for (size_t i = run_rows.begin; i < run_rows.end; ++i) f(i, run_rows.kind, run_rows.owner);
    }
  }

  // Calls f(row, owner) for every row whose owner is of `kind`, in order. It
  // passes over the runs and reads only their rows: the few device-level
  // rows of a 1 M-row kernel_details.csv lie among 27 M task attributes, a
  // ForEachRow that skips the others cost ~25 ms a pass.
  template <class F>
  void ForEachRowOf(OwnerKind kind, F&& f) const {
    for (size_t r = 0; r < runs_.size(); ++r) {
      if (runs_.kind(r) != kind) continue;
      const OwnerRun run_rows = run(r);
      for (size_t i = run_rows.begin; i < run_rows.end; ++i) f(i, run_rows.owner);
    }
  }

  // `text_form` applies when text_id is kEmptyStr and the number is not NaN.
  void Add(OwnerKind kind, uint32_t owner_row, StrId key_id, StrId text_id, double number_value,
           uint8_t text_form = kShortestNumberText);
  // Add(kind, owner_row, key_id, kEmptyStr, mantissa / 10^scale, text_form)
  // for a number the caller read from its text as a decimal (scale <=
  // kMaxDecimalTextScale digits after the point, `text_form` that text's
  // form): the same row, without Add's search for the mantissa (a division
  // per scale tried, ~4 a PMU ratio: a tenth of a kernel_details.csv import).
  void AddDecimal(OwnerKind kind, uint32_t owner_row, StrId key_id, int32_t mantissa, int scale, uint8_t text_form);
  // Appends every row of `from`, in its order: keys and texts mapped through
  // `string_map` (from's string id -> this table's; null: the same ids), each
  // run's owner given by owner_of(kind, owner), called once a run. The table
  // ends as if Add() had been called with each row's key, text, number and
  // form: from's rows hold Add's encodings, which depend on the value alone,
  // so they are copied instead of decoded and encoded again (an importer's
  // parse threads stage their rows in tables of their own: 2.5 M rows on a
  // 300 MB trace_view).
  void AppendFrom(const AttributeTable& from, const std::vector<StrId>* string_map,
                  const std::function<uint32_t(OwnerKind, uint32_t)>& owner_of);
  static constexpr int kMaxDecimalTextScale = 15;
  void Reserve(size_t n);
  void Clear();
  size_t MemoryBytes() const;
  // Same rows in the same order (the storage of a row sequence is unique).
  bool operator==(const AttributeTable&) const = default;

 private:
  OwnerRunTable runs_;
  // Adds a row: its owner's run (a new one when the owner changes), its key,
  // its encoding (kEncoding* in profile.cc) and its value.
  void AppendRow(OwnerKind kind, uint32_t owner_row, StrId key_id, uint8_t encoding, uint32_t value);
  // In kPairCode: the row's code for (key, encoding), a new pair when it has
  // room; false (and the table switched to kByteSlot) when it has none.
  bool AddPairCode(StrId key_id, uint8_t encoding);
  void PairCodesToSlots();
  void AddKey(StrId key_id);
  void AddSlot(StrId key_id);  // a slot for a key not in slot_key_ (an id below kMaxSlotIndexedKeyId)
  uint8_t Encoding(size_t row) const {
    return key_width_ == KeyWidth::kPairCode ? pairs_[pair_code_[row]].encoding : encoding_[row];
  }

  // How a row's key and encoding are kept:
  // - kPairCode: one byte for both, a code in pairs_ of the distinct (key
  //   slot, encoding) pairs, while there are at most 256 of them and of keys
  //   (a kernel_details.csv has ~30 keys, each written in a few number forms);
  // - then the encoding byte, and the key as a 1-byte slot while the table
  //   has at most 256 distinct keys, then 2 bytes, then the key id.
  enum class KeyWidth : uint8_t { kPairCode, kByteSlot, kShortSlot, kKeyId };
  KeyWidth key_width_ = KeyWidth::kPairCode;
  struct SlotEncoding {
    uint8_t slot;
    uint8_t encoding;
    bool operator==(const SlotEncoding&) const = default;
  };
  static constexpr size_t kMaxPairCodes = 256;  // a code is one byte
  static constexpr size_t kEncodings = 256;     // an encoding is one byte
  std::vector<uint8_t> pair_code_;       // the row's (key, encoding): an index into pairs_
  std::vector<SlotEncoding> pairs_;      // distinct (key slot, encoding) pairs in order of first use
  std::vector<uint16_t> code_of_pair_;   // by slot * kEncodings + encoding: its code + 1, 0 when not used yet
  std::vector<uint8_t> key_byte_slot_;   // the row's key: an index into slot_key_
  std::vector<uint16_t> key_slot_;       // the same, 2 bytes
  std::vector<StrId> slot_key_;          // distinct keys in order of first use
  std::vector<uint32_t> slot_of_key_;    // by key id: its slot + 1, 0 when not used yet
  std::vector<StrId> key_wide_;
  PackedValues value_;                  // by the encoding: the decimal's mantissa (int32 bits), a text id, or 0
  std::vector<uint8_t> encoding_;       // after kPairCode: how value_ reads, and the number's text form
  std::vector<size_t> whole_row_;       // rows whose number is kept whole (ascending)
  std::vector<uint64_t> whole_bits_;    // their numbers' bits
  std::vector<size_t> number_text_row_;  // rows holding a number and a text (ascending)
  std::vector<StrId> number_text_;
};

// ---------------------------------------------------------------- flows / links
enum class LinkKind : uint8_t {
  kLaunch,        // runtime call -> device task (correlation, ac2g, async_npu …)
  kForwardBackward,
  kTaskQueue,     // Ascend enqueue -> dequeue (async_task_queue)
  kOther,
};

// Flow events as written in the source (s/f pairs, Ascend flows). Links for the
// call graph come from correlation ids, not from pairing these (reference
// kineto §7.3), so importers may skip launch flows that only repeat a
// correlation (ac2g, async_gpu) and count them in metadata instead: they are
// a third of a CUDA trace's events and would cost memory for nothing.
struct FlowTable {
  std::vector<uint64_t> id;       // flow id (may exceed 2^53; kept exact)
  std::vector<StrId> category;    // "ac2g", "fwdbwd", "async_npu", "HostToDevice" …
  std::vector<char> phase;        // 's' or 'f' (or 't')
  std::vector<uint32_t> track;
  std::vector<TimeNs> ts;

  size_t size() const { return id.size(); }
  void Add(uint64_t flow_id, StrId cat, char ph, uint32_t track_row, TimeNs time);
  void Reserve(size_t n);
};

// ---------------------------------------------------------------- counters
// CounterTable: model/counter_table.h.

// ---------------------------------------------------------------- steps
inline constexpr TimeNs kUnknownNs = std::numeric_limits<int64_t>::min();

// a + b clamped to the int64 range: times and durations from damaged input
// (a mutated cell of 8.9e18 µs) must not overflow when added.
inline TimeNs SaturatingAdd(TimeNs a, TimeNs b) {
  TimeNs sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<TimeNs>::max() : std::numeric_limits<TimeNs>::min() + 1;
}

struct StepRow {
  int64_t number = -1;           // N of ProfilerStep#N / Step Id
  StrId name = kEmptyStr;
  TimeNs ts = 0;
  TimeNs dur = 0;
  StrId source = kEmptyStr;      // "ProfilerStep annotation", "step_trace_time.csv", "whole window"
  int32_t device = -1;           // for per-device step breakdowns (Ascend), else -1
  // Ascend step_trace_time breakdown (ns), kUnknownNs when absent.
  TimeNs computing = kUnknownNs;
  TimeNs communication_not_overlapped = kUnknownNs;
  TimeNs overlapped = kUnknownNs;
  TimeNs communication = kUnknownNs;
  TimeNs free = kUnknownNs;
  TimeNs stage = kUnknownNs;
  TimeNs bubble = kUnknownNs;
  TimeNs communication_not_overlapped_excluding_receive = kUnknownNs;
  TimeNs preparing = kUnknownNs;
};

// StepRow::source of steps that only a device table's per-task "Step Id"
// column gives (no step_trace_time row, no ProfilerStep): the span of their
// tasks, which for an excerpt of rows says little about wall time.
inline constexpr char kStepSourceStepIdColumn[] = "Step Id column";

struct StepTable {
  std::vector<StepRow> rows;     // few rows; row-wise is fine here
  size_t size() const { return rows.size(); }
};

// ---------------------------------------------------------------- devices
enum class DeviceKind : uint8_t { kCpu, kCuda, kRocm, kNpu, kOther };
const char* DeviceKindName(DeviceKind kind);
std::optional<DeviceKind> ParseDeviceKind(std::string_view name);

struct DeviceRow {
  int32_t index = 0;
  DeviceKind kind = DeviceKind::kOther;
  StrId name = kEmptyStr;        // "NVIDIA A100-SXM4-80GB", "Ascend910B3"
  // Properties go to the AttributeTable with OwnerKind::kDevice (numSms, totalGlobalMem, ai_core_num …).
};

struct DeviceTable {
  std::vector<DeviceRow> rows;
  size_t size() const { return rows.size(); }
};

// ---------------------------------------------------------------- data loss
// Non-fatal problems met while importing: counted by reason, with the first
// place each was seen, so nothing is dropped silently. Every reason has a kind
// that says what it does to the figures, and the kind a severity.
enum class LossSeverity : uint8_t { kLow, kMedium, kHigh };
enum class LossKind : uint8_t {
  kFileUnreadable,  // high: a whole file of the profile unread; everything it holds is missing
  kTruncated,       // high: the input ends early; rows after the cut are missing
  kRowSkipped,      // high: a timed row or event skipped; its time and counts are missing
  kLinkLost,        // medium: a relation between rows (launch flow, owner, rank) lost; times kept
  kValueRepaired,   // medium: a value clamped, read as 0, as unknown or as text; the row kept
  kValueIgnored,    // low: a field ignored (duplicate key, unusable id, bogus window end); figures unchanged
  kTextReplaced,    // low: text repaired (invalid UTF-8 replaced); names only
  kUnclassified,    // medium: read back from a profile saved by an older pypto, without its kind
};
inline constexpr size_t kLossKindCount = 8;
struct LossKindInfo {
  const char* name;         // "row_skipped": stable id (JSON, SQLite)
  LossSeverity severity;
  const char* description;  // what it does to the figures
};
const LossKindInfo& DescribeLoss(LossKind kind);
const char* LossSeverityName(LossSeverity severity);  // "low", "medium", "high"
std::optional<LossKind> ParseLossKind(std::string_view name);

struct DataLossEntry {
  uint64_t count = 0;
  std::string first_location;    // "trace.json: byte 1234"
  LossKind kind = LossKind::kUnclassified;
};

// ---------------------------------------------------------------- profile
struct Profile {
  StringTable strings;
  TrackTable tracks;
  HostOpTable host_ops;
  DeviceTaskTable device_tasks;
  AttributeTable attributes;
  FlowTable flows;
  CounterTable counters;
  StepTable steps;
  DeviceTable devices;
  // Format and configuration: "format" (kineto, kineto-legacy, ascend-pt, msprof, …),
  // "format_version", "torch_version", "cann_version", "clock" ("epoch" | "relative"), …
  std::map<std::string, std::string> metadata;
  std::map<std::string, DataLossEntry> data_loss;  // reason -> count + first location
  std::vector<std::string> notes;                  // human-readable import notes
  std::vector<std::string> source_files;

  Profile() = default;
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;
  Profile(Profile&&) noexcept = default;
  Profile& operator=(Profile&&) noexcept = default;

  StrId Intern(std::string_view s) { return strings.Intern(s); }
  std::string_view Str(StrId id) const { return strings.Get(id); }

  // What to store for an attribute written as `cell` and read as `number`
  // (NaN when not numeric): the number's text form (NumberTextForm) and
  // kEmptyStr, else the interned cell.
  struct AttributeTextRef {
    StrId text = kEmptyStr;
    uint8_t form = kShortestNumberText;
  };
  AttributeTextRef AttributeTextOf(std::string_view cell, double number);
  void AddAttribute(OwnerKind kind, uint32_t owner, StrId key, std::string_view cell, double number);
  // The text form in which `cell` writes `number` exactly, else kNoNumberTextForm.
  static uint8_t NumberTextForm(std::string_view cell, double number);
  // Attribute row `row`'s value as written in the source.
  std::string AttributeText(size_t row) const;

  // Finds or adds the track keyed by (pid token, tid token).
  uint32_t TrackFor(std::string_view pid_token, std::string_view tid_token, TrackKind kind);
  // Finds or adds a device-stream track and records its device index and stream id.
  uint32_t DeviceTrack(std::string_view pid_token, std::string_view tid_token, int32_t device, int64_t stream);
  // Counts `n` losses of `reason` (of `kind`), keeping the first `location`.
  void CountLoss(LossKind kind, const std::string& reason, const std::string& location, uint64_t n = 1);
  uint64_t TotalDataLoss() const;
  // Approximate heap bytes held by the tables (for memory budgets in bench).
  size_t MemoryBytes() const;
  // The same, table by table (what PYPTO_TIMINGS prints after the import).
  struct TableBytes {
    size_t host_ops = 0, device_tasks = 0, attributes = 0, flows = 0, counters = 0, strings = 0;
    size_t total() const { return host_ops + device_tasks + attributes + flows + counters + strings; }
  };
  TableBytes MemoryBytesByTable() const;

 private:
  std::map<std::pair<StrId, StrId>, uint32_t> track_index_;  // few entries (threads, streams)
};

}  // namespace pypto
