#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <cmath>
#include <string>

#include "unit/parse_threads_env.h"
#include "graph/call_graph.h"
#include "importers/common/ascend_vocabulary.h"
#include "importers/ascend_trace_view/ascend_trace_view.h"
#include "importers/detect.h"

namespace pypto {
namespace {

const std::string kFixture = std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_trace_view_2024/trace_view.json";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/pypto_ascend_tv_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& data) const {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }

 private:
  std::string dir_;
};

size_t CountTracksOf(const Profile& p, std::string_view process) {
  size_t n = 0;
  for (size_t t = 0; t < p.tracks.size(); ++t) n += p.Str(p.tracks.process_name[t]) == process;
  return n;
}

bool HasLoss(const Profile& p, std::string_view reason, std::string_view location_part) {
  auto it = p.data_loss.find(std::string(reason));
  return it != p.data_loss.end() && it->second.first_location.find(location_part) != std::string::npos;
}

// ---------------------------------------------------------------- the 2024 fixture
// Expected figures checked with python3 (json + decimal) on the fixture:
//  - 3670 events: 2212 X, 713 s, 713 f, 32 M (SOURCES.md says 3670 / 2212 X);
//  - X per process: Python 1007 (cpu_op 711, enqueue 148, dequeue 148; one
//    ProfilerStep#), CANN 382, Ascend Hardware 276, Overlap Analysis 547;
//  - flow events: HostToDevice 274+274, async_npu 274+274, async_task_queue 148+148, fwdbwd 17+17;
//  - hardware tasks: all on Stream 3, sum of dur rounded to ns = 1790457 ns;
//    Task Type: 274 "Other", 2 "AI_CPU";
//  - binding each flow end to the innermost enclosing X on its thread:
//    HostToDevice links 146 distinct CANN events to 274 distinct tasks,
//    async_npu links 146 distinct cpu_ops to the same 274 tasks;
//  - largest async_npu id 1704161511434172701 (> 2^53, exact).
TEST(AscendTraceViewTest, LoadsFixtureWithExpectedCounts) {
  StatusOr<Profile> loaded = LoadProfile(kFixture);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Profile& p = *loaded;
  EXPECT_EQ(p.metadata.at("format"), "ascend-trace-view");
  EXPECT_EQ(p.TotalDataLoss(), 0u);

  std::map<HostOpKind, size_t> host_kinds;
  std::map<std::string, size_t> host_categories;
  for (size_t i = 0; i < p.host_ops.size(); ++i) {
    ++host_kinds[p.host_ops.kind[i]];
    ++host_categories[std::string(p.Str(p.host_ops.category[i]))];
  }
  EXPECT_EQ(p.host_ops.size(), 1007u + 382u);
  EXPECT_EQ(host_kinds[HostOpKind::kOperator], 710u);
  EXPECT_EQ(host_kinds[HostOpKind::kUserAnnotation], 1u);  // ProfilerStep#
  EXPECT_EQ(host_kinds[HostOpKind::kRuntime], 382u);        // CANN AscendCL@…
  EXPECT_EQ(host_kinds[HostOpKind::kOther], 296u);          // Enqueue + Dequeue@…
  EXPECT_EQ(host_categories["AscendCL"], 382u);
  EXPECT_EQ(host_categories["enqueue"], 148u);

  ASSERT_EQ(p.device_tasks.size(), 276u);
  TimeNs total = 0;
  size_t ai_cpu = 0;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) {
    total += p.device_tasks.dur[i];
    EXPECT_EQ(p.tracks.stream[p.device_tasks.track[i]], 3);
    EXPECT_EQ(p.tracks.device[p.device_tasks.track[i]], 0);  // pid 800 = "8" sort index + "00" device
    EXPECT_EQ(p.device_tasks.kind[i], DeviceTaskKind::kKernel);
    ai_cpu += p.Str(p.device_tasks.core_type[i]) == "AI_CPU";
  }
  EXPECT_EQ(total, 1790457);
  EXPECT_EQ(ai_cpu, 2u);
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices.rows[0].kind, DeviceKind::kNpu);

  // First event: "ts": "1704161511420306.491", "dur": 13.08 -> exact ns.
  EXPECT_EQ(p.host_ops.ts[0], 1704161511420306491);
  EXPECT_EQ(p.host_ops.dur[0], 13080);
  EXPECT_EQ(p.Str(p.host_ops.name[0]), "aten::empty");
  // First hardware task: aclnnInplaceZero_ZerosLikeAiCore_ZerosLike at "1704161511422904.204".
  EXPECT_EQ(p.device_tasks.ts[0], 1704161511422904204);

  std::map<std::string, size_t> flows;
  bool big_id = false;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    ++flows[std::string(p.Str(p.flows.category[i]))];
    big_id = big_id || p.flows.id[i] == 1704161511434172701ull;
  }
  EXPECT_EQ(flows["HostToDevice"], 548u);
  EXPECT_EQ(flows["async_npu"], 548u);
  EXPECT_EQ(flows["async_task_queue"], 296u);
  EXPECT_EQ(flows["fwdbwd"], 34u);
  EXPECT_TRUE(big_id) << "flow id above 2^53 must be kept exactly";

  // Links: correlation (CANN -> task, HostToDevice) and external id (op -> task, async_npu).
  // 94 of the 274 HostToDevice flows start in a runtime slice that begins
  // 4-17 µs after the task it launches (counted from the raw events: the
  // slice enclosing the flow's "s" on the dequeue thread vs the task's ts,
  // more than 1 µs apart): host and device clocks skewed. Those tasks are
  // linked to the operator that queued them (async_npu) instead, so every
  // task is linked and no launcher starts after its task.
  EXPECT_EQ(p.metadata.at("ascend_trace_view.host_to_device_flows_back_in_time"), "94");
  EXPECT_EQ(p.metadata.at("ascend_trace_view.host_to_device_links"), "180");
  size_t tasks_with_corr = 0, tasks_with_ext = 0;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) {
    tasks_with_corr += p.device_tasks.correlation[i] != kNoId;
    tasks_with_ext += p.device_tasks.external_id[i] != kNoId;
  }
  EXPECT_EQ(tasks_with_corr, 274u);
  EXPECT_EQ(tasks_with_ext, 274u);
  size_t ops_with_ext = 0;
  for (size_t i = 0; i < p.host_ops.size(); ++i) {
    if (p.host_ops.correlation[i] != kNoId) {
      EXPECT_TRUE(p.host_ops.kind[i] == HostOpKind::kRuntime || p.host_ops.kind[i] == HostOpKind::kOperator);
    }
    ops_with_ext += p.host_ops.external_id[i] != kNoId;
  }
  EXPECT_EQ(ops_with_ext, 146u);
  {
    StatusOr<Profile> again = LoadProfile(kFixture);
    ASSERT_TRUE(again.ok());
    Profile& copy = *again;
    auto graph = OperatorCallGraph::Build(copy);
    ASSERT_TRUE(graph.ok());
    size_t launched = 0;
    for (size_t t = 0; t < copy.device_tasks.size(); ++t) {
      const int32_t launcher = copy.device_tasks.launcher[t];
      if (launcher < 0) continue;
      ++launched;
      EXPECT_LE(copy.host_ops.ts[launcher], copy.device_tasks.ts[t] + 1000) << "task " << t;
    }
    // The 94 others have no runtime launcher: they hang off their operator
    // by the async_npu external id, with no launch edge back in time.
    EXPECT_EQ(launched, 180u);
  }
  EXPECT_EQ(p.metadata.at("ascend_trace_view.overlap_analysis_intervals_skipped"), "547");

  // CANN threads share the Python process's thread tracks: tids 437675, 439228,
  // 439084 (both) + 439085 (CANN only) -> 4 host tracks, 1 device track.
  EXPECT_EQ(CountTracksOf(p, "Python"), 4u);
  EXPECT_EQ(CountTracksOf(p, "Ascend Hardware"), 1u);
}

TEST(AscendTraceViewTest, SnifferClaimsAscendArraysOnly) {
  const Importer* imp = AscendTraceViewImporter();
  std::string prefix = ReadFile(kFixture).substr(0, 4096);
  EXPECT_GT(imp->Sniff({kFixture, io::PathKind::kFile, prefix}), 50);
  std::string kineto = R"({"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1.5}]})";
  EXPECT_EQ(imp->Sniff({"t.json", io::PathKind::kFile, kineto}), 0);
  std::string legacy = R"([{"name": "aten::mm", "ph": "X", "ts": 12.5, "dur": 3, "pid": "CPU functions", "tid": 0}])";
  EXPECT_EQ(imp->Sniff({"t.json", io::PathKind::kFile, legacy}), 0);
}

// ---------------------------------------------------------------- synthetic msprof-style timeline
TEST(AscendTraceViewTest, ReadsCurrentPidEncodingHcclCountersAndLinks) {
  // pid = (pid << 10) | (sort_index << 5) | device: 1000 -> Ascend Hardware sort 14, device 3
  // = (1000 << 10) | (14 << 5) | 3 = 1024451; HCCL sort 16, device 3 = 1024515.
  std::string json = R"J([
{"name":"process_name","pid":1024451,"tid":0,"ph":"M","args":{"name":"Ascend Hardware"}},
{"name":"process_sort_index","pid":1024451,"tid":0,"ph":"M","args":{"sort_index":14}},
{"name":"process_name","pid":1024515,"tid":0,"ph":"M","args":{"name":"HCCL"}},
{"name":"process_sort_index","pid":1024515,"tid":0,"ph":"M","args":{"sort_index":16}},
{"name":"thread_name","pid":1024515,"tid":7,"ph":"M","args":{"name":"Group hccl_world Communication"}},
{"name":"thread_name","pid":1024515,"tid":8,"ph":"M","args":{"name":"Plane 0"}},
{"name":"process_name","pid":1024232,"tid":0,"ph":"M","args":{"name":"CANN"}},
{"name":"process_name","pid":1024480,"tid":0,"ph":"M","args":{"name":"AI Core Freq"}},
{"name":"Node@launch","pid":1024232,"tid":55,"ts":"1736408883688100.000","dur":20.5,"ph":"X","args":{"Thread Id":55,"Mode":"ACL_NN","level":"node","id":"launch","item_id":"MatMul","connection_id":42}},
{"name":"HostToDevice180388626431","ph":"s","cat":"HostToDevice","id":"180388626431","pid":1024232,"tid":55,"ts":"1736408883688105.000"},
{"name":"MatMulV2","pid":1024451,"tid":2,"ts":"1736408883688177.930","dur":1.25,"ph":"X","args":{"Model Id":4294967295,"Task Type":"AI_CORE","Physic Stream Id":2,"Task Id":10,"Batch Id":0,"Subtask Id":4294967295,"connection_id":42}},
{"name":"HostToDevice180388626431","ph":"f","cat":"HostToDevice","id":"180388626431","pid":1024451,"tid":2,"ts":"1736408883688177.930","bp":"e"},
{"name":"MemcpyAsync","pid":1024451,"tid":2,"ts":"1736408883688180.000","dur":2,"ph":"X","args":{"Task Type":"MEMCPY_ASYNC","Physic Stream Id":2,"size(B)":4096,"operation":"D2D"}},
{"name":"hcom_allReduce__586_0_1","pid":1024515,"tid":7,"ts":"1736408883688200.000","dur":50,"ph":"X","args":{"rank_size":8,"connection_id":43,"alg_type":"HD-MESH"}},
{"name":"Notify_Wait","pid":1024515,"tid":8,"ts":"1736408883688201.000","dur":3,"ph":"X","args":{"task type":"Notify Wait","size(Byte)":0,"notify_id":18446744073709551615}},
{"name":"AI Core Freq","pid":1024480,"tid":0,"ts":"1736408883688000.000","ph":"C","args":{"MHz":1800}},
{"name":"mark","pid":1024232,"tid":55,"ts":"1736408883688000.000","ph":"i"}
])J";
  TempDir dir;
  std::string path = dir.Write("msprof_20250109152801.json", json);
  StatusOr<Profile> loaded = LoadProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Profile& p = *loaded;
  ASSERT_EQ(p.device_tasks.size(), 4u);
  EXPECT_EQ(p.device_tasks.kind[0], DeviceTaskKind::kKernel);
  EXPECT_EQ(p.Str(p.device_tasks.core_type[0]), "AI_CORE");
  EXPECT_EQ(p.tracks.device[p.device_tasks.track[0]], 3);
  EXPECT_EQ(p.tracks.stream[p.device_tasks.track[0]], 2);
  EXPECT_EQ(p.device_tasks.kind[1], DeviceTaskKind::kMemcpy);
  EXPECT_EQ(p.device_tasks.bytes[1], 4096);
  EXPECT_EQ(p.device_tasks.kind[2], DeviceTaskKind::kCommunication);
  EXPECT_EQ(p.Str(p.device_tasks.category[2]), "communication_op");
  EXPECT_EQ(p.tracks.device[p.device_tasks.track[2]], 3);
  EXPECT_EQ(p.Str(p.device_tasks.category[3]), "Notify Wait");
  // CANN launch and the kernel share the HostToDevice flow id as correlation.
  ASSERT_EQ(p.host_ops.size(), 1u);
  EXPECT_EQ(p.host_ops.kind[0], HostOpKind::kRuntime);
  EXPECT_EQ(p.Str(p.host_ops.category[0]), "Node");
  EXPECT_EQ(p.host_ops.correlation[0], 180388626431);
  EXPECT_EQ(p.device_tasks.correlation[0], 180388626431);
  EXPECT_EQ(p.device_tasks.correlation[1], kNoId);
  // Counter.
  ASSERT_EQ(p.counters.size(), 1u);
  const CounterRow first = p.counters.Rows().at(0);
  EXPECT_EQ(p.Str(first.name), "AI Core Freq/MHz");
  EXPECT_EQ(first.value, 1800.0);
  EXPECT_EQ(first.ts, 1736408883688000000);
  // Instant event: counted, not silently dropped.
  EXPECT_EQ(p.data_loss.count("unsupported event phase 'i' (skipped)"), 1u);
  // Notify id 2^64-1 kept as text.
  bool notify_text = false;
  for (size_t a = 0; a < p.attributes.size(); ++a)
    notify_text = notify_text || p.AttributeText(a) == "18446744073709551615";
  EXPECT_TRUE(notify_text);
}

TEST(AscendTraceViewTest, Level1HcclPlaneTasksDuplicatingHardwareTasksCountOnce) {
  // A Level1 timeline writes each HCCL sub-task under Ascend Hardware (stream
  // 8 of device 3, "Notify Wait") and again under HCCL's "Plane 0"
  // ("Notify_Wait", with ranks and size). Hand-made, the shape of the real
  // case: step [0, 100] µs; hcom_allReduce [10, 90] on the Group thread;
  // sub-tasks Notify Wait [10, 60] and SDMA [60, 85] on both processes; one
  // Plane task (RDMA [85, 89]) with no Hardware twin; an AI_CORE kernel
  // [90, 100] (names written in a different case / separator on purpose).
  // Counted once: the device has 5 tasks (op, 2 Hardware sub-tasks, the RDMA
  // Plane task, the kernel); communication task time 80 + 50 + 25 + 4 = 159 µs
  // (the op and its sub-tasks overlap, as on DB exports), its busy union 80 µs
  // of the 100 µs step. Before, the two twins added 75 µs more and the busy
  // union did not change: only the count and the sum show the duplicate.
  std::string json = R"J([
{"name":"process_name","pid":1024451,"tid":0,"ph":"M","args":{"name":"Ascend Hardware"}},
{"name":"process_sort_index","pid":1024451,"tid":0,"ph":"M","args":{"sort_index":14}},
{"name":"process_name","pid":1024515,"tid":0,"ph":"M","args":{"name":"HCCL"}},
{"name":"process_sort_index","pid":1024515,"tid":0,"ph":"M","args":{"sort_index":16}},
{"name":"thread_name","pid":1024515,"tid":7,"ph":"M","args":{"name":"Group hccl_world Communication"}},
{"name":"thread_name","pid":1024515,"tid":8,"ph":"M","args":{"name":"Plane 0"}},
{"name":"Notify_Wait","pid":1024515,"tid":8,"ts":"1000010.000","dur":50,"ph":"X","args":{"task type":"Notify Wait","src rank":0,"dst rank":1,"size(Byte)":0}},
{"name":"Memcpy","pid":1024515,"tid":8,"ts":"1000060.000","dur":25,"ph":"X","args":{"task type":"SDMA","src rank":0,"dst rank":1,"size(Byte)":1048576}},
{"name":"RDMASend","pid":1024515,"tid":8,"ts":"1000085.000","dur":4,"ph":"X","args":{"task type":"RDMA","size(Byte)":64}},
{"name":"hcom_allReduce__586_0_1","pid":1024515,"tid":7,"ts":"1000010.000","dur":80,"ph":"X","args":{"rank_size":2}},
{"name":"Notify Wait","pid":1024451,"tid":8,"ts":"1000010.000","dur":50,"ph":"X","args":{"Task Type":"Notify Wait","Physic Stream Id":8}},
{"name":"SDMA","pid":1024451,"tid":8,"ts":"1000060.000","dur":25,"ph":"X","args":{"Task Type":"SDMA","Physic Stream Id":8}},
{"name":"MatMulV2","pid":1024451,"tid":2,"ts":"1000090.000","dur":10,"ph":"X","args":{"Task Type":"AI_CORE","Physic Stream Id":2}}
])J";
  TempDir dir;
  std::string path = dir.Write("trace_view.json", json);
  StatusOr<Profile> loaded = LoadProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Profile& p = *loaded;
  ASSERT_EQ(p.device_tasks.size(), 5u);
  TimeNs communication = 0;
  size_t communication_tasks = 0;
  for (size_t t = 0; t < p.device_tasks.size(); ++t) {
    if (p.device_tasks.kind[t] != DeviceTaskKind::kCommunication) continue;
    communication += p.device_tasks.dur[t];
    ++communication_tasks;
    EXPECT_EQ(p.tracks.device[p.device_tasks.track[t]], 3);
  }
  EXPECT_EQ(communication_tasks, 4u);
  EXPECT_EQ(communication, 159000);
  EXPECT_EQ(p.metadata.at("ascend_trace_view.hccl_plane_tasks_duplicating_hardware"), "2");
  // The twin's size and ranks moved to the Hardware SDMA task.
  for (size_t t = 0; t < p.device_tasks.size(); ++t)
    if (p.Str(p.device_tasks.name[t]) == "SDMA") EXPECT_EQ(p.device_tasks.bytes[t], 1048576);
  bool ranks_kept = false;
  for (size_t a = 0; a < p.attributes.size(); ++a)
    ranks_kept = ranks_kept || (p.Str(p.attributes.key(a)) == "dst rank" &&
                                p.Str(p.device_tasks.name[p.attributes.owner(a)]) == "Notify Wait");
  EXPECT_TRUE(ranks_kept);
  // Every task's arguments, read off the events above: a Plane task's go to
  // its Hardware twin, or to the task it becomes (RDMASend); "Task Type",
  // "Physic Stream Id" and "size(Byte)" are columns, not arguments. The
  // Hardware tasks have no argument of their own left.
  std::map<std::string, std::vector<std::string>> arguments;
  p.attributes.ForEachRowOf(OwnerKind::kDeviceTask, [&](size_t a, uint32_t task) {
    const double number = p.attributes.number(a);
    arguments[std::string(p.Str(p.device_tasks.name[task]))].push_back(
        std::string(p.Str(p.attributes.key(a))) + "=" +
        (std::isnan(number) ? std::string(p.Str(p.attributes.text(a))) : std::to_string(static_cast<int>(number))));
  });
  const std::map<std::string, std::vector<std::string>> expected = {
      {"Notify Wait", {"task type=Notify Wait", "src rank=0", "dst rank=1"}},
      {"SDMA", {"task type=SDMA", "src rank=0", "dst rank=1"}},
      {"RDMASend", {"task type=RDMA"}},
      {"hcom_allReduce__586_0_1", {"rank_size=2"}},
  };
  EXPECT_EQ(arguments, expected);
  // The busy union of the device: [10, 100] µs = 90 µs; communication's own
  // union [10, 90] = 80 µs, under the 90 µs window.
  auto graph = OperatorCallGraph::Build(*loaded);
  ASSERT_TRUE(graph.ok());
  std::vector<BusyTime> busy = graph->DeviceBusyTimes();
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].busy_ns, 90000);
}

// ---------------------------------------------------------------- bad input
TEST(AscendTraceViewTest, TruncatedWithoutClosingBracketKeepsEvents) {
  std::string full = ReadFile(kFixture);
  ASSERT_EQ(full.back(), ']');
  TempDir dir;
  std::string path = dir.Write("trace_view.json", full.substr(0, full.size() - 1));
  StatusOr<Profile> loaded = LoadProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->device_tasks.size(), 276u);
  // The shared JSON event reader counts the cut at the last byte it read.
  EXPECT_TRUE(HasLoss(*loaded, "truncated (input ends before the JSON closes; events so far kept)",
                      "trace_view.json: byte " + std::to_string(full.size() - 1)));
}

TEST(AscendTraceViewTest, TruncatedMidEventKeepsCompleteEvents) {
  std::string full = ReadFile(kFixture);
  // Cut in the middle of the 3rd event: the first two cpu_ops survive.
  size_t second = full.find("{\"ph\"", 2);  // the first event starts at byte 1
  size_t third = full.find("{\"ph\"", second + 1);
  size_t cut = third + 40;
  TempDir dir;
  std::string path = dir.Write("trace_view.json", full.substr(0, cut));
  StatusOr<Profile> loaded = LoadProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->host_ops.size(), 2u);
  EXPECT_TRUE(HasLoss(*loaded, "truncated (input ends before the JSON closes; events so far kept)",
                      "trace_view.json: byte " + std::to_string(cut)));
}

TEST(AscendTraceViewTest, MalformedEventsAreCountedAndRepaired) {
  std::string json = R"([{"ph":"X","name":"aten::mm","pid":1,"tid":1,"ts":"10.0","dur":1,"cat":"cpu_op","args":{"Sequence number":N/A}},
{"ph":"X","name":"bad" "pid":1},
{"ph":"X","name":"aten::add","pid":1,"tid":1,"ts":"20.0","dur":1,"cat":"cpu_op"}])";
  TempDir dir;
  std::string path = dir.Write("tv.json", json);
  Profile p;
  Status s = ImportAscendTraceView(path, {}, &p);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(p.host_ops.size(), 2u);
  // The bare N/A of the first event is repaired; the second event (a
  // missing comma inside it) is skipped where it starts.
  ASSERT_EQ(p.data_loss.count("bare N/A value read as the string \"N/A\""), 1u);
  size_t second = json.find("{\"ph\":\"X\",\"name\":\"bad\"");
  bool skipped = false;
  for (const auto& [reason, loss] : p.data_loss)
    if (reason.starts_with("malformed event skipped")) {
      skipped = true;
      EXPECT_NE(loss.first_location.find("tv.json: byte " + std::to_string(second)), std::string::npos)
          << loss.first_location;
    }
  EXPECT_TRUE(skipped);
}

TEST(AscendTraceViewTest, RejectsNonArrayWithClearError) {
  TempDir dir;
  std::string path = dir.Write("x.json", "  {\"traceEvents\": []}");
  Profile p;
  Status s = ImportAscendTraceView(path, {}, &p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("x.json: byte 2: expected a JSON array"), std::string::npos) << s.message();
  std::string empty = dir.Write("e.json", "   ");
  Status e = ImportAscendTraceView(empty, {}, &p);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message().find("e.json"), std::string::npos);
}

TEST(AscendTraceViewTest, SurvivesGarbageWithoutCrashing) {
  TempDir dir;
  const char* inputs[] = {"[", "[{", "[{\"ph\":", "[}]", "[1,2,3]", "[{\"ph\":\"X\"}]", "[{}]]]", "[\"\\\"{\"]",
                          "[{\"ph\":\"s\",\"id\":\"x\",\"pid\":1,\"tid\":1,\"ts\":\"1\"}]"};
  for (const char* input : inputs) {
    Profile p;
    Status s = ImportAscendTraceView(dir.Write("g.json", input), {}, &p);
    EXPECT_TRUE(s.ok()) << input << " -> " << s.ToString();
  }
}

// ---------------------------------------------------------------- parallel parsing

struct BigTrace {
  std::string json;
  size_t bad_utf8_at = 0;   // byte of the event whose name holds an invalid UTF-8 byte
  size_t malformed_at = 0;  // byte of the event that does not parse
};

constexpr int64_t kBigTraceBaseUs = 1700000000000000;

// `ops` cpu_ops on Python pid 1000 tid 7 (op i at base + 10i µs + 250 ns,
// 5.5 µs long), each launching an AI_CORE task on device 3 (pid
// (1000 << 10) | (14 << 5) | 3, 2 µs later, 3 µs long) through async_npu flow
// id i + 1; a counter every 100 ops; metadata at both ends (the thread name
// last); op 3's name has JSON escapes, op ops/3's an invalid UTF-8 byte; a
// malformed event after op 2*ops/3.
BigTrace MakeBigTrace(int ops) {
  BigTrace t;
  std::string& j = t.json;
  j = "[\n";
  j += R"({"name":"process_name","pid":1000,"tid":0,"ph":"M","args":{"name":"Python"}},)" "\n";
  j += R"({"name":"process_name","pid":1024451,"tid":0,"ph":"M","args":{"name":"Ascend Hardware"}},)" "\n";
  j += R"({"name":"process_sort_index","pid":1024451,"tid":0,"ph":"M","args":{"sort_index":14}},)" "\n";
  for (int i = 0; i < ops; ++i) {
    const std::string us = std::to_string(kBigTraceBaseUs + 10 * i);
    const std::string task_us = std::to_string(kBigTraceBaseUs + 10 * i + 2);
    const std::string id = std::to_string(i + 1);
    std::string name = "aten::op_" + std::to_string(i % 50);
    if (i == 3) name = R"(aten::\"quoted\"\\op)";
    if (i == ops / 3) {
      name = "aten::bad\xFF";
      t.bad_utf8_at = j.size();
    }
    j += R"({"ph":"X","name":")" + name + R"(","pid":1000,"tid":7,"ts":")" + us +
         R"(.250","dur":5.5,"cat":"cpu_op","args":{"Sequence number":)" + std::to_string(i) +
         R"(,"Fwd thread id":0,"Input Dims":"8,512;\r\n"}},)" "\n";
    j += R"({"ph":"s","name":"async_npu","id":")" + id + R"(","pid":1000,"tid":7,"ts":")" +
         std::to_string(kBigTraceBaseUs + 10 * i + 1) + R"(.000","cat":"async_npu"},)" "\n";
    j += R"({"ph":"X","name":"Kernel)" + std::to_string(i % 7) + R"(","pid":1024451,"tid":2,"ts":")" + task_us +
         R"(.000","dur":3,"args":{"Task Type":"AI_CORE","Stream Id":2,"Task Id":)" + std::to_string(i) + "}},\n";
    j += R"({"ph":"f","name":"async_npu","id":")" + id + R"(","pid":1024451,"tid":2,"ts":")" + task_us +
         R"(.000","cat":"async_npu","bp":"e"},)" "\n";
    if (i % 100 == 0)
      j += R"({"ph":"C","name":"AI Core Freq","pid":1024480,"tid":0,"ts":")" + us + R"(.000","args":{"MHz":1800}},)" "\n";
    if (i == 2 * ops / 3) {
      t.malformed_at = j.size();
      j += R"({"ph":"X","name":"broken" "pid":1000},)" "\n";
    }
  }
  j += R"({"name":"thread_name","pid":1000,"tid":7,"ph":"M","args":{"name":"main thread"}})" "\n]\n";
  return t;
}

TEST(AscendTraceViewTest, ParallelParsingGivesTheOneThreadResult) {
  constexpr int kOps = 12000;  // ~6.5 MB: several read buffers, each split between the parse threads
  const BigTrace trace = MakeBigTrace(kOps);
  ASSERT_GT(trace.json.size(), 6u << 20);
  TempDir dir;
  const std::string path = dir.Write("trace_view.json", trace.json);
  auto load = [&](const char* threads) {
    testing::ScopedParseThreads env(threads);
    Profile p;
    Status s = ImportAscendTraceView(path, {}, &p);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return p;
  };
  const Profile one = load("1");
  const Profile by_default = load(nullptr);
  const Profile four = load("4");

  // Figures derived from what MakeBigTrace wrote.
  const Profile& p = one;
  ASSERT_EQ(p.host_ops.size(), size_t{kOps});
  ASSERT_EQ(p.device_tasks.size(), size_t{kOps});
  EXPECT_EQ(p.flows.size(), size_t{2 * kOps});
  EXPECT_EQ(p.counters.size(), size_t{kOps / 100});
  EXPECT_EQ(p.host_ops.ts[7], (kBigTraceBaseUs + 70) * 1000 + 250);
  EXPECT_EQ(p.host_ops.dur[7], 5500);
  EXPECT_EQ(p.Str(p.host_ops.name[3]), "aten::\"quoted\"\\op");
  EXPECT_EQ(p.Str(p.host_ops.name[kOps / 3]), "aten::bad\xEF\xBF\xBD");
  EXPECT_EQ(p.host_ops.sequence_number[kOps - 1], kOps - 1);
  TimeNs task_time = 0;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) {
    task_time += p.device_tasks.dur[i];
    EXPECT_EQ(p.device_tasks.external_id[i], static_cast<int64_t>(i) + 1) << i;
  }
  EXPECT_EQ(task_time, TimeNs{3000} * kOps);
  EXPECT_EQ(p.tracks.device[p.device_tasks.track[0]], 3);
  EXPECT_EQ(p.Str(p.tracks.name[p.host_ops.track[0]]), "main thread");
  EXPECT_EQ(p.metadata.at("ascend_trace_view.async_npu_links"), std::to_string(kOps));
  ASSERT_EQ(p.data_loss.size(), 2u);
  EXPECT_TRUE(HasLoss(p, "invalid UTF-8 replaced with U+FFFD",
                      "trace_view.json: byte " + std::to_string(trace.bad_utf8_at)));
  for (const auto& [reason, loss] : p.data_loss)
    if (reason.starts_with("malformed event skipped")) {
      EXPECT_EQ(loss.count, 1u);
      EXPECT_TRUE(loss.first_location.ends_with("trace_view.json: byte " + std::to_string(trace.malformed_at)))
          << loss.first_location;
    }

  // The other thread counts give the same profile.
  for (const Profile* q : {&by_default, &four}) {
    ASSERT_EQ(q->host_ops.size(), p.host_ops.size());
    ASSERT_EQ(q->device_tasks.size(), p.device_tasks.size());
    EXPECT_EQ(q->host_ops.ts, p.host_ops.ts);
    EXPECT_EQ(q->host_ops.dur, p.host_ops.dur);
    EXPECT_EQ(q->host_ops.name, p.host_ops.name);  // same interning order
    EXPECT_EQ(q->host_ops.external_id, p.host_ops.external_id);
    EXPECT_EQ(q->device_tasks.ts, p.device_tasks.ts);
    EXPECT_EQ(q->device_tasks.name, p.device_tasks.name);
    EXPECT_EQ(q->device_tasks.external_id, p.device_tasks.external_id);
    EXPECT_EQ(q->flows.id, p.flows.id);
    EXPECT_EQ(q->flows.ts, p.flows.ts);
    EXPECT_TRUE(q->counters.Rows() == p.counters.Rows());
    EXPECT_EQ(q->attributes.size(), p.attributes.size());
    EXPECT_EQ(q->strings.size(), p.strings.size());
    EXPECT_EQ(q->metadata, p.metadata);
    ASSERT_EQ(q->data_loss.size(), p.data_loss.size());
    for (const auto& [reason, loss] : p.data_loss) {
      ASSERT_EQ(q->data_loss.count(reason), 1u) << reason;
      const DataLossEntry& other = q->data_loss.at(reason);
      EXPECT_EQ(other.count, loss.count) << reason;
      EXPECT_EQ(other.first_location, loss.first_location) << reason;
    }
  }
}

}  // namespace
}  // namespace pypto
