// Directory layouts, bad input and merging, on small files written by the
// tests themselves (figures follow from the text written here).
#include <gtest/gtest.h>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "importers/ascend_csv/ascend_tables.h"
#include "importers/ascend_pt/ascend_pt_importer.h"
#include "importers/msprof/msprof_importer.h"

namespace pypto {
namespace {

using testing::Attribute;
using testing::CountNotesContaining;
using testing::HasNoteContaining;
using testing::Meta;
using testing::TempDir;

// A Level1-style kernel_details header (Jan 2025 naming, no Device_id) cut to
// the base columns plus one PMU column.
const std::string kHeader =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
    "Output Shapes,Output Data Types,Output Formats,Context ID,aic_mac_ratio\n";
std::string Row(const std::string& name, const std::string& start, const std::string& dur,
                const std::string& pmu = "0.5") {
  return "1,4294967295,7,2," + name + ",MatMulV2,dynamic,AI_CORE," + start + "\t," + dur +
         ",0,8,0,NO,\"\"\"4,4;4,4\"\"\",FLOAT;FLOAT,ND;ND,\"\"\"4,4\"\"\",FLOAT,ND,N/A," + pmu + "\n";
}

TEST(AscendBadInput, TruncatedLastRowIsCountedWithItsLine) {
  TempDir dir;
  std::string full = kHeader + Row("a", "1000.000", "1.5") + Row("b", "1002.000", "2.5");
  std::string cut = full + "1,4294967295,9,2,c,MatMulV2,dynamic,AI_CORE,1004.000\t,3,0,8,0,NO,\"\"\"4,4";
  std::string path = dir.Write("kernel_details.csv", cut);
  auto p = LoadProfile(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->device_tasks.size(), 2u);
  ASSERT_EQ(p->data_loss.count(ascend::kLossRowCut), 1u);
  EXPECT_EQ(p->data_loss.at(ascend::kLossRowCut).first_location, path + ": line 4");
  // Cut between cells instead: too few cells.
  std::string path2 = dir.Write("k2/kernel_details.csv", full + "1,4294967295,9,2,c,MatMulV2");
  auto q = LoadProfile(path2);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->device_tasks.size(), 2u);
  EXPECT_EQ(q->data_loss.at(ascend::kLossCellCount).first_location, path2 + ": line 4: 6 cells, header has 22");
}

TEST(AscendBadInput, MissingRequiredColumnNamesFileAndColumn) {
  TempDir dir;
  std::string header = "Name,Type,Accelerator Core,Start Time(us),Wait Time(us)\n";
  std::string path = dir.Write("kernel_details.csv", header + "a,MatMul,AI_CORE,1.0,0\n");
  // Not sniffed as a task table without a duration column: force the importer.
  ImportOptions options;
  options.forced_format = "ascend-pt";
  auto p = LoadProfile(path, options);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnsupported);
  // Read as a task table explicitly: the message names the column.
  Profile profile;
  ascend::RunContext run;
  run.options = &options;
  Status s = ascend::ImportAscendCsv(path, run, &profile, ascend::CsvKind::kTaskTable);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": line 1: missing required column 'Duration(us)' (duration; adapter "
                                "kernel_details/cann8.0, also looked for 'Duration(us)', 'Task Duration(us)')");
}

TEST(AscendBadInput, NonNumericCellsAreDataLossWithLineAndColumn) {
  TempDir dir;
  std::string path = dir.Write("kernel_details.csv", kHeader + Row("a", "1000.000", "abc") +
                                                         Row("b", "1002.000", "2.5", "x1") +
                                                         Row("c", "N/A", "2.5"));
  auto p = LoadProfile(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->device_tasks.size(), 1u);  // only "b": "a" has no number, "c" no start
  EXPECT_EQ(p->Str(p->device_tasks.name[0]), "b");
  const auto& loss = p->data_loss.at(ascend::kLossNotNumeric);
  EXPECT_EQ(loss.count, 2u);
  EXPECT_EQ(loss.first_location, path + ": line 2, column 'Duration(us)'");
  EXPECT_EQ(p->data_loss.at(ascend::kLossNoTime).first_location, path + ": line 4");
  // The PMU cell is kept as text, its number NaN.
  auto pmu = Attribute(*p, OwnerKind::kDeviceTask, 0, "aic_mac_ratio");
  EXPECT_EQ(pmu.first, "x1");
  EXPECT_TRUE(std::isnan(pmu.second));
}

TEST(AscendBadInput, ARepeatedNonNumericCellIsCountedOnEveryRow) {
  // The importer reuses what it read for a cell equal to the one above it
  // (most PMU columns repeat): the loss must still be counted per row. Rows
  // 2..4 carry "x1" in aic_mac_ratio (3 losses), row 5 a number, row 6 "x1"
  // again: 4 in all, the first at line 2; the number is read as 0.75.
  TempDir dir;
  std::string path = dir.Write("kernel_details.csv", kHeader + Row("a", "1000.000", "1.5", "x1") +
                                                         Row("b", "1002.000", "2.5", "x1") +
                                                         Row("c", "1004.000", "2.5", "x1") +
                                                         Row("d", "1006.000", "2.5", "0.75") +
                                                         Row("e", "1008.000", "2.5", "x1"));
  auto p = LoadProfile(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->device_tasks.size(), 5u);
  const auto& loss = p->data_loss.at(ascend::kLossNotNumeric);
  EXPECT_EQ(loss.count, 4u);
  EXPECT_EQ(loss.first_location, path + ": line 2, column 'aic_mac_ratio'");
  for (uint32_t task : {0u, 1u, 2u, 4u}) {
    auto pmu = Attribute(*p, OwnerKind::kDeviceTask, task, "aic_mac_ratio");
    EXPECT_EQ(pmu.first, "x1") << task;
    EXPECT_TRUE(std::isnan(pmu.second)) << task;
  }
  auto number = Attribute(*p, OwnerKind::kDeviceTask, 3, "aic_mac_ratio");
  EXPECT_EQ(number.first, "0.75");
  EXPECT_EQ(number.second, 0.75);
}

TEST(AscendBadInput, EmptyFilesAndDirectoriesWithoutProfiles) {
  TempDir dir;
  std::string empty = dir.Write("kernel_details.csv", "");
  auto p = LoadProfile(empty);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), empty + ": file is empty");
  // The importer itself, when forced.
  Profile profile;
  Status s = AscendPtImporter()->Import(empty, {}, &profile);
  EXPECT_EQ(s.message(), empty + ": line 1: file is empty (expected a CSV header)");

  std::string nothing = dir.MakeDir("nothing");
  auto q = LoadProfile(nothing);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kNotFound);
  EXPECT_NE(q.status().message().find(nothing + ": directory holds no profile"), std::string::npos);

  std::string run = dir.MakeDir("host_1_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT");
  auto r = LoadProfile(dir.path() + "/host_1_20250101_ascend_pt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), dir.path() + "/host_1_20250101_ascend_pt: no Ascend profiler output found (looked for "
                                  "kernel_details.csv, op_statistic.csv, step_trace_time.csv, trace_view.json, "
                                  "ascend_pytorch_profiler*.db in ASCEND_PROFILER_OUTPUT or *_ascend_pt folders)");

  std::string prof = dir.MakeDir("PROF_000001_20250101000000000_ABCDEFGHIJKLMNOP/device_0");
  auto m = LoadProfile(dir.path() + "/PROF_000001_20250101000000000_ABCDEFGHIJKLMNOP");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no msprof summary found"), std::string::npos) << m.status().ToString();
}

TEST(AscendLayouts, UnknownColumnIsKeptAndNotedOnce) {
  TempDir dir;
  std::string header = kHeader.substr(0, kHeader.size() - 1) + ",Future Column\n";
  std::string a = Row("a", "1.000", "1");
  std::string b = Row("b", "2.000", "1");
  a.insert(a.size() - 1, ",hello");
  b.insert(b.size() - 1, ",42");
  auto p = LoadProfile(dir.Write("kernel_details.csv", header + a + b));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(CountNotesContaining(*p, "unknown column 'Future Column' kept as attribute"), 1);
  EXPECT_EQ(Attribute(*p, OwnerKind::kDeviceTask, 0, "Future Column").first, "hello");
  EXPECT_EQ(Attribute(*p, OwnerKind::kDeviceTask, 1, "Future Column").second, 42);
}

TEST(AscendLayouts, SeveralRanksLoadIntoOneProfile) {
  TempDir dir;
  dir.Write("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kHeader + Row("a", "1.000", "1"));
  dir.Write("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
            kHeader + Row("b", "2.000", "1") + Row("c", "3.000", "1"));
  // Rank from profiler_info wins over the folder name.
  dir.Write("node_b_ascend_pt/profiler_info_5.json", R"({"rank_id": "5", "cann_version": "8.0.RC3"})");
  dir.Write("node_b_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
            "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
            "Communication(Not Overlapped and Exclude Receive)\n7,1,2,0,2,3,6,0,2\n");
  auto p = LoadProfile(dir.path());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Meta(*p, "format"), "ascend-pt");
  EXPECT_EQ(Meta(*p, "ranks"), "3");
  ASSERT_EQ(p->device_tasks.size(), 3u);
  std::map<std::string, int> device_of;
  for (size_t i = 0; i < 3; ++i)
    device_of[std::string(p->Str(p->device_tasks.name[i]))] = p->tracks.device[p->device_tasks.track[i]];
  EXPECT_EQ(device_of, (std::map<std::string, int>{{"a", 0}, {"b", 1}, {"c", 1}}));
  // Step 7 from node_b's step_trace_time; step 1 of ranks 0 and 1 from their
  // rows' Step Id column (no step_trace_time there), one per device.
  ASSERT_EQ(p->steps.size(), 3u);
  auto step = [&](int64_t number, int32_t device) -> const StepRow* {
    for (const StepRow& s : p->steps.rows)
      if (s.number == number && s.device == device) return &s;
    return nullptr;
  };
  ASSERT_NE(step(7, 5), nullptr);
  EXPECT_EQ(step(7, 5)->dur, 6000);  // 1 + 2 + 3 µs
  EXPECT_EQ(step(7, 5)->preparing, kUnknownNs);  // column absent in this version
  ASSERT_NE(step(1, 0), nullptr);
  ASSERT_NE(step(1, 1), nullptr);
  EXPECT_EQ(p->Str(step(1, 1)->source), kStepSourceStepIdColumn);
  EXPECT_TRUE(HasNoteContaining(*p, "rank1_ascend_pt: rank 1, 1 files, 2 device tasks"));
  EXPECT_TRUE(HasNoteContaining(*p, "node_b_ascend_pt: rank 5, 1 files, 0 device tasks"));
  EXPECT_EQ(Meta(*p, "cann_version"), "8.0.RC3");
}

TEST(AscendLayouts, StepsWithoutTimesSpanTheirTasksAndStepIdsAddTheRest) {
  // step_trace_time gives steps 1 and 2 without times; the tasks' Step Id
  // column places them, and step 3, which only the tasks name, is added.
  auto row_of_step = [](const std::string& step, const std::string& name, const std::string& start,
                        const std::string& dur) { return step + Row(name, start, dur).substr(1); };
  TempDir dir;
  dir.Write("run_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
            kHeader + row_of_step("1", "a", "10.000", "2") + row_of_step("1", "b", "20.000", "5") +
                row_of_step("2", "c", "30.000", "1") + row_of_step("3", "d", "40.000", "4"));
  dir.Write("run_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
            "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
            "Communication(Not Overlapped and Exclude Receive)\n1,1,2,0,2,3,6,0,2\n2,1,2,0,2,3,6,0,2\n");
  auto p = LoadProfile(dir.path() + "/run_ascend_pt");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->steps.size(), 3u);
  auto step = [&](int64_t number) -> const StepRow* {
    for (const StepRow& s : p->steps.rows)
      if (s.number == number) return &s;
    return nullptr;
  };
  // Step 1: tasks a and b, 10 µs to 20 + 5 µs; longer than its breakdown (1 + 2 + 3 µs).
  ASSERT_NE(step(1), nullptr);
  EXPECT_EQ(step(1)->ts, 10000);
  EXPECT_EQ(step(1)->dur, 15000);
  // Step 2: task c alone (1 µs) starts it; the breakdown's 6 µs is longer and stays.
  ASSERT_NE(step(2), nullptr);
  EXPECT_EQ(step(2)->ts, 30000);
  EXPECT_EQ(step(2)->dur, 6000);
  // Step 3: task d, 40 to 44 µs, from the Step Id column.
  ASSERT_NE(step(3), nullptr);
  EXPECT_EQ(step(3)->ts, 40000);
  EXPECT_EQ(step(3)->dur, 4000);
  EXPECT_EQ(p->Str(step(3)->source), kStepSourceStepIdColumn);
  EXPECT_TRUE(HasNoteContaining(*p, "1 step(s) taken from the tasks' Step Id column"));
}

TEST(AscendLayouts, MsprofProfDirectoryWithDeviceInfo) {
  TempDir dir;
  const std::string prof = "PROF_000001_20240101000000000_ABCDEFGHIJKLMNOP";
  const std::string header =
      "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
      "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim\n";
  // Slices are read in index order whatever the listing order.
  dir.Write(prof + "/mindstudio_profiler_output/op_summary_slice_1_20240101000000.csv",
            header + "0,4294967295,2,5,second,Add,static,AI_VECTOR_CORE,20.000\t,1.000,0,40,0\n");
  dir.Write(prof + "/mindstudio_profiler_output/op_summary_slice_0_20240101000000.csv",
            header + "0,4294967295,1,5,first,MatMul,static,AI_CORE,10.000\t,2.000,0,24,0\n");
  dir.Write(prof + "/mindstudio_profiler_output/task_time_20240101000000.csv", "Device_id,kernel_name\n");
  dir.Write(prof + "/device_0/info.json.0",
            R"({"platform_version": "5", "DeviceInfo": [{"ai_core_num": 24, "aiv_num": 48,
                "aic_frequency": "1800", "hwts_frequency": "49.999001"}]})");
  dir.Write(prof + "/device_0/info.json.0.done", "");
  auto p = LoadProfile(dir.path() + "/" + prof);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Meta(*p, "format"), "msprof");
  ASSERT_EQ(p->device_tasks.size(), 2u);
  EXPECT_EQ(p->Str(p->device_tasks.name[0]), "first");
  EXPECT_EQ(p->Str(p->device_tasks.name[1]), "second");
  EXPECT_EQ(Meta(*p, "format_version"), "op_summary/cann8.0");
  EXPECT_EQ(Meta(*p, "platform_version"), "5");
  ASSERT_EQ(p->devices.size(), 1u);
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "ai_core_num").second, 24);
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "aic_frequency").second, 1800);
  EXPECT_TRUE(HasNoteContaining(*p, "task_time_20240101000000.csv: task_time rows kept as device attributes"));
  // A parent folder of PROF_* directories loads them too.
  auto parent = LoadProfile(dir.path());
  ASSERT_TRUE(parent.ok()) << parent.status().ToString();
  EXPECT_EQ(parent->device_tasks.size(), 2u);
}

TEST(AscendLayouts, MemoryRecordBecomesCounters) {
  TempDir dir;
  dir.Write("run_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
            "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n"
            "PTA,1000.500\t,10.5,20,10.5,123,NPU:3\n"
            "PTA,1001.500\t,N/A,21,11,123,NPU:3\n");
  auto p = LoadProfile(dir.path() + "/run_ascend_pt");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->counters.size(), 5u);  // 3 + 2 (N/A skipped)
  const CounterRow first = p->counters.Rows().at(0);
  EXPECT_EQ(p->Str(first.name), "Total Allocated(MB)");
  EXPECT_EQ(first.ts, 1000500);
  EXPECT_EQ(first.value, 10.5);
  EXPECT_EQ(p->tracks.device[first.track], 3);
}

TEST(AscendLayouts, KernelDetailsEnrichesTheTraceViewTasks) {
  TempDir dir;
  // One Ascend Hardware task in the timeline, the same kernel in kernel_details,
  // plus a kernel the timeline lacks.
  dir.Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
            R"([{"ph":"M","name":"process_name","pid":800,"args":{"name":"Ascend Hardware"}},
                {"ph":"X","name":"mm","pid":800,"tid":2,"ts":"1000.000","dur":1.5,"args":{"Task Type":"AI_CORE"}}])");
  dir.Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
            kHeader + Row("mm", "1000.000", "1.5") + Row("other", "2000.000", "1"));
  auto p = LoadProfile(dir.path() + "/r_ascend_pt");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Meta(*p, "format"), "ascend-pt");
  ASSERT_EQ(p->device_tasks.size(), 2u);
  int mm = testing::FindTask(*p, "mm");
  ASSERT_GE(mm, 0);
  EXPECT_EQ(p->device_tasks.block_dim(mm), 8);
  EXPECT_EQ(p->Str(p->device_tasks.input_shapes(mm)), "4,4;4,4");
  EXPECT_DOUBLE_EQ(Attribute(*p, OwnerKind::kDeviceTask, mm, "aic_mac_ratio").second, 0.5);
  EXPECT_TRUE(HasNoteContaining(*p, "1 rows matched a trace_view.json task"));
}

}  // namespace
}  // namespace pypto
