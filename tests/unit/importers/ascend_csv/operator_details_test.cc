// operator_details.csv (ASCEND_PROFILER_OUTPUT) and msprof task_time*.csv:
// files without a timeline whose rows are kept as device attributes. Small
// synthetic files written here (no recorded fixture has them); the figures
// follow from the text below.
#include <gtest/gtest.h>

#include <cmath>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "importers/ascend_csv/ascend_tables.h"

namespace pypto {
namespace {

using testing::Attribute;
using testing::HasNoteContaining;
using testing::TempDir;

// Column names as torch_npu writes them.
const std::string kOperatorDetailsHeader =
    "Name,Input Shapes,Input Type,Call Stack,Host Self Duration(us),Host Total Duration(us),"
    "Device Self Duration(us),Device Total Duration(us),Device Self Duration With AICore(us),"
    "Device Total Duration With AICore(us)\n";
const std::string kOperatorDetails =
    kOperatorDetailsHeader +
    // line 2: shapes as a quoted cell with embedded quotes, a call stack with a comma
    "aten::mm,\"\"\"8,16;16,4\"\"\",float;float,\"train.py(3): step, model.py(9): forward\","
    "12.5,30.250,0,7.125,0,7.125\n"
    // line 3: N/A call stack and device self time; a cell that is not a number
    "aten::add,\"\"\"8\"\"\",float,N/A,1.0,abc,N/A,2,2,2\n"
    // line 4: short row
    "aten::relu,\"\"\"8\"\"\",float\n";

const std::string kKernelHeader =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
    "Output Shapes,Output Data Types,Output Formats,Context ID,aic_mac_ratio\n";
std::string KernelRow(const std::string& name, const std::string& start, const std::string& dur) {
  return "1,4294967295,7,2," + name + ",MatMulV2,dynamic,AI_CORE," + start + "\t," + dur +
         ",0,8,0,NO,\"\"\"4,4;4,4\"\"\",FLOAT;FLOAT,ND;ND,\"\"\"4,4\"\"\",FLOAT,ND,N/A,0.5\n";
}
const std::string kKernelDetails = kKernelHeader + KernelRow("mm_kernel", "1700000000000000.125", "7.125") +
                                   KernelRow("add_kernel", "1700000000000010.000", "2.000");

const DataLossEntry* Loss(const Profile& p, const std::string& reason) {
  auto it = p.data_loss.find(reason);
  return it == p.data_loss.end() ? nullptr : &it->second;
}

TEST(OperatorDetails, RowsBecomeDeviceAttributes) {
  TempDir dir;
  dir.Write("run_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKernelDetails);
  dir.Write("run_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_details.csv", kOperatorDetails);
  auto p = LoadProfile(dir.path() + "/run_ascend_pt");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_GE(p->devices.size(), 1u);

  auto mm = [&](const std::string& column) { return Attribute(*p, OwnerKind::kDevice, 0, "operator_details/aten::mm/" + column); };
  EXPECT_EQ(mm("Input Shapes").first, "\"8,16;16,4\"");
  EXPECT_TRUE(std::isnan(mm("Input Shapes").second));
  EXPECT_EQ(mm("Input Type").first, "float;float");
  EXPECT_EQ(mm("Call Stack").first, "train.py(3): step, model.py(9): forward");
  EXPECT_EQ(mm("Host Self Duration(us)").first, "12.5");
  EXPECT_DOUBLE_EQ(mm("Host Self Duration(us)").second, 12.5);
  EXPECT_EQ(mm("Host Total Duration(us)").first, "30.250");
  EXPECT_DOUBLE_EQ(mm("Host Total Duration(us)").second, 30.25);
  EXPECT_DOUBLE_EQ(mm("Device Total Duration(us)").second, 7.125);
  EXPECT_DOUBLE_EQ(mm("Device Self Duration With AICore(us)").second, 0);
  EXPECT_DOUBLE_EQ(mm("Device Total Duration With AICore(us)").second, 7.125);

  auto add = [&](const std::string& column) { return Attribute(*p, OwnerKind::kDevice, 0, "operator_details/aten::add/" + column); };
  EXPECT_EQ(add("Call Stack").first, "<absent>");              // N/A
  EXPECT_EQ(add("Device Self Duration(us)").first, "<absent>");  // N/A
  EXPECT_EQ(add("Host Total Duration(us)").first, "abc");      // kept as text, counted as loss
  EXPECT_TRUE(std::isnan(add("Host Total Duration(us)").second));
  EXPECT_DOUBLE_EQ(add("Device Total Duration(us)").second, 2);

  // The short row is dropped and counted.
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "operator_details/aten::relu/Input Type").first, "<absent>");
  const DataLossEntry* cells = Loss(*p, ascend::kLossCellCount);
  ASSERT_NE(cells, nullptr);
  EXPECT_EQ(cells->count, 1u);
  EXPECT_NE(cells->first_location.find("operator_details.csv: line 4: 3 cells, header has 10"), std::string::npos)
      << cells->first_location;
  const DataLossEntry* numbers = Loss(*p, ascend::kLossNotNumeric);
  ASSERT_NE(numbers, nullptr);
  EXPECT_EQ(numbers->count, 1u);
  EXPECT_NE(numbers->first_location.find("operator_details.csv: line 3, column 'Host Total Duration(us)'"),
            std::string::npos)
      << numbers->first_location;

  EXPECT_TRUE(HasNoteContaining(*p, "operator_details rows kept as device attributes 'operator_details/<Name>/<column>'"));
  EXPECT_FALSE(HasNoteContaining(*p, "operator_details.csv: not read"));
  bool listed = false;
  for (const auto& f : p->source_files) listed |= f.find("operator_details.csv") != std::string::npos;
  EXPECT_TRUE(listed);
}

TEST(OperatorDetails, KernelDetailsBesideItLoadUnchanged) {
  TempDir with, without;
  with.Write("ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKernelDetails);
  with.Write("ASCEND_PROFILER_OUTPUT/operator_details.csv", kOperatorDetails);
  without.Write("ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKernelDetails);
  auto a = LoadProfile(with.path() + "/ASCEND_PROFILER_OUTPUT");
  auto b = LoadProfile(without.path() + "/ASCEND_PROFILER_OUTPUT");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->device_tasks.size(), 2u);
  ASSERT_EQ(a->device_tasks.size(), b->device_tasks.size());
  for (size_t i = 0; i < a->device_tasks.size(); ++i) {
    EXPECT_EQ(a->Str(a->device_tasks.name[i]), b->Str(b->device_tasks.name[i]));
    EXPECT_EQ(a->device_tasks.ts[i], b->device_tasks.ts[i]);
    EXPECT_EQ(a->device_tasks.dur[i], b->device_tasks.dur[i]);
    EXPECT_EQ(a->Str(a->device_tasks.core_type[i]), b->Str(b->device_tasks.core_type[i]));
  }
  EXPECT_EQ(a->device_tasks.ts[0], 1700000000000000125);
  EXPECT_EQ(a->device_tasks.dur[0], 7125);
  EXPECT_EQ(a->metadata.at("format"), "ascend-pt");
}

TEST(OperatorDetails, MissingNameColumnIsAnError) {
  TempDir dir;
  std::string path = dir.Write("operator_details.csv",
                               "Input Shapes,Host Self Duration(us),Device Self Duration(us)\n\"8\",1,2\n");
  ascend::RunContext run;
  Profile p;
  Status s = ascend::ImportAscendCsv(path, run, &p, ascend::CsvKind::kOperatorDetails);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("operator_details.csv: line 1: missing required column 'Name' (operator_details)"),
            std::string::npos)
      << s.message();
}

TEST(TaskTime, MsprofRowsBecomeDeviceAttributes) {
  TempDir dir;
  const std::string prof = "PROF_000001_20240101000000000_ABCDEFGHIJKLMNOP";
  dir.Write(prof + "/mindstudio_profiler_output/op_summary_20240101000000.csv",
            "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
            "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim\n"
            "0,4294967295,1,5,first,MatMul,static,AI_CORE,10.000\t,2.000,0,24,0\n");
  dir.Write(prof + "/mindstudio_profiler_output/task_time_20240101000000.csv",
            "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n"
            "0,first,KERNEL_AICORE,5,1,2.000,1700000000000010.125,1700000000000012.125\n"
            "0,second,KERNEL_AICPU,5,2,N/A,x1,1700000000000020\n"
            "0,third\n");
  auto p = LoadProfile(dir.path() + "/" + prof);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->device_tasks.size(), 1u);  // op_summary's tasks only
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "task_time/first/kernel_type").first, "KERNEL_AICORE");
  EXPECT_DOUBLE_EQ(Attribute(*p, OwnerKind::kDevice, 0, "task_time/first/task_time(us)").second, 2.0);
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "task_time/first/task_start(us)").first, "1700000000000010.125");
  EXPECT_DOUBLE_EQ(Attribute(*p, OwnerKind::kDevice, 0, "task_time/first/task_id").second, 1);
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "task_time/second/task_time(us)").first, "<absent>");
  EXPECT_EQ(Attribute(*p, OwnerKind::kDevice, 0, "task_time/second/task_start(us)").first, "x1");
  const DataLossEntry* numbers = Loss(*p, ascend::kLossNotNumeric);
  ASSERT_NE(numbers, nullptr);
  EXPECT_NE(numbers->first_location.find("task_time_20240101000000.csv: line 3, column 'task_start(us)'"),
            std::string::npos)
      << numbers->first_location;
  const DataLossEntry* cells = Loss(*p, ascend::kLossCellCount);
  ASSERT_NE(cells, nullptr);
  EXPECT_NE(cells->first_location.find("task_time_20240101000000.csv: line 4"), std::string::npos);
  EXPECT_TRUE(HasNoteContaining(*p, "task_time rows kept as device attributes 'task_time/<kernel_name>/<column>'"));
}

}  // namespace
}  // namespace pypto
