// A Kineto trace of GEMMs that each have a shape of their own, as continuous
// batching gives (a new batch size every step, 10^5 distinct shapes in a
// 300 MB trace): for tests of what a diagnosis or a report keeps per distinct
// shape. Written compact, so each op's Input Dims text is exactly what
// DistinctGemm::dims says.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace pypto::testing {

// Op i: aten::mm on [[8, k], [k, 64]] (bf16) with k = 64 + i, on the host
// thread from ts = 100 + 20 i µs, launching kernel `name` (gemm_a / gemm_b
// alternately) on stream 7 of an H100 for dur = 5 + i % 7 µs.
struct DistinctGemm {
  int64_t k;
  std::string dims;    // the Input Dims text, "[[8,k],[k,64]]"
  std::string kernel;  // kernel name
  int64_t dur_us;
};

inline std::vector<DistinctGemm> DistinctGemms(int count) {
  std::vector<DistinctGemm> ops;
  for (int i = 0; i < count; ++i) {
    const int64_t k = 64 + i;
    ops.push_back({k, fmt::format("[[8,{}],[{},64]]", k, k), i % 2 == 0 ? "gemm_a" : "gemm_b", 5 + i % 7});
  }
  return ops;
}

// The trace of DistinctGemms(count), written to a temporary file; returns its
// path. With ops_per_step > 0, ProfilerStep#s (s from 0) spans ops
// [s·ops_per_step, (s+1)·ops_per_step): from 1 µs before the first op's start
// to 1 µs before the next step's first op (each op's kernel ends 17 µs after
// its op starts, inside its step).
inline std::string WriteDistinctGemmTrace(int count, int ops_per_step = 0) {
  std::string json = R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","numSms":132}],)"
                     "\n\"traceEvents\":[\n";
  const std::vector<DistinctGemm> ops = DistinctGemms(count);
  for (int first = 0; ops_per_step > 0 && first < count; first += ops_per_step) {
    json += fmt::format(
        R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{},"dur":{}}},)"
        "\n",
        first / ops_per_step, 100 + 20 * first - 1, 20 * ops_per_step);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const int64_t ts = 100 + 20 * static_cast<int64_t>(i);
    const size_t correlation = i + 1;
    json += fmt::format(
        R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":10,)"
        R"("args":{{"Input Dims":{},"Input type":["c10::BFloat16","c10::BFloat16"]}}}},)"
        "\n",
        ts, ops[i].dims);
    json += fmt::format(
        R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":3,)"
        R"("args":{{"correlation":{}}}}},)"
        "\n",
        ts + 2, correlation);
    json += fmt::format(
        R"({{"ph":"X","cat":"kernel","name":"{}","pid":0,"tid":7,"ts":{},"dur":{},)"
        R"("args":{{"device":0,"stream":7,"correlation":{}}}}},)"
        "\n",
        ops[i].kernel, ts + 6, ops[i].dur_us, correlation);
  }
  json += R"({"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}}]})"
          "\n";
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("pypto_distinct_gemms_{}_{}_{}.json", ::getpid(), count, ops_per_step))
                               .string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "";
  std::fwrite(json.data(), 1, json.size(), f);
  std::fclose(f);
  return path;
}

}  // namespace pypto::testing
