// gen_kineto_trace: writes a synthetic PyTorch-profiler (Kineto) Chrome trace of
// LLM decoding, at any size, for the benchmarks (bench/run_bench.sh).
//
// Shape of the output (see the project's Kineto format notes):
//   - torch >= 2.4 era: float "us.nnn" timestamps relative to baseTimeNanoseconds,
//     displayTimeUnit "ms", the time keys before traceEvents (kineto #1054),
//     deviceProperties of one H100 SXM, distributedInfo, CUDA/CUPTI versions.
//   - The layout libkineto's ChromeTraceLogger writes: one event per 4..7 lines,
//     all CPU ops first (user_annotation ProfilerStep#N + cpu_op, pre-order), then
//     the [memory] instant events, then the CUPTI activity records in order
//     (kernel/memcpy/memset + ac2g "f", runtime call + ac2g "s"), then the device
//     projection of each step (gpu_user_annotation), then M metadata events, the
//     span and the window markers.
//   - Per step one HF-transformers style eager forward of a Qwen2-7B-like decoder
//     (L layers: RMSNorm as to/pow/mean/add/rsqrt/mul, q/k/v proj = linear+addmm,
//     rotary embedding, KV cache growth with aten::cat, SDPA flash decode or unfused
//     matmul+softmax, o_proj/MLP = linear+mm, SiLU), greedy sampling, a token copy
//     DtoH, a memset, a cudaDeviceSynchronize. Step 0 is the prefill (q_len =
//     prompt) unless --no-prefill; the KV length grows by one per decode step.
//   - cpu_ops carry External id, Record function id, Concrete Inputs, Input type,
//     Input Strides, Input Dims, Sequence number, Ev Idx; runtime calls carry
//     External id, cbid, correlation; kernels carry the CUPTI kernel args.
// Deterministic: the same flags and --seed give the same bytes.
//
// Usage: gen_kineto_trace --out FILE [--bytes N[K|M|G] | --steps N] [--seed S]
//          [--layers L] [--batch B] [--prompt P] [--attention sdpa|eager]
//          [--no-prefill] [--gzip] [--quiet] [--thin] [--no-profiler-step]
//          [--vary-batch N]
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
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gen_common.h"

namespace {

// ---------------------------------------------------------------------------
// Constants. Times are int64 ns internally and written as µs with 3 decimals,
// exactly like libkineto (fmt "{}.{:03}").

// Epoch ns that relative timestamps are offset from; libkineto uses the process
// load time rounded to whole seconds (value in the style of the public samples).
constexpr int64_t kBaseTimeNs = 1751410836000000000;
// First event's relative time, ns: real files start days after the base (~1.4e12 µs
// in the public H100 sample), so parsers see wide numbers.
constexpr int64_t kTraceStartNs = 1428625731456483;
constexpr int64_t kPid = 25286;          // OS pid of the Python process (any value)
constexpr int64_t kTid = 25286;          // main thread = pid, as in eager inference
constexpr int kGpuPid = 0;               // device index
constexpr int kStream = 7;               // PyTorch's default CUDA stream id in CUPTI
constexpr int64_t kFirstCorrelation = 675771;  // CUPTI ids do not start at 0 in real traces

// Model: Qwen2-7B-like (hidden 3584, 28 heads, 4 KV heads, head dim 128, MLP 18944,
// vocab 152064); the layer count is a flag. Values from the public model config.
constexpr int64_t kHidden = 3584;
constexpr int64_t kHeads = 28;
constexpr int64_t kKvHeads = 4;
constexpr int64_t kHeadDim = 128;
constexpr int64_t kInter = 18944;
constexpr int64_t kVocab = 152064;
constexpr int kDefaultLayers = 28;
constexpr int kDefaultBatch = 8;
constexpr int kDefaultPrompt = 512;      // tokens in the prompt = KV length at step 1

// H100 SXM5 (deviceProperties + kernel time model).
constexpr int kNumSms = 132;
constexpr double kHbmBytesPerNs = 3350.0 * 0.75;  // 3.35 TB/s peak x ~75% achieved by good kernels
constexpr double kBf16FlopsPerNs = 989e3 * 0.6;   // 989 TFLOP/s dense BF16 x ~60% achieved
constexpr int64_t kKernelFloorNs = 1800;          // smallest real kernels run ~1.5-2 µs
constexpr int64_t kKernelGapNs = 900;             // idle between back-to-back kernels on a stream
constexpr int64_t kLaunchLatencyNs = 2500;        // runtime call start -> kernel start, lower bound

// Host-side costs of eager PyTorch (ns), jittered per event.
constexpr int64_t kOpEnterNs = 1600;     // dispatcher + profiler hook before the body
constexpr int64_t kOpExitNs = 700;       // after the last child
constexpr int64_t kViewOpNs = 900;       // body of a metadata-only op (view, as_strided)
constexpr int64_t kLaunchNs = 4200;      // cudaLaunchKernel
constexpr int64_t kLaunchExCNs = 6100;   // cudaLaunchKernelExC (cuBLAS sm90 kernels)
constexpr int64_t kStepOverheadNs = 180000;  // Python generate() loop between steps

// [memory] events: the caching allocator's live temporaries before the oldest is freed,
// and the reserved pool (weights 15.2 GB + cache) reported with every sample.
constexpr size_t kLiveTemporaries = 6;
constexpr int64_t kReservedBytes = 19327352832;  // 18 GiB
constexpr uint64_t kAllocBase = 0x7d6a80000000ULL;  // device VA of the pool (any aligned value)

// Output buffering.
constexpr size_t kWriteBufBytes = 1 << 20;  // 1 MiB per stream: few syscalls, fits L2
constexpr int kGzipLevel = 6;               // zlib default: what `gzip` does
constexpr int64_t kDefaultSteps = 32;

// ---------------------------------------------------------------------------
// Deterministic RNG (splitmix64).
class Rng : public pypto::bench::SplitMix64 {
 public:
  using SplitMix64::SplitMix64;
  // value x (1 +- rel), at least 1
  int64_t Jitter(int64_t v, double rel) {
    double f = 1.0 + rel * (2.0 * Uniform() - 1.0);
    int64_t r = static_cast<int64_t>(static_cast<double>(v) * f);
    return r < 1 ? 1 : r;
  }

};

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
      if (s.size() > buf_.size()) { WriteOut(s.data(), s.size()); total_ += s.size(); return; }
    }
    std::memcpy(buf_.data() + n_, s.data(), s.size());
    n_ += s.size();
  }
  void Char(char c) {
    if (n_ == buf_.size()) Flush();
    buf_[n_++] = c;
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
  // ns -> "µs.nnn" (libkineto's format; always 3 decimals, trailing zeros kept)
  void Us(int64_t ns) {
    Int(ns / 1000);
    int64_t f = ns % 1000;
    Reserve(4);
    buf_[n_++] = '.';
    buf_[n_++] = static_cast<char>('0' + f / 100);
    buf_[n_++] = static_cast<char>('0' + f / 10 % 10);
    buf_[n_++] = static_cast<char>('0' + f % 10);
  }
  void Fixed(double v, int prec) {
    Reserve(48);
    auto r = std::to_chars(buf_.data() + n_, buf_.data() + buf_.size(), v, std::chars_format::fixed, prec);
    n_ = r.ptr - buf_.data();
  }
  void Shortest(double v) {
    Reserve(48);
    auto r = std::to_chars(buf_.data() + n_, buf_.data() + buf_.size(), v);
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
      std::fprintf(stderr, "gen_kineto_trace: write failed: %s\n", std::strerror(errno));
      std::exit(1);
    }
  }
  FILE* f_ = nullptr;
  gzFile g_ = nullptr;
  std::vector<char> buf_;
  size_t n_ = 0;
  uint64_t total_ = 0;
};

// ---------------------------------------------------------------------------
// Operator inputs, for Input Dims / Input type / Input Strides / Concrete Inputs.
enum class DType { kBf16, kF32, kI64 };

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kBf16: return "c10::BFloat16";
    case DType::kF32: return "float";
    case DType::kI64: return "long int";
  }
  return "";
}
int64_t DTypeBytes(DType t) { return t == DType::kBf16 ? 2 : t == DType::kF32 ? 4 : 8; }

constexpr int kMaxRank = 5;  // flash split-KV accumulators are 5-D

struct Shape {
  std::array<int64_t, kMaxRank> d{};
  int rank = 0;
  int64_t Numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= d[i];
    return n;
  }
};
Shape S(std::initializer_list<int64_t> dims) {
  Shape s;
  for (int64_t v : dims) {
    if (s.rank == kMaxRank) std::abort();  // a programming error in the model below
    s.d[s.rank++] = v;
  }
  return s;
}

struct In {
  enum Kind { kTensor, kTensorList, kScalar, kScalarList, kNone } kind = kNone;
  Shape a, b;  // b: second tensor of a two-tensor list (aten::cat)
  DType t = DType::kBf16;
  const char* type = "";     // for kScalar: "Scalar" | "double" ...
  char concrete[64] = {0};   // scalar / scalar list text
};
In T(Shape s, DType t = DType::kBf16) {
  In in;
  in.kind = In::kTensor;
  in.a = s;
  in.t = t;
  return in;
}
In TL(Shape a, Shape b) {
  In in;
  in.kind = In::kTensorList;
  in.a = a;
  in.b = b;
  return in;
}
In Sc(const char* text, const char* type = "Scalar") {
  In in;
  in.kind = In::kScalar;
  in.type = type;
  std::snprintf(in.concrete, sizeof in.concrete, "%s", text);
  return in;
}
In ScI(int64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%" PRId64, v);
  return Sc(b);
}
In SL(Shape s) {  // ScalarList such as a view's size: "[8, 1, 3584]"
  In in;
  in.kind = In::kScalarList;
  int n = std::snprintf(in.concrete, sizeof in.concrete, "[");
  for (int i = 0; i < s.rank; ++i)
    n += std::snprintf(in.concrete + n, sizeof in.concrete - n, i ? ", %" PRId64 : "%" PRId64, s.d[i]);
  std::snprintf(in.concrete + n, sizeof in.concrete - n, "]");
  return in;
}
In None() { return In{}; }

// ---------------------------------------------------------------------------
// Kernel catalogue: names as CUPTI reports them for PyTorch 2.x on H100.
struct KernelKind {
  const char* name;
  int regs;         // registers per thread
  int smem;         // static+dynamic shared memory, bytes
  int block[3];
  bool exc;         // launched with cudaLaunchKernelExC (cuBLAS sm90 kernels)
};

const KernelKind kCopyBf16ToF32{
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
    32, 0, {128, 1, 1}, false};
const KernelKind kCopyF32ToBf16{
    "void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul>)",
    16, 0, {128, 1, 1}, false};
const KernelKind kPow{
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul>)",
    17, 0, {128, 1, 1}, false};
const KernelKind kMean{
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
    32, 16, {32, 16, 1}, false};
const KernelKind kAddScalarF32{
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)",
    20, 0, {128, 1, 1}, false};
const KernelKind kRsqrt{
    "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
    18, 0, {128, 1, 1}, false};
const KernelKind kMulF32Bcast{
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
    18, 0, {128, 1, 1}, false};
const KernelKind kMulBf16{
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)",
    24, 0, {128, 1, 1}, false};
const KernelKind kMulBf16Bcast{
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
    18, 0, {128, 1, 1}, false};
const KernelKind kAddBf16{
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
    24, 0, {128, 1, 1}, false};
const KernelKind kNeg{
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
    18, 0, {128, 1, 1}, false};
const KernelKind kCat{
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
    25, 0, {512, 1, 1}, false};
const KernelKind kCatI64{
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 2, 128, 1>(at::native::(anonymous namespace)::OpaqueType<8u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
    22, 0, {512, 1, 1}, false};
const KernelKind kCloneCopy{
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
    18, 0, {128, 1, 1}, false};
const KernelKind kSilu{
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
    24, 0, {128, 1, 1}, false};
const KernelKind kGemmSm90{
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    168, 231424, {384, 1, 1}, true};
const KernelKind kGemmSm90Small{
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    154, 99328, {128, 1, 1}, true};
const KernelKind kGemmAmpere{
    "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x5_tn",
    232, 98304, {128, 1, 1}, false};
const KernelKind kGemmCutlass{
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)",
    64, 16384, {64, 1, 1}, false};
const KernelKind kSplitKReduce{
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, void*, long, float*, int*)",
    30, 0, {128, 1, 1}, false};
const KernelKind kBmm{
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8::Params)",
    110, 73728, {128, 1, 1}, false};
const KernelKind kSoftmax{
    "void (anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, (anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
    32, 0, {1024, 1, 1}, false};
const KernelKind kFlashPrefill{
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",
    255, 49152, {128, 1, 1}, false};
const KernelKind kFlashSplitKv{
    "void pytorch_flash::flash_fwd_splitkv_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
    255, 49152, {128, 1, 1}, false};
const KernelKind kFlashCombine{
    "void pytorch_flash::flash_fwd_splitkv_combine_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, 4, 3, true>(pytorch_flash::Flash_fwd_params)",
    96, 12288, {128, 1, 1}, false};
const KernelKind kEmbedding{
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
    32, 0, {128, 1, 1}, false};
const KernelKind kArgmax{
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>, unsigned int, long, 4>)",
    40, 1056, {32, 16, 1}, false};

// CUDA runtime callback ids (CUPTI_RUNTIME_TRACE_CBID_*), as written in "cbid".
constexpr int kCbidLaunchKernel = 211;
constexpr int kCbidLaunchKernelExC = 430;
constexpr int kCbidMemcpyAsync = 41;
constexpr int kCbidMemsetAsync = 51;
constexpr int kCbidStreamSynchronize = 131;
constexpr int kCbidDeviceSynchronize = 165;

// ---------------------------------------------------------------------------
struct Options {
  std::string out;
  uint64_t target_bytes = 0;  // 0 = use steps
  int64_t steps = kDefaultSteps;
  uint64_t seed = 1;
  int layers = kDefaultLayers;
  int64_t batch = kDefaultBatch;
  int64_t prompt = kDefaultPrompt;
  bool eager_attention = false;
  bool prefill = true;
  // Second shape (docs/bench.md): record_shapes off, so cpu_ops carry no input
  // args and a megabyte holds about twice the events and steps.
  bool thin = false;
  // A trace recorded without a schedule: no ProfilerStep#N annotations at all.
  bool profiler_steps = true;
  // Continuous batching: each step's batch is 1 + (a hash of the step) mod N,
  // so op shapes differ from step to step (0 = --batch for every step).
  int64_t vary_batch = 0;
  bool gzip = false;
  bool quiet = false;
};

class Generator {
 public:
  Generator(const Options& o, Sink* cpu, Sink* mem, Sink* gpu)
      : o_(o), rng_(o.seed), cpu_(cpu), mem_(mem), gpu_(gpu) {}

  // Simulates one ProfilerStep; returns false never (kept simple).
  void Step(int64_t step) {
    ops_.clear();
    arena_.clear();
    step_first_kernel_ = -1;
    const bool prefill = o_.prefill && step == 0;
    batch_ = o_.vary_batch > 0 ? 1 + static_cast<int64_t>(StepHash(step) % static_cast<uint64_t>(o_.vary_batch)) : o_.batch;
    const int64_t q = prefill ? o_.prompt : 1;
    // KV length after this step's tokens are appended.
    const int64_t kv = o_.prefill ? o_.prompt + step : o_.prompt + step + 1;
    char name[48];
    std::snprintf(name, sizeof name, "ProfilerStep#%" PRId64, step);
    std::string step_name = name;
    const size_t step_op = o_.profiler_steps ? Open("user_annotation", step_name, {}, false) : 0;
    Forward(q, kv, prefill);
    Sample(kv);
    // End-of-step synchronisation the generate loop does (.item() / stopping criteria).
    Runtime("cudaDeviceSynchronize", kCbidDeviceSynchronize, std::max<int64_t>(gpu_t_ - cpu_t_, 0) + rng_.Jitter(9000, 0.3),
            /*flow=*/true);
    if (o_.profiler_steps) Close(step_op);
    WriteCpuOps();
    if (o_.profiler_steps)
      gpu_steps_.push_back({step_name, step_first_kernel_ - 1, gpu_t_ - step_first_kernel_ + 2, ops_[step_op].ext});
    cpu_t_ += rng_.Jitter(kStepOverheadNs, 0.2);
    n_steps_ = step + 1;
  }

  void WriteTrailer(Sink* out) {
    for (const auto& g : gpu_steps_) {
      out->Put("  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"");
      out->Put(g.name);
      out->Put("\", \"pid\": 0, \"tid\": 7,\n    \"ts\": ");
      out->Us(g.ts);
      out->Put(", \"dur\": ");
      out->Us(g.dur);
      out->Put(",\n    \"args\": {\n      \"External id\": ");
      out->Int(g.ext);
      out->Put("\n    }\n  },\n");
    }
    auto meta = [&](const char* name, int64_t pid, int64_t tid, const char* key, const std::string& val, bool quoted) {
      out->Put("  {\n    \"name\": \"");
      out->Put(name);
      out->Put("\", \"ph\": \"M\", \"ts\": ");
      out->Us(kTraceStartNs + 150000);
      out->Put(", \"pid\": ");
      out->Int(pid);
      out->Put(", \"tid\": ");
      out->Int(tid);
      out->Put(",\n    \"args\": {\n      \"");
      out->Put(key);
      out->Put("\": ");
      if (quoted) out->Char('"');
      out->Put(val);
      if (quoted) out->Char('"');
      out->Put("\n    }\n  },\n");
    };
    meta("process_name", kPid, 0, "name", "python3", true);
    meta("process_labels", kPid, 0, "labels", "CPU", true);
    meta("process_sort_index", kPid, 0, "sort_index", std::to_string(kPid), false);
    meta("process_name", kGpuPid, 0, "name", "python3", true);
    meta("process_labels", kGpuPid, 0, "labels", "GPU 0", true);
    meta("process_sort_index", kGpuPid, 0, "sort_index", "16777216", false);
    meta("thread_name", kGpuPid, kStream, "name", "stream 7 ", true);
    meta("thread_sort_index", kGpuPid, kStream, "sort_index", "7", false);
    meta("thread_name", kPid, kTid, "name", "thread " + std::to_string(kTid) + " (python3)", true);
    meta("thread_sort_index", kPid, kTid, "sort_index", std::to_string(kTid), false);
    out->Put("  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    out->Us(kTraceStartNs);
    out->Put(", \"dur\": ");
    out->Us(cpu_t_ - kTraceStartNs);
    out->Put(",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n"
             "    \"args\": {\n      \"Op count\": 0\n    }\n  },\n");
    out->Put("  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
             "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    out->Us(kTraceStartNs);
    out->Put("\n  },\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
             "    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    out->Us(cpu_t_ + 1000);
    out->Put("\n  }\n");
  }

  int64_t steps() const { return n_steps_; }
  uint64_t events() const { return n_events_; }
  uint64_t kernels() const { return n_kernels_; }

 private:
  struct OpRec {
    int64_t start, end, ext, rf, seq;
    const char* cat;
    std::string name;
    uint32_t args_off, args_len;
  };
  struct GpuStep {
    std::string name;
    int64_t ts, dur, ext;
  };

  // ---- host op tree -------------------------------------------------------
  size_t Open(const char* cat, std::string_view name, std::initializer_list<In> inputs, bool seq = true) {
    OpRec r;
    r.start = cpu_t_;
    r.end = 0;
    r.ext = ++ext_id_;
    r.rf = ++rf_id_;
    r.seq = seq ? ++seq_nr_ : -1;
    r.cat = cat;
    r.name.assign(name);
    r.args_off = static_cast<uint32_t>(arena_.size());
    if (inputs.size() && !o_.thin) FormatInputs(inputs);
    r.args_len = static_cast<uint32_t>(arena_.size() - r.args_off);
    ops_.push_back(std::move(r));
    stack_.push_back(ops_.size() - 1);
    cpu_t_ += rng_.Jitter(kOpEnterNs, 0.4);
    return ops_.size() - 1;
  }
  void Close(size_t idx) {
    cpu_t_ += rng_.Jitter(kOpExitNs, 0.4);
    ops_[idx].end = cpu_t_;
    stack_.pop_back();
  }
  // A metadata-only op with no children: view, as_strided, empty...
  void Leaf(std::string_view name, std::initializer_list<In> inputs) {
    size_t i = Open("cpu_op", name, inputs, false);
    cpu_t_ += rng_.Jitter(kViewOpNs, 0.5);
    Close(i);
  }

  // Appends `"Concrete Inputs": [...], "Input type": [...], "Input Strides": [...], "Input Dims": [...]`
  void FormatInputs(std::initializer_list<In> inputs) {
    std::string& a = arena_;
    a += "\"Concrete Inputs\": [";
    bool first = true;
    for (const In& in : inputs) {
      if (!first) a += ", ";
      first = false;
      a += '"';
      if (in.kind == In::kScalar || in.kind == In::kScalarList) a += in.concrete;
      a += '"';
    }
    a += "], \"Input type\": [";
    first = true;
    for (const In& in : inputs) {
      if (!first) a += ", ";
      first = false;
      a += '"';
      switch (in.kind) {
        case In::kTensor: a += DTypeName(in.t); break;
        case In::kTensorList: a += "TensorList"; break;
        case In::kScalar: a += in.type; break;
        case In::kScalarList: a += "ScalarList"; break;
        case In::kNone: break;
      }
      a += '"';
    }
    a += "], \"Input Strides\": [";
    first = true;
    for (const In& in : inputs) {
      if (!first) a += ", ";
      first = false;
      if (in.kind == In::kTensor) {
        AppendStrides(in.a);
      } else if (in.kind == In::kTensorList) {
        a += '[';
        AppendStrides(in.a);
        a += ", ";
        AppendStrides(in.b);
        a += ']';
      } else {
        a += "[]";
      }
    }
    a += "], \"Input Dims\": [";
    first = true;
    for (const In& in : inputs) {
      if (!first) a += ", ";
      first = false;
      if (in.kind == In::kTensor) {
        AppendDims(in.a);
      } else if (in.kind == In::kTensorList) {
        a += '[';
        AppendDims(in.a);
        a += ", ";
        AppendDims(in.b);
        a += ']';
      } else {
        a += "[]";
      }
    }
    a += "], ";
  }
  void AppendInt(int64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    arena_.append(b, r.ptr);
  }
  void AppendDims(const Shape& s) {
    arena_ += '[';
    for (int i = 0; i < s.rank; ++i) {
      if (i) arena_ += ", ";
      AppendInt(s.d[i]);
    }
    arena_ += ']';
  }
  void AppendStrides(const Shape& s) {
    std::array<int64_t, kMaxRank> st{};
    int64_t acc = 1;
    for (int i = s.rank - 1; i >= 0; --i) {
      st[i] = acc;
      acc *= s.d[i];
    }
    arena_ += '[';
    for (int i = 0; i < s.rank; ++i) {
      if (i) arena_ += ", ";
      AppendInt(st[i]);
    }
    arena_ += ']';
  }

  // splitmix64 of the step: a fixed, well-spread batch sequence for --vary-batch.
  static uint64_t StepHash(int64_t step) {
    uint64_t z = static_cast<uint64_t>(step) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  int64_t InnermostExt() const { return stack_.empty() ? 0 : ops_[stack_.back()].ext; }

  // ---- device side --------------------------------------------------------
  int64_t KernelNs(double bytes, double flops) {
    double t = std::max(bytes / kHbmBytesPerNs, flops / kBf16FlopsPerNs);
    int64_t ns = std::max<int64_t>(kKernelFloorNs, static_cast<int64_t>(t));
    return rng_.Jitter(ns, 0.06);
  }

  // Launches one kernel from the innermost open op; writes kernel + f and
  // runtime + s (CUPTI record order) to the GPU stream.
  void Launch(const KernelKind& k, std::array<int64_t, 3> grid, double bytes, double flops = 0) {
    const int64_t corr = ++corr_;
    const int64_t ext = InnermostExt();
    const int64_t rt_start = cpu_t_;
    const int64_t rt_dur = rng_.Jitter(k.exc ? kLaunchExCNs : kLaunchNs, 0.35);
    const int64_t k_start = std::max(gpu_t_ + kKernelGapNs, rt_start + rng_.Jitter(kLaunchLatencyNs, 0.3));
    const int64_t k_dur = KernelNs(bytes, flops);
    gpu_t_ = k_start + k_dur;
    cpu_t_ = rt_start + rt_dur;
    if (step_first_kernel_ < 0) step_first_kernel_ = k_start;
    ++n_kernels_;
    Sink& g = *gpu_;
    g.Put("  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"");
    g.Put(k.name);
    g.Put("\", \"pid\": 0, \"tid\": 7,\n    \"ts\": ");
    g.Us(k_start);
    g.Put(", \"dur\": ");
    g.Us(k_dur);
    g.Put(",\n    \"args\": {\n      \"External id\": ");
    g.Int(ext);
    g.Put(",      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": ");
    g.Int(corr);
    g.Put(",      \"registers per thread\": ");
    g.Int(k.regs);
    g.Put(",      \"shared memory\": ");
    g.Int(k.smem);
    const double blocks = static_cast<double>(grid[0] * grid[1] * grid[2]);
    const double threads = static_cast<double>(k.block[0] * k.block[1] * k.block[2]);
    g.Put(",      \"blocks per SM\": ");
    g.Fixed(blocks / kNumSms, 6);
    g.Put(",      \"warps per SM\": ");
    g.Fixed(blocks * threads / 32.0 / kNumSms, 6);
    g.Put(",      \"grid\": [");
    g.Int(grid[0]);
    g.Put(", ");
    g.Int(grid[1]);
    g.Put(", ");
    g.Int(grid[2]);
    g.Put("],      \"block\": [");
    g.Int(k.block[0]);
    g.Put(", ");
    g.Int(k.block[1]);
    g.Put(", ");
    g.Int(k.block[2]);
    g.Put("],      \"est. achieved occupancy %\": ");
    // Occupancy estimate: warps resident per SM over the 64-warp maximum, capped.
    g.Int(std::min<int64_t>(100, static_cast<int64_t>(blocks * threads / 32.0 / kNumSms / 64.0 * 100.0)));
    g.Put("\n    }\n  },\n");
    Flow('f', corr, 0, kStream, k_start);
    WriteRuntime(k.exc ? "cudaLaunchKernelExC" : "cudaLaunchKernel", k.exc ? kCbidLaunchKernelExC : kCbidLaunchKernel,
                 rt_start, rt_dur, corr, ext);
    Flow('s', corr, kPid, kTid, rt_start);
    n_events_ += 4;
    Alloc(static_cast<int64_t>(bytes / 3) + 512);
  }

  // A memcpy or memset on the stream, issued by a runtime call.
  void Copy(bool memset, const char* name, const char* api, int cbid, int64_t bytes) {
    const int64_t corr = ++corr_;
    const int64_t ext = InnermostExt();
    const int64_t rt_start = cpu_t_;
    const int64_t rt_dur = rng_.Jitter(memset ? 5200 : 9800, 0.3);
    const int64_t k_start = std::max(gpu_t_ + kKernelGapNs, rt_start + rng_.Jitter(kLaunchLatencyNs, 0.3));
    const int64_t k_dur = rng_.Jitter(std::max<int64_t>(memset ? 800 : 1400, bytes / 20), 0.1);  // ~20 GB/s small copies
    gpu_t_ = k_start + k_dur;
    cpu_t_ = rt_start + rt_dur;
    Sink& g = *gpu_;
    g.Put("  {\n    \"ph\": \"X\", \"cat\": \"");
    g.Put(memset ? "gpu_memset" : "gpu_memcpy");
    g.Put("\", \"name\": \"");
    g.Put(name);
    g.Put("\", \"pid\": 0, \"tid\": 7,\n    \"ts\": ");
    g.Us(k_start);
    g.Put(", \"dur\": ");
    g.Us(k_dur);
    g.Put(",\n    \"args\": {\n      \"External id\": ");
    g.Int(ext);
    g.Put(",      \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": ");
    g.Int(corr);
    g.Put(",      \"bytes\": ");
    g.Int(bytes);
    g.Put(", \"memory bandwidth (GB/s)\": ");
    g.Shortest(static_cast<double>(bytes) / static_cast<double>(k_dur));
    g.Put("\n    }\n  },\n");
    Flow('f', corr, 0, kStream, k_start);
    WriteRuntime(api, cbid, rt_start, rt_dur, corr, ext);
    Flow('s', corr, kPid, kTid, rt_start);
    n_events_ += 4;
  }

  // A runtime call with no device activity (synchronisation); `flow` writes the
  // ac2g start libkineto emits for sync APIs (it has no "f": an orphan start).
  void Runtime(const char* api, int cbid, int64_t dur, bool flow) {
    const int64_t corr = ++corr_;
    const int64_t start = cpu_t_;
    cpu_t_ += dur;
    WriteRuntime(api, cbid, start, dur, corr, InnermostExt());
    if (flow) Flow('s', corr, kPid, kTid, start);
    n_events_ += flow ? 2 : 1;
  }

  void WriteRuntime(const char* api, int cbid, int64_t ts, int64_t dur, int64_t corr, int64_t ext) {
    Sink& g = *gpu_;
    g.Put("  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"");
    g.Put(api);
    g.Put("\", \"pid\": ");
    g.Int(kPid);
    g.Put(", \"tid\": ");
    g.Int(kTid);
    g.Put(",\n    \"ts\": ");
    g.Us(ts);
    g.Put(", \"dur\": ");
    g.Us(dur);
    g.Put(",\n    \"args\": {\n      \"External id\": ");
    g.Int(ext);
    g.Put(",      \"cbid\": ");
    g.Int(cbid);
    g.Put(", \"correlation\": ");
    g.Int(corr);
    g.Put("\n    }\n  },\n");
  }

  void Flow(char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts) {
    Sink& g = *gpu_;
    g.Put("  {\n    \"ph\": \"");
    g.Char(ph);
    g.Put("\", \"id\": ");
    g.Int(id);
    g.Put(", \"pid\": ");
    g.Int(pid);
    g.Put(", \"tid\": ");
    g.Int(tid);
    g.Put(", \"ts\": ");
    g.Us(ts);
    g.Put(ph == 'f' ? ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n"
                    : ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n");
  }

  // Caching-allocator sample: +bytes now, and free the oldest live temporary.
  void Alloc(int64_t bytes) {
    bytes = (bytes + 511) / 512 * 512;  // the caching allocator rounds to 512 B blocks
    const uint64_t addr = kAllocBase + (alloc_cursor_ % (4ULL << 30));
    alloc_cursor_ += static_cast<uint64_t>(bytes);
    allocated_ += bytes;
    MemEvent(bytes, addr);
    live_.push_back({addr, bytes});
    if (live_.size() > kLiveTemporaries) {
      auto [a, b] = live_.front();
      live_.pop_front();
      allocated_ -= b;
      MemEvent(-b, a);
    }
  }
  void MemEvent(int64_t bytes, uint64_t addr) {
    Sink& m = *mem_;
    m.Put("  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
    m.Int(kPid);
    m.Put(", \"tid\": ");
    m.Int(kTid);
    m.Put(",\n    \"ts\": ");
    m.Us(cpu_t_);
    m.Put(",\n    \"args\": {\n      \"Total Reserved\": ");
    m.Int(kReservedBytes);
    m.Put(", \"Total Allocated\": ");
    m.Int(kWeightsBytes + allocated_);
    m.Put(", \"Bytes\": ");
    m.Int(bytes);
    m.Put(", \"Addr\": ");
    m.UInt(addr);
    m.Put(", \"Device Id\": 0, \"Device Type\": 1\n    }\n  },\n");
    ++n_events_;
  }

  void WriteCpuOps() {
    Sink& c = *cpu_;
    for (const OpRec& r : ops_) {
      c.Put("  {\n    \"ph\": \"X\", \"cat\": \"");
      c.Put(r.cat);
      c.Put("\", \"name\": \"");
      c.Put(r.name);
      c.Put("\", \"pid\": ");
      c.Int(kPid);
      c.Put(", \"tid\": ");
      c.Int(kTid);
      c.Put(",\n    \"ts\": ");
      c.Us(r.start);
      c.Put(", \"dur\": ");
      c.Us(r.end - r.start);
      c.Put(",\n    \"args\": {\n      \"External id\": ");
      c.Int(r.ext);
      c.Put(",\"Record function id\": ");
      c.Int(r.rf);
      c.Put(", ");
      c.Put(std::string_view(arena_).substr(r.args_off, r.args_len));
      if (r.seq >= 0) {
        c.Put("\"Sequence number\": ");
        c.Int(r.seq);
        c.Put(", ");
      }
      c.Put("\"Ev Idx\": ");
      c.Int(ev_idx_++);
      c.Put("\n    }\n  },\n");
    }
    n_events_ += ops_.size();
  }

  // ---- the model ----------------------------------------------------------
  static std::array<int64_t, 3> G1(int64_t n) { return {std::max<int64_t>(1, n), 1, 1}; }
  // Grid of a vectorized elementwise kernel over n elements (4 per thread, 128 threads).
  static std::array<int64_t, 3> Ew(int64_t n) { return G1((n + 511) / 512); }

  void ViewOp(const char* name, Shape in, Shape to) {
    size_t i = Open("cpu_op", name, {T(in), SL(to)}, false);
    Close(i);
  }
  void Transpose(Shape in, int d0, int d1) {
    size_t i = Open("cpu_op", "aten::transpose", {T(in), ScI(d0), ScI(d1)}, false);
    Shape out = in;
    std::swap(out.d[d0], out.d[d1]);
    Leaf("aten::as_strided", {T(in), SL(out), SL(out), None()});
    Close(i);
  }

  // aten::to(dtype) -> _to_copy -> empty_strided + copy_ (one cast kernel)
  void Cast(Shape s, DType from, DType to) {
    const int64_t n = s.Numel();
    size_t a = Open("cpu_op", "aten::to", {T(s, from), Sc(to == DType::kF32 ? "6" : "15"), Sc("False"), Sc("False"), None()});
    size_t b = Open("cpu_op", "aten::_to_copy", {T(s, from), Sc(to == DType::kF32 ? "6" : "15"), None(), None(), None(), Sc("False"), None()});
    Leaf("aten::empty_strided", {SL(s), SL(s), Sc(to == DType::kF32 ? "6" : "15"), Sc("0"), None(), Sc("False")});
    size_t c = Open("cpu_op", "aten::copy_", {T(s, to), T(s, from), Sc("False")});
    Launch(to == DType::kF32 ? kCopyBf16ToF32 : kCopyF32ToBf16, Ew(n), n * (DTypeBytes(from) + DTypeBytes(to)));
    Close(c);
    Close(b);
    Close(a);
  }

  void RmsNorm(Shape x) {
    const int64_t n = x.Numel();
    Shape r = x;
    r.d[r.rank - 1] = 1;
    Cast(x, DType::kBf16, DType::kF32);
    size_t i = Open("cpu_op", "aten::pow", {T(x, DType::kF32), Sc("2")});
    Launch(kPow, Ew(n), n * 8);
    Close(i);
    i = Open("cpu_op", "aten::mean", {T(x, DType::kF32), Sc("[-1]", "ScalarList"), Sc("True"), None()});
    Launch(kMean, G1(n / x.d[x.rank - 1]), n * 4);
    Close(i);
    i = Open("cpu_op", "aten::add", {T(r, DType::kF32), Sc("", "double"), Sc("1")});
    Launch(kAddScalarF32, Ew(r.Numel()), r.Numel() * 8);
    Close(i);
    i = Open("cpu_op", "aten::rsqrt", {T(r, DType::kF32)});
    Launch(kRsqrt, Ew(r.Numel()), r.Numel() * 8);
    Close(i);
    i = Open("cpu_op", "aten::mul", {T(x, DType::kF32), T(r, DType::kF32)});
    Launch(kMulF32Bcast, G1((n + 255) / 256), n * 8);
    Close(i);
    Cast(x, DType::kF32, DType::kBf16);
    i = Open("cpu_op", "aten::mul", {T(S({kHidden})), T(x)});
    Launch(kMulBf16, Ew(n), n * 6);
    Close(i);
  }

  const KernelKind& GemmFor(int64_t m, int64_t n) {
    if (n >= 32768) return kGemmSm90;               // lm_head
    if (m >= 256) return kGemmSm90;                 // prefill
    if (n >= 8192) return kGemmSm90Small;           // MLP up/gate
    if (n <= 1024) return kGemmCutlass;             // k/v proj (GQA: 512 wide)
    return kGemmAmpere;
  }

  // HF nn.Linear on [B, q, K] -> [B, q, N]. With bias: reshape + addmm + view
  // (q/k/v of Qwen2); without: matmul -> mm.
  void Linear(Shape x, int64_t k, int64_t n, bool bias) {
    const int64_t m = x.Numel() / k;
    Shape w = S({n, k});
    Shape wt = S({k, n});
    Shape x2 = S({m, k});
    Shape y = x;
    y.d[y.rank - 1] = n;
    const double bytes = 2.0 * (static_cast<double>(k) * n + static_cast<double>(m) * (k + n));
    const double flops = 2.0 * m * k * n;
    const KernelKind& kk = GemmFor(m, n);
    // Tile grid: 64x64 (or 128x128 for the big sm90 kernel) output tiles.
    const int64_t tile = (&kk == &kGemmSm90) ? 128 : 64;
    std::array<int64_t, 3> grid = {(n + tile - 1) / tile, (m + tile - 1) / tile, 1};
    if (&kk == &kGemmSm90) grid = {kNumSms, 1, 1};  // persistent kernel: one CTA per SM
    size_t lin = bias ? Open("cpu_op", "aten::linear", {T(x), T(w), T(S({n}))}) : Open("cpu_op", "aten::linear", {T(x), T(w), None()});
    size_t t = Open("cpu_op", "aten::t", {T(w)}, false);
    Transpose(w, 0, 1);
    Close(t);
    if (bias) {
      size_t r = Open("cpu_op", "aten::reshape", {T(x), SL(x2)}, false);
      ViewOp("aten::view", x, x2);
      Close(r);
      size_t mm = Open("cpu_op", "aten::addmm", {T(S({n})), T(x2), T(wt), Sc("1"), Sc("1")});
      Launch(kk, grid, bytes, flops);
      Close(mm);
      ViewOp("aten::view", S({m, n}), y);
    } else {
      size_t mt = Open("cpu_op", "aten::matmul", {T(x), T(wt)});
      size_t r = Open("cpu_op", "aten::reshape", {T(x), SL(x2)}, false);
      ViewOp("aten::view", x, x2);
      Close(r);
      size_t mm = Open("cpu_op", "aten::mm", {T(x2), T(wt)});
      // Decode GEMMs with a long K (down_proj) use split-K + a reduction kernel.
      const bool split_k = m < 256 && k >= 8192;
      if (split_k) {
        Launch(kk, {grid[0], grid[1], 4}, bytes, flops);
        Launch(kSplitKReduce, G1((m * n + 127) / 128), m * n * 4.0 * 4 + m * n * 2.0);
      } else {
        Launch(kk, grid, bytes, flops);
      }
      Close(mm);
      Leaf("aten::_unsafe_view", {T(S({m, n})), SL(y)});
      Close(mt);
    }
    Close(lin);
  }

  // Rotary embedding on [B, h, q, D]: x*cos + rotate_half(x)*sin
  void Rope(Shape x) {
    const int64_t n = x.Numel();
    Shape half = x;
    half.d[3] = kHeadDim / 2;
    Shape cs = S({1, 1, x.d[2], kHeadDim});
    for (int i = 0; i < 2; ++i) {  // unsqueeze cos, sin
      size_t u = Open("cpu_op", "aten::unsqueeze", {T(S({1, x.d[2], kHeadDim})), Sc("1")}, false);
      Leaf("aten::as_strided", {T(S({1, x.d[2], kHeadDim})), SL(cs), SL(cs), None()});
      Close(u);
    }
    size_t o = Open("cpu_op", "aten::mul", {T(x), T(cs)});
    Launch(kMulBf16Bcast, Ew(n), n * 6);
    Close(o);
    for (int i = 0; i < 2; ++i) {
      size_t s = Open("cpu_op", "aten::slice", {T(x), Sc("3"), Sc(i ? "64" : "0"), Sc(i ? "9223372036854775807" : "64"), Sc("1")}, false);
      Leaf("aten::as_strided", {T(x), SL(half), SL(x), Sc(i ? "64" : "0")});
      Close(s);
    }
    o = Open("cpu_op", "aten::neg", {T(half)});
    Launch(kNeg, Ew(n / 2), n);
    Close(o);
    o = Open("cpu_op", "aten::cat", {TL(half, half), Sc("-1")});
    Launch(kCat, {(n + 2047) / 2048, 2, 1}, n * 4);
    Close(o);
    o = Open("cpu_op", "aten::mul", {T(x), T(cs)});
    Launch(kMulBf16Bcast, Ew(n), n * 6);
    Close(o);
    o = Open("cpu_op", "aten::add", {T(x), T(x), Sc("1")});
    Launch(kAddBf16, Ew(n), n * 6);
    Close(o);
  }

  // DynamicCache.update: torch.cat([past, new], dim=-2) for K and V.
  void KvCacheCat(int64_t q, int64_t kv) {
    const int64_t past = kv - q;
    for (int i = 0; i < 2; ++i) {
      Shape old = S({batch_, kKvHeads, past, kHeadDim});
      Shape add = S({batch_, kKvHeads, q, kHeadDim});
      const int64_t n = batch_ * kKvHeads * kv * kHeadDim;
      if (past == 0) continue;  // prefill: the cache starts as the new tensor
      size_t o = Open("cpu_op", "aten::cat", {TL(old, add), Sc("-2")});
      Launch(kCat, {(n + 2047) / 2048, 2, 1}, n * 4.0);
      Close(o);
    }
  }

  // transformers' repeat_kv: expand + reshape (a copy) from kv heads to heads.
  void RepeatKv(int64_t kv) {
    Shape src = S({batch_, kKvHeads, kv, kHeadDim});
    Shape dst = S({batch_, kHeads, kv, kHeadDim});
    const int64_t n = dst.Numel();
    for (int i = 0; i < 2; ++i) {
      size_t e = Open("cpu_op", "aten::expand", {T(src), SL(dst), Sc("False")}, false);
      Leaf("aten::as_strided", {T(src), SL(dst), SL(dst), None()});
      Close(e);
      size_t r = Open("cpu_op", "aten::reshape", {T(dst), SL(dst)}, false);
      size_t c = Open("cpu_op", "aten::clone", {T(dst), Sc("0")});
      Leaf("aten::empty_like", {T(dst), Sc("15"), Sc("0"), None(), None(), Sc("0")});
      size_t cp = Open("cpu_op", "aten::copy_", {T(dst), T(dst), Sc("False")});
      Launch(kCloneCopy, Ew(n), n * 4.0);
      Close(cp);
      Close(c);
      Leaf("aten::_unsafe_view", {T(dst), SL(dst)});
      Close(r);
    }
  }

  void Attention(int64_t q, int64_t kv, bool prefill) {
    Shape qs = S({batch_, kHeads, q, kHeadDim});
    Shape ks = S({batch_, kHeads, kv, kHeadDim});
    const double kv_bytes = 2.0 * 2.0 * batch_ * kHeads * kv * kHeadDim;
    const double flops = 4.0 * batch_ * kHeads * q * kv * kHeadDim;
    if (!o_.eager_attention) {
      size_t s = Open("cpu_op", "aten::scaled_dot_product_attention",
                      {T(qs), T(ks), T(ks), None(), Sc("0."), Sc(prefill ? "True" : "False"), Sc("", "double"), Sc("False")});
      size_t f = Open("cpu_op", "aten::_scaled_dot_product_flash_attention",
                      {T(qs), T(ks), T(ks), Sc("0."), Sc(prefill ? "True" : "False"), Sc("False"), Sc("0.088388347648318433")});
      Transpose(qs, 1, 2);
      Transpose(ks, 1, 2);
      Transpose(ks, 1, 2);
      Shape qt = S({batch_, q, kHeads, kHeadDim});
      Shape kt = S({batch_, kv, kHeads, kHeadDim});
      size_t fa = Open("cpu_op", "aten::_flash_attention_forward",
                       {T(qt), T(kt), T(kt), None(), None(), ScI(q), ScI(kv), Sc("0."), Sc(prefill ? "True" : "False"),
                        Sc("False"), Sc("0.088388347648318433"), None(), None(), None(), None()});
      Leaf("aten::empty_like", {T(qt), None(), None(), None(), None(), None()});
      Leaf("aten::empty", {SL(S({batch_, kHeads, q})), Sc("6"), Sc("0"), None(), None(), None()});
      if (prefill) {
        Launch(kFlashPrefill, {(q + 127) / 128, kHeads, batch_}, kv_bytes + 4.0 * qs.Numel(), flops);
      } else {
        // Split-KV decode: ~one split per 256 keys, up to the SM count.
        const int64_t splits = std::clamp<int64_t>(kv / 256, 1, 16);
        Leaf("aten::empty", {SL(S({splits, batch_, kHeads, q})), Sc("6"), Sc("0"), None(), None(), None()});
        Leaf("aten::empty", {SL(S({splits, batch_, kHeads, q, kHeadDim})), Sc("6"), Sc("0"), None(), None(), None()});
        Launch(kFlashSplitKv, {1, kHeads * batch_, splits}, kv_bytes, flops);
        Launch(kFlashCombine, {(batch_ * kHeads + 15) / 16, 1, 1}, 4.0 * splits * batch_ * kHeads * kHeadDim);
      }
      Close(fa);
      Transpose(qt, 1, 2);
      Close(f);
      Close(s);
      return;
    }
    // transformers' eager_attention_forward: matmul, scale, mask, softmax, matmul.
    Shape sc = S({batch_, kHeads, q, kv});
    const int64_t nsc = sc.Numel();
    size_t t = Open("cpu_op", "aten::transpose", {T(ks), Sc("2"), Sc("3")}, false);
    Leaf("aten::as_strided", {T(ks), SL(ks), SL(ks), None()});
    Close(t);
    size_t m = Open("cpu_op", "aten::matmul", {T(qs), T(S({batch_, kHeads, kHeadDim, kv}))});
    Leaf("aten::expand", {T(qs), SL(qs), Sc("False")});
    Leaf("aten::reshape", {T(qs), SL(S({batch_ * kHeads, q, kHeadDim}))});
    size_t b = Open("cpu_op", "aten::bmm", {T(S({batch_ * kHeads, q, kHeadDim})), T(S({batch_ * kHeads, kHeadDim, kv}))});
    Launch(kBmm, {(kv + 63) / 64, (q + 63) / 64, batch_ * kHeads}, kv_bytes / 2 + 2.0 * nsc, flops / 2);
    Close(b);
    Leaf("aten::_unsafe_view", {T(S({batch_ * kHeads, q, kv})), SL(sc)});
    Close(m);
    size_t mu = Open("cpu_op", "aten::mul", {T(sc), Sc("0.088388347648318433")});
    Launch(kMulBf16, Ew(nsc), nsc * 4.0);
    Close(mu);
    size_t ad = Open("cpu_op", "aten::add", {T(sc), T(S({batch_, 1, q, kv})), Sc("1")});
    Launch(kAddBf16, Ew(nsc), nsc * 6.0);
    Close(ad);
    size_t sm = Open("cpu_op", "aten::softmax", {T(sc), Sc("-1"), Sc("6")});
    size_t sm2 = Open("cpu_op", "aten::_softmax", {T(sc, DType::kF32), Sc("-1"), Sc("False")});
    Launch(kSoftmax, G1(batch_ * kHeads * q), nsc * 6.0);
    Close(sm2);
    Close(sm);
    m = Open("cpu_op", "aten::matmul", {T(sc), T(ks)});
    b = Open("cpu_op", "aten::bmm", {T(S({batch_ * kHeads, q, kv})), T(S({batch_ * kHeads, kv, kHeadDim}))});
    Launch(kBmm, {2, (q + 63) / 64, batch_ * kHeads}, kv_bytes / 2 + 2.0 * nsc, flops / 2);
    Close(b);
    Leaf("aten::_unsafe_view", {T(S({batch_ * kHeads, q, kHeadDim})), SL(qs)});
    Close(m);
  }

  void Layer(int64_t q, int64_t kv, bool prefill) {
    const int64_t b = batch_;
    Shape x = S({b, q, kHidden});
    const int64_t n = x.Numel();
    RmsNorm(x);
    const int64_t kvw = kKvHeads * kHeadDim;
    Linear(x, kHidden, kHidden, true);
    ViewOp("aten::view", x, S({b, q, -1, kHeadDim}));
    Transpose(S({b, q, kHeads, kHeadDim}), 1, 2);
    Linear(x, kHidden, kvw, true);
    ViewOp("aten::view", S({b, q, kvw}), S({b, q, -1, kHeadDim}));
    Transpose(S({b, q, kKvHeads, kHeadDim}), 1, 2);
    Linear(x, kHidden, kvw, true);
    ViewOp("aten::view", S({b, q, kvw}), S({b, q, -1, kHeadDim}));
    Transpose(S({b, q, kKvHeads, kHeadDim}), 1, 2);
    Rope(S({b, kHeads, q, kHeadDim}));
    Rope(S({b, kKvHeads, q, kHeadDim}));
    KvCacheCat(q, kv);
    RepeatKv(kv);
    Attention(q, kv, prefill);
    Transpose(S({b, kHeads, q, kHeadDim}), 1, 2);
    size_t r = Open("cpu_op", "aten::reshape", {T(S({b, q, kHeads, kHeadDim})), SL(S({b, q, -1}))}, false);
    ViewOp("aten::view", S({b, q, kHeads, kHeadDim}), S({b, q, -1}));
    Close(r);
    Linear(x, kHidden, kHidden, false);
    size_t a = Open("cpu_op", "aten::add", {T(x), T(x), Sc("1")});
    Launch(kAddBf16, Ew(n), n * 6.0);
    Close(a);
    RmsNorm(x);
    Linear(x, kHidden, kInter, false);
    Shape h = S({b, q, kInter});
    size_t s = Open("cpu_op", "aten::silu", {T(h)});
    Launch(kSilu, Ew(h.Numel()), h.Numel() * 4.0);
    Close(s);
    Linear(x, kHidden, kInter, false);
    size_t m = Open("cpu_op", "aten::mul", {T(h), T(h)});
    Launch(kMulBf16, Ew(h.Numel()), h.Numel() * 6.0);
    Close(m);
    Linear(h, kInter, kHidden, false);
    a = Open("cpu_op", "aten::add", {T(x), T(x), Sc("1")});
    Launch(kAddBf16, Ew(n), n * 6.0);
    Close(a);
  }

  void Forward(int64_t q, int64_t kv, bool prefill) {
    const int64_t b = batch_;
    // cache_position / position_ids built on the host and copied to the device.
    size_t to = Open("cpu_op", "aten::to", {T(S({b, q}), DType::kI64), None(), Sc("4"), None(), Sc("False"), Sc("False"), None()});
    size_t tc = Open("cpu_op", "aten::_to_copy", {T(S({b, q}), DType::kI64), Sc("4"), None(), None(), None(), Sc("False"), None()});
    Leaf("aten::empty_strided", {SL(S({b, q})), SL(S({q, 1})), Sc("4"), Sc("0"), None(), Sc("False")});
    size_t cp = Open("cpu_op", "aten::copy_", {T(S({b, q}), DType::kI64), T(S({b, q}), DType::kI64), Sc("False")});
    Copy(false, "Memcpy HtoD (Pageable -> Device)", "cudaMemcpyAsync", kCbidMemcpyAsync, b * q * 8);
    Close(cp);
    Close(tc);
    Close(to);
    size_t e = Open("cpu_op", "aten::embedding", {T(S({kVocab, kHidden})), T(S({b, q}), DType::kI64), Sc("-1"), Sc("False"), Sc("False")});
    size_t is = Open("cpu_op", "aten::index_select", {T(S({kVocab, kHidden})), Sc("0"), T(S({b * q}), DType::kI64)});
    Launch(kEmbedding, G1((b * q * kHidden + 1023) / 1024), b * q * kHidden * 4.0);
    Close(is);
    Close(e);
    for (int l = 0; l < o_.layers; ++l) Layer(q, kv, prefill);
    RmsNorm(S({b, q, kHidden}));
    if (q > 1) {  // logits only for the last position
      size_t sl = Open("cpu_op", "aten::slice", {T(S({b, q, kHidden})), Sc("1"), ScI(-1), Sc("9223372036854775807"), Sc("1")}, false);
      Leaf("aten::as_strided", {T(S({b, q, kHidden})), SL(S({b, 1, kHidden})), SL(S({q * kHidden, kHidden, 1})), ScI((q - 1) * kHidden)});
      Close(sl);
    }
    Linear(S({b, 1, kHidden}), kHidden, kVocab, false);
  }

  // Greedy sampling and bookkeeping of transformers' generate().
  void Sample(int64_t kv) {
    const int64_t b = batch_;
    size_t am = Open("cpu_op", "aten::argmax", {T(S({b, kVocab})), Sc("-1"), Sc("False")});
    Launch(kArgmax, G1(b), b * kVocab * 2.0);
    Close(am);
    size_t z = Open("cpu_op", "aten::zeros", {SL(S({b})), Sc("11"), None(), None(), None()});
    Leaf("aten::empty", {SL(S({b})), Sc("11"), None(), None(), None(), None()});
    size_t zz = Open("cpu_op", "aten::zero_", {T(S({b}), DType::kI64)});
    Copy(true, "Memset (Device)", "cudaMemsetAsync", kCbidMemsetAsync, b);
    Close(zz);
    Close(z);
    size_t c = Open("cpu_op", "aten::cat", {TL(S({b, kv}), S({b, 1})), Sc("-1")});
    Launch(kCatI64, G1((b * (kv + 1) + 511) / 512), b * (kv + 1) * 16.0);
    Close(c);
    size_t it = Open("cpu_op", "aten::item", {T(S({}), DType::kI64)}, false);
    size_t ls = Open("cpu_op", "aten::_local_scalar_dense", {T(S({}), DType::kI64)}, false);
    Copy(false, "Memcpy DtoH (Device -> Pinned)", "cudaMemcpyAsync", kCbidMemcpyAsync, 1);
    Runtime("cudaStreamSynchronize", kCbidStreamSynchronize, std::max<int64_t>(gpu_t_ - cpu_t_, 0) + rng_.Jitter(3000, 0.3), false);
    Close(ls);
    Close(it);
  }

  static constexpr int64_t kWeightsBytes = 15231233024;  // Qwen2-7B bf16 parameters

  const Options& o_;
  Rng rng_;
  Sink* cpu_;
  Sink* mem_;
  Sink* gpu_;
  int64_t cpu_t_ = kTraceStartNs + 2500000;  // first op ~2.5 ms after the profiler starts
  int64_t gpu_t_ = kTraceStartNs;
  int64_t ext_id_ = 0, rf_id_ = 0, seq_nr_ = 0, ev_idx_ = 0, corr_ = kFirstCorrelation;
  int64_t step_first_kernel_ = -1;
  int64_t allocated_ = 0;
  uint64_t alloc_cursor_ = 0;
  std::deque<std::pair<uint64_t, int64_t>> live_;
  std::vector<OpRec> ops_;
  std::vector<size_t> stack_;
  std::string arena_;
  std::vector<GpuStep> gpu_steps_;
  int64_t n_steps_ = 0;
  int64_t batch_ = 1;  // this step's batch (--batch, or drawn with --vary-batch)
  uint64_t n_events_ = 0, n_kernels_ = 0;
};

void WriteHeader(Sink* out, bool record_shapes) {
  out->Put(
      "{\n"
      "  \"schemaVersion\": 1,\n"
      "  \"deviceProperties\": [\n"
      "    {\n"
      "      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912,\n"
      "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
      "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
      "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
      "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
      "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472\n"
      "    }\n"
      "  ],\n"
      "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1, \"pg_count\": 1, \"pg_config\": "
      "[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": 1, \"ranks\": [0]}], "
      "\"nccl_version\": \"2.21.5\"},\n"
      "  \"record_shapes\": ");
  out->Put(record_shapes ? "1" : "0");
  out->Put(",\n"
      "  \"profile_memory\": 1,\n"
      "  \"with_stack\": 0,\n"
      "  \"cupti_version\": 24,\n"
      "  \"cuda_runtime_version\": 12040,\n"
      "  \"cuda_driver_version\": 12090,\n"
      "  \"trace_id\": \"5F0B3C1A2E9D4C7B8A6F1E2D3C4B5A69\",\n"
      "  \"displayTimeUnit\": \"ms\",\n"
      "  \"baseTimeNanoseconds\": ");
  out->Int(kBaseTimeNs);
  out->Put(",\n  \"traceEvents\": [\n");
}

using pypto::bench::ParseSize;

[[noreturn]] void Usage(const char* why) {
  if (why) std::fprintf(stderr, "gen_kineto_trace: %s\n", why);
  std::fprintf(stderr,
               "usage: gen_kineto_trace --out FILE [--bytes N[K|M|G] | --steps N] [--seed S] [--layers L]\n"
               "         [--batch B] [--prompt P] [--attention sdpa|eager] [--no-prefill] [--gzip] [--quiet]\n"
               "         [--thin] [--no-profiler-step] [--vary-batch N]\n"
               "  --thin: no input shapes on cpu_ops (record_shapes=False), about twice the steps per MB;\n"
               "  --no-profiler-step: no ProfilerStep#N annotations; --vary-batch N: each step's batch in 1..N.\n"
               "  sizes are decimal (1G = 1e9 bytes of uncompressed JSON); FILE.gz or --gzip compresses.\n");
  std::exit(2);
}

// Copies a temp stream into the output and removes it.
void Append(const std::string& tmp_path, FILE* tmp, Sink* out) {
  std::fflush(tmp);
  std::rewind(tmp);
  std::vector<char> buf(kWriteBufBytes);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), tmp)) > 0) out->Put(std::string_view(buf.data(), n));
  std::fclose(tmp);
  std::remove(tmp_path.c_str());
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
    else if (a == "--attention") {
      std::string_view v = val();
      if (v == "eager") o.eager_attention = true;
      else if (v != "sdpa") Usage("--attention is sdpa or eager");
    }
    else if (a == "--no-prefill") o.prefill = false;
    else if (a == "--thin") o.thin = true;
    else if (a == "--no-profiler-step") o.profiler_steps = false;
    else if (a == "--vary-batch") o.vary_batch = std::atoll(val());
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
  // CPU ops go straight to the output; the other two blocks follow them in the
  // file, so they are staged in temp files next to it and appended at the end.
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
    std::fprintf(stderr, "gen_kineto_trace: cannot write %s: %s\n", o.out.c_str(), std::strerror(errno));
    return 1;
  }
  const std::string mem_path = o.out + ".mem.tmp", gpu_path = o.out + ".gpu.tmp";
  FILE* mem_f = std::fopen(mem_path.c_str(), "w+b");
  FILE* gpu_f = std::fopen(gpu_path.c_str(), "w+b");
  if (!mem_f || !gpu_f) {
    std::fprintf(stderr, "gen_kineto_trace: cannot create temp files next to %s\n", o.out.c_str());
    return 1;
  }
  uint64_t total = 0;
  {
    auto out = out_g ? std::make_unique<Sink>(out_g) : std::make_unique<Sink>(out_f);
    Sink mem(mem_f), gpu(gpu_f);
    Generator gen(o, out.get(), &mem, &gpu);
    WriteHeader(out.get(), !o.thin);
    // Trailer (gpu_user_annotation per step, M events, markers) ~1 KB per step + 3 KB.
    for (int64_t s = 0;; ++s) {
      if (!o.target_bytes && s >= o.steps) break;
      if (o.target_bytes && out->bytes() + mem.bytes() + gpu.bytes() + 3000 + 300 * s >= o.target_bytes) break;
      gen.Step(s);
    }
    mem.Flush();
    gpu.Flush();
    Append(mem_path, mem_f, out.get());
    Append(gpu_path, gpu_f, out.get());
    gen.WriteTrailer(out.get());
    // Real files name the writer's output path here; a fixed name keeps the bytes
    // independent of where the file is generated.
    out->Put("  ],\n  \"traceName\": \"synthetic_llm_decode.pt.trace.json\"\n}\n");
    out->Flush();
    total = out->bytes();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!o.quiet)
      std::fprintf(stderr,
                   "gen_kineto_trace: %s: %" PRId64 " steps x %d layers, %" PRIu64 " events (%" PRIu64
                   " kernels), %.1f MB JSON in %.2f s (%.0f MB/s)\n",
                   o.out.c_str(), gen.steps(), o.layers, gen.events(), gen.kernels(), total / 1e6, secs, total / 1e6 / secs);
  }
  if (out_g) {
    if (gzclose(out_g) != Z_OK) { std::fprintf(stderr, "gen_kineto_trace: gzip close failed\n"); return 1; }
  } else if (std::fclose(out_f) != 0) {
    std::fprintf(stderr, "gen_kineto_trace: close failed: %s\n", std::strerror(errno));
    return 1;
  }
  return 0;
}
