#!/usr/bin/env python3
"""Writes the fuzz seed corpus (fuzz/corpus/<target>/).

Every seed is a small synthetic input written here by hand, with the SHAPE of a
real profile (the structure, keys, headers and value forms of each era and
tool described in docs/formats/), never a copy of a real profile. Re-running
the script rewrites the same bytes (the gzip seed has a fixed mtime, the
SQLite seed is built with a fixed page size and vacuumed).

Usage: python3 fuzz/make_corpus.py            (from the repository root)
"""
import gzip
import io
import json
import os
import sqlite3
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def dumps(obj):
    return json.dumps(obj, separators=(", ", ": "))


# --- Kineto (PyTorch profiler) traces of each era ---------------------------------

def kineto_modern():
    # torch >= 2.4: float "us.nnn" ts relative to baseTimeNanoseconds, ac2g flows,
    # deviceProperties, Input Dims, cudaLaunchKernel + kernel joined by correlation.
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045379072,
                              "computeMajor": 9, "computeMinor": 0, "numSms": 132, "warpSize": 32}],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "cuda_runtime_version": 12040,
        "baseTimeNanoseconds": 1721000000000000000,
        "displayTimeUnit": "ms",
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 11, "tid": 11,
             "ts": 1400000000000.125, "dur": 90.5, "args": {"External id": 1, "Record function id": 0, "Ev Idx": 0}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 11, "tid": 11,
             "ts": 1400000000010.250, "dur": 20.0,
             "args": {"External id": 2, "Sequence number": 7, "Fwd thread id": 0, "Ev Idx": 1,
                      "Input Dims": [[16, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"],
                      "Input Strides": [[4096, 1], [1, 4096]], "Concrete Inputs": ["", ""]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 11,
             "ts": 1400000000015.000, "dur": 4.5, "args": {"External id": 2, "cbid": 211, "correlation": 101}},
            {"ph": "s", "id": 101, "pid": 11, "tid": 11, "ts": 1400000000015.000, "cat": "ac2g", "name": "ac2g"},
            {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7,
             "ts": 1400000000021.000, "dur": 35.125,
             "args": {"External id": 2, "device": 0, "stream": 7, "correlation": 101, "registers per thread": 168,
                      "shared memory": 232448, "grid": [132, 1, 1], "block": [384, 1, 1]}},
            {"ph": "f", "id": 101, "pid": 0, "tid": 7, "ts": 1400000000021.000, "cat": "ac2g", "name": "ac2g", "bp": "e"},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 11, "tid": 11,
             "ts": 1400000000060.000, "dur": 30.0, "args": {"cbid": 165, "correlation": 102}},
            {"ph": "M", "name": "process_name", "pid": 11, "tid": 0, "args": {"name": "python3"}},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
            {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 11, "tid": 11,
             "ts": 1400000000011.000, "args": {"Total Reserved": 2097152, "Total Allocated": 1024, "Bytes": 512,
                                               "Addr": 140000000000, "Device Id": 0, "Device Type": 1}},
            {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
             "ts": 1399999999990.000, "dur": 120.0},
        ],
        "traceName": "worker0.pt.trace.json",
    }


def kineto_2022():
    # torch 1.12/1.13: integer us ts, async_cpu_to_gpu flows, Profiler Event Index, Call stack.
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 3, "name": "NVIDIA A100-PG509-200", "numSms": 108}],
        "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 22, "tid": 22, "ts": 1661200000000100,
             "dur": 12, "args": {"External id": 5, "Trace name": "PyTorch Profiler", "Trace iteration": 0,
                                 "Profiler Event Index": 4, "Call stack": "train.py(10): step"}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 22, "tid": 22,
             "ts": 1661200000000104, "dur": 5, "args": {"External id": 5, "cbid": 211, "correlation": 900}},
            {"ph": "s", "id": 900, "pid": 22, "tid": 22, "ts": 1661200000000104, "cat": "async_cpu_to_gpu", "name": "async_gpu"},
            {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 3,
             "tid": 7, "ts": 1661200000000120, "dur": 3, "args": {"external id": 5, "device": 3, "stream": 7, "correlation": 900}},
            {"ph": "f", "id": 900, "pid": 3, "tid": 7, "ts": 1661200000000120, "cat": "async_cpu_to_gpu", "name": "async_gpu", "bp": "e"},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 3, "tid": 7,
             "ts": 1661200000000130, "dur": 2, "args": {"device": 3, "stream": 7, "correlation": 901, "bytes": 4}},
        ],
    }


def kineto_torch19():
    # torch 1.9: legacy categories Operator/Runtime/Kernel, GPU tid "stream 7", flows cat "async".
    return {
        "schemaVersion": 1,
        "traceEvents": [
            {"ph": "X", "cat": "Operator", "name": "ProfilerStep#2", "pid": 5, "tid": "5", "ts": 1623142623460111,
             "dur": 400, "args": {"Input dims": [], "External id": 1}},
            {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 5, "tid": "5", "ts": 1623142623460120,
             "dur": 50, "args": {"Input dims": [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []], "External id": 2}},
            {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": "5", "ts": 1623142623460130,
             "dur": 8, "args": {"correlation": 77, "external id": 2, "external ts": 1623142623460120}},
            {"ph": "s", "id": 77, "pid": 5, "tid": 5, "ts": 1623142623460130, "cat": "async", "name": "launch"},
            {"ph": "X", "cat": "Kernel", "name": "implicit_convolve_sgemm", "pid": 0, "tid": "stream 7",
             "ts": 1623142623460200, "dur": 120, "args": {"queued": 0, "device": 0, "context": 1, "stream": 7,
                                                           "correlation": 77, "external id": 2}},
            {"ph": "f", "id": 77, "pid": 0, "tid": "stream 7", "ts": 1623142623460200, "cat": "async", "name": "launch", "bp": "e"},
            {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7",
             "ts": 1623142623460330, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 78}},
        ],
    }


def kineto_rocm():
    # ROCm (roctracer): hipLaunchKernel, kernel args kind/cid/kernel, one hipGraphLaunch for many kernels.
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4}],
        "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "hipGraphLaunch", "pid": 33, "tid": 33,
             "ts": 2000000000.500, "dur": 15.25, "args": {"correlation": 4000, "External id": 0}},
            {"ph": "X", "cat": "kernel", "name": "Cijk_Ailk_Bljk_BBS_BH_MT128x128", "pid": 2, "tid": 1,
             "ts": 2000000020.000, "dur": 10.0, "args": {"correlation": 4000, "device": 0, "stream": 1,
                                                        "kind": "Dispatch Kernel", "cid": 12, "kernel": "Cijk"}},
            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 2, "tid": 1,
             "ts": 2000000031.000, "dur": 7.0, "args": {"correlation": 4000, "device": 0, "stream": 1}},
            {"ph": "X", "cat": "user_annotation", "name": "execute_32_context_0(1)_generation_32(32)",
             "pid": 33, "tid": 33, "ts": 2000000000.000, "dur": 50.0, "args": {}},
        ],
    }


def kineto_cpu_only():
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        "distributedInfo": {"backend": "gloo", "rank": 34, "world_size": 300},
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#551", "pid": 7, "tid": 7, "ts": 1721000000.000,
             "dur": 100.0, "args": {"External id": 1}},
            {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 7, "tid": 9, "ts": 1721000010.000,
             "dur": 40.0, "args": {"External id": 2}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::sum", "pid": 7, "tid": 7, "ts": 1721000020.000, "dur": 5.0,
             "args": {"External id": 3, "Concrete Inputs": ["", "1"], "Input Dims": [[8, 8], []]}},
        ],
        "INFO": ["a log line"],
        "username": "someone",
    }


def legacy_export():
    # torch builds without Kineto: bare array, pid "CPU functions", no cat.
    return [
        {"name": "aten::linear", "ph": "X", "ts": 10.5, "dur": 30.25, "tid": 1, "pid": "CPU functions", "args": {}},
        {"name": "aten::addmm", "ph": "X", "ts": 12.0, "dur": 20.0, "tid": 1, "pid": "CPU functions", "args": {}},
        {"name": "aten::relu", "ph": "X", "ts": 45.0, "dur": 3.0, "tid": 1, "pid": "CPU functions", "args": {}},
    ]


def kineto_pathologies():
    # reference kineto-format.md §10: string pid/tid and ts, bare N/A, invalid UTF-8,
    # control characters and unescaped quotes, duplicate keys, ids > 2^53, truncation.
    head = b'{"schemaVersion": 1, "traceEvents": [\n'
    events = [
        b'{"ph": "X", "cat": "cpu_op", "name": "aten::\xff\xfe", "pid": "25738", "tid": "", "ts": "1000.5", "dur": 2, "args": {"Comms Id": 18446744073709551615}}',
        b'{"ph": "X", "cat": "cpu_op", "name": "bad "quoted" name", "pid": 1, "tid": 1, "ts": 1001, "dur": 1}',
        b'{"ph": "X", "cat": "cpu_op", "name": "ctl\x01\x1f", "pid": 1, "tid": 1, "ts": 1002, "dur": N/A}',
        b'{"ph": "X", "ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1003, "dur": 1, "args": {"correlation": 9007199254740993}}',
        b'{"ph": "X", "cat": "cpu_op", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1004, "dur": -5}',
    ]
    return head + b",\n".join(events) + b',\n{"ph": "X", "cat": "cpu_op", "name": "cut', None


# --- Ascend CSVs -------------------------------------------------------------------

KD_HEADER_83 = ("Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
                "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,"
                "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),"
                "aic_total_cycles,aiv_time(us),aiv_total_cycles,cube_utilization(%)")
KD_HEADER_8 = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
               "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
               "Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,"
               "cube_utilization(%)")
OPSUM_OLD = ("Step Id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Start Time(us),Task Duration(us),"
             "Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
             "Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles")
OPSUM_NEW = ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
             "Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,"
             "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID")


def kernel_details_83():
    rows = [
        '3,0,4294967295,101,2,aclnnMatmul_MatMulV3,MatMulV3,dynamic,AI_CORE,1700000000000100.125\t,50.5,0,20,0,NO,'
        '"""16,4096;4096,4096""",DT_BF16;DT_BF16,ND;ND,"""16,4096""",DT_BF16,ND,N/A,49.1,1000,0,0,80.5',
        '3,0,4294967295,102,2,aclnnAdd_AddAiCore_Add,Add,dynamic,AI_VECTOR_CORE,1700000000000160.000\t,4.25,1.5,40,0,NO,'
        '"""16,4096;16,4096""",DT_BF16;DT_BF16,ND;ND,"""16,4096""",DT_BF16,ND,N/A,0.0,0,4.0,200,0.000',
        '3,0,4294967295,103,2,FlashAttentionScore,FlashAttentionScore,dynamic,MIX_AIC,1700000000000170.5\t,120,0,24,48,NO,'
        '"""1,32,128,128""",DT_BF16,ND,"""1,32,128,128""",DT_BF16,ND,N/A,100,9000,20,900,60',
        '3,0,4294967295,104,3,hcom_allReduce__1_0,hcom_allReduce_,static,HCCL,1700000000000300\t,300,N/A,0,0,N/A,'
        'N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A',
        '3,0,4294967295,105,2,MemcpyAsync,MEMCPY_ASYNC,N/A,AI_CPU,1700000000000700.999\t,2,0,0,0,N/A,'
        '"",N/A,N/A,"",N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A',
    ]
    return (KD_HEADER_83 + "\n" + "\n".join(rows) + "\n").encode()


def kernel_details_8_quoted_ts():
    rows = [
        '19,4294967295,61653,2,aclnnMatmul_MatMulV2,MatMulV2,dynamic,AI_CORE,"1736000000000000.912\t",185.5,1.087,16,0,NO,'
        '"""8,4096;4096,512""",DT_BF16;DT_BF16,ND;ND,"""8,512""",DT_BF16,ND,N/A,183.87,5295467,79.295',
        '19,4294967295,61654,2,trans_TransData_0,TransData,dynamic,AI_VECTOR_CORE,"1736000000000200.1\t",6.5,0,8,0,NO,'
        '"""64,3,11,11""",FLOAT,NCHW,"""121,4,16,8""",FLOAT,FRACTAL_Z,N/A,5.2,75273,0',
        '20,4294967295,61655,2,aclnnMatmul_MatMulV2,MatMulV2,dynamic,AI_CORE,"1736000000001000.000\t",185.5,1,16,0,NO,'
        '"""8,4096;4096,512""",DT_BF16;DT_BF16,ND;ND,"""8,512""",DT_BF16,ND,N/A,183.87,5295467,79.295',
    ]
    return ("\ufeff" + KD_HEADER_8 + "\r\n" + "\r\n".join(rows) + "\r\n").encode()


def op_summary_old():
    rows = [
        '2,4294967295,2451,16,ZerosLike,ZerosLike,AI_CORE,1695115378713661,496.8508,0,48,0,NO,"""2048""",FLOAT,'
        'FORMAT_ND,"""2048""",FLOAT,FORMAT_ND,N/A,982.72,0',
        '2,4294967295,N/A,N/A,hcom_broadcast__483_0,hcom_broadcast_,HCCL,1695115378715400.2,4975.2664,1242.3992,0,N/A,'
        'N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A',
        '2,4294967295,2452,16,Cast,Cast,AI_VECTOR_CORE,1695115378720400.5,1.5,0,8,0,NO,"""8""",FLOAT,FORMAT_ND,'
        '"""8""",FLOAT16,FORMAT_ND,N/A,1.2,10',
    ]
    return (OPSUM_OLD + "\n" + "\n".join(rows) + "\n").encode()


def op_summary_new():
    rows = [
        '7,4294967295,1,38,aclnnInplaceNormal_DSARandomNormal,DSARandomNormal,dynamic,DSA_SQE,1791629758426053.770\t,'
        '16.420,0,0,0,NO,N/A,N/A,N/A,"""384,384""",FLOAT,ND,N/A',
        '7,4294967295,2,38,aclnnInplaceNormal_CastAiCore_Cast,Cast,dynamic,AI_VECTOR_CORE,1791629758426974.570\t,'
        '11.220,904.330000,40,0,NO,"""384,384""",FLOAT,ND,"""384,384""",FLOAT16,ND,N/A',
    ]
    return (OPSUM_NEW + "\n" + "\n".join(rows) + "\n").encode()


def step_trace_time():
    return (b"Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
            b"Communication(Not Overlapped and Exclude Receive),Preparing\n"
            b"0,3,1290.09999999995,420.26,0.0,420.26,158.5,810.25,0,420.26,206.25\n"
            b"0,4,1000,0,0,0,10,1010,0,0,0\n")


def op_statistic():
    return (b"Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
            b"0,MatMulV3,AI_CORE,2,100.5,50.25,50.25,50.25,60.1\n"
            b"0,Add,AI_VECTOR_CORE,1,4.25,4.25,4.25,4.25,39.9\n")


def memory_record():
    return (b"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n"
            b"PTA,1700000000000100.5\t,10.5,20,10.5,187651234,NPU:0\n"
            b"PTA,1700000000000200.5\t,12.5,20,12.5,187651234,NPU:0\n")


# --- Ascend timeline (trace_view.json) ---------------------------------------------

def trace_view():
    host, cann, hw = 437675, 43767502, 800
    return [
        {"ph": "M", "name": "process_name", "pid": host, "tid": 0, "args": {"name": "Python"}},
        {"ph": "M", "name": "process_name", "pid": cann, "tid": 0, "args": {"name": "CANN"}},
        {"ph": "M", "name": "process_name", "pid": hw, "tid": 0, "args": {"name": "Ascend Hardware"}},
        {"ph": "M", "name": "thread_name", "pid": hw, "tid": 3, "args": {"name": "Stream 3"}},
        {"ph": "X", "name": "ProfilerStep#1", "pid": host, "tid": host, "ts": "1704161511420000.000", "dur": 500.0,
         "cat": "cpu_op", "args": {"Sequence number": -1}},
        {"ph": "X", "name": "aten::zero_", "pid": host, "tid": host, "ts": "1704161511422850.000", "dur": 20.5,
         "cat": "cpu_op", "args": {"Sequence number": -1, "Fwd thread id": 0, "Input Dims": [[4, 4]]}},
        {"ph": "X", "name": "Enqueue", "pid": host, "tid": host, "ts": "1704161511422856.936", "dur": 13.33,
         "cat": "enqueue", "args": {"correlation_id": 148}},
        {"ph": "s", "bp": "e", "name": "torch_to_npu", "id": 1704161511422904204, "pid": host, "tid": host,
         "ts": "1704161511422855.116", "cat": "async_npu"},
        {"name": "AscendCL@aclnnInplaceZero", "pid": cann, "tid": 439084, "ts": "1704161511422890.000",
         "dur": 12.77012757357446, "args": {"Thread Id": 439084, "Mode": "ACL_OP", "level": "acl",
                                            "id": "aclnnInplaceZero", "item_id": "0", "connection_id": 8}, "ph": "X"},
        {"name": "HostToDevice38654705663", "ph": "s", "cat": "HostToDevice", "id": "38654705663", "pid": cann,
         "tid": 439084, "ts": "1704161511422898.906"},
        {"name": "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", "pid": hw, "tid": 3, "ts": "1704161511422904.204",
         "dur": 1.35, "args": {"Model Id": 4294967295, "Task Type": "AI_VECTOR_CORE", "Stream Id": 3, "Task Id": 279,
                               "Batch Id": 0, "Subtask Id": 4294967295, "connection_id": 8}, "ph": "X"},
        {"name": "HostToDevice38654705663", "ph": "f", "id": "38654705663", "ts": "1704161511422904.204",
         "cat": "HostToDevice", "pid": hw, "tid": 3, "bp": "e"},
        {"ph": "f", "bp": "e", "name": "torch_to_npu", "id": 1704161511422904204, "pid": hw, "tid": 3,
         "ts": "1704161511422904.204", "cat": "async_npu"},
        {"name": "hcom_allReduce__1_0", "pid": hw, "tid": 3, "ts": "1704161511422910.000", "dur": 30,
         "args": {"Model Id": 4294967295, "Task Type": "HCCL", "Stream Id": 3, "Task Id": 280}, "ph": "X"},
    ]


# --- Ascend profiler SQLite database -----------------------------------------------

DB_SCHEMA = """
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT);
CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId INTEGER,globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER, depth integer);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,blockDim INTEGER,mixBlockDim INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER, waitNs INTEGER);
CREATE TABLE CANN_API (startNs INTEGER,endNs INTEGER,type INTEGER,globalTid INTEGER,connectionId INTEGER PRIMARY KEY,name INTEGER, depth integer);
CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, type INTEGER, depth integer);
CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
CREATE TABLE META_DATA (name TEXT,value TEXT);
CREATE TABLE NPU_INFO (id INTEGER,name TEXT);
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY,name TEXT);
CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC);
"""


def ascend_db_bytes():
    t0 = 1736410576395000000
    strings = ["MEMCPY_ASYNC", "KERNEL_AIVEC", "KERNEL_AICORE", "aten::mm", "aclnnMm_MatMulV3", "MatMulV3",
               "ND;ND", "DT_BF16;DT_BF16", "\"16,4096;4096,4096\"", "aclnnMm", "aic_total_cycles", "ProfilerStep#50"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "seed.db")
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size=512")
        db.executescript(DB_SCHEMA)
        db.executemany("INSERT INTO STRING_IDS VALUES (?,?)", list(enumerate(strings)))
        db.executemany("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [
            (t0 + 5000, t0 + 9000, 0, 936, 1, 3136493, 2, 4294967295, 2, 11061, 4294967295, 0),
            (t0 + 9500, t0 + 9600, 0, 937, 2, 3136493, 1, 4294967295, 2, 11062, 4294967295, 0),
            (t0 + 9700, t0 + 9701, 0, 4294967295, 3, 3136493, 0, 4294967295, 2, 11063, 4294967295, 0),
        ])
        db.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [
            (4, 1, 20, 0, 2, 5, 6, 7, 8, 6, 7, 8, None, 0),
            (4, 2, 8, 0, 1, 5, 6, 7, 8, 6, 7, 8, None, 100),
        ])
        db.executemany("INSERT INTO CANN_API VALUES (?,?,?,?,?,?,?)", [
            (t0 + 1000, t0 + 4000, 20000, 13471134862269421, 936, 9, 0),
            (t0 + 4100, t0 + 4200, 20000, 13471134862269421, 937, 9, 0),
        ])
        db.executemany("INSERT INTO PYTORCH_API VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [
            (str(t0), str(t0 + 20000), 13471134862269421, None, 11, None, None, None, None, None, 50002, 0),
            (str(t0 + 500), str(t0 + 4500), 13471134862269421, 0, 3, 7, 0, 7, 8, None, 50001, 1),
        ])
        db.executemany("INSERT INTO CONNECTION_IDS VALUES (?,?)", [(0, 936), (0, 937)])
        db.execute("INSERT INTO STEP_TIME VALUES (50, ?, ?)", (t0, t0 + 20000))
        db.executemany("INSERT INTO META_DATA VALUES (?,?)", [("SCHEMA_VERSION_MAJOR", "1"),
                                                               ("SCHEMA_VERSION_MINOR", "0")])
        db.execute("INSERT INTO NPU_INFO VALUES (0, 'Ascend910B')")
        db.executemany("INSERT INTO ENUM_API_TYPE VALUES (?,?)", [(20000, "acl"), (50001, "op"), (50002, "step")])
        db.execute("INSERT INTO TASK_PMU_INFO VALUES (1, 10, 1234)")
        db.commit()
        db.execute("VACUUM")
        db.close()
        with open(path, "rb") as f:
            return f.read()


# pypto's saved profile (`pypto export-sqlite`, schema pypto.sqlite/2; docs/sqlite-schema.md):
# the tables the importer reads, without the views and indexes the export adds for queries.
PYPTO_DB_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tracks(id INTEGER PRIMARY KEY, pid TEXT, tid TEXT, name TEXT, process_name TEXT, kind TEXT NOT NULL,
  device INTEGER, stream INTEGER);
CREATE TABLE devices(id INTEGER PRIMARY KEY, idx INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT);
CREATE TABLE host_ops(id INTEGER PRIMARY KEY, name_id INTEGER NOT NULL, category_id INTEGER NOT NULL, kind TEXT NOT NULL,
  track INTEGER NOT NULL, ts INTEGER NOT NULL, dur INTEGER NOT NULL, self_ns INTEGER NOT NULL, depth INTEGER, parent INTEGER,
  op_class TEXT NOT NULL, input_dims_id INTEGER NOT NULL, input_types_id INTEGER NOT NULL, correlation INTEGER,
  external_id INTEGER, sequence_number INTEGER);
CREATE TABLE device_tasks(id INTEGER PRIMARY KEY, name_id INTEGER NOT NULL, category_id INTEGER NOT NULL, kind TEXT NOT NULL,
  track INTEGER NOT NULL, device INTEGER, stream INTEGER, ts INTEGER NOT NULL, dur INTEGER NOT NULL, op_class TEXT NOT NULL,
  class_source TEXT NOT NULL, launcher INTEGER, operator INTEGER, link TEXT NOT NULL, graph_launched INTEGER NOT NULL,
  correlation INTEGER, external_id INTEGER, bytes INTEGER, core_type_id INTEGER NOT NULL, op_type_id INTEGER NOT NULL,
  block_dim INTEGER, input_shapes_id INTEGER NOT NULL, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER, mix_block_dim INTEGER, input_types_id INTEGER NOT NULL,
  input_formats_id INTEGER NOT NULL, output_shapes_id INTEGER NOT NULL, output_types_id INTEGER NOT NULL,
  output_formats_id INTEGER NOT NULL);
CREATE TABLE attributes(owner_kind TEXT NOT NULL, owner INTEGER NOT NULL, key TEXT NOT NULL, text TEXT, number REAL);
CREATE TABLE steps(id INTEGER PRIMARY KEY, number INTEGER, name TEXT, source TEXT, device INTEGER, cpu_start INTEGER,
  cpu_end INTEGER, device_start INTEGER, device_end INTEGER, device_task_count INTEGER, latency_ns INTEGER);
CREATE TABLE profile_steps(id INTEGER PRIMARY KEY, number INTEGER NOT NULL, name_id INTEGER NOT NULL, ts INTEGER,
  dur INTEGER, source_id INTEGER NOT NULL, device INTEGER, computing INTEGER, communication_not_overlapped INTEGER,
  overlapped INTEGER, communication INTEGER, free INTEGER, stage INTEGER, bubble INTEGER,
  communication_not_overlapped_excluding_receive INTEGER, preparing INTEGER);
CREATE TABLE flows(flow_id INTEGER NOT NULL, category_id INTEGER NOT NULL, phase TEXT NOT NULL, track INTEGER NOT NULL,
  ts INTEGER NOT NULL);
CREATE TABLE counters(name_id INTEGER NOT NULL, track INTEGER NOT NULL, ts INTEGER NOT NULL, value REAL);
CREATE TABLE data_loss(reason TEXT PRIMARY KEY, count INTEGER NOT NULL, first_location TEXT);
CREATE TABLE notes(id INTEGER PRIMARY KEY, source TEXT NOT NULL, text TEXT NOT NULL);
"""
PYPTO_DB_APPLICATION_ID = 0x50595054  # "PYPT" (src/importers/pypto_db/pypto_db_format.h)


def pypto_db_bytes():
    """A tiny saved profile: one step, an operator launching a matmul kernel, a memcpy, a flow, a counter."""
    t0 = 1736410576395000000
    strings = ["", "ProfilerStep#7", "aten::mm", "cpu_op", "cudaLaunchKernel", "cuda_runtime",
               "ampere_bf16_gemm_128x64", "kernel", "[[16, 4096], [4096, 4096]]", "[\"c10::BFloat16\"]",
               "Memcpy HtoD", "gpu_memcpy", "ac2g", "Total Allocated", "user_annotation", "step table"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "seed.db")
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size=512")
        db.execute(f"PRAGMA application_id={PYPTO_DB_APPLICATION_ID}")
        db.execute("PRAGMA user_version=2")
        db.executescript(PYPTO_DB_SCHEMA)
        db.executemany("INSERT INTO meta VALUES (?,?)", [
            ("schema", "pypto.sqlite/2"), ("schema_version", "2"), ("pypto_version", "0.1.0"),
            ("profile.format", "kineto"), ("profile.clock", "epoch")])
        db.executemany("INSERT INTO strings VALUES (?,?)", list(enumerate(strings)))
        db.executemany("INSERT INTO tracks VALUES (?,?,?,?,?,?,?,?)", [
            (0, "100", "101", "python", "proc", "host_thread", None, None),
            (1, "0", "7", "stream 7", "GPU 0", "device_stream", 0, 7)])
        db.execute("INSERT INTO devices VALUES (0, 0, 'cuda', 'NVIDIA A100-SXM4-80GB')")
        db.executemany("INSERT INTO host_ops VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [
            (0, 1, 14, "user_annotation", 0, t0, 20000, 5000, 0, None, "other", 0, 0, None, None, None),
            (1, 2, 3, "operator", 0, t0 + 1000, 10000, 6000, 1, 0, "matmul", 8, 9, None, 5, 42),
            (2, 4, 5, "runtime", 0, t0 + 2000, 4000, 4000, 2, 1, "other", 0, 0, 11, 5, None)])
        db.executemany("INSERT INTO device_tasks VALUES (" + ",".join("?" * 34) + ")", [
            (0, 6, 7, "kernel", 1, 0, 7, t0 + 7000, 9000, "matmul", "name", 2, 1, "external_id", 0, 11, 5, None,
             0, 0, None, 0, 128, 1, 1, 256, 1, 1, None, 0, 0, 0, 0, 0),
            (1, 10, 11, "memcpy", 1, 0, 7, t0 + 16500, 1000, "copy", "kind", None, None, "none", 0, None, None, 4096,
             0, 0, None, 0, None, None, None, None, None, None, None, 0, 0, 0, 0, 0)])
        db.executemany("INSERT INTO attributes VALUES (?,?,?,?,?)", [
            ("device_task", 0, "registers per thread", "128", 128.0), ("device", 0, "numSms", "108", 108.0)])
        db.execute("INSERT INTO profile_steps VALUES (0, 7, 1, ?, 20000, 15, -1, 12000, NULL, NULL, NULL, 8000, "
                   "NULL, NULL, NULL, NULL)", (t0,))
        db.executemany("INSERT INTO flows VALUES (?,?,?,?,?)", [(11, 12, "s", 0, t0 + 2000), (11, 12, "f", 1, t0 + 7000)])
        db.execute("INSERT INTO counters VALUES (13, 0, ?, 1048576.0)", (t0 + 500,))
        db.execute("INSERT INTO data_loss VALUES ('malformed event (skipped)', 1, 'trace.json: byte 1234')")
        db.execute("INSERT INTO notes VALUES (0, 'import', 'synthetic seed')")
        db.commit()
        db.execute("VACUUM")
        db.close()
        with open(path, "rb") as f:
            return f.read()


# --- writing -------------------------------------------------------------------------

def gz(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as f:
        f.write(data)
    return buf.getvalue()


def main():
    kineto = {
        "kineto_torch24_h100.json": dumps(kineto_modern()).encode(),
        "kineto_torch112_a100.json": dumps(kineto_2022()).encode(),
        "kineto_torch19_v100.json": dumps(kineto_torch19()).encode(),
        "kineto_rocm_graph.json": dumps(kineto_rocm()).encode(),
        "kineto_cpu_only.json": dumps(kineto_cpu_only()).encode(),
        "kineto_legacy_export.json": dumps(legacy_export()).encode(),
        "kineto_pathologies_truncated.json": kineto_pathologies()[0],
        "kineto_torch24_h100.json.gz": gz(dumps(kineto_modern()).encode()),
    }
    csvs = {
        "kernel_details_cann83.csv": kernel_details_83(),
        "kernel_details_cann8_bom_crlf.csv": kernel_details_8_quoted_ts(),
        "op_summary_msprof_old.csv": op_summary_old(),
        "op_summary_msprof_newcann.csv": op_summary_new(),
        "step_trace_time.csv": step_trace_time(),
        "op_statistic.csv": op_statistic(),
        "memory_record.csv": memory_record(),
    }
    timelines = {"trace_view_tiny.json": dumps(trace_view()).encode()}
    dbs = {"ascend_pytorch_profiler_tiny.db": ascend_db_bytes()}
    everything = {**kineto, **csvs, **timelines, **dbs}
    targets = {
        "kineto": kineto,
        "ascend_csv": csvs,
        "trace_view": timelines,
        "ascend_db": dbs,
        "pypto_db": {"saved_profile_tiny.db": pypto_db_bytes()},
        "detect": everything,
        "graph_report": everything,
    }
    for target, files in targets.items():
        folder = os.path.join(ROOT, target)
        os.makedirs(folder, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
    total = sum(len(v) for v in targets.values())
    print(f"wrote {total} seeds under {ROOT}", file=sys.stderr)


if __name__ == "__main__":
    main()
