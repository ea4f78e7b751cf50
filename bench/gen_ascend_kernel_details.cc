// gen_ascend_kernel_details: writes a large synthetic torch_npu kernel_details.csv
// (Ascend PyTorch Profiler, Level2 + PipeUtilization, torch_npu 2.7 / CANN 8.3
// header of 47 columns) of LLM decoding on one Atlas A2 NPU (20 AI Cores,
// 40 vector cores), for the loader benchmark.
//
// Rows per step: a Qwen2-7B-like decoder of L layers with tensor parallelism 2
// (RmsNorm, MatMulV3 q/k/v + bias Add, RotaryPositionEmbedding, KV cache
// ScatterUpdate, IncreFlashAttention (MIX_AIC), MatMulV3 o_proj, hcom_allReduce_
// (COMMUNICATION rows: Task/Stream ID and PMU cells N/A), residual Add, SwiGlu
// MLP), embedding GatherV2, lm_head, ArgMaxV2. The KV length grows by one per step.
// The traps real files carry are reproduced: start time ending in a literal TAB,
// shape lists CSV-quoted with embedded quotes ("""8,1,3584;3584"""), empty
// entries for scalar inputs, N/A cells, Model ID 4294967295, wait times with 6
// decimals. Deterministic for a given --seed.
//
// usage: gen_ascend_kernel_details --out FILE [--rows N | --bytes N[K|M|G]]
//          [--layers L] [--batch B] [--prompt P] [--seed S] [--quiet]

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gen_common.h"

namespace {

// Epoch start of the trace in ns (2025-11-27, like the CANN 8.3 sample).
constexpr int64_t kStartNs = 1764246877073569640;
constexpr int64_t kModelIdNa = 4294967295;  // UINT32_MAX: "not in a graph" (eager ops)
constexpr int kStreamId = 2;
constexpr int kTaskIdWrap = 65536;          // hardware task ids are 16 bit
constexpr int kAicCores = 20;               // Atlas A2 (910B): 20 AI Cores
constexpr int kAivCores = 40;               //   and 40 vector cores
constexpr double kAicMhz = 1650.0;          // AI Core clock, for the *_total_cycles columns
// Model (Qwen2-7B-like, tensor parallel 2: per-rank widths halved).
constexpr int64_t kHidden = 3584;
constexpr int64_t kHeadsPerRank = 14;
constexpr int64_t kKvHeadsPerRank = 2;
constexpr int64_t kHeadDim = 128;
constexpr int64_t kInterPerRank = 9472;
constexpr int64_t kVocabPerRank = 76032;
// Device time model: ~1.6 TB/s achieved of the 1.8 TB/s HBM, 1 µs launch floor,
// and the host-bound gap (µs) eager torch_npu leaves between kernels in decode.
constexpr double kBytesPerUs = 1.6e6;
constexpr double kFloorUs = 1.2;
constexpr double kGapUs = 28.0;
// TP all-reduce of a decode activation: ~18 µs HCCL latency + bytes over HCCS
// (~56 GB/s per link in practice).
constexpr double kCommLatencyUs = 18.0;
constexpr double kHccsBytesPerUs = 5.6e4;
constexpr int kDefaultLayers = 28;
constexpr int64_t kDefaultBatch = 8;
constexpr int64_t kDefaultPrompt = 1024;
constexpr int64_t kDefaultRows = 1000000;
constexpr size_t kWriteBufBytes = 1 << 20;  // 1 MiB writes

const char kHeader[] =
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
    "Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,"
    "aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),"
    "aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),"
    "aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)\n";

class Rng : public pypto::bench::SplitMix64 {
 public:
  using SplitMix64::SplitMix64;
  double Jitter(double v, double rel) { return v * (1.0 + rel * (2.0 * Uniform() - 1.0)); }

};

class Out {
 public:
  explicit Out(FILE* f) : f_(f) { buf_.reserve(kWriteBufBytes + 4096); }
  ~Out() { Flush(); }
  void Put(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kWriteBufBytes) Flush();
  }
  void Int(int64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, r.ptr);
  }
  void Fix(double v, int prec) {
    char b[48];
    auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, prec);
    buf_.append(b, r.ptr);
  }
  // CANN prints ratios and times with up to 3 decimals, trailing zeros dropped
  // ("0.78", "61.659", "0.0").
  void Short(double v) {
    char b[48];
    auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, 3);
    char* e = r.ptr;
    while (e[-1] == '0' && e[-2] != '.') --e;
    buf_.append(b, e);
  }
  uint64_t bytes() const { return total_ + buf_.size(); }
  void Flush() {
    if (buf_.empty()) return;
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
      std::fprintf(stderr, "gen_ascend_kernel_details: write failed: %s\n", std::strerror(errno));
      std::exit(1);
    }
    total_ += buf_.size();
    buf_.clear();
  }

 private:
  FILE* f_;
  std::string buf_;
  uint64_t total_ = 0;
};

enum class Core { kAic, kAiv, kMixAic, kMixAiv, kComm };

struct Kernel {
  const char* name;
  const char* type;
  Core core;
  int block, mix_block;
};

const Kernel kRmsNorm{"RmsNorm", "RmsNorm", Core::kAiv, kAivCores, 0};
const Kernel kMatMul{"aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", Core::kAic, kAicCores, 0};
const Kernel kAddBias{"aclnnAdd_AddAiCore_Add", "Add", Core::kAiv, kAivCores, 0};
const Kernel kRope{"RotaryPositionEmbedding", "RotaryPositionEmbedding", Core::kAiv, kAivCores, 0};
const Kernel kScatter{"aclnnScatterUpdate_ScatterUpdateAiCore_ScatterUpdate", "ScatterUpdate", Core::kAiv, kAivCores, 0};
const Kernel kIfa{"aclnnIncreFlashAttentionV4_IncreFlashAttention_IncreFlashAttention", "IncreFlashAttention",
                  Core::kMixAic, kAicCores, kAivCores};
const Kernel kAllReduce{"hcom_allReduce__586_0_1", "hcom_allReduce_", Core::kComm, 0, 0};
const Kernel kAdd{"aclnnAdd_AddAiCore_Add", "Add", Core::kAiv, kAivCores, 0};
const Kernel kSwiGlu{"SwiGlu", "SwiGlu", Core::kAiv, kAivCores, 0};
const Kernel kGather{"aclnnEmbedding_GatherV2AiCore_GatherV2", "GatherV2", Core::kAiv, kAivCores, 0};
const Kernel kArgMax{"aclnnArgMax_ArgMaxV2AiCore_ArgMaxV2", "ArgMaxV2", Core::kAiv, 8, 0};
const Kernel kCast{"aclnnCast_CastAiCore_Cast", "Cast", Core::kAiv, 1, 0};

struct Options {
  std::string out;
  int64_t rows = kDefaultRows;
  uint64_t bytes = 0;
  int layers = kDefaultLayers;
  int64_t batch = kDefaultBatch;
  int64_t prompt = kDefaultPrompt;
  uint64_t seed = 1;
  bool quiet = false;
};

class Gen {
 public:
  Gen(const Options& o, Out* out) : o_(o), out_(out), rng_(o.seed) {}

  // One row. shapes/types/formats are the inner text of the cells (without the
  // CSV quoting, which is added here as torch_npu writes it).
  void Row(const Kernel& k, const std::string& in_shapes, const char* in_types, const char* in_formats,
           const std::string& out_shapes, const char* out_types, double bytes) {
    const double dur = k.core == Core::kComm ? rng_.Jitter(kCommLatencyUs + bytes / kHccsBytesPerUs, 0.2)
                                             : std::max(kFloorUs, rng_.Jitter(bytes / kBytesPerUs + kFloorUs, 0.08));
    const double wait = k.core == Core::kComm ? rng_.Jitter(3.0, 0.5) : rng_.Jitter(kGapUs, 0.6);
    t_ns_ += static_cast<int64_t>(wait * 1000.0);
    ++rows_;
    Out& o = *out_;
    o.Int(step_);
    o.Put(",0,");
    o.Int(kModelIdNa);
    o.Put(",");
    if (k.core == Core::kComm) {
      o.Put("N/A,N/A,");
    } else {
      o.Int(task_id_);
      o.Put(",");
      o.Int(kStreamId);
      o.Put(",");
      task_id_ = (task_id_ + 1) % kTaskIdWrap;
    }
    o.Put(k.name);
    o.Put(",");
    o.Put(k.type);
    o.Put(k.core == Core::kComm ? ",N/A," : ",dynamic,");
    switch (k.core) {
      case Core::kAic: o.Put("AI_CORE,"); break;
      case Core::kAiv: o.Put("AI_VECTOR_CORE,"); break;
      case Core::kMixAic: o.Put("MIX_AIC,"); break;
      case Core::kMixAiv: o.Put("MIX_AIV,"); break;
      case Core::kComm: o.Put("COMMUNICATION,"); break;
    }
    // Start Time(us): µs with 3 decimals and a literal TAB (the trap real files carry).
    o.Int(t_ns_ / 1000);
    o.Put(".");
    const int64_t f = t_ns_ % 1000;
    char frac[4] = {static_cast<char>('0' + f / 100), static_cast<char>('0' + f / 10 % 10), static_cast<char>('0' + f % 10), 0};
    o.Put(frac);
    o.Put("\t,");
    o.Fix(dur, 3);
    o.Put(",");
    o.Fix(wait, 6);
    o.Put(",");
    t_ns_ += static_cast<int64_t>(dur * 1000.0);
    if (k.core == Core::kComm) {
      o.Put("0");
      for (int i = 0; i < 34; ++i) o.Put(",N/A");
      o.Put("\n");
      return;
    }
    o.Int(k.block);
    o.Put(",");
    o.Int(k.mix_block);
    o.Put(",NO,\"\"\"");
    o.Put(in_shapes);
    o.Put("\"\"\",");
    o.Put(in_types);
    o.Put(",");
    o.Put(in_formats);
    o.Put(",\"\"\"");
    o.Put(out_shapes);
    o.Put("\"\"\",");
    o.Put(out_types);
    o.Put(",");
    // one format per output
    for (const char* p = out_types;; ++p) {
      if (*p == ';') o.Put("ND;");
      if (!*p) break;
    }
    o.Put("ND,");
    o.Put(k.core == Core::kMixAic || k.core == Core::kMixAiv ? "0," : "N/A,");
    const bool aic = k.core == Core::kAic || k.core == Core::kMixAic;
    const bool aiv = k.core != Core::kAic;
    const double busy = dur * 0.96;  // aicore_time is a little below the task time
    if (aic) {
      const double mac = rng_.Uniform() * 0.5 + 0.2, scal = rng_.Uniform() * 0.3, mte1 = rng_.Uniform() * 0.6,
                   mte2 = rng_.Uniform() * 0.4 + 0.5, fix = rng_.Uniform() * 0.3;
      o.Short(busy); o.Put(",");
      o.Int(static_cast<int64_t>(busy * kAicMhz * k.block)); o.Put(",");
      o.Short(busy * mac); o.Put(","); o.Short(mac); o.Put(",");
      o.Short(busy * scal); o.Put(","); o.Short(scal); o.Put(",");
      o.Short(busy * mte1); o.Put(","); o.Short(mte1); o.Put(",");
      o.Short(busy * mte2); o.Put(","); o.Short(mte2); o.Put(",");
      o.Short(busy * fix); o.Put(","); o.Short(fix); o.Put(",");
      o.Short(rng_.Uniform() * 0.01); o.Put(",");
    } else {
      o.Put("0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,");
    }
    if (aiv) {
      const double vec = rng_.Uniform() * 0.5, scal = rng_.Uniform() * 0.3, mte2 = rng_.Uniform() * 0.5 + 0.3,
                   mte3 = rng_.Uniform() * 0.5;
      o.Short(busy); o.Put(",");
      o.Int(static_cast<int64_t>(busy * kAicMhz * (k.mix_block ? k.mix_block : k.block))); o.Put(",");
      o.Short(busy * vec); o.Put(","); o.Short(vec); o.Put(",");
      o.Short(busy * scal); o.Put(","); o.Short(scal); o.Put(",");
      o.Short(busy * mte2); o.Put(","); o.Short(mte2); o.Put(",");
      o.Short(busy * mte3); o.Put(","); o.Short(mte3); o.Put(",");
      o.Short(rng_.Uniform() * 0.2); o.Put(",");
    } else {
      o.Put("0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,");
    }
    if (aic) o.Fix(rng_.Uniform() * 40 + 50, 3);
    else o.Put("0.000");
    o.Put("\n");
  }

  void Step() {
    const int64_t b = o_.batch, h = kHidden;
    const int64_t kv = o_.prompt + step_;  // KV length after this token
    const std::string x = Dims({b, 1, h});
    const std::string w = Dims({h});
    Row(kGather, Dims({kVocabPerRank * 2, h}) + ";" + Dims({b, 1}), "DT_BF16;INT64", "ND;ND", x, "DT_BF16", b * h * 4.0);
    for (int l = 0; l < o_.layers; ++l) {
      Row(kRmsNorm, x + ";" + w, "DT_BF16;DT_BF16", "ND;ND", x + ";" + Dims({b, 1, 1}), "DT_BF16;FLOAT", b * h * 6.0);
      const int64_t qw = kHeadsPerRank * kHeadDim, kw = kKvHeadsPerRank * kHeadDim;
      for (int64_t n : {qw, kw, kw}) {
        Row(kMatMul, Dims({b, h}) + ";" + Dims({n, h}), "DT_BF16;DT_BF16", "ND;ND", Dims({b, n}), "DT_BF16", 2.0 * h * n);
        Row(kAddBias, Dims({b, n}) + ";" + Dims({n}), "DT_BF16;DT_BF16", "ND;ND", Dims({b, n}), "DT_BF16", b * n * 6.0);
      }
      const std::string cs = Dims({b, 1, 1, kHeadDim});
      Row(kRope, Dims({b, 1, kHeadsPerRank, kHeadDim}) + ";" + cs + ";" + cs, "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND",
          Dims({b, 1, kHeadsPerRank, kHeadDim}), "DT_BF16", b * qw * 4.0);
      Row(kRope, Dims({b, 1, kKvHeadsPerRank, kHeadDim}) + ";" + cs + ";" + cs, "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND",
          Dims({b, 1, kKvHeadsPerRank, kHeadDim}), "DT_BF16", b * kw * 4.0);
      const std::string cache = Dims({b, kv + 64, kKvHeadsPerRank, kHeadDim});  // preallocated, with headroom
      for (int i = 0; i < 2; ++i)
        Row(kScatter, cache + ";" + Dims({b}) + ";" + Dims({b, 1, kKvHeadsPerRank, kHeadDim}), "DT_BF16;INT64;DT_BF16",
            "ND;ND;ND", cache, "DT_BF16", b * kw * 4.0);
      // IncreFlashAttention: q, k cache, v cache, then optional inputs left empty.
      Row(kIfa, Dims({b, 1, qw}) + ";" + Dims({b, kv, kw}) + ";" + Dims({b, kv, kw}) + ";;" + Dims({b}) + ";;;;;;",
          "DT_BF16;DT_BF16;DT_BF16;BOOL;INT64;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT", "ND;ND;ND;ND;ND;ND;ND;ND;ND;ND",
          Dims({b, 1, qw}), "DT_BF16", 2.0 * 2.0 * b * kv * kw);
      Row(kMatMul, Dims({b, qw}) + ";" + Dims({h, qw}), "DT_BF16;DT_BF16", "ND;ND", Dims({b, h}), "DT_BF16", 2.0 * h * qw);
      Row(kAllReduce, "", "", "", "", "", b * h * 2.0);
      Row(kAdd, x + ";" + x, "DT_BF16;DT_BF16", "ND;ND", x, "DT_BF16", b * h * 6.0);
      Row(kRmsNorm, x + ";" + w, "DT_BF16;DT_BF16", "ND;ND", x + ";" + Dims({b, 1, 1}), "DT_BF16;FLOAT", b * h * 6.0);
      Row(kMatMul, Dims({b, h}) + ";" + Dims({2 * kInterPerRank, h}), "DT_BF16;DT_BF16", "ND;ND",
          Dims({b, 2 * kInterPerRank}), "DT_BF16", 2.0 * h * 2 * kInterPerRank);
      Row(kSwiGlu, Dims({b, 2 * kInterPerRank}), "DT_BF16", "ND", Dims({b, kInterPerRank}), "DT_BF16",
          b * kInterPerRank * 6.0);
      Row(kMatMul, Dims({b, kInterPerRank}) + ";" + Dims({h, kInterPerRank}), "DT_BF16;DT_BF16", "ND;ND", Dims({b, h}),
          "DT_BF16", 2.0 * h * kInterPerRank);
      Row(kAllReduce, "", "", "", "", "", b * h * 2.0);
      Row(kAdd, x + ";" + x, "DT_BF16;DT_BF16", "ND;ND", x, "DT_BF16", b * h * 6.0);
    }
    Row(kRmsNorm, x + ";" + w, "DT_BF16;DT_BF16", "ND;ND", x + ";" + Dims({b, 1, 1}), "DT_BF16;FLOAT", b * h * 6.0);
    Row(kMatMul, Dims({b, h}) + ";" + Dims({kVocabPerRank, h}), "DT_BF16;DT_BF16", "ND;ND", Dims({b, kVocabPerRank}),
        "DT_BF16", 2.0 * h * kVocabPerRank);
    Row(kCast, Dims({b, kVocabPerRank}), "DT_BF16", "ND", Dims({b, kVocabPerRank}), "FLOAT", b * kVocabPerRank * 6.0);
    Row(kArgMax, Dims({b, kVocabPerRank}) + ";", "FLOAT;INT64", "ND;ND", Dims({b}), "INT64", b * kVocabPerRank * 4.0);
    t_ns_ += 150000;  // host-side sampling between steps, 150 µs
    ++step_;
  }

  int64_t rows() const { return rows_; }
  int64_t steps() const { return step_; }

 private:
  static std::string Dims(std::initializer_list<int64_t> d) {
    std::string s;
    for (int64_t v : d) {
      if (!s.empty()) s += ',';
      s += std::to_string(v);
    }
    return s;
  }

  const Options& o_;
  Out* out_;
  Rng rng_;
  int64_t t_ns_ = kStartNs;
  int64_t task_id_ = 34473;
  int64_t step_ = 0;
  int64_t rows_ = 0;
};

using pypto::bench::ParseSize;

[[noreturn]] void Usage(const char* why) {
  if (why) std::fprintf(stderr, "gen_ascend_kernel_details: %s\n", why);
  std::fprintf(stderr,
               "usage: gen_ascend_kernel_details --out FILE [--rows N | --bytes N[K|M|G]] [--layers L] [--batch B]\n"
               "         [--prompt P] [--seed S] [--quiet]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) Usage("missing value");
      return argv[++i];
    };
    if (a == "--out") o.out = val();
    else if (a == "--rows") o.rows = std::atoll(val());
    else if (a == "--bytes") { if (!ParseSize(val(), &o.bytes)) Usage("bad --bytes"); }
    else if (a == "--layers") o.layers = std::atoi(val());
    else if (a == "--batch") o.batch = std::atoll(val());
    else if (a == "--prompt") o.prompt = std::atoll(val());
    else if (a == "--seed") o.seed = std::strtoull(val(), nullptr, 10);
    else if (a == "--quiet") o.quiet = true;
    else Usage("unknown flag");
  }
  if (o.out.empty()) Usage("--out is required");
  if (o.layers < 1 || o.batch < 1 || o.prompt < 1 || o.rows < 1) Usage("sizes must be >= 1");
  FILE* f = std::fopen(o.out.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "gen_ascend_kernel_details: cannot write %s: %s\n", o.out.c_str(), std::strerror(errno));
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int64_t rows, steps;
  uint64_t total;
  {
    Out out(f);
    out.Put(kHeader);
    Gen gen(o, &out);
    // Whole steps only: stop at the first step boundary at or past the target.
    while (o.bytes ? out.bytes() < o.bytes : gen.rows() < o.rows) gen.Step();
    out.Flush();
    rows = gen.rows();
    steps = gen.steps();
    total = out.bytes();
  }
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "gen_ascend_kernel_details: close failed: %s\n", std::strerror(errno));
    return 1;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.quiet)
    std::fprintf(stderr, "gen_ascend_kernel_details: %s: %" PRId64 " rows (%" PRId64 " steps), %.1f MB in %.2f s\n",
                 o.out.c_str(), rows, steps, total / 1e6, secs);
  return 0;
}
