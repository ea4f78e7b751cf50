// gen_ascend_trace_view: writes a synthetic Ascend PyTorch Profiler (torch_npu)
// ASCEND_PROFILER_OUTPUT/trace_view.json of LLM decoding, at any size, for the
// benchmarks (bench/run_bench.sh). Rank 0 of a tensor-parallel-2 job on one
// Atlas A2 NPU, eager torch_npu with the task queue on (TASK_QUEUE_ENABLE).
//
// Layout, as the real writers lay it out (fixtures: pta_llm_decode_910b_torchair_cann9's
// trace_view.json in its source repository, torch_npu 2.10 / CANN 9.0; the local
// pta_trace_view_2024; msprof's hccl_assembler for the HCCL process):
//   - a bare JSON array on one line, events joined by ", ", except the join
//     between the framework part (Python) and the CANN part, written "},{";
//     "ts" a string of µs with 3 decimals (host times on a 10 ns grid, device
//     times on a 20 ns grid ending in 5), "dur" a float µs printed like Python
//     (5.4, 0.02, 134.42, 0.0);
//   - the Python process (raw OS pid): every cpu_op of the main thread in
//     post-order (an op after its children), then the task-queue thread's
//     Dequeue@<item> rows each with its enqueue_to_dequeue "f", then the main
//     thread's Enqueue@<item> rows each with its "s" (cat async_task_queue),
//     then its "M" rows (process_name Python, labels CPU, sort 0, thread names),
//     then (--level 2) the python_function rows, post-order, roots last;
//   - processes of msprof's part, pid = (pid << 10) | (sort_index << 5) | device:
//     CANN (sort 7, device bits 31): M rows, X rows "<layer>@<api>" (AscendCL@aclnn…,
//     Node@launch with item_id = kernel, AscendCL@aclrtLaunchKernelWithHostArgs,
//     AscendCL@aclrtRecordEvent …) in connection_id order, then every HostToDevice
//     "s" (id = connection_id << 32, a string); Ascend Hardware (sort 13): PROFILING_ENABLE,
//     the tasks in time order each followed by its HostToDevice "f" (args Model Id,
//     Task Type, Physic Stream Id, Task Id, Batch Id, Subtask Id, connection_id),
//     the MEMCPY_ASYNC (PCIE_DMA_SQE) tasks after them, PROFILING_DISABLE, then its
//     M rows; AI Core Freq (sort 14): "C" rows {"MHz": 1800}, then M; HCCL
//     (sort 15): "Plane 0" sub-tasks, then the hcom ops on "Group 0 Communication"
//     each with its HostToDevice "f", then M; Overlap Analysis (sort 30): M rows,
//     then Communication, Communication(Not Overlapped), Computing and Free
//     intervals (args {});
//   - last, every async_npu flow pair (torch_to_npu, id = task start in ns as a
//     JSON integer above 2^53) from the cpu_op that queued the task to the task.
// Content per step (ProfilerStep#N, step 0 the prefill unless --no-prefill):
// input ids copied host to device, embedding, per layer RmsNorm, q/k/v MatMulV2 +
// bias add, RotaryPositionEmbedding (q, k), KV cache ScatterUpdate (k, v),
// IncreFlashAttention (decode) or PromptFlashAttention (prefill) as MIX_AIC,
// o_proj MatMulV2, hcom_allReduce_ (record_event / HcclAllreduce / wait_event on
// the task queue; EVENT_RECORD / EVENT_WAIT tasks, Notify Wait / SDMA / Write Value
// sub-tasks on the HCCL stream, written again under HCCL "Plane 0" as Level1
// timelines do), residual add, RmsNorm, gate_up MatMulV2, SwiGlu, down MatMulV2,
// hcom_allReduce_, residual add; final RmsNorm, lm_head, hcom_allGather_, Cast,
// ArgMaxV2, .item() (aclrtSynchronizeStreamWithTimeout + aclrtMemcpy on the main
// thread), token cat. Host costs of eager torch_npu (~30 µs per queued op) make
// decode host-bound, as in real eager traces; the prefill is device-bound.
// cpu_ops carry Sequence number, Fwd thread id, Input Dims / Input type in
// torch_npu's text form ("8,1,3584;\r\n3584", "c10::BFloat16;\r\nScalar");
// --level 2 adds "Call stack" to every cpu_op and the python_function rows
// (Python id / Python parent id), the with_stack shapes of the CANN 9 fixture.
// Deterministic: the same flags and --seed give the same bytes.
//
// Usage: gen_ascend_trace_view --out FILE [--bytes N[K|M|G] | --steps N] [--seed S]
//          [--layers L] [--batch B] [--prompt P] [--level 1|2] [--no-prefill]
//          [--gzip] [--quiet]
// FILE ending in .gz (or --gzip) is written gzip-compressed (zlib level 6).

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gen_common.h"

namespace {

// ---------------------------------------------------------------------------
// Constants.

// Epoch ns of the first event (2025-11-27, like the CANN 8.3 sample); host
// times stay on a 10 ns grid, as torch_npu writes them.
constexpr int64_t kStartNs = 1764246877073569640;
constexpr int64_t kPid = 3475128;             // OS pid of the Python process (any value)
constexpr int64_t kMainTid = kPid;            // main thread = pid
constexpr int64_t kQueueTid = kPid + 294;     // task-queue (dequeue) thread, as in the CANN 9 sample
constexpr int kDevice = 0;
constexpr int kCtrlStream = 0;                // PROFILING_ENABLE / DISABLE
constexpr int kComputeStream = 2;             // eager compute stream (2-rank allreduce DB sample)
constexpr int kHcclStream = 4;                // HCCL stream (same sample)
constexpr int64_t kNotApplicable = 4294967295;  // Model Id / Subtask Id of eager tasks
constexpr int kTaskIdWrap = 65536;

// msprof's pid scheme: (pid << 10) | (sort_index << 5) | device; CANN uses device bits 31.
constexpr int64_t EncodePid(int sort_index, int device) { return (kPid << 10) | (sort_index << 5) | device; }
constexpr int64_t kCannPid = EncodePid(7, 31);
constexpr int64_t kHwPid = EncodePid(13, kDevice);
constexpr int64_t kFreqPid = EncodePid(14, kDevice);
constexpr int64_t kHcclPid = EncodePid(15, kDevice);
constexpr int64_t kOverlapPid = EncodePid(30, kDevice);
constexpr int kGroupTid = 0;                  // HCCL "Group 0 Communication" (group index 0 * 9)
constexpr int kPlaneTid = 1;                  // HCCL "Plane 0" (group tid + plane + 1)

// Model: Qwen2-7B-like with tensor parallelism 2 (per-rank widths halved).
constexpr int64_t kHidden = 3584;
constexpr int64_t kHeadsPerRank = 14;
constexpr int64_t kKvHeadsPerRank = 2;
constexpr int64_t kHeadDim = 128;
constexpr int64_t kInterPerRank = 9472;
constexpr int64_t kVocabPerRank = 76032;
constexpr int kDefaultLayers = 28;
constexpr int64_t kDefaultBatch = 8;
constexpr int64_t kDefaultPrompt = 512;
constexpr int64_t kDefaultSteps = 16;

// Device time model (Atlas A2): ~1.6 TB/s achieved HBM, ~190 TFLOP/s achieved
// BF16 cube, 1.2 µs kernel floor; HCCL: HCCS ~56 GB/s per link, local SDMA ~90 GB/s.
constexpr double kBytesPerNs = 1600.0;
constexpr double kFlopsPerNs = 190e3;
constexpr int64_t kKernelFloorNs = 1200;
constexpr double kHccsBytesPerNs = 56.0;
constexpr double kSdmaBytesPerNs = 90.0;

// Output.
constexpr size_t kWriteBufBytes = 1 << 20;
constexpr int kGzipLevel = 6;

// torch_npu joins list entries of Input Dims / Input type / Call stack with ";\r\n"
// (escaped inside the JSON string).
constexpr std::string_view kSep = ";\\r\\n";

// ---------------------------------------------------------------------------
class Rng : public pypto::bench::SplitMix64 {
 public:
  using SplitMix64::SplitMix64;
  // v x (1 +- rel), at least 1
  int64_t Jitter(int64_t v, double rel) {
    double f = 1.0 + rel * (2.0 * Uniform() - 1.0);
    int64_t r = static_cast<int64_t>(static_cast<double>(v) * f);
    return r < 1 ? 1 : r;
  }

};

// Host durations on the 10 ns grid, device ones on the 20 ns grid.
int64_t Host(int64_t ns) { return ns < 10 ? 10 : ns / 10 * 10; }
int64_t Dev(int64_t ns) { return ns < 20 ? 20 : ns / 20 * 20; }

// ---------------------------------------------------------------------------
// Buffered byte sink over a FILE* or a gzFile.
class Sink {
 public:
  explicit Sink(FILE* f) : f_(f) { buf_.resize(kWriteBufBytes); }
  explicit Sink(gzFile g) : g_(g) { buf_.resize(kWriteBufBytes); }
  ~Sink() { Flush(); }
  uint64_t bytes() const { return total_ + n_; }
  void Put(std::string_view s) {
    if (n_ + s.size() > buf_.size()) {
      Flush();
      if (s.size() > buf_.size()) {
        WriteOut(s.data(), s.size());
        total_ += s.size();
        return;
      }
    }
    std::memcpy(buf_.data() + n_, s.data(), s.size());
    n_ += s.size();
  }
  void Int(int64_t v) {
    Reserve(24);
    auto r = std::to_chars(buf_.data() + n_, buf_.data() + buf_.size(), v);
    n_ = r.ptr - buf_.data();
  }
  void UInt(uint64_t v) {
    Reserve(24);
    auto r = std::to_chars(buf_.data() + n_, buf_.data() + buf_.size(), v);
    n_ = r.ptr - buf_.data();
  }
  // "ts": ns -> "µs.nnn" in quotes (torch_npu's convert_ns2us_str).
  void Ts(int64_t ns) {
    Put("\"");
    Int(ns / 1000);
    const int64_t f = ns % 1000;
    Reserve(5);
    buf_[n_++] = '.';
    buf_[n_++] = static_cast<char>('0' + f / 100);
    buf_[n_++] = static_cast<char>('0' + f / 10 % 10);
    buf_[n_++] = static_cast<char>('0' + f % 10);
    buf_[n_++] = '"';
  }
  // "dur": ns (a multiple of 10) -> a float µs as Python prints it: 5.4, 0.02, 12.0.
  void Dur(int64_t ns) {
    const int64_t c = ns / 10;  // hundredths of a µs
    Int(c / 100);
    const int64_t f = c % 100;
    Reserve(3);
    buf_[n_++] = '.';
    if (f % 10 == 0) {
      buf_[n_++] = static_cast<char>('0' + f / 10);
    } else {
      buf_[n_++] = static_cast<char>('0' + f / 10);
      buf_[n_++] = static_cast<char>('0' + f % 10);
    }
  }
  void Fixed(double v, int prec) {
    Reserve(48);
    auto r = std::to_chars(buf_.data() + n_, buf_.data() + buf_.size(), v, std::chars_format::fixed, prec);
    n_ = r.ptr - buf_.data();
  }
  void Flush() {
    if (n_ == 0) return;
    WriteOut(buf_.data(), n_);
    total_ += n_;
    n_ = 0;
  }

 private:
  void Reserve(size_t k) {
    if (n_ + k > buf_.size()) Flush();
  }
  void WriteOut(const char* p, size_t n) {
    bool ok = f_ ? std::fwrite(p, 1, n, f_) == n : gzwrite(g_, p, static_cast<unsigned>(n)) == static_cast<int>(n);
    if (!ok) {
      std::fprintf(stderr, "gen_ascend_trace_view: write failed: %s\n", std::strerror(errno));
      std::exit(1);
    }
  }
  FILE* f_ = nullptr;
  gzFile g_ = nullptr;
  std::vector<char> buf_;
  size_t n_ = 0;
  uint64_t total_ = 0;
};

// The sections that follow the main thread's cpu_ops in the file; each is
// staged in a temp file next to the output and appended in this order.
enum Section : int {
  kDequeue,      // Python: Dequeue@… + "f"
  kEnqueue,      // Python: Enqueue@… + "s"
  kPyFunc,       // Python: python_function (--level 2)
  kCannX,        // CANN X rows
  kCannS,        // CANN HostToDevice "s"
  kHw,           // Ascend Hardware tasks + "f"
  kHwCopy,       // Ascend Hardware MEMCPY_ASYNC tasks + "f"
  kHcclPlane,    // HCCL Plane 0 sub-tasks
  kHcclOp,       // HCCL ops + "f"
  kOvComm,       // Overlap Analysis: Communication
  kOvCommNo,     //   Communication(Not Overlapped)
  kOvComp,       //   Computing
  kOvFree,       //   Free
  kAsync,        // async_npu flow pairs
  kSectionCount
};

struct TempFile {
  std::string path;
  FILE* f = nullptr;
  std::unique_ptr<Sink> sink;
};

struct Options {
  std::string out;
  uint64_t target_bytes = 0;
  int64_t steps = kDefaultSteps;
  uint64_t seed = 1;
  int layers = kDefaultLayers;
  int64_t batch = kDefaultBatch;
  int64_t prompt = kDefaultPrompt;
  int level = 1;
  bool prefill = true;
  bool gzip = false;
  bool quiet = false;
};

// One kernel as torch_npu launches it: the aclnn API (cpu_op, queue item, CANN
// call) and the Ascend Hardware task.
struct Kernel {
  const char* aclnn;
  const char* task;       // task name (= Node@launch item_id)
  const char* task_type;  // Ascend Hardware "Task Type"
  bool mix;               // MIX_AIC: Subtask Id 0
};

// Names from real kernel_details / trace_view files (pta_level2_llm_cann83,
// pta_level1_alexnet_cann8, the CANN 9 decode trace).
const Kernel kEmbedding{"aclnnEmbedding", "aclnnEmbedding_GatherV2AiCore_GatherV2", "AI_VECTOR_CORE", false};
const Kernel kRmsNorm{"aclnnRmsNorm", "RmsNorm", "AI_VECTOR_CORE", false};
const Kernel kMatmul{"aclnnMatmul", "aclnnMatmul_MatMulCommon_MatMulV2", "AI_CORE", false};
const Kernel kInplaceAdd{"aclnnInplaceAdd", "aclnnInplaceAdd_AddAiCore_Add", "AI_VECTOR_CORE", false};
const Kernel kRope{"aclnnRotaryPositionEmbedding", "RotaryPositionEmbedding", "AI_VECTOR_CORE", false};
const Kernel kScatter{"aclnnScatterUpdate", "aclnnScatterUpdate_ScatterUpdateAiCore_ScatterUpdate", "AI_VECTOR_CORE", false};
const Kernel kIfa{"aclnnIncreFlashAttentionV4", "aclnnIncreFlashAttentionV4_IncreFlashAttention_IncreFlashAttention",
                  "MIX_AIC", true};
const Kernel kPfa{"aclnnPromptFlashAttentionV3", "aclnnPromptFlashAttentionV3_PromptFlashAttention_PromptFlashAttention",
                  "MIX_AIC", true};
const Kernel kAdd{"aclnnAdd", "aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", false};
const Kernel kAdds{"aclnnAdds", "aclnnAdds_AddAiCore_Add", "AI_VECTOR_CORE", false};
const Kernel kSwiGlu{"aclnnSwiGlu", "SwiGlu", "AI_VECTOR_CORE", false};
const Kernel kCast{"aclnnCast", "aclnnCast_CastAiCore_Cast", "AI_VECTOR_CORE", false};
const Kernel kArgMax{"aclnnArgMax", "aclnnArgMax_ArgMaxV2AiCore_ArgMaxV2", "AI_VECTOR_CORE", false};
const Kernel kCat{"aclnnCat", "aclnnCat_ConcatD_ConcatD", "AI_VECTOR_CORE", false};

// Python frames of --level 2 (python_function names are site-packages relative,
// Call stack entries absolute).
constexpr std::string_view kSitePackages = "/usr/local/python3.10.14/lib/python3.10/site-packages/";
constexpr std::string_view kScriptDir = "/workspace/llm_decode/";
constexpr std::string_view kModeling = "transformers/models/qwen2/modeling_qwen2.py";

std::string Dims(std::initializer_list<int64_t> d) {
  std::string s;
  char b[24];
  for (int64_t v : d) {
    if (!s.empty()) s += ',';
    auto r = std::to_chars(b, b + sizeof b, v);
    s.append(b, r.ptr);
  }
  return s;
}

// Joins list entries with torch_npu's ";\r\n".
std::string Join(std::initializer_list<std::string_view> items) {
  std::string s;
  bool first = true;
  for (std::string_view it : items) {
    if (!first) s += kSep;
    s += it;
    first = false;
  }
  return s;
}

// ---------------------------------------------------------------------------
class Generator {
 public:
  Generator(const Options& o, Sink* cpu, std::array<TempFile, kSectionCount>* sec)
      : o_(o), rng_(o.seed), cpu_(cpu), sec_(sec) {
    if (o_.level >= 2) {
      // The script, generate() and the sampling loop enclose the whole window.
      PushPy("bench_decode.py(131): <module>", std::string(kScriptDir) + "bench_decode.py(131): <module>");
      PushPy("bench_decode.py(97): main", std::string(kScriptDir) + "bench_decode.py(97): main");
      PushSite("torch/utils/_contextlib.py(116): decorate_context");
      PushSite("transformers/generation/utils.py(2252): generate");
      PushSite("transformers/generation/utils.py(3251): _sample");
    }
    freq_.reserve(4096);
    FreqSample(kStartNs - 4200000);
  }

  int64_t steps() const { return step_; }
  uint64_t events() const { return events_; }
  uint64_t tasks() const { return tasks_; }
  uint64_t bytes_in_memory() const { return freq_.size() + 4096; }

  void Step() {
    const int64_t s = step_;
    const bool prefill = o_.prefill && s == 0;
    const int64_t q = prefill ? o_.prompt : 1;
    const int64_t kv = o_.prompt + (o_.prefill ? s : s + 1);
    // generate()'s Python between two forwards (stopping criteria, cache update).
    t_ += Host(s == 0 ? 2500000 : rng_.Jitter(160000, 0.3));
    if (s > 0 && s % 64 == 0) FreqSample(t_);
    char step_name[40];
    std::snprintf(step_name, sizeof step_name, "ProfilerStep#%" PRId64, s);
    Open(step_name, "", "");
    Forward(q, kv, prefill);
    Close();
    ++step_;
  }

  // Ends the window: closes the Python frames and returns the end time.
  int64_t Finish() {
    Drain(INT64_MAX);
    t_ = std::max(t_, deq_t_) + Host(rng_.Jitter(300000, 0.2));
    while (!py_.empty()) PopPy();
    FreqSample(std::max(t_, std::max(comp_free_, hccl_free_)) + 1000000);
    return std::max(t_, std::max(comp_free_, hccl_free_)) + 20000;
  }

  // Trailers written by main() at assembly time.
  void WritePythonMeta(Sink* out) const {
    auto m = [&](const char* name, int64_t tid, const char* key, std::string_view value, bool quoted) {
      out->Put(", {\"ph\": \"M\", \"name\": \"");
      out->Put(name);
      out->Put("\", \"pid\": ");
      out->Int(kPid);
      out->Put(", \"tid\": ");
      out->Int(tid);
      out->Put(", \"args\": {\"");
      out->Put(key);
      out->Put(quoted ? "\": \"" : "\": ");
      out->Put(value);
      out->Put(quoted ? "\"}}" : "}}");
    };
    m("process_name", 0, "name", "Python", true);
    m("process_labels", 0, "labels", "CPU", true);
    m("process_sort_index", 0, "sort_index", "0", false);
    for (int64_t tid : {kMainTid, kQueueTid}) {
      m("thread_name", tid, "name", "Thread " + std::to_string(tid), true);
      m("thread_sort_index", tid, "sort_index", std::to_string(tid == kMainTid ? tid : tid + 1), false);
    }
  }

  // msprof's M rows: name, pid, tid, ph, args. The first row of the CANN part
  // follows the framework part without a space ("},{").
  static void MetaRow(Sink* out, bool first_of_part, int64_t pid, int64_t tid, const char* name, const char* key,
                      std::string_view value, bool quoted) {
    out->Put(first_of_part ? ",{\"name\": \"" : ", {\"name\": \"");
    out->Put(name);
    out->Put("\", \"pid\": ");
    out->Int(pid);
    out->Put(", \"tid\": ");
    out->Int(tid);
    out->Put(", \"ph\": \"M\", \"args\": {\"");
    out->Put(key);
    out->Put(quoted ? "\": \"" : "\": ");
    out->Put(value);
    out->Put(quoted ? "\"}}" : "}}");
  }
  static void ProcessMeta(Sink* out, bool first_of_part, int64_t pid, const char* name, const char* label, int sort) {
    MetaRow(out, first_of_part, pid, 0, "process_name", "name", name, true);
    MetaRow(out, false, pid, 0, "process_labels", "labels", label, true);
    MetaRow(out, false, pid, 0, "process_sort_index", "sort_index", std::to_string(sort), false);
  }
  static void ThreadMeta(Sink* out, int64_t pid, int64_t tid, std::string_view name) {
    MetaRow(out, false, pid, tid, "thread_name", "name", name, true);
    MetaRow(out, false, pid, tid, "thread_sort_index", "sort_index", std::to_string(tid), false);
  }

  void WriteCannMeta(Sink* out) const {
    ProcessMeta(out, true, kCannPid, "CANN", "CPU", 7);
    for (int64_t tid : {kMainTid, kQueueTid}) ThreadMeta(out, kCannPid, tid, "Thread " + std::to_string(tid));
  }

  // PROFILING_ENABLE opens the Ascend Hardware part (its connection id is the
  // largest of the run, as in the CANN 9 sample).
  void WriteProfilingTask(Sink* out, bool enable, int64_t ts) const {
    out->Put(enable ? ", {\"name\": \"PROFILING_ENABLE\", \"pid\": " : ", {\"name\": \"PROFILING_DISABLE\", \"pid\": ");
    out->Int(kHwPid);
    out->Put(", \"tid\": ");
    out->Int(kCtrlStream);
    out->Put(", \"ts\": ");
    out->Ts(ts);
    out->Put(enable ? ", \"dur\": 0.0, \"ph\": \"X\", \"args\": {\"Model Id\": 4294967295, \"Task Type\": \"PROFILING_ENABLE\", "
                    : ", \"dur\": 0.02, \"ph\": \"X\", \"args\": {\"Model Id\": 4294967295, \"Task Type\": \"PROFILING_DISABLE\", ");
    out->Put("\"Physic Stream Id\": ");
    out->Int(kCtrlStream);
    out->Put(", \"Task Id\": ");
    out->Int(enable ? 4 : 5);
    out->Put(", \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": ");
    out->Int(conn_ + 1);
    out->Put("}}");
  }
  int64_t first_ts() const { return kStartNs - 4200000; }

  void WriteHwMeta(Sink* out) const {
    ProcessMeta(out, false, kHwPid, "Ascend Hardware", "NPU 0", 13);
    for (int stream : {kCtrlStream, kComputeStream, kHcclStream}) ThreadMeta(out, kHwPid, stream, "Stream " + std::to_string(stream));
  }
  void WriteFreq(Sink* out) const {
    out->Put(freq_);
    ProcessMeta(out, false, kFreqPid, "AI Core Freq", "NPU 0", 14);
  }
  void WriteHcclMeta(Sink* out) const {
    ProcessMeta(out, false, kHcclPid, "HCCL", "NPU 0", 15);
    ThreadMeta(out, kHcclPid, kGroupTid, "Group 0 Communication");
    ThreadMeta(out, kHcclPid, kPlaneTid, "Plane 0");
  }
  void WriteOverlapMeta(Sink* out) const {
    ProcessMeta(out, false, kOverlapPid, "Overlap Analysis", "NPU 0", 30);
    ThreadMeta(out, kOverlapPid, 0, "Communication");
    ThreadMeta(out, kOverlapPid, 1, "Communication(Not Overlapped)");
    ThreadMeta(out, kOverlapPid, 2, "Computing");
    ThreadMeta(out, kOverlapPid, 3, "Free");
  }

 private:
  Sink& S(Section s) { return *(*sec_)[s].sink; }

  // ---- main thread: cpu_ops (post-order) ----------------------------------
  struct Op {
    std::string name, dims, types, stack;
    int64_t ts = 0;
  };

  void Open(std::string_view name, std::string_view dims, std::string_view types) {
    if (depth_ == ops_.size()) ops_.emplace_back();
    Op& op = ops_[depth_++];
    op.name.assign(name);
    op.dims.assign(dims);
    op.types.assign(types);
    if (o_.level >= 2) op.stack.assign(StackText());
    else op.stack.clear();
    op.ts = t_;
    t_ += Host(rng_.Jitter(3500, 0.4));
  }
  void Close() {
    t_ += Host(rng_.Jitter(1400, 0.5));
    Op& op = ops_[--depth_];
    Sink& out = *cpu_;
    out.Put(first_cpu_ ? "{\"ph\": \"X\", \"name\": \"" : ", {\"ph\": \"X\", \"name\": \"");
    first_cpu_ = false;
    out.Put(op.name);
    out.Put("\", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kMainTid);
    out.Put(", \"ts\": ");
    out.Ts(op.ts);
    out.Put(", \"dur\": ");
    out.Dur(t_ - op.ts);
    out.Put(", \"cat\": \"cpu_op\", \"args\": {\"Sequence number\": -1, \"Fwd thread id\": 0");
    if (!op.types.empty()) {
      out.Put(", \"Input Dims\": \"");
      out.Put(op.dims);
      out.Put("\", \"Input type\": \"");
      out.Put(op.types);
      out.Put("\"");
    }
    if (!op.stack.empty()) {
      out.Put(", \"Call stack\": \"");
      out.Put(op.stack);
      out.Put("\"");
    }
    out.Put("}}");
    ++events_;
  }
  int64_t current_op_ts() const { return ops_[depth_ - 1].ts; }

  // ---- Python frames (--level 2) -------------------------------------------
  struct PyFrame {
    std::string rel, abs;
    int64_t ts = 0, id = 0, parent = 0;
  };
  void PushPy(std::string_view rel, std::string_view abs) {
    PyFrame f;
    f.rel.assign(rel);
    f.abs.assign(abs);
    f.ts = t_;
    f.id = next_py_id_++;
    f.parent = py_.empty() ? 0 : py_.back().id;
    py_.push_back(std::move(f));
    stack_dirty_ = true;
    if (py_.size() > 5) t_ += Host(rng_.Jitter(700, 0.4));  // frames below the window's roots cost time
  }
  void PushSite(std::string_view rel) { PushPy(rel, std::string(kSitePackages) + std::string(rel)); }
  void PopPy() {
    if (py_.size() > 5) t_ += Host(rng_.Jitter(350, 0.4));
    PyFrame& f = py_.back();
    Sink& out = S(kPyFunc);
    out.Put(", {\"ph\": \"X\", \"name\": \"");
    out.Put(f.rel);
    out.Put("\", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kMainTid);
    out.Put(", \"ts\": ");
    out.Ts(f.ts);
    out.Put(", \"dur\": ");
    out.Dur(t_ - f.ts);
    out.Put(", \"cat\": \"python_function\", \"args\": {\"Python id\": ");
    out.Int(f.id);
    out.Put(", \"Python parent id\": ");
    out.Int(f.parent);
    out.Put("}}");
    ++events_;
    py_.pop_back();
    stack_dirty_ = true;
  }
  // An nn.Module call: _wrapped_call_impl -> _call_impl -> forward.
  void PushModule(std::string_view file, int line) {
    if (o_.level < 2) return;
    PushSite("torch/nn/modules/module.py(1739): _wrapped_call_impl");
    PushSite("torch/nn/modules/module.py(1750): _call_impl");
    PushSite(std::string(file) + "(" + std::to_string(line) + "): forward");
  }
  void PopModule() {
    if (o_.level < 2) return;
    for (int i = 0; i < 3; ++i) PopPy();
  }
  // Call stack text of the current Python frames, innermost first.
  const std::string& StackText() {
    if (stack_dirty_) {
      stack_.clear();
      for (size_t i = py_.size(); i-- > 0;) {
        if (!stack_.empty()) stack_ += kSep;
        stack_ += py_[i].abs;
      }
      stack_dirty_ = false;
    }
    return stack_;
  }

  // ---- task queue -------------------------------------------------------------
  // Enqueue@<item> on the main thread (inside the current cpu_op) with its "s".
  int64_t Enqueue(std::string_view item) {
    const int64_t corr = ++corr_;
    const int64_t ts = t_;
    t_ += Host(rng_.Jitter(6000, 0.5));
    Sink& out = S(kEnqueue);
    out.Put(", {\"ph\": \"X\", \"name\": \"Enqueue@");
    out.Put(item);
    out.Put("\", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kMainTid);
    out.Put(", \"ts\": ");
    out.Ts(ts);
    out.Put(", \"dur\": ");
    out.Dur(t_ - ts);
    out.Put(", \"cat\": \"enqueue\", \"args\": {\"correlation_id\": ");
    out.Int(corr);
    out.Put("}}, {\"ph\": \"s\", \"bp\": \"e\", \"name\": \"enqueue_to_dequeue\", \"id\": ");
    out.Int(corr);
    out.Put(", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kMainTid);
    out.Put(", \"ts\": ");
    out.Ts(ts);
    out.Put(", \"cat\": \"async_task_queue\"}");
    events_ += 2;
    enq_end_ = t_;
    t_ += Host(rng_.Jitter(2500, 0.4));
    return corr;
  }
  // The task-queue thread picks the item up once it is free.
  int64_t DequeueBegin() {
    deq_begin_ = std::max(enq_end_ + Host(rng_.Jitter(1800, 0.5)), deq_t_ + Host(rng_.Jitter(900, 0.5)));
    return deq_begin_;
  }
  void DequeueEnd(std::string_view item, int64_t corr, int64_t end) {
    Sink& out = S(kDequeue);
    out.Put(", {\"ph\": \"X\", \"name\": \"Dequeue@");
    out.Put(item);
    out.Put("\", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kQueueTid);
    out.Put(", \"ts\": ");
    out.Ts(deq_begin_);
    out.Put(", \"dur\": ");
    out.Dur(end - deq_begin_);
    out.Put(", \"cat\": \"dequeue\", \"args\": {\"correlation_id\": ");
    out.Int(corr);
    out.Put("}}, {\"ph\": \"f\", \"bp\": \"e\", \"name\": \"enqueue_to_dequeue\", \"id\": ");
    out.Int(corr);
    out.Put(", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kQueueTid);
    out.Put(", \"ts\": ");
    out.Ts(deq_begin_);
    out.Put(", \"cat\": \"async_task_queue\"}");
    events_ += 2;
    deq_t_ = end;
  }

  // ---- CANN ----------------------------------------------------------------------
  // One CANN API row; returns its connection id (ids follow the rows' order).
  int64_t Cann(int64_t tid, std::string_view layer_api, std::string_view mode, std::string_view level,
               std::string_view id, std::string_view item_id, int64_t ts, int64_t dur) {
    const int64_t c = ++conn_;
    Sink& out = S(kCannX);
    out.Put(", {\"name\": \"");
    out.Put(layer_api);
    out.Put("\", \"pid\": ");
    out.Int(kCannPid);
    out.Put(", \"tid\": ");
    out.Int(tid);
    out.Put(", \"ts\": ");
    out.Ts(ts);
    out.Put(", \"dur\": ");
    out.Dur(dur);
    out.Put(", \"ph\": \"X\", \"args\": {\"Thread Id\": ");
    out.Int(tid);
    out.Put(", \"Mode\": \"");
    out.Put(mode);
    out.Put("\", \"level\": \"");
    out.Put(level);
    out.Put("\", \"id\": \"");
    out.Put(id);
    out.Put("\", \"item_id\": \"");
    out.Put(item_id);
    out.Put("\", \"connection_id\": ");
    out.Int(c);
    out.Put("}}");
    ++events_;
    return c;
  }
  int64_t Acl(int64_t tid, std::string_view api, std::string_view mode, int64_t ts, int64_t dur) {
    std::string name = "AscendCL@";
    name += api;
    return Cann(tid, name, mode, "acl", api, "0", ts, dur);
  }
  void HostToDeviceStart(int64_t tid, int64_t conn, int64_t ts) {
    Sink& out = S(kCannS);
    const uint64_t id = static_cast<uint64_t>(conn) << 32;
    out.Put(", {\"name\": \"HostToDevice");
    out.UInt(id);
    out.Put("\", \"pid\": ");
    out.Int(kCannPid);
    out.Put(", \"tid\": ");
    out.Int(tid);
    out.Put(", \"ph\": \"s\", \"cat\": \"HostToDevice\", \"id\": \"");
    out.UInt(id);
    out.Put("\", \"ts\": ");
    out.Ts(ts);
    out.Put("}");
    ++events_;
  }
  static void HostToDeviceEnd(Sink& out, int64_t pid, int64_t tid, int64_t conn, int64_t ts) {
    const uint64_t id = static_cast<uint64_t>(conn) << 32;
    out.Put(", {\"name\": \"HostToDevice");
    out.UInt(id);
    out.Put("\", \"pid\": ");
    out.Int(pid);
    out.Put(", \"tid\": ");
    out.Int(tid);
    out.Put(", \"ph\": \"f\", \"cat\": \"HostToDevice\", \"id\": \"");
    out.UInt(id);
    out.Put("\", \"ts\": ");
    out.Ts(ts);
    out.Put(", \"bp\": \"e\"}");
  }

  // ---- Ascend Hardware ------------------------------------------------------------
  // Device start on the stream's grid: compute-stream starts end in 5, HCCL-stream
  // ones in 15 (mod 20), so async_npu ids (start ns) never collide across streams.
  static int64_t DevStart(int64_t t, int stream) {
    const int64_t r = stream == kHcclStream ? 15 : 5;
    int64_t g = t / 20 * 20 + r;
    return g < t ? g + 20 : g;
  }
  struct TaskSpec {
    int stream = kComputeStream;
    std::string_view name, type;
    int64_t dur = 0;
    int64_t earliest = 0;
    int64_t conn = -1;          // HostToDevice flow + connection_id when >= 0
    int64_t conn_arg = -1;      // connection_id without a flow (HCCL sub-tasks)
    int64_t async_src = -1;     // async_npu flow from the cpu_op starting here
    bool mix = false;
    bool computing = false;     // counts as Overlap Analysis "Computing"
    bool copy = false;          // MEMCPY_ASYNC: written after the other tasks
    int64_t task_id = -1;       // fixed task id (HCCL sub-tasks share their op's)
  };
  int64_t& StreamFree(int stream) { return stream == kHcclStream ? hccl_free_ : comp_free_; }
  int NextTaskId(int stream) {
    int& id = stream == kHcclStream ? hccl_task_id_ : comp_task_id_;
    int v = id;
    id = (id + 1) % kTaskIdWrap;
    return v;
  }
  // A task placed on its stream but not written yet: the writer lists tasks
  // (and the async_npu pairs) in start order, and a collective's tasks on the
  // HCCL stream interleave with the compute stream's, so rows wait here until
  // no later task can start before them (Drain).
  struct Pending {
    int64_t start = 0, dur = 0;
    int stream = kComputeStream;
    std::string_view name, type;
    int task_id = 0;
    int64_t conn = -1, conn_arg = -1, async_src = -1;
    bool mix = false, copy = false, computing = false;
    bool hw_row = true;        // false: only the async_npu pair / Overlap row of an HCCL op
    int64_t async_pid = kHwPid, async_tid = 0;
  };
  // Places one task on its stream; returns its start.
  int64_t Task(const TaskSpec& t) {
    int64_t& free = StreamFree(t.stream);
    Pending p;
    p.start = DevStart(std::max(t.earliest, free + 20), t.stream);
    p.dur = Dev(t.dur);
    free = p.start + p.dur;
    p.stream = t.stream;
    p.name = t.name;
    p.type = t.type;
    p.task_id = t.task_id >= 0 ? t.task_id : NextTaskId(t.stream);
    p.conn = t.conn;
    p.conn_arg = t.conn_arg;
    p.async_src = t.async_src;
    p.mix = t.mix;
    p.copy = t.copy;
    p.computing = t.computing;
    p.async_tid = t.stream;
    const int64_t start = p.start;
    Hold(std::move(p));
    return start;
  }
  void Hold(Pending p) {
    pending_.push_back(std::move(p));
    std::push_heap(pending_.begin(), pending_.end(), Later);
    // Every later task starts after its stream's free time.
    Drain(std::min(comp_free_, hccl_free_));
  }
  static bool Later(const Pending& a, const Pending& b) {
    return a.start != b.start ? a.start > b.start : a.stream > b.stream;
  }
  void Drain(int64_t before) {
    while (!pending_.empty() && pending_.front().start < before) {
      std::pop_heap(pending_.begin(), pending_.end(), Later);
      Write(pending_.back());
      pending_.pop_back();
    }
  }
  void Write(const Pending& t) {
    if (t.hw_row) {
      Sink& out = S(t.copy ? kHwCopy : kHw);
      out.Put(", {\"name\": \"");
      out.Put(t.name);
      out.Put("\", \"pid\": ");
      out.Int(kHwPid);
      out.Put(", \"tid\": ");
      out.Int(t.stream);
      out.Put(", \"ts\": ");
      out.Ts(t.start);
      out.Put(", \"dur\": ");
      out.Dur(t.dur);
      out.Put(", \"ph\": \"X\", \"args\": {\"Model Id\": 4294967295, \"Task Type\": \"");
      out.Put(t.type);
      out.Put("\", \"Physic Stream Id\": ");
      out.Int(t.stream);
      out.Put(", \"Task Id\": ");
      out.Int(t.task_id);
      out.Put(t.mix ? ", \"Batch Id\": 0, \"Subtask Id\": 0, \"connection_id\": "
                    : ", \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": ");
      out.Int(t.conn >= 0 ? t.conn : t.conn_arg);
      out.Put("}}");
      ++events_;
      ++tasks_;
      if (t.conn >= 0) {
        HostToDeviceEnd(out, kHwPid, t.stream, t.conn, t.start);
        ++events_;
      }
    }
    if (t.async_src >= 0) AsyncNpu(t.async_src, t.async_pid, t.async_tid, t.start);
    if (t.computing) Busy(kOvComp, t.start, t.dur);
    else if (!t.hw_row) Busy(kOvComm, t.start, t.dur);
  }
  void AsyncNpu(int64_t src_ts, int64_t pid, int64_t tid, int64_t start) {
    Sink& out = S(kAsync);
    out.Put(", {\"ph\": \"s\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": ");
    out.Int(start);
    out.Put(", \"pid\": ");
    out.Int(kPid);
    out.Put(", \"tid\": ");
    out.Int(kMainTid);
    out.Put(", \"ts\": ");
    out.Ts(src_ts);
    out.Put(", \"cat\": \"async_npu\"}, {\"ph\": \"f\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": ");
    out.Int(start);
    out.Put(", \"pid\": ");
    out.Int(pid);
    out.Put(", \"tid\": ");
    out.Int(tid);
    out.Put(", \"ts\": ");
    out.Ts(start);
    out.Put(", \"cat\": \"async_npu\"}");
    events_ += 2;
  }

  // ---- Overlap Analysis ---------------------------------------------------------------
  void OverlapRow(Section s, int tid, std::string_view name, int64_t ts, int64_t dur) {
    Sink& out = S(s);
    out.Put(", {\"name\": \"");
    out.Put(name);
    out.Put("\", \"pid\": ");
    out.Int(kOverlapPid);
    out.Put(", \"tid\": ");
    out.Int(tid);
    out.Put(", \"ts\": ");
    out.Ts(ts);
    out.Put(", \"dur\": ");
    out.Dur(dur);
    out.Put(", \"ph\": \"X\", \"args\": {}}");
    ++events_;
  }
  // Busy intervals arrive in time order (the compute stream waits for each
  // collective); the gaps between them are "Free".
  void Busy(Section s, int64_t ts, int64_t dur) {
    if (busy_end_ >= 0 && ts > busy_end_) OverlapRow(kOvFree, 3, "Free", busy_end_, ts - busy_end_);
    if (s == kOvComp) {
      OverlapRow(kOvComp, 2, "Computing", ts, dur);
    } else {
      OverlapRow(kOvComm, 0, "Communication", ts, dur);
      OverlapRow(kOvCommNo, 1, "Communication(Not Overlapped)", ts, dur);
    }
    busy_end_ = std::max(busy_end_, ts + dur);
  }

  // ---- launches ----------------------------------------------------------------------
  int64_t KernelNs(double bytes, double flops) {
    const double ns = std::max(bytes / kBytesPerNs, flops / kFlopsPerNs) + kKernelFloorNs * 0.5;
    return std::max<int64_t>(kKernelFloorNs, rng_.Jitter(static_cast<int64_t>(ns), 0.06));
  }

  // An aclnn kernel launched from inside the current aten op: the aclnn cpu_op
  // queues the item; the queue thread runs AscendCL@aclnn… -> Node@launch ->
  // aclrtLaunchKernelWithHostArgs; the task follows.
  void Launch(const Kernel& k, double bytes, double flops = 0.0) {
    Open(k.aclnn, "", "");
    const int64_t src = current_op_ts();
    t_ += Host(rng_.Jitter(4500, 0.5));  // argument conversion, workspace size
    const int64_t corr = Enqueue(k.aclnn);
    Close();
    int64_t d = DequeueBegin();
    const int64_t acl = d + Host(rng_.Jitter(1700, 0.3));
    const int64_t gsa = acl + Host(rng_.Jitter(700, 0.3));
    const int64_t gsa_dur = Host(rng_.Jitter(480, 0.3));
    const int64_t node = gsa + gsa_dur + Host(rng_.Jitter(600, 0.3));
    const int64_t node_dur = Host(rng_.Jitter(8000, 0.45));
    const int64_t launch = node + Host(rng_.Jitter(1000, 0.3));
    const int64_t launch_dur = std::max<int64_t>(10, node + node_dur - Host(250) - launch);
    const int64_t acl_end = node + node_dur + Host(rng_.Jitter(700, 0.3));
    Acl(kQueueTid, k.aclnn, "ACL_NN", acl, acl_end - acl);
    Acl(kQueueTid, "aclrtGetStreamAttribute", "ACL_RTS", gsa, gsa_dur);
    const int64_t c = Cann(kQueueTid, "Node@launch", "launch", "node", "0", k.task, node, node_dur);
    Acl(kQueueTid, "aclrtLaunchKernelWithHostArgs", "ACL_RTS", launch, launch_dur);
    HostToDeviceStart(kQueueTid, c, node);
    DequeueEnd(k.aclnn, corr, acl_end + Host(rng_.Jitter(1300, 0.3)));
    TaskSpec t;
    t.name = k.task;
    t.type = k.task_type;
    t.dur = KernelNs(bytes, flops);
    t.earliest = node + node_dur + rng_.Jitter(400, 0.8);
    t.conn = c;
    t.async_src = src;
    t.mix = k.mix;
    t.computing = true;
    Task(t);
  }

  // aten op (with Input Dims / Input type) around one aclnn kernel.
  void AtenKernel(std::string_view aten, std::string_view dims, std::string_view types, const Kernel& k, double bytes,
                  double flops = 0.0) {
    Open(aten, dims, types);
    Launch(k, bytes, flops);
    Close();
  }

  // x[b, q, in] @ W[out, in]^T: aten::linear -> aten::matmul -> aclnnMatmul.
  void Linear(int64_t b, int64_t q, int64_t in, int64_t out, bool bias) {
    const int64_t m = b * q;
    const std::string x = Dims({b, q, in}), w = Dims({out, in});
    PushModule("torch/nn/modules/linear.py", 125);
    Open("aten::linear", Join({x, w, bias ? Dims({out}) : ""}),
         Join({"c10::BFloat16", "c10::BFloat16", bias ? "c10::BFloat16" : "None"}));
    Open("aten::matmul", Join({x, Dims({in, out})}), Join({"c10::BFloat16", "c10::BFloat16"}));
    Launch(kMatmul, 2.0 * (static_cast<double>(in) * out + static_cast<double>(m) * (in + out)),
           2.0 * static_cast<double>(m) * in * out);
    Close();
    if (bias) {
      const std::string y = Dims({b, q, out});
      Open("aten::add_", Join({y, Dims({out}), ""}), Join({"c10::BFloat16", "c10::BFloat16", "Scalar"}));
      Launch(kInplaceAdd, 6.0 * static_cast<double>(m) * out);
      Close();
    }
    Close();
    PopModule();
  }

  void RmsNorm(int64_t b, int64_t q) {
    PushModule(kModeling, 211);
    AtenKernel("npu::npu_rms_norm", Join({Dims({b, q, kHidden}), Dims({kHidden}), ""}),
               Join({"c10::BFloat16", "c10::BFloat16", "Scalar"}), kRmsNorm, 6.0 * b * q * kHidden);
    PopModule();
  }

  // Queue items without an aclnn kernel (record_event, wait_event, the HCCL
  // call): a cpu_op named after the item holds its Enqueue.
  int64_t QueueOp(std::string_view item, int64_t* src, int64_t* corr) {
    Open(item, "", "");
    *src = current_op_ts();
    t_ += Host(rng_.Jitter(2500, 0.5));
    *corr = Enqueue(item);
    Close();
    return DequeueBegin();
  }

  // record an event on the compute stream.
  int64_t RecordCompute() {
    int64_t src, corr;
    const int64_t d = QueueOp("record_event", &src, &corr);
    const int64_t acl = d + Host(rng_.Jitter(1400, 0.3));
    const int64_t dur = Host(rng_.Jitter(8500, 0.4));
    const int64_t c = Acl(kQueueTid, "aclrtRecordEvent", "ACL_RTS", acl, dur);
    HostToDeviceStart(kQueueTid, c, acl);
    DequeueEnd("record_event", corr, acl + dur + Host(rng_.Jitter(1200, 0.3)));
    TaskSpec t;
    t.name = "EVENT_RECORD";
    t.type = "EVENT_RECORD";
    t.dur = 20;
    t.earliest = acl + dur;
    t.conn = c;
    t.async_src = src;
    const int64_t start = Task(t);
    return start + 20;
  }

  // A collective on the HCCL stream (2 ranks, MESH): the queue thread makes the
  // HCCL stream wait for the compute stream, calls hcom, records on the HCCL
  // stream; the compute stream then waits for that record.
  void Collective(bool all_reduce, double bytes, int64_t count, std::string_view dims) {
    const char* kind = all_reduce ? "hcom_allReduce_" : "hcom_allGather_";
    const char* hccl_item = all_reduce ? "HcclAllreduce" : "HcclAllGather";
    if (o_.level >= 2) {
      PushSite("torch/distributed/c10d_logger.py(81): wrapper");
      PushSite(all_reduce ? "torch/distributed/distributed_c10d.py(2788): all_reduce"
                          : "torch/distributed/distributed_c10d.py(3705): all_gather_into_tensor");
    }
    Open(all_reduce ? "c10d::allreduce_" : "c10d::_allgather_base_", dims,
         Join({"TensorList", "Object", "Object", "None", "int"}));
    const int64_t ready = RecordCompute();

    int64_t src, corr;
    const int64_t d = QueueOp(hccl_item, &src, &corr);
    // HCCL stream waits for the compute stream's record.
    const int64_t w = d + Host(rng_.Jitter(1500, 0.3));
    const int64_t w_dur = Host(rng_.Jitter(6000, 0.4));
    const int64_t cw = Acl(kQueueTid, "aclrtStreamWaitEvent", "ACL_RTS", w, w_dur);
    HostToDeviceStart(kQueueTid, cw, w);
    const int64_t h = w + w_dur + Host(rng_.Jitter(1200, 0.3));
    const int64_t h_dur = Host(rng_.Jitter(bytes > 1e6 ? 60000 : 28000, 0.35));
    const int64_t ch = Acl(kQueueTid, kind, "ACL_RTS", h, h_dur);
    HostToDeviceStart(kQueueTid, ch, h);
    const int64_t r = h + h_dur + Host(rng_.Jitter(1100, 0.3));
    const int64_t r_dur = Host(rng_.Jitter(5000, 0.4));
    const int64_t cr = Acl(kQueueTid, "aclrtRecordEvent", "ACL_RTS", r, r_dur);
    HostToDeviceStart(kQueueTid, cr, r);
    DequeueEnd(hccl_item, corr, r + r_dur + Host(rng_.Jitter(1300, 0.3)));

    TaskSpec wait;
    wait.stream = kHcclStream;
    wait.name = "EVENT_WAIT";
    wait.type = "EVENT_WAIT";
    wait.earliest = w + w_dur;
    const int64_t wait_start = DevStart(std::max(wait.earliest, hccl_free_ + 20), kHcclStream);
    wait.dur = std::max<int64_t>(20, ready - wait_start);
    wait.conn = cw;
    wait.async_src = src;
    Task(wait);

    // The collective: Write Value / Notify Wait handshakes with the peer, SDMA
    // copies (local, then the inline reduce over HCCS). Each sub-task is written
    // under Ascend Hardware (stream kHcclStream) and again under HCCL Plane 0.
    const int64_t op_id = hccl_op_++;
    char op_name[48];
    std::snprintf(op_name, sizeof op_name, "%s_586_%" PRId64 "_1", kind, op_id);
    const int task_id = NextTaskId(kHcclStream);
    struct Sub {
      const char* hw;      // Ascend Hardware name = Task Type
      const char* plane;   // HCCL Plane name
      int64_t dur;
      double size;
      const char* transport;
    };
    const double skew = rng_.Uniform();
    const Sub subs[] = {
        {"Write Value", "Write_Value", rng_.Jitter(700, 0.1), 4, "LOCAL"},
        {"Notify Wait", "Notify_Wait", static_cast<int64_t>(500 + 14000 * skew * skew), 0, "LOCAL"},
        {"SDMA", "Memcpy", static_cast<int64_t>(800 + bytes / kSdmaBytesPerNs), bytes, "SDMA"},
        {"Write Value", "Write_Value", rng_.Jitter(700, 0.1), 4, "LOCAL"},
        {"Notify Wait", "Notify_Wait", rng_.Jitter(1500, 0.6), 0, "LOCAL"},
        {"SDMA", "Memcpy", static_cast<int64_t>(1800 + bytes / kHccsBytesPerNs), bytes, "SDMA"},
        {"Write Value", "Write_Value", rng_.Jitter(700, 0.1), 4, "LOCAL"},
        {"Notify Wait", "Notify_Wait", rng_.Jitter(900, 0.5), 0, "LOCAL"},
    };
    // Place the sub-tasks first (the stream is sequential), so that the op's
    // own async_npu pair and Overlap row are held before its sub-tasks move
    // the HCCL stream's free time past its start.
    constexpr size_t kSubs = sizeof subs / sizeof subs[0];
    int64_t starts[kSubs], durs[kSubs];
    int64_t at = h + h_dur + rng_.Jitter(2000, 0.5);
    int64_t free = hccl_free_;
    for (size_t i = 0; i < kSubs; ++i) {
      starts[i] = DevStart(std::max(at, free + 20), kHcclStream);
      durs[i] = Dev(subs[i].dur);
      free = starts[i] + durs[i];
      at = free + rng_.Jitter(260, 0.3);
    }
    const int64_t op_start = starts[0], op_end = free;
    Pending op;
    op.start = op_start;
    op.dur = op_end - op_start;
    op.stream = kHcclStream;
    op.hw_row = false;
    op.async_src = src;
    op.async_pid = kHcclPid;
    op.async_tid = kGroupTid;
    Hold(std::move(op));
    for (size_t i = 0; i < kSubs; ++i) {
      TaskSpec t;
      t.stream = kHcclStream;
      t.name = subs[i].hw;
      t.type = subs[i].hw;
      t.dur = durs[i];
      t.earliest = starts[i];
      t.conn_arg = ch;
      t.task_id = task_id;
      Task(t);
      PlaneTask(subs[i].plane, subs[i].hw, starts[i], durs[i], task_id, static_cast<int>(i), subs[i].size,
                subs[i].transport);
    }
    // The op itself on the Group thread, with the HostToDevice "f" from its CANN call.
    {
      Sink& out = S(kHcclOp);
      out.Put(", {\"name\": \"");
      out.Put(op_name);
      out.Put("\", \"pid\": ");
      out.Int(kHcclPid);
      out.Put(", \"tid\": ");
      out.Int(kGroupTid);
      out.Put(", \"ts\": ");
      out.Ts(op_start);
      out.Put(", \"dur\": ");
      out.Dur(op_end - op_start);
      out.Put(", \"ph\": \"X\", \"args\": {\"connection_id\": ");
      out.Int(ch);
      out.Put(", \"model id\": 4294967295, \"data_type\": \"BFP16\", \"alg_type\": \"MESH-RING\", \"count\": ");
      out.Int(count);
      out.Put("}}");
      HostToDeviceEnd(out, kHcclPid, kGroupTid, ch, op_start);
      events_ += 2;
    }
    TaskSpec rec;
    rec.stream = kHcclStream;
    rec.name = "EVENT_RECORD";
    rec.type = "EVENT_RECORD";
    rec.dur = 20;
    rec.earliest = r + r_dur;
    rec.conn = cr;
    rec.async_src = src;
    const int64_t hccl_done = Task(rec) + 20;

    // Compute stream waits for the HCCL stream.
    int64_t wsrc, wcorr;
    const int64_t d2 = QueueOp("wait_event", &wsrc, &wcorr);
    const int64_t a = d2 + Host(rng_.Jitter(1300, 0.3));
    const int64_t a_dur = Host(rng_.Jitter(5500, 0.4));
    const int64_t ca = Acl(kQueueTid, "aclrtStreamWaitEvent", "ACL_RTS", a, a_dur);
    HostToDeviceStart(kQueueTid, ca, a);
    DequeueEnd("wait_event", wcorr, a + a_dur + Host(rng_.Jitter(1200, 0.3)));
    TaskSpec cw2;
    cw2.name = "EVENT_WAIT";
    cw2.type = "EVENT_WAIT";
    cw2.earliest = a + a_dur;
    const int64_t cw_start = DevStart(std::max(cw2.earliest, comp_free_ + 20), kComputeStream);
    cw2.dur = std::max<int64_t>(20, hccl_done - cw_start);
    cw2.conn = ca;
    cw2.async_src = wsrc;
    Task(cw2);
    Close();
    if (o_.level >= 2) {
      PopPy();
      PopPy();
    }
  }

  void PlaneTask(const char* name, const char* type, int64_t ts, int64_t dur, int task_id, int ctx, double size,
                 const char* transport) {
    Sink& out = S(kHcclPlane);
    out.Put(", {\"name\": \"");
    out.Put(name);
    out.Put("\", \"pid\": ");
    out.Int(kHcclPid);
    out.Put(", \"tid\": ");
    out.Int(kPlaneTid);
    out.Put(", \"ts\": ");
    out.Ts(ts);
    out.Put(", \"dur\": ");
    out.Dur(dur);
    const bool notify = type[0] == 'N';
    out.Put(", \"ph\": \"X\", \"args\": {\"notify_id\": \"");
    if (notify) out.Int(1400 + (ctx % 4));
    else out.Put("18446744073709551615");
    out.Put("\", \"duration estimated(us)\": ");
    out.Fixed(dur * 0.001 * 0.62, 6);
    out.Put(", \"stream id\": ");
    out.Int(kHcclStream);
    out.Put(", \"task id\": ");
    out.Int(task_id);
    out.Put(", \"context id\": ");
    out.Int(ctx);
    out.Put(", \"task type\": \"");
    out.Put(type);
    out.Put("\", \"src rank\": 0, \"dst rank\": 1, \"transport type\": \"");
    out.Put(transport);
    out.Put("\", \"size(Byte)\": ");
    out.Int(static_cast<int64_t>(size));
    out.Put(size > 4 ? ", \"data type\": \"BFP16\"" : ", \"data type\": \"INVALID_TYPE\"");
    out.Put(", \"link type\": \"HCCS\", \"bandwidth(GB/s)\": ");
    out.Fixed(dur > 0 ? size / static_cast<double>(dur) : 0.0, 6);
    out.Put(", \"model id\": 4294967295}}");
    ++events_;
  }

  // input ids (int64) copied host -> device through the task queue.
  void CopyInputIds(int64_t b, int64_t q) {
    const std::string d = Dims({b, q});
    Open("aten::to", Join({d, "", "", "", "", "", ""}), Join({"long int", "Scalar", "Scalar", "None", "Scalar", "Scalar", "None"}));
    Open("aten::_to_copy", Join({d, "", "", "", "", "", ""}), Join({"long int", "Scalar", "None", "Scalar", "None", "Scalar", "None"}));
    Open("aten::empty_strided", Join({"", "", "", "", "", ""}), Join({"ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"}));
    Close();
    Open("aten::copy_", Join({d, d, ""}), Join({"long int", "long int", "Scalar"}));
    const int64_t src = current_op_ts();
    const int64_t corr = Enqueue("acl_memcpy_host_to_device");
    Close();
    Close();
    Close();
    const int64_t dq = DequeueBegin();
    const int64_t acl = dq + Host(rng_.Jitter(1500, 0.3));
    const int64_t dur = Host(rng_.Jitter(14000, 0.4));
    const int64_t c = Acl(kQueueTid, "aclrtMemcpyAsync", "ACL_RTS", acl, dur);
    HostToDeviceStart(kQueueTid, c, acl);
    DequeueEnd("acl_memcpy_host_to_device", corr, acl + dur + Host(rng_.Jitter(1500, 0.3)));
    TaskSpec t;
    t.name = "MEMCPY_ASYNC";
    t.type = "PCIE_DMA_SQE";
    t.dur = 2000 + static_cast<int64_t>(b * q * 8 / 20.0);
    t.earliest = acl + dur;
    t.conn = c;
    t.async_src = src;
    t.copy = true;
    Task(t);
  }

  // .item(): the main thread drains the queue, waits for the stream, copies 8 bytes back.
  void Item() {
    Open("aten::item", "", "long int");
    Open("aten::_local_scalar_dense", "", "long int");
    t_ = std::max(t_, deq_t_ + Host(rng_.Jitter(2000, 0.4)));
    const int64_t sync = t_;
    const int64_t done = std::max(sync + Host(rng_.Jitter(4000, 0.4)), comp_free_ + Host(rng_.Jitter(3000, 0.4)));
    Acl(kMainTid, "aclrtSynchronizeStreamWithTimeout", "ACL_RTS", sync, Host(done - sync));
    t_ = sync + Host(done - sync) + Host(rng_.Jitter(900, 0.3));
    const int64_t m = t_;
    t_ += Host(rng_.Jitter(7000, 0.4));
    Acl(kMainTid, "aclrtMemcpy", "ACL_RTS", m, t_ - m);
    Close();
    Close();
  }

  void Layer(int64_t q, int64_t kv, bool prefill) {
    const int64_t b = o_.batch, h = kHidden, m = b * q;
    const int64_t qw = kHeadsPerRank * kHeadDim, kw = kKvHeadsPerRank * kHeadDim;
    const std::string x = Dims({b, q, h});
    PushModule(kModeling, 240);  // Qwen2DecoderLayer
    RmsNorm(b, q);
    PushModule(kModeling, 154);  // Qwen2Attention
    Linear(b, q, h, qw, true);
    Linear(b, q, h, kw, true);
    Linear(b, q, h, kw, true);
    const std::string cs = Dims({1, q, 1, kHeadDim});
    AtenKernel("npu::npu_rotary_mul", Join({Dims({b, q, kHeadsPerRank, kHeadDim}), cs, cs}),
               Join({"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}), kRope, 4.0 * m * qw);
    AtenKernel("npu::npu_rotary_mul", Join({Dims({b, q, kKvHeadsPerRank, kHeadDim}), cs, cs}),
               Join({"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}), kRope, 4.0 * m * kw);
    const int64_t cap = o_.prompt + 2048;  // preallocated cache length
    const std::string cache = Dims({b, cap, kKvHeadsPerRank, kHeadDim});
    for (int i = 0; i < 2; ++i)
      AtenKernel("npu::scatter_update_", Join({cache, Dims({b}), Dims({b, q, kKvHeadsPerRank, kHeadDim}), ""}),
                 Join({"c10::BFloat16", "long int", "c10::BFloat16", "Scalar"}), kScatter, 4.0 * m * kw);
    if (prefill) {
      const double flops = 4.0 * b * kHeadsPerRank * static_cast<double>(q) * q * kHeadDim / 2.0;
      AtenKernel("npu::npu_prompt_flash_attention",
                 Join({Dims({b, q, qw}), Dims({b, q, kw}), Dims({b, q, kw}), "", Dims({1, 1, 2048, 2048}), "", "", "", "", "",
                       "", "", "", ""}),
                 Join({"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "None", "bool", "ScalarList", "None", "None",
                       "None", "None", "None", "None", "Scalar", "Scalar"}),
                 kPfa, 2.0 * m * (qw + 2 * kw) * 2.0, flops);
    } else {
      AtenKernel("npu::npu_incre_flash_attention",
                 Join({Dims({b, 1, qw}), Dims({b, kv, kw}), Dims({b, kv, kw}), "", Dims({b}), "", "", "", "", "", "", "",
                       ""}),
                 Join({"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "None", "ScalarList", "None", "None", "None",
                       "None", "None", "Scalar", "Scalar", "Scalar"}),
                 kIfa, 2.0 * 2.0 * b * static_cast<double>(kv) * kw, 4.0 * b * kHeadsPerRank * static_cast<double>(kv) * kHeadDim);
    }
    Linear(b, q, qw, h, false);
    PopModule();
    Collective(true, 2.0 * m * h, m * h, Join({x, "", "", "", ""}));
    AtenKernel("aten::add", Join({x, x, ""}), Join({"c10::BFloat16", "c10::BFloat16", "Scalar"}), kAdd, 6.0 * m * h);
    RmsNorm(b, q);
    PushModule(kModeling, 58);  // Qwen2MLP
    Linear(b, q, h, 2 * kInterPerRank, false);
    AtenKernel("npu::npu_swiglu", Join({Dims({b, q, 2 * kInterPerRank}), ""}), Join({"c10::BFloat16", "Scalar"}), kSwiGlu,
               6.0 * m * kInterPerRank);
    Linear(b, q, kInterPerRank, h, false);
    PopModule();
    Collective(true, 2.0 * m * h, m * h, Join({x, "", "", "", ""}));
    AtenKernel("aten::add", Join({x, x, ""}), Join({"c10::BFloat16", "c10::BFloat16", "Scalar"}), kAdd, 6.0 * m * h);
    PopModule();
  }

  void Forward(int64_t q, int64_t kv, bool prefill) {
    const int64_t b = o_.batch;
    PushModule(kModeling, 816);  // Qwen2ForCausalLM
    CopyInputIds(b, q);
    if (!prefill)
      AtenKernel("aten::add", Join({Dims({b, 1}), "", ""}), Join({"long int", "Scalar", "Scalar"}), kAdds, 16.0 * b);
    PushModule(kModeling, 519);  // Qwen2Model
    AtenKernel("aten::embedding", Join({Dims({kVocabPerRank * 2, kHidden}), Dims({b, q}), "", "", ""}),
               Join({"c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"}), kEmbedding, 4.0 * b * q * kHidden);
    for (int l = 0; l < o_.layers; ++l) Layer(q, kv, prefill);
    RmsNorm(b, 1);
    PopModule();
    Linear(b, 1, kHidden, kVocabPerRank, false);
    Collective(false, 2.0 * b * kVocabPerRank, b * kVocabPerRank,
               Join({Dims({b, 2 * kVocabPerRank}), Dims({b, kVocabPerRank}), "", ""}));
    PopModule();
    AtenKernel("aten::to", Join({Dims({b, 2 * kVocabPerRank}), "", "", "", ""}), Join({"c10::BFloat16", "Scalar", "Scalar", "Scalar", "None"}),
               kCast, 6.0 * b * 2 * kVocabPerRank);
    AtenKernel("aten::argmax", Join({Dims({b, 2 * kVocabPerRank}), "", ""}), Join({"float", "Scalar", "Scalar"}), kArgMax,
               4.0 * b * 2 * kVocabPerRank);
    Item();
    AtenKernel("aten::cat", Join({"", ""}), Join({"TensorList", "Scalar"}), kCat, 16.0 * b * (o_.prompt + step_ + 1));
  }

  void FreqSample(int64_t ts) {
    std::string& f = freq_;
    char b[160];
    const int64_t us = ts / 1000, frac = ts % 1000;
    int n = std::snprintf(b, sizeof b,
                          ", {\"name\": \"AI Core Freq\", \"pid\": %" PRId64 ", \"tid\": 0, \"ts\": \"%" PRId64
                          ".%03" PRId64 "\", \"ph\": \"C\", \"args\": {\"MHz\": 1800}}",
                          kFreqPid, us, frac);
    f.append(b, static_cast<size_t>(n));
    ++events_;
  }

  const Options& o_;
  Rng rng_;
  Sink* cpu_;
  std::array<TempFile, kSectionCount>* sec_;
  bool first_cpu_ = true;
  int64_t t_ = kStartNs;        // main thread
  int64_t deq_t_ = kStartNs;    // task-queue thread free from
  int64_t deq_begin_ = 0, enq_end_ = 0;
  int64_t comp_free_ = kStartNs, hccl_free_ = kStartNs;
  int comp_task_id_ = 1024, hccl_task_id_ = 806;
  int64_t corr_ = 925;          // enqueue/dequeue correlation ids
  int64_t conn_ = 268;          // CANN connection ids
  int64_t hccl_op_ = 0;
  int64_t busy_end_ = -1;
  std::vector<Op> ops_;
  size_t depth_ = 0;
  std::vector<PyFrame> py_;
  std::vector<Pending> pending_;  // heap, earliest start first
  int64_t next_py_id_ = 0;
  std::string stack_;
  bool stack_dirty_ = true;
  std::string freq_;
  int64_t step_ = 0;
  uint64_t events_ = 0, tasks_ = 0;
};

using pypto::bench::ParseSize;

[[noreturn]] void Usage(const char* why) {
  if (why) std::fprintf(stderr, "gen_ascend_trace_view: %s\n", why);
  std::fprintf(stderr,
               "usage: gen_ascend_trace_view --out FILE [--bytes N[K|M|G] | --steps N] [--seed S] [--layers L]\n"
               "         [--batch B] [--prompt P] [--level 1|2] [--no-prefill] [--gzip] [--quiet]\n"
               "  sizes are decimal (1G = 1e9 bytes of uncompressed JSON); FILE.gz or --gzip compresses.\n"
               "  To be read as a profile, write it as DIR/NAME_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json.\n");
  std::exit(2);
}

// Copies a temp section into the output and removes it.
void Append(TempFile& t, Sink* out) {
  t.sink->Flush();
  t.sink.reset();
  std::fflush(t.f);
  std::rewind(t.f);
  std::vector<char> buf(kWriteBufBytes);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), t.f)) > 0) out->Put(std::string_view(buf.data(), n));
  std::fclose(t.f);
  std::remove(t.path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool have_steps = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) Usage("missing value");
      return argv[++i];
    };
    if (a == "--out") o.out = val();
    else if (a == "--bytes") { if (!ParseSize(val(), &o.target_bytes)) Usage("bad --bytes"); }
    else if (a == "--steps") { o.steps = std::atoll(val()); have_steps = true; }
    else if (a == "--seed") o.seed = std::strtoull(val(), nullptr, 10);
    else if (a == "--layers") o.layers = std::atoi(val());
    else if (a == "--batch") o.batch = std::atoll(val());
    else if (a == "--prompt") o.prompt = std::atoll(val());
    else if (a == "--level") {
      std::string_view v = val();
      if (v == "1") o.level = 1;
      else if (v == "2") o.level = 2;
      else Usage("--level is 1 or 2");
    }
    else if (a == "--no-prefill") o.prefill = false;
    else if (a == "--gzip") o.gzip = true;
    else if (a == "--quiet") o.quiet = true;
    else if (a == "-h" || a == "--help") Usage(nullptr);
    else Usage("unknown flag");
  }
  if (o.out.empty()) Usage("--out is required");
  if (o.target_bytes && have_steps) Usage("give --bytes or --steps, not both");
  if (o.layers < 1 || o.batch < 1 || o.prompt < 1 || (!o.target_bytes && o.steps < 1)) Usage("sizes must be >= 1");
  if (o.out.size() > 3 && o.out.compare(o.out.size() - 3, 3, ".gz") == 0) o.gzip = true;

  const auto t0 = std::chrono::steady_clock::now();
  FILE* out_f = nullptr;
  gzFile out_g = nullptr;
  if (o.gzip) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "wb%d", kGzipLevel);
    out_g = gzopen(o.out.c_str(), mode);
  } else {
    out_f = std::fopen(o.out.c_str(), "wb");
  }
  if (!out_f && !out_g) {
    std::fprintf(stderr, "gen_ascend_trace_view: cannot write %s: %s\n", o.out.c_str(), std::strerror(errno));
    return 1;
  }
  // The main thread's cpu_ops go straight to the output; every later section is
  // staged in a temp file next to it and appended in file order.
  std::array<TempFile, kSectionCount> sec;
  for (int i = 0; i < kSectionCount; ++i) {
    sec[i].path = o.out + "." + std::to_string(i) + ".tmp";
    sec[i].f = std::fopen(sec[i].path.c_str(), "w+b");
    if (!sec[i].f) {
      std::fprintf(stderr, "gen_ascend_trace_view: cannot create %s: %s\n", sec[i].path.c_str(), std::strerror(errno));
      return 1;
    }
    sec[i].sink = std::make_unique<Sink>(sec[i].f);
  }
  uint64_t total = 0, events = 0, tasks = 0;
  int64_t steps = 0;
  {
    auto out = out_g ? std::make_unique<Sink>(out_g) : std::make_unique<Sink>(out_f);
    Generator gen(o, out.get(), &sec);
    out->Put("[");
    auto written = [&]() {
      uint64_t n = out->bytes() + gen.bytes_in_memory();
      for (const TempFile& t : sec) n += t.sink->bytes();
      return n;
    };
    // Whole steps; stop at the first step boundary at or past the target.
    for (int64_t s = 0;; ++s) {
      if (!o.target_bytes && s >= o.steps) break;
      if (o.target_bytes && s > 0 && written() >= o.target_bytes) break;
      gen.Step();
    }
    const int64_t end = gen.Finish();
    Append(sec[kDequeue], out.get());
    Append(sec[kEnqueue], out.get());
    gen.WritePythonMeta(out.get());
    Append(sec[kPyFunc], out.get());
    gen.WriteCannMeta(out.get());
    Append(sec[kCannX], out.get());
    Append(sec[kCannS], out.get());
    gen.WriteProfilingTask(out.get(), true, gen.first_ts());
    Append(sec[kHw], out.get());
    gen.WriteProfilingTask(out.get(), false, end);
    Append(sec[kHwCopy], out.get());
    gen.WriteHwMeta(out.get());
    gen.WriteFreq(out.get());
    Append(sec[kHcclPlane], out.get());
    Append(sec[kHcclOp], out.get());
    gen.WriteHcclMeta(out.get());
    gen.WriteOverlapMeta(out.get());
    Append(sec[kOvComm], out.get());
    Append(sec[kOvCommNo], out.get());
    Append(sec[kOvComp], out.get());
    Append(sec[kOvFree], out.get());
    Append(sec[kAsync], out.get());
    out->Put("]");
    out->Flush();
    total = out->bytes();
    steps = gen.steps();
    events = gen.events();
    tasks = gen.tasks();
  }
  if (out_g) {
    if (gzclose(out_g) != Z_OK) {
      std::fprintf(stderr, "gen_ascend_trace_view: gzip close failed\n");
      return 1;
    }
  } else if (std::fclose(out_f) != 0) {
    std::fprintf(stderr, "gen_ascend_trace_view: close failed: %s\n", std::strerror(errno));
    return 1;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.quiet)
    std::fprintf(stderr,
                 "gen_ascend_trace_view: %s: %" PRId64 " steps x %d layers (level %d), ~%" PRIu64 " events (%" PRIu64
                 " device tasks), %.1f MB JSON in %.2f s (%.0f MB/s)\n",
                 o.out.c_str(), steps, o.layers, o.level, events, tasks, total / 1e6, secs, total / 1e6 / secs);
  return 0;
}
