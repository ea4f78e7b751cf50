#include "unit/report/report_test_helpers.h"

namespace pypto::testing {

void BuildSampleProfile(SampleProfile* s) {
  Profile& p = s->profile;
  p.metadata["format"] = "kineto";
  p.metadata["source_path"] = "sample.json";
  p.devices.rows.push_back({0, DeviceKind::kCuda, p.Intern("NVIDIA A100")});

  s->host_track = p.TrackFor("1234", "5678", TrackKind::kHostThread);
  p.tracks.name[s->host_track] = p.Intern("python \"main\" thread");
  p.tracks.process_name[s->host_track] = p.Intern("python3");
  s->device_track = p.DeviceTrack("0", "7", 0, 7);

  const int64_t t0 = SampleProfile::kStart;
  HostOpRow step;
  step.name = p.Intern("ProfilerStep#3");
  step.category = p.Intern("user_annotation");
  step.kind = HostOpKind::kUserAnnotation;
  step.track = s->host_track;
  step.ts = t0;
  step.dur = 100'000;
  s->step_op = p.host_ops.Add(step);

  HostOpRow matmul;
  matmul.name = p.Intern("aten::mm");
  matmul.category = p.Intern("cpu_op");
  matmul.kind = HostOpKind::kOperator;
  matmul.track = s->host_track;
  matmul.ts = t0 + 10'000;
  matmul.dur = 40'000;
  matmul.input_dims = p.Intern("[[4096, 1024], [1024, 512]]");
  matmul.external_id = SampleProfile::kHugeExternalId;
  s->matmul_op = p.host_ops.Add(matmul);

  HostOpRow launch;
  launch.name = p.Intern("cudaLaunchKernel");
  launch.category = p.Intern("cuda_runtime");
  launch.kind = HostOpKind::kRuntime;
  launch.track = s->host_track;
  launch.ts = t0 + 20'000;
  launch.dur = 5'000;
  launch.correlation = SampleProfile::kCorrelation;
  s->launch_op = p.host_ops.Add(launch);

  DeviceTaskRow kernel;
  // A quote, a control character and an invalid UTF-8 byte: the export must repair them.
  kernel.name = p.Intern("gemm\"k\x01\xFF");
  kernel.category = p.Intern("kernel");
  kernel.kind = DeviceTaskKind::kKernel;
  kernel.track = s->device_track;
  kernel.ts = t0 + 30'000;
  kernel.dur = 50'000;
  kernel.correlation = SampleProfile::kCorrelation;
  kernel.grid[0] = 80;
  kernel.grid[1] = 1;
  kernel.grid[2] = 1;
  s->kernel = p.device_tasks.Add(kernel);
  p.attributes.Add(OwnerKind::kDeviceTask, s->kernel, p.Intern("registers per thread"), p.Intern("128"), 128);
}

}  // namespace pypto::testing
