// Kineto importer: real fixtures (figures checked against the raw JSON with a
// python3 one-off: gzip.open + json.load, counting events by ph/cat exactly as
// the importer maps them: cpu_op/Operator -> operator, cuda_runtime/Runtime ->
// runtime, kernel/Kernel with an nccl prefix -> communication, ...), and the
// pathologies of reference kineto-format.md §10 with small hand-written files.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "importers/detect.h"
#include "importers/kineto/kineto_importer.h"

namespace pypto {
namespace {

const std::string kFixtures = std::string(PYPTO_FIXTURES_DIR) + "/kineto/";
const std::string kData = std::string(PYPTO_TEST_DATA_DIR) + "/kineto/";

Profile Load(const std::string& path, const Importer* importer = KinetoImporter()) {
  Profile profile;
  Status status = importer->Import(path, {}, &profile);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return profile;
}

Status TryLoad(const std::string& path, Profile* profile) { return KinetoImporter()->Import(path, {}, profile); }

std::map<HostOpKind, int> HostKinds(const Profile& p) {
  std::map<HostOpKind, int> m;
  for (HostOpKind k : p.host_ops.kind) ++m[k];
  return m;
}
std::map<DeviceTaskKind, int> DeviceKinds(const Profile& p) {
  std::map<DeviceTaskKind, int> m;
  for (DeviceTaskKind k : p.device_tasks.kind) ++m[k];
  return m;
}
int FirstOf(const Profile& p, DeviceTaskKind kind) {
  for (size_t i = 0; i < p.device_tasks.size(); ++i)
    if (p.device_tasks.kind[i] == kind) return static_cast<int>(i);
  return -1;
}
uint64_t LossCount(const Profile& p, const std::string& reason) {
  auto it = p.data_loss.find(reason);
  return it == p.data_loss.end() ? 0 : it->second.count;
}
std::string LossWhere(const Profile& p, const std::string& reason) {
  auto it = p.data_loss.find(reason);
  return it == p.data_loss.end() ? "" : it->second.first_location;
}

std::string WriteTemp(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// ------------------------------------------------------------------ fixtures

TEST(KinetoFixtures, TbPluginTorch19Legacy) {
  Profile p = Load(kFixtures + "tb_plugin_resnet50_torch1.9_v100/worker0.1623143089861.pt.trace.json.gz");
  EXPECT_EQ(p.metadata["format_version"], "torch-1.8-1.10");
  EXPECT_EQ(p.metadata["clock"], "epoch");
  auto host = HostKinds(p);
  // 23,646 "Operator" events, of which ProfilerStep#5..#10 (6) mark steps: annotations, not operators.
  EXPECT_EQ(host[HostOpKind::kOperator], 23640);
  EXPECT_EQ(host[HostOpKind::kUserAnnotation], 6);
  EXPECT_EQ(host[HostOpKind::kRuntime], 11923);
  EXPECT_EQ(host[HostOpKind::kOther], 1);  // the "Trace" span
  auto dev = DeviceKinds(p);
  EXPECT_EQ(dev[DeviceTaskKind::kKernel], 8772);
  EXPECT_EQ(dev[DeviceTaskKind::kMemcpy], 12);
  EXPECT_EQ(dev[DeviceTaskKind::kMemset], 312);
  // "external id" (lower case) is read: every device task has one.
  EXPECT_EQ(p.metadata["device_tasks_without_external_id"], "0");
  // 12,840 'i' events: 12,838 [memory] (Bytes only) + Iteration Start + Record Window End.
  EXPECT_EQ(p.counters.size(), 12838u);
  ASSERT_EQ(p.devices.size(), 4u);
  EXPECT_EQ(p.Str(p.devices.rows[0].name), "Tesla V100-DGXS-32GB");
  EXPECT_EQ(p.devices.rows[0].kind, DeviceKind::kCuda);
  int kernel = FirstOf(p, DeviceTaskKind::kKernel);
  ASSERT_GE(kernel, 0);
  EXPECT_EQ(p.device_tasks.grid(kernel), (std::array<int32_t, 3>{50, 1, 1}));
  EXPECT_EQ(p.device_tasks.block(kernel), (std::array<int32_t, 3>{256, 1, 1}));
  int memcpy_row = FirstOf(p, DeviceTaskKind::kMemcpy);
  EXPECT_EQ(p.device_tasks.bytes[memcpy_row], 19267584);
  // GPU tid is the string "stream 7": stream id 7 on device 0.
  uint32_t track = p.device_tasks.track[kernel];
  EXPECT_EQ(p.Str(p.tracks.tid_token[track]), "stream 7");
  EXPECT_EQ(p.tracks.stream[track], 7);
  EXPECT_EQ(p.tracks.device[track], 0);
  // First event aten::empty at ts 1623142623460111 µs (int, epoch).
  EXPECT_EQ(p.Str(p.host_ops.name[0]), "aten::empty");
  EXPECT_EQ(p.host_ops.ts[0], 1623142623460111000);
  EXPECT_EQ(p.Str(p.host_ops.input_dims[0]), "[[],[],[],[],[],[]]");
  EXPECT_EQ(p.Str(p.host_ops.input_types[0]), R"(["GenericList","Int","","","Bool",""])");
  EXPECT_EQ(p.Str(p.tracks.process_name[0]), "python");
}

TEST(KinetoFixtures, HtaTraceDiffTorch112) {
  Profile p = Load(kFixtures + "hta_trace_diff_control_a100_2022/control.json.gz");
  EXPECT_EQ(p.metadata["format_version"], "torch-1.11-1.13");
  auto host = HostKinds(p);
  EXPECT_EQ(host[HostOpKind::kOperator], 40506);
  EXPECT_EQ(host[HostOpKind::kUserAnnotation], 288);
  EXPECT_EQ(host[HostOpKind::kRuntime], 24692);
  auto dev = DeviceKinds(p);
  EXPECT_EQ(dev[DeviceTaskKind::kKernel], 8508);
  EXPECT_EQ(dev[DeviceTaskKind::kCommunication], 60);  // ncclKernel_* kernels
  EXPECT_EQ(dev[DeviceTaskKind::kMemcpy], 228);
  EXPECT_EQ(dev[DeviceTaskKind::kMemset], 654);
  // async_cpu_to_gpu flows: 9,450 s + 24,692 f, counted, not stored.
  EXPECT_EQ(p.metadata["launch_flows_not_stored"], "34142");
  EXPECT_EQ(p.flows.size(), 0u);
  EXPECT_EQ(p.metadata["rank"], "3");
  EXPECT_EQ(p.metadata["world_size"], "8");
  EXPECT_EQ(p.metadata["backend"], "nccl");
  EXPECT_EQ(p.device_tasks.bytes[FirstOf(p, DeviceTaskKind::kMemcpy)], 12881920);
  int kernel = FirstOf(p, DeviceTaskKind::kKernel);
  EXPECT_EQ(p.device_tasks.grid(kernel), (std::array<int32_t, 3>{64, 1, 1}));
}

TEST(KinetoFixtures, HtaCriticalPathTorch21) {
  Profile p = Load(kFixtures + "hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz");
  EXPECT_EQ(p.metadata["format_version"], "torch-2.0-2.3");
  auto host = HostKinds(p);
  EXPECT_EQ(host[HostOpKind::kOperator], 359);
  EXPECT_EQ(host[HostOpKind::kRuntime], 331);
  EXPECT_EQ(host[HostOpKind::kUserAnnotation], 8);
  auto dev = DeviceKinds(p);
  EXPECT_EQ(dev[DeviceTaskKind::kKernel], 79);
  EXPECT_EQ(dev[DeviceTaskKind::kSync], 41);
  EXPECT_EQ(dev[DeviceTaskKind::kMemcpy], 16);
  EXPECT_EQ(dev[DeviceTaskKind::kMemset], 3);
  EXPECT_EQ(p.metadata["launch_flows_not_stored"], "470");  // 155 s + 315 f ac2g
  EXPECT_EQ(p.devices.size(), 8u);
  EXPECT_EQ(p.device_tasks.bytes[FirstOf(p, DeviceTaskKind::kMemcpy)], 92928);
  EXPECT_EQ(p.device_tasks.grid(FirstOf(p, DeviceTaskKind::kKernel)), (std::array<int32_t, 3>{864, 1, 1}));
  // Every kernel carries its launch correlation.
  for (size_t i = 0; i < p.device_tasks.size(); ++i)
    if (p.device_tasks.kind[i] == DeviceTaskKind::kKernel) EXPECT_NE(p.device_tasks.correlation[i], kNoId);
  // Device attributes: numSms of an A100 is 108.
  bool found = false;
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == OwnerKind::kDevice && p.attributes.owner(i) == 0 &&
        p.Str(p.attributes.key(i)) == "numSms") {
      EXPECT_EQ(p.attributes.number(i), 108);
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(KinetoFixtures, HtaNcclTorch24NsFloatAndBaseTimeAfterEvents) {
  Profile p = Load(kFixtures + "hta_nccl_2rank_a100_2024/nccl_data.json.gz");
  EXPECT_EQ(p.metadata["format_version"], "torch-2.4+");
  EXPECT_EQ(p.metadata["clock"], "epoch");
  auto host = HostKinds(p);
  EXPECT_EQ(host[HostOpKind::kOperator], 14346);
  EXPECT_EQ(host[HostOpKind::kRuntime], 8740);
  EXPECT_EQ(host[HostOpKind::kUserAnnotation], 42);
  auto dev = DeviceKinds(p);
  EXPECT_EQ(dev[DeviceTaskKind::kKernel], 2679);
  EXPECT_EQ(dev[DeviceTaskKind::kCommunication], 21);
  EXPECT_EQ(dev[DeviceTaskKind::kMemcpy], 960);
  EXPECT_EQ(dev[DeviceTaskKind::kMemset], 114);
  EXPECT_EQ(dev[DeviceTaskKind::kAnnotation], 30);
  // fwdbwd flows are kept: 543 s + 543 f.
  EXPECT_EQ(p.flows.size(), 1086u);
  EXPECT_EQ(p.Str(p.flows.category[0]), "fwdbwd");
  // baseTimeNanoseconds (written after traceEvents) is added: first event ts
  // "4458676522690.655" µs + 1711964646000000000 ns.
  EXPECT_EQ(p.host_ops.ts[0], 1711964646000000000 + 4458676522690655);
  EXPECT_EQ(p.metadata["base_time_ns"], "1711964646000000000");
  EXPECT_EQ(p.metadata["nccl_version"], "2.17.1");
  EXPECT_EQ(p.metadata["world_size"], "2");
  // NCCL kernel args become attributes of the device task.
  int nccl = FirstOf(p, DeviceTaskKind::kCommunication);
  ASSERT_GE(nccl, 0);
  std::map<std::string, std::string> attributes;
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == OwnerKind::kDeviceTask && p.attributes.owner(i) == static_cast<uint32_t>(nccl))
      attributes[std::string(p.Str(p.attributes.key(i)))] = p.AttributeText(i);
  EXPECT_TRUE(attributes.count("Collective name"));
  EXPECT_TRUE(attributes.count("In msg nelems"));
  EXPECT_TRUE(attributes.count("Group size"));
  EXPECT_TRUE(p.data_loss.empty());
}

TEST(KinetoFixtures, HtaCpuOnly) {
  Profile p = Load(kFixtures + "hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  EXPECT_EQ(p.device_tasks.size(), 0u);
  EXPECT_EQ(p.devices.size(), 0u);
  auto host = HostKinds(p);
  EXPECT_EQ(host[HostOpKind::kUserAnnotation], 11);
  EXPECT_EQ(host[HostOpKind::kOperator], 4);
  EXPECT_EQ(p.metadata["world_size"], "300");
  EXPECT_EQ(p.metadata["backend"], "gloo");
  // gloo:all_reduce at 1212075548353.304 µs + base 1719853884000000000 ns.
  EXPECT_EQ(p.Str(p.host_ops.name[0]), "gloo:all_reduce");
  EXPECT_EQ(p.host_ops.ts[0], 1719853884000000000 + 1212075548353304);
  EXPECT_EQ(p.Str(p.host_ops.input_dims[0]), "[[321271]]");
}

TEST(KinetoFixtures, TracelensH100Inference) {
  Profile p = Load(kFixtures + "tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  auto host = HostKinds(p);
  EXPECT_EQ(host[HostOpKind::kPython], 4262);
  EXPECT_EQ(host[HostOpKind::kOperator], 4186);
  EXPECT_EQ(host[HostOpKind::kRuntime], 1921);
  EXPECT_EQ(host[HostOpKind::kDriver], 1);
  auto dev = DeviceKinds(p);
  EXPECT_EQ(dev[DeviceTaskKind::kKernel], 1465);
  EXPECT_EQ(dev[DeviceTaskKind::kMemset], 241);
  EXPECT_EQ(dev[DeviceTaskKind::kAnnotation], 1);
  // 509 device tasks without External id (436 kernels launched before the window + memsets).
  EXPECT_EQ(p.metadata["device_tasks_without_external_id"], "509");
  // [memory] events: Bytes + Total Allocated + Total Reserved = 7,350 samples.
  EXPECT_EQ(p.counters.size(), 7350u);
  EXPECT_EQ(p.metadata["cuda_runtime_version"], "12040");
  EXPECT_EQ(p.Str(p.devices.rows[0].name), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.host_ops.ts[0], 1751410836000000000 + 1428625731896179);
  EXPECT_EQ(p.device_tasks.grid(FirstOf(p, DeviceTaskKind::kKernel)), (std::array<int32_t, 3>{17888, 1, 1}));
}

TEST(KinetoFixtures, TracelensMi300xRocm) {
  Profile p = Load(kFixtures + "tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz");
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices.rows[0].kind, DeviceKind::kRocm);
  EXPECT_EQ(p.Str(p.devices.rows[0].name), "AMD Instinct MI300X");
  auto dev = DeviceKinds(p);
  EXPECT_EQ(dev[DeviceTaskKind::kKernel], 555);
  EXPECT_EQ(dev[DeviceTaskKind::kMemcpy], 3);
  EXPECT_EQ(p.metadata["device_tasks_without_external_id"], "547");
  EXPECT_EQ(p.metadata["roctracer_version"], "4.1");
  // No M events at all: tracks have no names.
  for (size_t t = 0; t < p.tracks.size(); ++t) EXPECT_EQ(p.tracks.process_name[t], kEmptyStr);
  // ROCm launch config sits on the hipLaunchKernel runtime call as attributes.
  int kernel_attributes = 0;
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == OwnerKind::kHostOp && p.Str(p.attributes.key(i)) == "kernel") {
      EXPECT_EQ(p.host_ops.kind[p.attributes.owner(i)], HostOpKind::kRuntime);
      ++kernel_attributes;
    }
  EXPECT_GT(kernel_attributes, 0);
}

TEST(KinetoFixtures, TracelensMi300xEmptyDeviceName) {
  Profile p = Load(kFixtures + "tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz");
  ASSERT_EQ(p.devices.size(), 8u);
  EXPECT_EQ(p.devices.rows[0].kind, DeviceKind::kRocm);  // from roctracer_version / hip_* keys
  EXPECT_EQ(p.Str(p.devices.rows[0].name), "");
  EXPECT_EQ(DeviceKinds(p)[DeviceTaskKind::kKernel], 425);
  EXPECT_EQ(p.metadata["device_tasks_without_external_id"], "421");
}

TEST(KinetoFixtures, DetectAndLoadProfile) {
  auto profile = LoadProfile(kFixtures + "hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->metadata["format"], "kineto");
  // TraceLens puts a long "metadata" object first: still found by content.
  auto qwen = DetectFormat(kFixtures + "tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  ASSERT_TRUE(qwen.ok());
  EXPECT_EQ((*qwen)->name(), "kineto");
}

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

TEST(KinetoFixtures, GzipAndPlainGiveIdenticalProfiles) {
  std::string gz = kFixtures + "hta_nccl_2rank_a100_2024/nccl_data.json.gz";
  std::string plain = WriteTemp("nccl_plain.json", Gunzip(gz));
  Profile a = Load(gz);
  Profile b = Load(plain);
  EXPECT_EQ(a.host_ops.ts, b.host_ops.ts);
  EXPECT_EQ(a.host_ops.dur, b.host_ops.dur);
  EXPECT_EQ(a.host_ops.name, b.host_ops.name);
  EXPECT_EQ(a.host_ops.external_id, b.host_ops.external_id);
  EXPECT_EQ(a.device_tasks.ts, b.device_tasks.ts);
  EXPECT_EQ(a.device_tasks.correlation, b.device_tasks.correlation);
  EXPECT_EQ(a.flows.id, b.flows.id);
  EXPECT_TRUE(a.attributes == b.attributes);
  EXPECT_EQ(a.strings.size(), b.strings.size());
  EXPECT_EQ(a.metadata, b.metadata);
}

TEST(KinetoFixtures, EventsCrossingBufferEdges) {
  // The TB fixture is 35 MB uncompressed: read plain, 4 events straddle the
  // 8 MiB buffer edges and go through the headroom carry; counts must equal
  // the python figures and nothing may be lost.
  std::string plain = WriteTemp("tb_plain.json", Gunzip(kFixtures + "tb_plugin_resnet50_torch1.9_v100/worker0.1623143089861.pt.trace.json.gz"));
  Profile a = Load(plain);
  EXPECT_EQ(a.host_ops.size(), 35570u);
  EXPECT_EQ(a.device_tasks.size(), 9096u);
  EXPECT_TRUE(a.data_loss.empty());
}

// ------------------------------------------------------------------ pathologies

TEST(KinetoPathologies, StringPidsAndMetadataNames) {
  Profile p = Load(kData + "string_pids.json");
  ASSERT_EQ(p.tracks.size(), 3u);
  EXPECT_EQ(p.Str(p.tracks.pid_token[0]), "25738");
  EXPECT_EQ(p.Str(p.tracks.name[0]), "thread 25738 (python)");
  EXPECT_EQ(p.Str(p.tracks.process_name[0]), "python");
  EXPECT_EQ(p.Str(p.tracks.tid_token[1]), "stream 7");
  EXPECT_EQ(p.tracks.stream[1], 7);
  EXPECT_EQ(p.Str(p.tracks.process_name[1]), "GPU 0");
  EXPECT_EQ(p.Str(p.tracks.pid_token[2]), "Spans");
  EXPECT_EQ(p.Str(p.tracks.tid_token[2]), "");
  EXPECT_EQ(p.device_tasks.grid(0), (std::array<int32_t, 3>{2, 3, 4}));
}

TEST(KinetoPathologies, IdsAbove2To53AreExact) {
  Profile p = Load(kData + "big_ids.json");
  EXPECT_EQ(p.host_ops.external_id[0], 9007199254740993);
  EXPECT_EQ(p.host_ops.sequence_number[0], 9223372036854775807);
  // 2^64-1 does not fit int64: kept as its bit pattern.
  EXPECT_EQ(static_cast<uint64_t>(p.device_tasks.correlation[0]), 18446744073709551615ull);
  EXPECT_EQ(p.device_tasks.kind[0], DeviceTaskKind::kCommunication);
  ASSERT_EQ(p.flows.size(), 2u);
  EXPECT_EQ(p.flows.id[0], 1700000000000000001ull);
  EXPECT_EQ(p.flows.phase[1], 'f');
  bool comms = false;
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.Str(p.attributes.key(i)) == "Comms Id") {
      EXPECT_EQ(p.AttributeText(i), "12345678901234567890123");  // lexeme kept
      comms = true;
    }
  EXPECT_TRUE(comms);
}

TEST(KinetoPathologies, HexStringIdsAreIdsNotDamage) {
  // ROCm traces write "stream": "0x0": an id in hex, not data loss. A string
  // that is no number at all still counts as damage.
  const std::string path = WriteTemp("hex_ids.json", R"J({"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k0", "pid": 0, "tid": 0, "ts": 10, "dur": 5, "args": {"stream": "0x0", "correlation": 7}},
{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 1, "ts": 20, "dur": 5, "args": {"stream": "0x7F3a", "correlation": "0x8"}},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 2, "ts": 30, "dur": 5, "args": {"stream": "0xZZ", "correlation": 9}}
]})J");
  Profile p = Load(path);
  ASSERT_EQ(p.device_tasks.size(), 3u);
  EXPECT_EQ(p.tracks.stream[p.device_tasks.track[0]], 0);
  EXPECT_EQ(p.tracks.stream[p.device_tasks.track[1]], 0x7f3a);
  EXPECT_EQ(p.device_tasks.correlation[1], 8);
  auto loss = p.data_loss.find("id that is not an integer ignored");
  ASSERT_NE(loss, p.data_loss.end());
  EXPECT_EQ(loss->second.count, 1u);  // only "0xZZ"
}

TEST(KinetoPathologies, InvalidUtf8IsReplacedAndCounted) {
  Profile p = Load(kData + "invalid_utf8.json");
  ASSERT_EQ(p.host_ops.size(), 2u);
  EXPECT_EQ(p.Str(p.host_ops.name[0]), "aten::\xEF\xBF\xBD\xEF\xBF\xBDop");
  EXPECT_EQ(LossCount(p, "invalid UTF-8 replaced with U+FFFD"), 2u);
  EXPECT_EQ(LossWhere(p, "invalid UTF-8 replaced with U+FFFD"), "invalid_utf8.json: byte 20");
}

TEST(KinetoPathologies, ControlCharsAndUnescapedQuotesSkipOneEventEach) {
  Profile p = Load(kData + "control_chars.json");
  ASSERT_EQ(p.host_ops.size(), 1u);
  EXPECT_EQ(p.Str(p.host_ops.name[0]), "good");
  const std::string reason = "malformed event skipped (control character or unescaped quote in a string)";
  EXPECT_EQ(LossCount(p, reason), 2u);
  EXPECT_EQ(LossWhere(p, reason), "control_chars.json: byte 20");
}

TEST(KinetoPathologies, BareNaIsAString) {
  Profile p = Load(kData + "bare_na.json");
  ASSERT_EQ(p.host_ops.size(), 1u);
  EXPECT_EQ(p.host_ops.external_id[0], kNoId);
  EXPECT_EQ(LossCount(p, "bare N/A value read as the string \"N/A\""), 2u);
}

TEST(KinetoPathologies, DuplicateKeysLastWins) {
  Profile p = Load(kData + "duplicate_keys.json");
  ASSERT_EQ(p.host_ops.size(), 1u);
  EXPECT_EQ(p.Str(p.host_ops.name[0]), "second");
  EXPECT_EQ(p.host_ops.ts[0], 2000);
  EXPECT_EQ(LossCount(p, "duplicate key in an event (last value wins)"), 2u);
}

TEST(KinetoPathologies, NegativeAndOverflowingTimes) {
  Profile p = Load(kData + "bad_times.json");
  ASSERT_EQ(p.host_ops.size(), 3u);  // "huge" dropped
  EXPECT_EQ(p.host_ops.ts[0], 0);    // -5 µs clamped
  EXPECT_EQ(p.host_ops.dur[1], 0);   // dur -3 clamped
  EXPECT_EQ(p.host_ops.ts[2], 8500); // ts as a JSON string "8.5"
  EXPECT_EQ(p.host_ops.dur[2], 1000);
  EXPECT_EQ(LossCount(p, "negative ts clamped to 0"), 1u);
  EXPECT_EQ(LossCount(p, "negative dur clamped to 0"), 1u);
  EXPECT_EQ(LossCount(p, "ts overflows int64 nanoseconds; event dropped"), 1u);
  EXPECT_EQ(LossWhere(p, "ts overflows int64 nanoseconds; event dropped"), "bad_times.json: byte 112");
}

TEST(KinetoPathologies, TruncatedKeepsEvents) {
  Profile p = Load(kData + "truncated.json");
  EXPECT_EQ(p.host_ops.size(), 2u);
  const std::string reason = "truncated (input ends before the JSON closes; events so far kept)";
  EXPECT_EQ(LossCount(p, reason), 1u);
  EXPECT_EQ(LossWhere(p, reason), "truncated.json: byte 240");  // file size
}

TEST(KinetoPathologies, BogusRecordWindowEndIgnored) {
  Profile p = Load(kData + "bogus_window_end.json");
  EXPECT_EQ(p.host_ops.size(), 1u);
  EXPECT_EQ(p.metadata.count("record_window_end_ns"), 0u);
  EXPECT_EQ(LossCount(p, "bogus Record Window End (more than 24 h after the trace start) ignored"), 1u);
}

TEST(KinetoPathologies, UnknownPhasesSkippedAndCounted) {
  Profile p = Load(kData + "unknown_phases.json");
  EXPECT_EQ(p.host_ops.size(), 1u);
  for (char ph : std::string("BEbet"))
    EXPECT_EQ(LossCount(p, std::string("unsupported phase '") + ph + "' skipped"), 1u) << ph;
}

TEST(KinetoPathologies, BaseTimeAfterEventsIsApplied) {
  Profile p = Load(kData + "base_after_events.json");
  EXPECT_EQ(p.host_ops.ts[0], 1700000000000000000 + 1000500);
  EXPECT_EQ(p.host_ops.dur[0], 2250);
  EXPECT_EQ(p.device_tasks.ts[0], 1700000000000000000 + 1001001);
  EXPECT_EQ(p.device_tasks.bytes[0], 4096);
  EXPECT_EQ(p.metadata["clock"], "epoch");
  EXPECT_EQ(p.metadata["format_version"], "torch-2.4+");
}

TEST(KinetoPathologies, CountersAndMemory) {
  Profile p = Load(kData + "counters.json");
  std::map<std::string, double> values;
  for (const CounterRow& row : p.counters.Rows()) values[std::string(p.Str(row.name))] = row.value;
  EXPECT_EQ(values["hardware_counters sm_active"], 0.5);
  EXPECT_EQ(values["hardware_counters dram_bw"], 12);
  EXPECT_EQ(values["Total Allocated"], 2048);
  EXPECT_EQ(values["Total Reserved"], 4096);
  EXPECT_EQ(values["Allocation Bytes"], 512);
}

TEST(KinetoPathologies, LegacyExport) {
  auto importer = DetectFormat(kData + "legacy_export.json");
  ASSERT_TRUE(importer.ok());
  EXPECT_EQ((*importer)->name(), "kineto-legacy");
  Profile p = Load(kData + "legacy_export.json", KinetoLegacyImporter());
  EXPECT_EQ(p.metadata["format"], "kineto-legacy");
  EXPECT_EQ(p.metadata["clock"], "relative");
  ASSERT_EQ(p.host_ops.size(), 2u);  // the event with unescaped quotes is skipped
  EXPECT_EQ(p.Str(p.host_ops.name[1]), "aten::mul");
  EXPECT_EQ(p.host_ops.kind[0], HostOpKind::kOperator);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("shapes unavailable in legacy export"), std::string::npos);
  EXPECT_EQ(p.data_loss.size(), 1u);
  EXPECT_EQ(p.data_loss.begin()->second.first_location, "legacy_export.json: byte 100");
}

TEST(KinetoPathologies, EmptyAndWhitespaceFiles) {
  Profile p;
  Status s = TryLoad(WriteTemp("empty.json", ""), &p);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "empty.json: file is empty");
  s = TryLoad(WriteTemp("blank.json", "  \n\t "), &p);
  EXPECT_EQ(s.message(), "blank.json: file holds only whitespace");
}

TEST(KinetoPathologies, JsonButNotATrace) {
  Profile p;
  Status s = TryLoad(kData + "not_a_trace.json", &p);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "not_a_trace.json: JSON but not a trace (no \"traceEvents\" array in the top-level object)");
  Profile q;
  s = TryLoad(kData + "array_not_a_trace.json", &q);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "array_not_a_trace.json: JSON array but not a trace (no event objects)");
  Profile r;
  s = TryLoad(WriteTemp("text.json", "hello"), &r);
  EXPECT_EQ(s.message(), "text.json: byte 0: not a JSON trace (expected '{' or '[' as the first character)");
}

TEST(KinetoPathologies, DeepNestingFailsFastWithoutStackOverflow) {
  std::string deep(1000000, '[');
  std::string path = WriteTemp("deep.json", deep);
  Profile p;
  auto start = std::chrono::steady_clock::now();
  Status s = TryLoad(path, &p);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  // Root '[' then 256 nested arrays are allowed; the 257th (byte 257) is refused.
  EXPECT_EQ(s.message(), "deep.json: byte 257: JSON nested deeper than 256 levels (nesting limit)");
  EXPECT_LT(seconds, 0.5);
  // Same inside an event's args.
  std::string in_event = "{\"traceEvents\": [{\"ph\": \"X\", \"args\": " + std::string(100000, '[');
  Profile q;
  s = TryLoad(WriteTemp("deep_event.json", in_event), &q);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_NE(s.message().find("deep_event.json: byte "), std::string::npos);
}

TEST(KinetoPathologies, EventLargerThanLimitIsAnError) {
  std::string big = "{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"" + std::string(17u << 20, 'a') + "\"}]}";
  Profile p;
  Status s = TryLoad(WriteTemp("big_event.json", big), &p);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(s.message(), "big_event.json: byte 18: event or value larger than 16777216 bytes (event size limit)");
}

TEST(KinetoPathologies, Cancel) {
  std::atomic<bool> cancel{true};
  ImportOptions options;
  options.cancel = &cancel;
  Profile p;
  Status s = KinetoImporter()->Import(kData + "string_pids.json", options, &p);
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
}

TEST(KinetoSniff, ClaimsKinetoNotAscend) {
  auto sniff = [](const Importer* importer, std::string_view prefix) {
    return importer->Sniff(SniffInput{"x.json", io::PathKind::kFile, prefix});
  };
  EXPECT_EQ(sniff(KinetoImporter(), "\n{\n  \"schemaVersion\": 1,"), 100);
  EXPECT_EQ(sniff(KinetoImporter(), R"([{"ph": "X", "cat": "cpu_op", "pid": 1)"), 60);
  // Ascend trace_view.json: string ts, CANN process names.
  EXPECT_EQ(sniff(KinetoImporter(), R"([{"name": "process_name", "pid": 2, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}}, {"ph": "X", "ts": "1700000000000.123"})"), 0);
  EXPECT_EQ(sniff(KinetoImporter(), R"([{"ph": "X", "name": "MatMul", "args": {"Task Type": "AI_CORE", "Stream Id": 2}}])"), 0);
  EXPECT_EQ(sniff(KinetoImporter(), R"([{"name": "aten::add", "ph": "X", "ts": 5, "pid": "CPU functions"}])"), 0);
  EXPECT_EQ(sniff(KinetoLegacyImporter(), R"([{"name": "aten::add", "ph": "X", "ts": 5, "pid": "CPU functions"}])"), 100);
  EXPECT_EQ(sniff(KinetoImporter(), "col1,col2\n"), 0);
}

}  // namespace
}  // namespace pypto
