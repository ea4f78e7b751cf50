#include "unit/diagnosis/diagnosis_test_helpers.h"

#include <fmt/format.h>

#include "analysis/cost_model.h"
#include "analysis/shapes.h"
#include "hw/hardware.h"

namespace pypto::testing {
namespace {

// Host time between two operators (more than the graph's 1 us nesting tolerance).
constexpr TimeNs kOpSpacingNs = 1500;

struct Builder {
  Profile p;
  uint32_t thread = 0, stream = 0;
  TimeNs host = 1'000'000, dev = 1'000'000;
  int64_t corr = 1;
  HardwareSpec hw;

  Builder() {
    thread = p.TrackFor("100", "1", TrackKind::kHostThread);
    stream = p.DeviceTrack("0", "7", 0, 7);
    hw = *FindHardware(kTestHardware);
    p.devices.rows.push_back({0, DeviceKind::kCuda, p.Intern("NVIDIA H100 80GB HBM3")});
    p.metadata["format"] = "synthetic";
  }

  TimeNs Roofline(OpClass cls, std::string_view sub, std::string_view name, std::string_view dims,
                  std::string_view types, double* bytes = nullptr) {
    CostInput in;
    in.cls = cls;
    in.sub_kind = sub;
    in.name = name;
    in.has_shapes = ParseKinetoShapes(dims, types, &in.shapes).ok();
    in.unit = (cls == OpClass::kMatmul || cls == OpClass::kAttention) ? ComputeUnit::kMatrix : ComputeUnit::kVector;
    OpCost c = EstimateCost(in, hw);
    if (bytes) *bytes = c.bytes;
    return c.has_costs() ? static_cast<TimeNs>(c.roofline_ns) : 1000;
  }

  // One operator with one kernel; host launches at `host`, kernel starts
  // when both the launch is done and the stream is free.
  void Launch(std::string_view op, std::string_view kernel, std::string_view dims, std::string_view types,
              TimeNs kernel_ns, TimeNs host_extra = 0, TimeNs launch_cost = 1000) {
    host += host_extra;
    HostOpRow o;
    o.name = p.Intern(op);
    o.category = p.Intern("cpu_op");
    o.kind = HostOpKind::kOperator;
    o.track = thread;
    o.ts = host;
    o.dur = launch_cost;
    o.input_dims = p.Intern(dims);
    o.input_types = p.Intern(types);
    o.external_id = corr;
    p.host_ops.Add(o);
    HostOpRow r;
    r.name = p.Intern("cudaLaunchKernel");
    r.category = p.Intern("cuda_runtime");
    r.kind = HostOpKind::kRuntime;
    r.track = thread;
    r.ts = host + launch_cost / 4;
    r.dur = launch_cost / 2;
    r.correlation = corr;
    r.external_id = corr;
    p.host_ops.Add(r);
    DeviceTaskRow k;
    k.name = p.Intern(kernel);
    k.category = p.Intern("kernel");
    k.kind = DeviceTaskKind::kKernel;
    k.track = stream;
    k.ts = std::max(dev, r.ts + r.dur + 500);
    k.dur = std::max<TimeNs>(kernel_ns, 500);
    k.correlation = corr;
    k.external_id = corr;
    p.device_tasks.Add(k);
    dev = k.ts + k.dur;
    host += launch_cost + kOpSpacingNs;  // ops side by side, not nested
    ++corr;
  }
};

}  // namespace

DiagnoseOptions TestOptions() {
  DiagnoseOptions o;
  o.hardware_name = kTestHardware;
  return o;
}

DiagnosticReport RunSpec(const DecodeSpec& spec, const char* only) {
  Profile p = BuildDecodeProfile(spec);
  DiagnoseOptions o = TestOptions();
  o.only = {only};
  o.min_issue_share = 0;
  StatusOr<DiagnosticReport> r = Diagnose(p, o);
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

Profile BuildDecodeProfile(const DecodeSpec& s) {
  Builder b;
  const std::string bf = "\"c10::BFloat16\"";
  const int64_t h = s.hidden;
  for (int step = 0; step < s.steps; ++step) {
    const TimeNs step_start = std::max(b.host, b.dev) + 2000;
    b.host = step_start + 1000;
    const size_t first_op = b.p.host_ops.size();
    const int64_t kv = s.kv_len + step;
    auto gemm = [&](int64_t n, double eff) {
      std::string dims = fmt::format("[[1, {}], [{}, {}]]", h, h, n);
      std::string types = fmt::format("[{}, {}]", bf, bf);
      TimeNs roof = b.Roofline(OpClass::kMatmul, "gemm", "aten::mm", dims, types);
      b.Launch("aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1", dims,
               types, static_cast<TimeNs>(double(roof) / eff), 0, s.launch_cost_ns);
    };
    auto norm = [&]() {
      std::string dims = fmt::format("[[1, {}], [{}], []]", h, h);
      b.Launch("aten::rms_norm", s.norm_kernel, dims, fmt::format("[{}, {}, \"Scalar\"]", bf, bf), 3000,
               s.norm_host_delay_ns, s.launch_cost_ns);
    };
    for (int layer = 0; layer < s.layers; ++layer) {
      norm();
      gemm(3 * h, s.gemm_efficiency);  // qkv
      if (s.kv_cat) {
        for (int kvi = 0; kvi < 2; ++kvi) {
          std::string dims = fmt::format("[[[1, 32, {}, 128], [1, 32, 1, 128]], []]", kv - 1);
          double bytes = 2.0 * 32 * (kv - 1) * 128 * 2;
          b.Launch("aten::cat", "CatArrayBatchedCopy_contig", dims, fmt::format("[[{}, {}], \"Scalar\"]", bf, bf),
                   static_cast<TimeNs>(bytes / b.hw.memory_bandwidth.value * 1e9 / 0.7), 0, s.launch_cost_ns);
        }
      }
      std::string adims = fmt::format("[[1, 32, 1, 128], [1, 32, {}, 128], [1, 32, {}, 128]]", kv, kv);
      std::string atypes = fmt::format("[{}, {}, {}]", bf, bf, bf);
      double abytes = 0;
      b.Roofline(OpClass::kAttention, "sdpa", "aten::_scaled_dot_product_flash_attention", adims, atypes, &abytes);
      TimeNs mem_ns = static_cast<TimeNs>(abytes / b.hw.memory_bandwidth.value * 1e9);
      b.Launch("aten::_scaled_dot_product_flash_attention", "flash_fwd_splitkv_kernel", adims, atypes,
               static_cast<TimeNs>(double(mem_ns) / s.attention_memory_share), 0, s.launch_cost_ns);
      gemm(h, s.gemm_efficiency);  // o_proj
      norm();
      gemm(4 * h, s.gemm_efficiency);  // up
      gemm(h, s.gemm_efficiency);      // down (K = h here; fine for the test)
    }
    if (s.odd_n > 0) gemm(s.odd_n, s.odd_efficiency);
    // The step annotation covers the host work of the step.
    HostOpRow a;
    a.name = b.p.Intern(fmt::format("ProfilerStep#{}", step));
    a.category = b.p.Intern("user_annotation");
    a.kind = HostOpKind::kUserAnnotation;
    a.track = b.thread;
    a.ts = step_start;
    a.dur = b.host - step_start + 500;
    b.p.host_ops.Add(a);
    (void)first_op;
    b.host = std::max(b.host, b.dev);  // synchronise at the end of the step
  }
  return std::move(b.p);
}

}  // namespace pypto::testing
