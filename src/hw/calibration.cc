// `pypto calibrate`: measures this machine's peak FP32 FLOP/s (register FMA
// loop and a blocked SGEMM, all threads) and memory bandwidth (STREAM triad
// over arrays far larger than the caches), and keeps them in a per-user JSON
// file that DetectHardware reads for CPU-only profiles.
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <fmt/format.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "hw/hardware.h"
#include "io/file.h"
#include "io/output_file.h"

namespace pypto {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// ---------------------------------------------------------------- FMA loop
// kChains independent accumulators per lane group hide the FMA latency
// (4 cycles x 2 ports on current x86 cores = 8 chains needed; 12 leaves margin).
constexpr int kChains = 12;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float FmaAvx512(int64_t iters, float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + c * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  float out[16];
  _mm512_storeu_ps(out, s);
  float t = 0;
  for (float x : out) t += x;
  return t;
}
__attribute__((target("avx2,fma"))) float FmaAvx2(int64_t iters, float seed) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(seed + c * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  float out[8];
  _mm256_storeu_ps(out, s);
  float t = 0;
  for (float x : out) t += x;
  return t;
}
#endif

// Portable fallback: separate multiply and add (2 FLOP per lane step), vectorised by the compiler.
float FmaPortable(int64_t iters, float seed) {
  constexpr int kLanes = 4 * kChains;
  float acc[kLanes];
  for (int c = 0; c < kLanes; ++c) acc[c] = seed + c * 1e-3f;
  const float a = 0.9999999f, b = 1e-7f;
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kLanes; ++c) acc[c] = acc[c] * a + b;
  float t = 0;
  for (float x : acc) t += x;
  return t;
}

struct FmaKernel {
  float (*fn)(int64_t, float) = FmaPortable;
  double flops_per_iter = 2.0 * 4 * kChains;
  const char* name = "portable mul+add (48 lanes)";
};

FmaKernel PickFmaKernel() {
  FmaKernel k;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    k.fn = FmaAvx512; k.flops_per_iter = 2.0 * 16 * kChains; k.name = "AVX-512 FMA (12 x 16 lanes)";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    k.fn = FmaAvx2; k.flops_per_iter = 2.0 * 8 * kChains; k.name = "AVX2 FMA (12 x 8 lanes)";
  }
#endif
  return k;
}

// Runs `work(thread_index)` on `threads` threads started together; returns the wall seconds.
template <typename F>
double RunTeam(int threads, F&& work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> team;
  team.reserve(threads);
  for (int t = 0; t < threads; ++t)
    team.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      work(t);
    });
  while (ready.load() < threads) std::this_thread::yield();
  auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : team) th.join();
  return Seconds(start, Clock::now());
}

volatile float g_sink = 0;  // keeps results alive

double MeasureFmaPeak(int threads, double budget_s, std::string* method) {
  FmaKernel k = PickFmaKernel();
  // Size one run to about a tenth of the budget, from a single-thread probe.
  int64_t iters = 1 << 16;
  for (;;) {
    auto a = Clock::now();
    g_sink = g_sink + k.fn(iters, 1.0f);
    double s = Seconds(a, Clock::now());
    if (s > 0.01 || iters > (int64_t{1} << 40)) {
      iters = std::max<int64_t>(1, static_cast<int64_t>(iters * (budget_s / 10.0) / s));
      break;
    }
    iters *= 4;
  }
  double best = 0;
  auto deadline = Clock::now() + std::chrono::duration<double>(budget_s);
  int runs = 0;
  do {
    std::vector<float> out(threads);
    double s = RunTeam(threads, [&](int t) { out[t] = k.fn(iters, 1.0f + t); });
    for (float x : out) g_sink = g_sink + x;
    best = std::max(best, k.flops_per_iter * static_cast<double>(iters) * threads / s);
    ++runs;
  } while (Clock::now() < deadline || runs < 2);
  *method += fmt::format("fp32 peak: {} register loop, {} threads, best of {} runs; ", k.name, threads, runs);
  return best;
}

// ---------------------------------------------------------------- blocked SGEMM
// C[M x N] += A[M x K] * B[K x N], row-major, blocked for L1/L2; the inner loop
// over N is contiguous and vectorised by the compiler. Threads split M.
constexpr int kGemmN = 512;  // square problem: 2·512³ = 268 MFLOP per multiply

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
#endif
void GemmBlockAvx2(const float* a, const float* b, float* c, int m0, int m1, int n) {
  constexpr int kBk = 128, kBn = 256;
  for (int k0 = 0; k0 < n; k0 += kBk)
    for (int j0 = 0; j0 < n; j0 += kBn)
      for (int i = m0; i < m1; ++i) {
        float* crow = c + static_cast<size_t>(i) * n;
        for (int k = k0; k < std::min(n, k0 + kBk); ++k) {
          const float av = a[static_cast<size_t>(i) * n + k];
          const float* brow = b + static_cast<size_t>(k) * n;
#pragma GCC ivdep
          for (int j = j0; j < std::min(n, j0 + kBn); ++j) crow[j] += av * brow[j];
        }
      }
}

void GemmBlockPortable(const float* a, const float* b, float* c, int m0, int m1, int n) {
  constexpr int kBk = 128, kBn = 256;
  for (int k0 = 0; k0 < n; k0 += kBk)
    for (int j0 = 0; j0 < n; j0 += kBn)
      for (int i = m0; i < m1; ++i) {
        float* crow = c + static_cast<size_t>(i) * n;
        for (int k = k0; k < std::min(n, k0 + kBk); ++k) {
          const float av = a[static_cast<size_t>(i) * n + k];
          const float* brow = b + static_cast<size_t>(k) * n;
          for (int j = j0; j < std::min(n, j0 + kBn); ++j) crow[j] += av * brow[j];
        }
      }
}

double MeasureGemm(int threads, double budget_s, std::string* method) {
  const int n = kGemmN;
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size() * threads, 0.0f);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>((i * 7) % 13) * 0.01f;
    b[i] = static_cast<float>((i * 5) % 11) * 0.01f;
  }
  bool avx2 = false;
#if defined(__x86_64__)
  avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  auto block = avx2 ? GemmBlockAvx2 : GemmBlockPortable;
  // Each thread multiplies its own copy (no sharing of C): throughput of `threads` GEMMs.
  double best = 0;
  int runs = 0;
  auto deadline = Clock::now() + std::chrono::duration<double>(budget_s);
  do {
    double s = RunTeam(threads, [&](int t) { block(a.data(), b.data(), c.data() + a.size() * t, 0, n, n); });
    best = std::max(best, 2.0 * n * n * static_cast<double>(n) * threads / s);
    ++runs;
  } while (Clock::now() < deadline || runs < 2);
  g_sink = g_sink + c[c.size() / 2];
  *method += fmt::format("fp32 GEMM: blocked {}x{}x{} SGEMM per thread ({}), best of {} runs; ", n, n, n,
                         avx2 ? "AVX2/FMA" : "portable", runs);
  return best;
}

// ---------------------------------------------------------------- STREAM triad
double MeasureTriad(int threads, size_t bytes_per_array, double budget_s, std::string* method) {
  size_t n = std::max<size_t>(bytes_per_array / sizeof(double), 1 << 16);
  std::unique_ptr<double[]> a(new (std::nothrow) double[n]), b(new (std::nothrow) double[n]),
      c(new (std::nothrow) double[n]);
  if (!a || !b || !c) return -1;
  // First touch by the threads that use the data (NUMA placement).
  auto range = [&](int t, size_t* lo, size_t* hi) {
    *lo = n * t / threads;
    *hi = n * (t + 1) / threads;
  };
  RunTeam(threads, [&](int t) {
    size_t lo, hi;
    range(t, &lo, &hi);
    for (size_t i = lo; i < hi; ++i) { a[i] = 0; b[i] = 1.0; c[i] = 2.0; }
  });
  const double scalar = 3.0;
  double best = 0;
  int runs = 0;
  auto deadline = Clock::now() + std::chrono::duration<double>(budget_s);
  do {
    double s = RunTeam(threads, [&](int t) {
      size_t lo, hi;
      range(t, &lo, &hi);
      double* __restrict pa = a.get();
      const double* __restrict pb = b.get();
      const double* __restrict pc = c.get();
      for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
    });
    best = std::max(best, 3.0 * sizeof(double) * static_cast<double>(n) / s);
    ++runs;
  } while (Clock::now() < deadline || runs < 3);
  g_sink = g_sink + static_cast<float>(a[n / 2]);
  *method += fmt::format("bandwidth: STREAM triad a=b+s*c over 3 x {} MiB, 24 B per element counted "
                         "(STREAM convention, write-allocate not counted), {} threads, best of {} runs",
                         bytes_per_array >> 20, threads, runs);
  return best;
}

std::string CpuModel() {
  io::Limits limits;
  auto text = io::ReadPrefix("/proc/cpuinfo", 1 << 16, limits);
  if (!text.ok()) return {};
  std::string_view t = *text;
  size_t p = t.find("model name");
  if (p == std::string_view::npos) return {};
  size_t colon = t.find(':', p);
  size_t eol = t.find('\n', p);
  if (colon == std::string_view::npos || eol == std::string_view::npos || colon > eol) return {};
  std::string_view v = t.substr(colon + 1, eol - colon - 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return std::string(v);
}

std::string NowIso() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') { out.push_back('\\'); out.push_back(ch); }
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out.push_back(ch);
  }
  return out;
}

}  // namespace

CalibrationOptions CalibrationOptionsFor(double total_seconds, int threads) {
  CalibrationOptions options;
  options.compute_seconds = total_seconds * 2.0 / 3.0;
  options.bandwidth_seconds = total_seconds / 3.0;
  options.threads = threads;
  return options;
}

StatusOr<CalibrationResult> CalibrateThisMachine(const CalibrationOptions& options) {
  CalibrationResult r;
  r.threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (r.threads > 1024) return InvalidArgumentError("calibration: more than 1024 threads requested");
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) r.host = host;
  r.cpu_model = CpuModel();
  double compute = options.compute_seconds > 0 ? options.compute_seconds : 1.0;
  double bw_s = options.bandwidth_seconds > 0 ? options.bandwidth_seconds : 0.5;
  size_t bytes = options.bandwidth_buffer_bytes > 0 ? options.bandwidth_buffer_bytes : (size_t{64} << 20);
  r.fp32_flops = MeasureFmaPeak(r.threads, compute * 0.6, &r.method);
  r.fp32_gemm_flops = MeasureGemm(r.threads, compute * 0.4, &r.method);
  r.memory_bandwidth = MeasureTriad(r.threads, bytes, bw_s, &r.method);
  if (r.memory_bandwidth < 0) return LimitExceededError(fmt::format("calibration: cannot allocate 3 x {} MiB", bytes >> 20));
  r.measured_at = NowIso();
  return r;
}

std::string DefaultCalibrationPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/pypto/calibration.json";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.config/pypto/calibration.json";
  return {};
}

Status SaveCalibration(const CalibrationResult& r, const std::string& path_in) {
  std::string path = path_in.empty() ? DefaultCalibrationPath() : path_in;
  if (path.empty()) return InvalidArgumentError("calibration: neither XDG_CONFIG_HOME nor HOME is set; give a path");
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return IoError(fmt::format("{}: cannot create folder: {}", p.parent_path().string(), ec.message()));
  std::string text = fmt::format(
      "{{\n  \"pypto_calibration\": {},\n  \"host\": \"{}\",\n  \"cpu_model\": \"{}\",\n  \"threads\": {},\n"
      "  \"fp32_flops\": {:.6e},\n  \"fp32_gemm_flops\": {:.6e},\n  \"memory_bandwidth\": {:.6e},\n"
      "  \"method\": \"{}\",\n  \"measured_at\": \"{}\"\n}}\n",
      r.version, JsonEscape(r.host), JsonEscape(r.cpu_model), r.threads, r.fp32_flops, r.fp32_gemm_flops,
      r.memory_bandwidth, JsonEscape(r.method), JsonEscape(r.measured_at));
  return io::WriteTextFile(path, text, /*overwrite=*/true);
}

StatusOr<CalibrationResult> LoadCalibration(const std::string& path_in) {
  std::string path = path_in.empty() ? DefaultCalibrationPath() : path_in;
  if (path.empty() || io::GetPathKind(path) == io::PathKind::kMissing)
    return NotFoundError(fmt::format("{}: no calibration file (run `pypto calibrate`)", path.empty() ? "calibration" : path));
  io::Limits limits;
  limits.follow_symlinks = true;  // the user's own configuration
  auto text = io::ReadWholeFile(path, limits);
  if (!text.ok()) return text.status();
  simdjson::dom::parser parser;
  simdjson::padded_string padded(*text);
  simdjson::dom::object o;
  if (parser.parse(padded).get_object().get(o)) return CorruptError(path + ": not a JSON object");
  CalibrationResult r;
  int64_t version = 0;
  if (o["pypto_calibration"].get_int64().get(version) || version != 1)
    return CorruptError(path + ": not a pypto calibration file (version 1)");
  auto num = [&](const char* key, double* out) {
    double d;
    if (!o[key].get_double().get(d)) *out = d;
  };
  auto str = [&](const char* key, std::string* out) {
    std::string_view s;
    if (!o[key].get_string().get(s)) *out = std::string(s);
  };
  num("fp32_flops", &r.fp32_flops);
  num("fp32_gemm_flops", &r.fp32_gemm_flops);
  num("memory_bandwidth", &r.memory_bandwidth);
  int64_t threads = 0;
  if (!o["threads"].get_int64().get(threads)) r.threads = static_cast<int>(threads);
  str("host", &r.host);
  str("cpu_model", &r.cpu_model);
  str("method", &r.method);
  str("measured_at", &r.measured_at);
  if (!(r.fp32_flops > 0) || !(r.memory_bandwidth > 0))
    return CorruptError(path + ": fp32_flops and memory_bandwidth must be positive numbers");
  return r;
}

int32_t CpuFp32Lanes() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f")) return kFp32LanesAvx512;
  if (__builtin_cpu_supports("avx2")) return kFp32LanesAvx2;
  return kFp32LanesSse;
#else
  return kFp32LanesNeon;
#endif
}

HardwareSpec CalibratedCpuSpec(const CalibrationResult& r) {
  HardwareSpec spec;
  auto generic = HardwareTable::Builtin().Find("cpu-generic");
  if (generic.ok()) spec = std::move(generic).value();
  spec.id = "cpu-calibrated";
  spec.display_name = r.cpu_model.empty() ? "calibrated CPU" : r.cpu_model;
  spec.family = HardwareFamily::kCpu;
  spec.matrix_cores = r.threads;
  std::string src = fmt::format("pypto calibrate on {} at {}", r.host.empty() ? "this host" : r.host, r.measured_at);
  spec.peaks.clear();
  spec.notes.clear();
  spec.peaks.push_back(PeakFlops{ComputeUnit::kVector, DType::kFp32, r.fp32_flops, "", src + " (FMA loop)"});
  // Matrix work falls back to this vector FP32 peak (HardwareSpec::PeakForOp);
  // the SGEMM rate is what a simple blocked kernel reaches, kept as a note.
  if (r.fp32_gemm_flops > 0)
    spec.notes.push_back(fmt::format("calibrated blocked SGEMM reaches {:.1f} GFLOP/s ({:.0f} % of the FMA peak)",
                                     r.fp32_gemm_flops / 1e9, 100.0 * r.fp32_gemm_flops / r.fp32_flops));
  spec.memory_bandwidth = SourcedValue{r.memory_bandwidth, "", src + " (STREAM triad)"};
  spec.selection = "CPU-only profile -> calibration of " + (r.host.empty() ? std::string("this host") : r.host);
  spec.source_summary = r.method;
  // GEMM micro-kernels (oneDNN, MKL, OpenBLAS) block N and K by the fp32 lanes
  // of a vector register: a dimension that is not a multiple leaves a masked
  // remainder loop. This machine's width (the calibration ran here too).
  spec.mma_dim_multiple = CpuFp32Lanes();
  return spec;
}

}  // namespace pypto
