// gen_ascend_profiler_db: writes a large synthetic Ascend PyTorch Profiler
// database (torch_npu `_export_type: db`, `ascend_pytorch_profiler_{rank}.db`,
// SQLite, SCHEMA_VERSION 1.0.0) of LLM decoding on one Atlas A2 NPU with tensor
// parallelism (default 2), for the loader benchmark (bench/run_bench.sh).
//
// Layout mirrors the real exports in the fixtures (pta_db_level0_2rank_allreduce,
// pta_db_level1_alexnet_cann8): the same tables, column names and column types,
// every text column an id into STRING_IDS (CANN-side strings from 0, torch-side
// strings from 1 << 28, as torch_npu numbers them), times in ns since the epoch,
// PYTORCH_API.startNs/endNs stored as TEXT (as in the real files), TASK /
// COMMUNICATION_TASK_INFO indexes, 4294967295 for "not applicable".
//
// Links as in the real files:
//   - CANN_API.connectionId is unique (PRIMARY KEY) and numbered in call order;
//     a kernel's TASK.connectionId is its node-level `launch` call's id; EVENT_*
//     tasks share the aclrtRecordEvent / aclrtStreamWaitEvent call's id; a
//     collective's own task (typed AI_CORE, no info row, spans the op) and its
//     HCCL sub-tasks (SDMA, Write Value, Notify Wait; one contextId each) share
//     the hcom `launch` id, which is also COMMUNICATION_OP.connectionId.
//   - PYTORCH_API.connectionId is a key of CONNECTION_IDS(id, connectionId):
//     Enqueue rows get ids [0, E), their Dequeue@<op> rows [E, 2E) (a pair
//     maps to one flow id above every CANN id), the aclnn / aclop record ops
//     that launch work get ids from 2E (mapping to their launch ids).
//   - globalTid = pid << 32 | tid: Python main thread and the ACL task-queue
//     (dequeue) thread; device stream 2 computes, stream 4 is HCCL's.
//
// Content, per token step (ProfilerStep#N on the main thread, one STEP_TIME
// row): an H2D copy of the input ids (MEMCPY_ASYNC), embedding GatherV2, then per
// layer RmsNorm, q/k/v aclnnAddmm -> MatMulV2, RotaryMul on q and k (aclop path:
// aclopCompileAndExecute + opCompile), KV-cache ScatterUpdate x2,
// IncreFlashAttention (MIX_AIC; PromptFlashAttention on the prefill step 0),
// o_proj MatMulV2, hcom_allReduce_ (c10d::allreduce_ with its record/wait
// events), residual Add, RmsNorm, gate_up MatMulV3, SwiGlu, down MatMulV3,
// hcom_allReduce_, Add; then the final RmsNorm, lm_head MatMulV2, an
// hcom_allGather_ of the vocab-parallel logits, ArgMaxV2 and `.item()` (stream
// sync + D2H copy). Qwen2-7B-like shapes per rank (hidden 3584, 14 q / 2 kv
// heads per rank, MLP 9472 per rank), BF16. The KV length grows by one per step.
// Times: a roofline device model (~1.3 TB/s of the 1.6 TB/s HBM, ~220 TFLOP/s BF16 achieved,
// 1.2 us floor), eager-mode host costs, so decode is host-bound as in real
// eager torch_npu traces; the prefill step is device-bound.
//
// Deterministic: the same flags and --seed give the same rows (file bytes too).
//
// usage: gen_ascend_profiler_db (--out FILE | --run-dir DIR) [--rows N | --steps N]
//          [--layers L] [--batch B] [--prompt P] [--rank R] [--world W]
//          [--no-prefill] [--pmu] [--analysis-db FILE] [--seed S] [--quiet]
//   --out FILE      the database alone
//   --run-dir DIR   a whole `*_ascend_pt` folder: DIR/profiler_info_R.json,
//                   DIR/profiler_metadata.json and
//                   DIR/ASCEND_PROFILER_OUTPUT/{ascend_pytorch_profiler_R.db,analysis.db}
//   --rows N        at least N TASK rows (whole steps; default 1000000)
//   --pmu           Level1 + PipeUtilization: TASK_PMU_INFO (28 rows per kernel);
//                   default aic_metrics NONE (no PMU table), like the Level0 fixture
//   --analysis-db   also write analysis.db (StepTraceTime, CommAnalyzerTime,
//                   CommAnalyzerBandwidth), as torch_npu does beside the DB

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gen_common.h"

namespace {

// ---------------------------------------------------------------------------
// Constants.

constexpr int64_t kStartNs = 1764246877073569640;  // 2025-11-27, like the CANN 8.3 sample
constexpr int64_t kNa32 = 4294967295;               // UINT32_MAX: contextId / modelId / rank "N/A"
constexpr int64_t kNotifyNa = 9223372036854775807;  // notifyId of SDMA memcpy sub-tasks
constexpr int64_t kTorchStringBase = 1 << 28;       // torch_npu's STRING_IDS range
constexpr int64_t kPid = 2918463;
constexpr int64_t kMainTid = kPid;
constexpr int64_t kAclTid = kPid + 3321;            // torch_npu task-queue (dequeue) thread
constexpr int kComputeStream = 2;
constexpr int kHcclStream = 4;
constexpr int kAicCores = 20;                       // Atlas A2 (910B3): 20 AI Cores
constexpr int kAivCores = 40;                       //   and 40 vector cores
constexpr int64_t kFirstConnection = 263;           // CANN ids do not start at 0 in real files
// ENUM_API_TYPE ids.
constexpr int kApiHccl = 5500, kApiNode = 10000, kApiAcl = 20000;
constexpr int kTorchOp = 50001, kTorchQueue = 50002;
// ENUM_HCCL_DATA_TYPE / LINK / TRANSPORT ids.
constexpr int kHcclBf16 = 11, kHcclInvalid = 65535;
constexpr int kLinkOnChip = 0, kLinkHccs = 1;
constexpr int kTransportSdma = 0, kTransportLocal = 2;
// Model (Qwen2-7B-like, per rank of tensor parallelism 2).
constexpr int64_t kHidden = 3584;
constexpr int64_t kHeadsPerRank = 14;
constexpr int64_t kKvHeadsPerRank = 2;
constexpr int64_t kHeadDim = 128;
constexpr int64_t kInterPerRank = 9472;
constexpr int64_t kVocabPerRank = 76032;
// Device model.
constexpr double kBytesPerUs = 1.3e6;     // ~1.3 TB/s achieved of the 1.6 TB/s HBM
constexpr double kFlopsPerUs = 2.2e8;     // ~220 TFLOP/s BF16 achieved
constexpr double kFloorUs = 1.2;
constexpr double kCommLatencyUs = 16.0;   // HCCL small-message latency
constexpr double kHccsBytesPerUs = 5.6e4; // ~56 GB/s per HCCS link in practice
constexpr int kDefaultLayers = 28;
constexpr int64_t kDefaultBatch = 8;
constexpr int64_t kDefaultPrompt = 1024;
constexpr int64_t kDefaultRows = 1000000;

// Schema: the real export's DDL (Level0 2-rank fixture, not touched by Insight).
const char* const kSchema[] = {
    "CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER,endTimeNs INTEGER)",
    "CREATE TABLE HOST_INFO (hostUid TEXT,hostName TEXT)",
    "CREATE TABLE NPU_INFO (id INTEGER,name TEXT)",
    "CREATE TABLE ENUM_HCCL_RDMA_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE ENUM_MSTX_EVENT_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,blockDim INTEGER,mixBlockDim "
    "INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes "
    "INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER)",
    "CREATE TABLE ENUM_HCCL_LINK_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE ENUM_HCCL_TRANSPORT_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER,globalTaskId INTEGER,taskType INTEGER,planeId "
    "INTEGER,groupName INTEGER,notifyId INTEGER,rdmaType INTEGER,srcRank INTEGER,dstRank INTEGER,transportType "
    "INTEGER,size INTEGER,dataType INTEGER,linkType INTEGER,opId INTEGER)",
    "CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId "
    "INTEGER,globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER)",
    "CREATE TABLE CANN_API (startNs INTEGER,endNs INTEGER,type INTEGER,globalTid INTEGER,connectionId INTEGER "
    "PRIMARY KEY,name INTEGER)",
    "CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE META_DATA (name TEXT,value TEXT)",
    "CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,connectionId INTEGER,groupName "
    "INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,dataType INTEGER,algType INTEGER,count "
    "NUMERIC,opType INTEGER)",
    "CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE AICORE_FREQ (deviceId INTEGER,timestampNs NUMERIC,freq INTEGER)",
    "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT)",
    "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER)",
    "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)",
    "CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, "
    "sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, "
    "type INTEGER)",
    "CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER)",
    "CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER)",
};
const char kPmuSchema[] = "CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC)";
// Created after the rows (faster than maintaining them during the inserts).
const char* const kIndexes[] = {
    "CREATE INDEX CommunicationTaskIndex ON COMMUNICATION_TASK_INFO (globalTaskId)",
    "CREATE INDEX TaskIndex ON TASK (startNs,globalTaskId)",
};

const char* const kAnalysisSchema[] = {
    "CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, communication_not_overlapped "
    "NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, "
    "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)",
    "CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time "
    "NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, "
    "type TEXT)",
    "CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT, transport_type TEXT, transit_size "
    "NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC, package_size NUMERIC, count "
    "NUMERIC, total_duration NUMERIC, step TEXT, type TEXT)",
};

struct EnumRow {
  int64_t id;
  const char* name;
};
const EnumRow kApiTypes[] = {{5000, "runtime"}, {5500, "hccl"},  {10000, "node"}, {15000, "model"}, {20000, "acl"},
                             {50001, "op"},     {50002, "queue"}, {50003, "trace"}, {50004, "mstx"}};
const EnumRow kHcclDataTypes[] = {{0, "INT8"},    {1, "INT16"},   {2, "INT32"},  {3, "FP16"},  {4, "FP32"},
                                  {5, "INT64"},   {6, "UINT64"},  {7, "UINT8"},  {8, "UINT16"}, {9, "UINT32"},
                                  {10, "FP64"},   {11, "BFP16"},  {12, "INT128"}, {65534, "N/A"},
                                  {65535, "INVALID_TYPE"}};
const EnumRow kHcclLinkTypes[] = {{0, "ON_CHIP"}, {1, "HCCS"},    {2, "PCIE"},          {3, "ROCE"},
                                  {4, "SIO"},     {5, "HCCS_SW"}, {6, "STANDARD_ROCE"}, {7, "RESERVED"},
                                  {65534, "N/A"}, {65535, "INVALID_TYPE"}};
const EnumRow kHcclTransportTypes[] = {{0, "SDMA"}, {1, "RDMA"}, {2, "LOCAL"}, {65534, "N/A"}, {65535, "INVALID_TYPE"}};
const EnumRow kHcclRdmaTypes[] = {{0, "RDMA_SEND_NOTIFY"},    {1, "RDMA_SEND_PAYLOAD"}, {2, "RDMA_PAYLOAD_PREPARE"},
                                  {3, "RDMA_PAYLOAD_CHECK"},  {4, "RDMA_PAYLOAD_ACK"},  {5, "RDMA_SEND_OP"},
                                  {65534, "N/A"},             {65535, "INVALID_TYPE"}};
const EnumRow kMstxEventTypes[] = {{0, "marker"}, {1, "push/pop"}, {2, "start/end"}, {3, "marker_ex"}};

// TASK_PMU_INFO metric names (PipeUtilization), in the real table's order.
const char* const kPmuNames[] = {
    "aic_total_time",  "aic_total_cycles", "aic_mac_time",     "aic_mac_ratio",    "aic_scalar_time",
    "aic_scalar_ratio", "aic_mte1_time",   "aic_mte1_ratio",   "aic_mte2_time",    "aic_mte2_ratio",
    "aic_fixpipe_time", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_total_time", "aiv_total_cycles",
    "aiv_vec_time",    "aiv_vec_ratio",    "aiv_mac_time",     "aiv_mac_ratio",    "aiv_scalar_time",
    "aiv_scalar_ratio", "aiv_mte1_time",   "aiv_mte1_ratio",   "aiv_mte2_time",    "aiv_mte2_ratio",
    "aiv_mte3_time",   "aiv_mte3_ratio",   "aiv_icache_miss_rate"};
constexpr int kPmuMetrics = sizeof kPmuNames / sizeof kPmuNames[0];

// ---------------------------------------------------------------------------

class Rng : public pypto::bench::SplitMix64 {
 public:
  using SplitMix64::SplitMix64;
  double Jitter(double v, double rel) { return v * (1.0 + rel * (2.0 * Uniform() - 1.0)); }
  // A host cost in ns: `us` +-30%.
  int64_t HostNs(double us) { return std::max<int64_t>(20, std::llround(Jitter(us, 0.3) * 1000.0)); }
};

// Heterogeneous lookup: interning a string_view allocates only for new strings.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIds = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "gen_ascend_profiler_db: %s\n", what.c_str());
  std::exit(1);
}

// HCCL's group hash (msprof-analyze's cluster_analyse.common_func.utils.double_hash):
// the numeric group name of a process group id such as "group_name_3".
uint64_t DoubleHash(std::string_view s) {
  uint32_t a = 0, b = 0;
  for (unsigned char c : s) {
    a = a * 29u + c;
    b = b * 131u + c;
  }
  return (static_cast<uint64_t>(a) << 32) | b;
}

// ---------------------------------------------------------------------------
// SQLite writer: one prepared INSERT per table, rows bound as int64 / text /
// NULL. In a dry run nothing is written; the counters still count.

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK)
      Die("prepare '" + sql + "': " + sqlite3_errmsg(db));
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(std::exchange(o.s_, nullptr)), col_(0) {}
  Stmt& operator=(Stmt&& o) noexcept {
    if (this != &o) {
      if (s_) sqlite3_finalize(s_);
      db_ = o.db_;
      s_ = std::exchange(o.s_, nullptr);
      col_ = 0;
    }
    return *this;
  }
  ~Stmt() {
    if (s_) sqlite3_finalize(s_);
  }
  Stmt& I(int64_t v) {
    sqlite3_bind_int64(s_, ++col_, v);
    return *this;
  }
  Stmt& D(double v) {
    sqlite3_bind_double(s_, ++col_, v);
    return *this;
  }
  Stmt& T(std::string_view v) {
    sqlite3_bind_text(s_, ++col_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& N() {
    sqlite3_bind_null(s_, ++col_);
    return *this;
  }
  Stmt& Opt(int64_t v, bool present) { return present ? I(v) : N(); }
  void Done() {
    if (sqlite3_step(s_) != SQLITE_DONE) Die(std::string("insert: ") + sqlite3_errmsg(db_));
    sqlite3_reset(s_);
    col_ = 0;
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
  int col_ = 0;
};

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    Die("'" + sql.substr(0, 60) + "': " + msg);
  }
}

sqlite3* OpenFresh(const std::string& path) {
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK)
    Die("cannot create " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
  // Bulk load: no journal, no fsync, one writer. The file is renamed into place
  // only when complete, so a crash leaves no half-written database behind.
  Exec(db, "PRAGMA journal_mode=OFF");
  Exec(db, "PRAGMA synchronous=OFF");
  Exec(db, "PRAGMA locking_mode=EXCLUSIVE");
  Exec(db, "PRAGMA temp_store=MEMORY");
  Exec(db, "PRAGMA cache_size=-262144");  // 256 MiB page cache (index builds)
  return db;
}

void CloseDb(sqlite3* db, const std::string& path) {
  if (sqlite3_close(db) != SQLITE_OK) Die("close " + path + ": " + sqlite3_errmsg(db));
}

// ---------------------------------------------------------------------------

struct Options {
  std::string out;          // the database path
  std::string run_dir;      // or a whole *_ascend_pt folder
  std::string analysis_db;
  int64_t rows = 0;
  int64_t steps = 0;
  int layers = kDefaultLayers;
  int64_t batch = kDefaultBatch;
  int64_t prompt = kDefaultPrompt;
  int rank = 0;
  int world = 2;
  bool prefill = true;
  bool pmu = false;
  uint64_t seed = 1;
  bool quiet = false;
};

// What one step adds, from a dry run of one step.
struct Counts {
  int64_t tasks = 0, enqueues = 0, cann = 0;
};

enum class Core { kAic, kAiv, kMixAic };

struct Kernel {
  const char* name;     // COMPUTE_TASK_INFO.name (kernel_details "Name")
  const char* op_type;  // opType
  Core core;
  int block, mix_block;
};

const Kernel kRmsNorm{"RmsNorm", "RmsNorm", Core::kAiv, kAivCores, 0};
const Kernel kAddmm{"aclnnAddmm_MatMulCommon_MatMulV2", "MatMulV2", Core::kAic, kAicCores, 0};
const Kernel kMmV2{"aclnnMm_MatMulCommon_MatMulV2", "MatMulV2", Core::kAic, kAicCores, 0};
const Kernel kMmV3{"aclnnMm_MatMulV3Common_MatMulV3", "MatMulV3", Core::kAic, kAicCores, 0};
const Kernel kRotary{"RotaryMul", "RotaryMul", Core::kAiv, kAivCores, 0};
const Kernel kScatter{"aclnnScatterUpdate_ScatterUpdateAiCore_ScatterUpdate", "ScatterUpdate", Core::kAiv, 8, 0};
const Kernel kIfa{"aclnnIncreFlashAttentionV4_IncreFlashAttention_IncreFlashAttention", "IncreFlashAttention",
                  Core::kMixAic, kAicCores, kAivCores};
const Kernel kPfa{"aclnnPromptFlashAttentionV3_PromptFlashAttention_PromptFlashAttention", "PromptFlashAttention",
                  Core::kMixAic, kAicCores, kAivCores};
const Kernel kAdd{"aclnnAdd_AddAiCore_Add", "Add", Core::kAiv, kAivCores, 0};
const Kernel kSwiGlu{"SwiGlu", "SwiGlu", Core::kAiv, kAivCores, 0};
const Kernel kGather{"aclnnEmbedding_GatherV2AiCore_GatherV2", "GatherV2", Core::kAiv, kAivCores, 0};
const Kernel kArgMax{"aclnnArgMax_ArgMaxV2AiCore_ArgMaxV2", "ArgMaxV2", Core::kAiv, 8, 0};

// One eager op that launches one kernel.
struct OpSpec {
  std::vector<const char*> chain;  // torch ops, outermost first ("aten::linear", "aten::addmm")
  std::string torch_shapes;        // of the outermost op (";\r\n"-separated, as torch_npu writes them)
  std::string torch_types;
  const char* record;              // the aclnn / aclop record function ("aclnnAddmm", "RotaryMul")
  bool aclop = false;              // GE single-op path (aclopCompileAndExecute) instead of aclnn
  const Kernel* kernel;
  std::string in_shapes, in_types, in_formats, out_shapes, out_types, out_formats;  // inner text
  double dur_us;
};

// Device busy spans of one step and the collectives' figures, for analysis.db.
struct Interval {
  int64_t s, e;
};
struct CommRecord {
  std::string name;
  int64_t s, e;
  double transit_us, wait_us;
  int64_t bytes;
};

class Gen {
 public:
  Gen(const Options& o, sqlite3* db, const Counts& per_step, int64_t total_steps)
      : o_(o), db_(db), rng_(o.seed * 0x100000001b3ULL + static_cast<uint64_t>(o.rank)) {
    main_gtid_ = (kPid << 32) | kMainTid;
    acl_gtid_ = (kPid << 32) | kAclTid;
    total_enqueues_ = per_step.enqueues * total_steps;
    const int64_t last_cann = kFirstConnection + per_step.cann * total_steps;
    // Queue flow ids sit above every CANN id (9210 over 975 in the 2025 sample).
    flow_base_ = (last_cann / 1000 + 9) * 1000 + 210;
    next_conn_ = kFirstConnection;
    device_ = o.rank;
    // HCCL names the TP group (process-group id "group_name_3", as in
    // parallel_group_info) by its hash; op names end in its last 3 digits.
    group_hash_ = std::to_string(DoubleHash("group_name_3"));
    h_ = a_ = kStartNs + 98'000'000;  // ~100 ms after the session start (schedule warm-up)
    d2_ = d4_ = h_;
    if (!db_) return;
    task_ = Stmt(db_, "INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    compute_ = Stmt(db_, "INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    comm_task_ = Stmt(db_, "INSERT INTO COMMUNICATION_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    comm_op_ = Stmt(db_, "INSERT INTO COMMUNICATION_OP VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    cann_ = Stmt(db_, "INSERT INTO CANN_API VALUES (?,?,?,?,?,?)");
    torch_ = Stmt(db_, "INSERT INTO PYTORCH_API VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    conn_ids_ = Stmt(db_, "INSERT INTO CONNECTION_IDS VALUES (?,?)");
    strings_ = Stmt(db_, "INSERT INTO STRING_IDS VALUES (?,?)");
    step_time_ = Stmt(db_, "INSERT INTO STEP_TIME VALUES (?,?,?)");
    if (o.pmu) pmu_ = Stmt(db_, "INSERT INTO TASK_PMU_INFO VALUES (?,?,?)");
  }

  void Step();
  // Finalizes the prepared statements (before the database is closed).
  void CloseStatements() {
    for (Stmt* s : {&task_, &compute_, &comm_task_, &comm_op_, &cann_, &torch_, &conn_ids_, &strings_, &step_time_, &pmu_})
      *s = Stmt();
  }

  // Rows written, per table (for the summary line).
  int64_t tasks() const { return global_task_id_; }
  int64_t steps() const { return step_; }
  int64_t cann_calls() const { return next_conn_ - kFirstConnection; }
  int64_t torch_rows() const { return torch_rows_; }
  int64_t links() const { return link_rows_; }
  int64_t enqueues() const { return enqueue_; }
  int64_t comm_ops() const { return op_id_; }
  int64_t rows_total() const { return rows_; }
  int64_t session_end() const { return std::max({h_, a_, d2_, d4_}); }
  const std::string& group_hash() const { return group_hash_; }

  // analysis.db material, kept per step.
  // One StepTraceTime row's material (ns): compute / communication busy time,
  // their overlap, and the step's first and last device times.
  struct StepSummary {
    int64_t number, s, e, first_task, last_task, compute, comm, overlap;
  };
  std::vector<StepSummary> step_summaries;
  std::vector<std::pair<int64_t, CommRecord>> comm_records;  // (step, op)
  bool keep_analysis = false;

 private:
  // --- strings --------------------------------------------------------------
  int64_t Cs(std::string_view s) { return Intern(s, &cann_strings_, &next_cann_string_); }
  int64_t Ts(std::string_view s) { return Intern(s, &torch_strings_, &next_torch_string_); }
  int64_t Intern(std::string_view s, StringIds* map, int64_t* next) {
    auto it = map->find(s);
    if (it != map->end()) return it->second;
    int64_t id = (*next)++;
    map->emplace(std::string(s), id);
    if (db_) strings_.I(id).T(s).Done();
    ++rows_;
    return id;
  }

  // --- rows -----------------------------------------------------------------
  int64_t Cann(int64_t s, int64_t e, int type, int64_t gtid, std::string_view name) {
    int64_t id = next_conn_++;
    if (db_) cann_.I(s).I(e).I(type).I(gtid).I(id).I(Cs(name)).Done();
    ++rows_;
    return id;
  }
  // PYTORCH_API row: times as TEXT (as torch_npu stores them).
  void Torch(int64_t s, int64_t e, int64_t gtid, int64_t conn, std::string_view name, int type,
             int64_t dtypes = -1, int64_t shapes = -1) {
    ++torch_rows_;
    ++rows_;
    if (!db_) return;
    char sb[24], eb[24];
    const char* se = std::to_chars(sb, sb + sizeof sb, s).ptr;
    const char* ee = std::to_chars(eb, eb + sizeof eb, e).ptr;
    torch_.T(std::string_view(sb, se - sb)).T(std::string_view(eb, ee - eb)).I(gtid).Opt(conn, conn >= 0).I(Ts(name));
    if (type == kTorchOp) torch_.I(-1).I(0);
    else torch_.N().N();
    torch_.Opt(dtypes, dtypes >= 0).Opt(shapes, shapes >= 0).N().I(type).Done();
  }
  void Link(int64_t id, int64_t connection) {
    ++link_rows_;
    ++rows_;
    if (db_) conn_ids_.I(id).I(connection).Done();
  }
  int64_t Task(int64_t s, int64_t e, int64_t conn, std::string_view type, int stream, int64_t task_id,
               int64_t context) {
    int64_t id = global_task_id_++;
    ++rows_;
    if (db_) task_.I(s).I(e).I(device_).I(conn).I(id).I(kPid).I(Cs(type)).I(context).I(stream).I(task_id).I(kNa32).Done();
    if (keep_analysis && cur_first_task_ < 0) cur_first_task_ = s;
    return id;
  }
  int64_t NextTaskId(int stream) {
    int64_t& t = stream == kHcclStream ? task_id4_ : task_id2_;
    int64_t v = t;
    t = (t + 1) % 65536;
    return v;
  }

  // --- host <-> device plumbing ---------------------------------------------
  // Enqueue on the main thread at [s, e]; returns the queue index.
  int64_t Enqueue(int64_t s, int64_t e) {
    int64_t i = enqueue_++;
    Torch(s, e, main_gtid_, i, "Enqueue", kTorchQueue);
    Link(i, flow_base_ + i);
    return i;
  }
  void Dequeue(int64_t index, int64_t s, int64_t e, std::string_view record) {
    int64_t id = total_enqueues_ + index;
    std::string name = "Dequeue@";
    name += record;
    Torch(s, e, acl_gtid_, id, name, kTorchQueue);
    Link(id, flow_base_ + index);
  }
  int64_t OpLink() { return 2 * total_enqueues_ + op_links_++; }

  // A host-only op (no launch): a record with an Enqueue whose dequeue runs
  // `acl_name` on the ACL thread. Returns the CANN call's [s, e] and id.
  struct CannCall {
    int64_t s, e, conn;
  };
  CannCall QueuedRuntimeCall(const char* record, const char* acl_name, double acl_us) {
    const int64_t s = h_;
    const int64_t enq_s = s + rng_.HostNs(1.6);
    const int64_t enq_e = enq_s + rng_.HostNs(1.8);
    const int64_t e = enq_e + rng_.HostNs(0.6);
    Torch(s, e, main_gtid_, -1, record, kTorchOp);
    const int64_t q = Enqueue(enq_s, enq_e);
    h_ = e + rng_.HostNs(2.0);
    const int64_t dq_s = std::max(a_, enq_e + rng_.HostNs(1.2));
    CannCall c;
    c.s = dq_s + rng_.HostNs(1.0);
    c.e = c.s + rng_.HostNs(acl_us);
    c.conn = Cann(c.s, c.e, kApiAcl, acl_gtid_, acl_name);
    const int64_t dq_e = c.e + rng_.HostNs(0.8);
    Dequeue(q, dq_s, dq_e, record);
    a_ = dq_e;
    return c;
  }

  // One compute op: torch chain, aclnn/aclop record + Enqueue, Dequeue + CANN
  // calls + launch on the ACL thread, the kernel on the compute stream.
  void Op(const OpSpec& op);
  // A collective: c10d op, events, HcclAllreduce/HcclAllgather, the HCCL
  // own task + sub-tasks on stream 4, and the compute stream's wait.
  void Collective(bool all_gather, int64_t bytes, int64_t count);
  void Memcpy(bool h2d, int64_t bytes);
  void Pmu(int64_t global_task, const Kernel& k, double dur_us);

  // --- shapes ---------------------------------------------------------------
  static std::string Dims(std::initializer_list<int64_t> d) {
    std::string s;
    for (int64_t v : d) {
      if (!s.empty()) s += ',';
      s += std::to_string(v);
    }
    return s;
  }
  // torch_npu's record_shapes text: one entry per input, ";\r\n" between them.
  static std::string TorchList(std::initializer_list<std::string> items) {
    std::string s;
    bool first = true;
    for (const std::string& i : items) {
      if (!first) s += ";\r\n";
      s += i;
      first = false;
    }
    return s;
  }
  double VecUs(double bytes) { return std::max(kFloorUs, rng_.Jitter(bytes / kBytesPerUs + kFloorUs, 0.08)); }
  double MatUs(double m, double k, double n) {
    const double bytes = 2.0 * (m * k + k * n + m * n);
    const double t = std::max(bytes / kBytesPerUs, 2.0 * m * k * n / kFlopsPerUs) + kFloorUs;
    return rng_.Jitter(t, 0.06);
  }
  OpSpec Linear(const Kernel& k, const char* aten, const char* record, int64_t m, int64_t kdim, int64_t n, bool bias,
                const std::string& x_torch) {
    OpSpec op;
    op.chain = {"aten::linear", aten};
    op.torch_shapes = bias ? TorchList({x_torch, Dims({n, kdim}), Dims({n})}) : TorchList({x_torch, Dims({n, kdim})});
    op.torch_types = bias ? TorchList({"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"})
                          : TorchList({"c10::BFloat16", "c10::BFloat16"});
    op.record = record;
    op.kernel = &k;
    op.in_shapes = bias ? Dims({m, kdim}) + ";" + Dims({n, kdim}) + ";" + Dims({n}) : Dims({m, kdim}) + ";" + Dims({n, kdim});
    op.in_types = bias ? "DT_BF16;DT_BF16;DT_BF16" : "DT_BF16;DT_BF16";
    op.in_formats = bias ? "ND;ND;ND" : "ND;ND";
    op.out_shapes = Dims({m, n});
    op.out_types = "DT_BF16";
    op.out_formats = "ND";
    op.dur_us = MatUs(static_cast<double>(m), static_cast<double>(kdim), static_cast<double>(n));
    return op;
  }
  OpSpec Vector(const Kernel& k, std::vector<const char*> chain, const char* record, std::string torch_shapes,
                std::string torch_types, std::string in_shapes, std::string in_types, std::string in_formats,
                std::string out_shapes, std::string out_types, double bytes) {
    OpSpec op;
    op.chain = std::move(chain);
    op.torch_shapes = std::move(torch_shapes);
    op.torch_types = std::move(torch_types);
    op.record = record;
    op.kernel = &k;
    op.in_shapes = std::move(in_shapes);
    op.in_types = std::move(in_types);
    op.in_formats = std::move(in_formats);
    op.out_shapes = std::move(out_shapes);
    op.out_types = std::move(out_types);
    op.out_formats = "ND";
    for (char c : op.out_types)
      if (c == ';') op.out_formats += ";ND";
    op.dur_us = VecUs(bytes);
    return op;
  }

  const Options& o_;
  sqlite3* db_;
  Rng rng_;
  Stmt task_, compute_, comm_task_, comm_op_, cann_, torch_, conn_ids_, strings_, step_time_, pmu_;
  StringIds cann_strings_, torch_strings_;
  int64_t next_cann_string_ = 0, next_torch_string_ = kTorchStringBase;
  int64_t main_gtid_, acl_gtid_;
  int64_t total_enqueues_ = 0, flow_base_ = 0;
  int64_t next_conn_ = 0;
  int64_t enqueue_ = 0, op_links_ = 0;
  int64_t global_task_id_ = 0, task_id2_ = 11061, task_id4_ = 806;
  int64_t op_id_ = 0, hccl_index_ = 0;
  int64_t torch_rows_ = 0, link_rows_ = 0, rows_ = 0;
  int64_t device_ = 0;
  std::string group_hash_;
  // Clocks (ns): main thread, ACL thread, compute stream, HCCL stream.
  int64_t h_, a_, d2_, d4_;
  int64_t step_ = 0;
  int64_t cur_first_task_ = -1;
  std::vector<Interval> cur_compute_, cur_comm_;
};

void Gen::Pmu(int64_t global_task, const Kernel& k, double dur_us) {
  const bool aic = k.core != Core::kAiv, aiv = k.core != Core::kAic;
  const double busy = dur_us * 0.96 * 1000.0;  // ns, a little below the task time
  double v[kPmuMetrics] = {};
  if (aic) {
    const double mac = rng_.Uniform() * 0.5 + 0.2, scal = rng_.Uniform() * 0.3, mte1 = rng_.Uniform() * 0.6,
                 mte2 = rng_.Uniform() * 0.4 + 0.5, fix = rng_.Uniform() * 0.3;
    const double r[] = {busy, std::floor(busy * 1.8 * k.block), busy * mac, mac, busy * scal, scal, busy * mte1,
                        mte1, busy * mte2, mte2, busy * fix, fix, rng_.Uniform() * 0.01};
    std::copy(std::begin(r), std::end(r), v);
  }
  if (aiv) {
    const double vec = rng_.Uniform() * 0.5, scal = rng_.Uniform() * 0.3, mte2 = rng_.Uniform() * 0.5 + 0.3,
                 mte3 = rng_.Uniform() * 0.5;
    const double r[] = {busy,          std::floor(busy * 1.8 * (k.mix_block ? k.mix_block : k.block)),
                        busy * vec,    vec, 0, 0, busy * scal, scal, 0, 0, busy * mte2, mte2, busy * mte3, mte3,
                        rng_.Uniform() * 0.2};
    std::copy(std::begin(r), std::end(r), v + 13);
  }
  for (int i = 0; i < kPmuMetrics; ++i) {
    ++rows_;
    if (!db_) continue;
    pmu_.I(global_task).I(Cs(kPmuNames[i]));
    // Integral values are stored as INTEGER, the rest as REAL (as in the fixture).
    if (v[i] == std::floor(v[i])) pmu_.I(static_cast<int64_t>(v[i]));
    else pmu_.D(v[i]);
    pmu_.Done();
  }
}

void Gen::Op(const OpSpec& op) {
  // Main thread: chain of torch ops, the record, the workspace query, the enqueue.
  const size_t depth = op.chain.size();
  std::vector<int64_t> starts(depth), ends(depth);
  int64_t t = h_;
  for (size_t i = 0; i < depth; ++i) {
    starts[i] = t;
    t += rng_.HostNs(i == 0 ? 5.0 : 3.5);
  }
  const int64_t rec_s = t;
  int64_t gws_s = -1, gws_e = -1;
  if (!op.aclop) {
    gws_s = rec_s + rng_.HostNs(0.8);
    gws_e = gws_s + rng_.HostNs(3.0);
    t = gws_e;
  } else {
    t = rec_s + rng_.HostNs(2.0);
  }
  const int64_t enq_s = t + rng_.HostNs(0.6);
  const int64_t enq_e = enq_s + rng_.HostNs(2.2);
  const int64_t rec_e = enq_e + rng_.HostNs(0.6);
  t = rec_e;
  for (size_t i = depth; i-- > 0;) {
    t += rng_.HostNs(i == 0 ? 2.0 : 1.2);
    ends[i] = t;
  }
  h_ = t + rng_.HostNs(3.0);  // Python between ops

  const int64_t shapes = op.torch_shapes.empty() ? -1 : (db_ ? Ts(op.torch_shapes) : 0);
  const int64_t types = op.torch_types.empty() ? -1 : (db_ ? Ts(op.torch_types) : 0);
  for (size_t i = 0; i < depth; ++i) Torch(starts[i], ends[i], main_gtid_, -1, op.chain[i], kTorchOp, types, shapes);
  const int64_t link = OpLink();
  Torch(rec_s, rec_e, main_gtid_, link, op.record, kTorchOp);
  if (!op.aclop) Cann(gws_s, gws_e, kApiAcl, main_gtid_, std::string(op.record) + "GetWorkspaceSize");
  const int64_t q = Enqueue(enq_s, enq_e);

  // ACL thread.
  const int64_t dq_s = std::max(a_, enq_e + rng_.HostNs(1.2));
  const int64_t acl_s = dq_s + rng_.HostNs(1.2);
  int64_t launch_s, launch_e, acl_e;
  int64_t compile_s = -1, compile_e = -1;
  if (op.aclop) {
    compile_s = acl_s + rng_.HostNs(2.0);
    compile_e = compile_s + rng_.HostNs(9.0);
    launch_s = compile_e + rng_.HostNs(2.0);
  } else {
    launch_s = acl_s + rng_.HostNs(2.5);
  }
  launch_e = launch_s + rng_.HostNs(3.5);
  acl_e = launch_e + rng_.HostNs(0.8);
  const int64_t dq_e = acl_e + rng_.HostNs(0.9);
  a_ = dq_e;
  Cann(acl_s, acl_e, kApiAcl, acl_gtid_, op.aclop ? "aclopCompileAndExecute" : op.record);
  if (op.aclop) Cann(compile_s, compile_e, kApiAcl, acl_gtid_, "opCompile");
  const int64_t launch = Cann(launch_s, launch_e, kApiNode, acl_gtid_, "launch");
  Dequeue(q, dq_s, dq_e, op.record);
  Link(link, launch);

  // Device: the kernel runs when the stream is free and the launch has arrived.
  const int64_t ts = std::max(d2_, launch_e + rng_.HostNs(1.5));
  const int64_t te = ts + std::max<int64_t>(500, std::llround(op.dur_us * 1000.0));
  d2_ = te;
  const Kernel& k = *op.kernel;
  const char* task_type = k.core == Core::kAiv ? "KERNEL_AIVEC" : "KERNEL_AICORE";
  const int64_t gid = Task(ts, te, launch, task_type, kComputeStream, NextTaskId(kComputeStream), kNa32);
  if (keep_analysis) cur_compute_.push_back({ts, te});
  ++rows_;
  if (db_) {
    const char* core = k.core == Core::kAic ? "AI_CORE" : k.core == Core::kAiv ? "AI_VECTOR_CORE" : "MIX_AIC";
    compute_.I(Cs(k.name)).I(gid).I(k.block).I(k.mix_block).I(Cs(core)).I(Cs(k.op_type)).I(Cs(op.in_formats))
        .I(Cs(op.in_types)).I(Cs("\"" + op.in_shapes + "\"")).I(Cs(op.out_formats)).I(Cs(op.out_types))
        .I(Cs("\"" + op.out_shapes + "\"")).I(Cs("N/A")).Done();
  }
  if (o_.pmu) Pmu(gid, k, op.dur_us);
}

void Gen::Collective(bool all_gather, int64_t bytes, int64_t count) {
  const char* c10d = all_gather ? "c10d::_allgather_base_" : "c10d::allreduce_";
  const char* hccl_record = all_gather ? "HcclAllgather" : "HcclAllreduce";
  const char* hcom = all_gather ? "hcom_allGather_" : "hcom_allReduce_";
  const int peer = (o_.rank + 1) % std::max(1, o_.world);

  const int64_t c10d_s = h_;
  h_ += rng_.HostNs(6.0);
  // 1. The compute stream records an event; 2. the HCCL stream waits for it.
  CannCall rec = QueuedRuntimeCall("record_event", "aclrtRecordEvent", 5.0);
  const int64_t er_s = std::max(d2_, rec.e + rng_.HostNs(1.0));
  d2_ = er_s + 20;
  Task(er_s, er_s + 20, rec.conn, "EVENT_RECORD", kComputeStream, NextTaskId(kComputeStream), kNa32);
  CannCall wait = QueuedRuntimeCall("wait_event", "aclrtStreamWaitEvent", 5.5);
  const int64_t ew_s = std::max(d4_, wait.e + rng_.HostNs(1.0));
  const int64_t ew_e = std::max(ew_s + 20, er_s + 20);
  d4_ = ew_e;
  Task(ew_s, ew_e, wait.conn, "EVENT_WAIT", kHcclStream, NextTaskId(kHcclStream), kNa32);

  // 3. HcclAllreduce: outer record, inner record with the launch link + Enqueue.
  const int64_t outer_s = h_;
  const int64_t inner_s = outer_s + rng_.HostNs(7.0);
  const int64_t enq_s = inner_s + rng_.HostNs(1.2);
  const int64_t enq_e = enq_s + rng_.HostNs(2.2);
  const int64_t inner_e = enq_e + rng_.HostNs(1.3);
  const int64_t outer_e = inner_e + rng_.HostNs(0.5);
  h_ = outer_e + rng_.HostNs(3.0);
  Torch(outer_s, outer_e, main_gtid_, -1, hccl_record, kTorchOp);
  const int64_t link = OpLink();
  Torch(inner_s, inner_e, main_gtid_, link, hccl_record, kTorchOp);
  const int64_t q = Enqueue(enq_s, enq_e);
  const int64_t dq_s = std::max(a_, enq_e + rng_.HostNs(1.2));
  const int64_t hcom_s = dq_s + rng_.HostNs(2.0);
  const int64_t ffts_s = hcom_s + rng_.HostNs(22.0);
  const int64_t ffts_e = ffts_s + rng_.HostNs(28.0);
  const int64_t hcom_e = ffts_e + rng_.HostNs(12.0);
  const int64_t dq_e = hcom_e + rng_.HostNs(1.5);
  a_ = dq_e;
  Cann(hcom_s, hcom_e, kApiAcl, acl_gtid_, hcom);
  const int64_t launch = Cann(hcom_s, hcom_e, kApiNode, acl_gtid_, "launch");  // same span as hcom_*, as in the sample
  Cann(ffts_s, ffts_e, kApiHccl, acl_gtid_, "Launch_Ffts");
  Dequeue(q, dq_s, dq_e, hccl_record);
  Link(link, launch);

  // Device: the collective's own task (AI_CORE, no info row) spans its sub-tasks.
  const std::string op_name = std::string(hcom) + "_" + group_hash_.substr(group_hash_.size() - 3) + "_" +
                              std::to_string(hccl_index_++) + "_1";
  const int64_t own_s = std::max(d4_, ffts_s + rng_.HostNs(8.0));
  const int64_t task_id = NextTaskId(kHcclStream);
  struct Sub {
    const char* info_type;  // COMMUNICATION_TASK_INFO.taskType
    const char* task_type;  // TASK.taskType
    double us;
    int64_t size;
    int dst, link, transport, data_type;
    int64_t notify;
  };
  const double skew_us = rng_.Uniform() < 0.1 ? rng_.Uniform() * 40.0 : rng_.Uniform() * 6.0;  // waiting for the peer
  const double wire_us = bytes / kHccsBytesPerUs;
  const int me = o_.rank;
  const int64_t notify = (static_cast<int64_t>(peer) << 32) | (60 + 4 * me);
  std::vector<Sub> subs = {
      {"Memcpy", "SDMA", 0.6 + bytes / 8e5, bytes, me, kLinkOnChip, kTransportSdma, kHcclInvalid, kNotifyNa},
      {"Notify_Record", "Write Value", 0.7, 0, peer, kHcclInvalid, kTransportSdma, kHcclInvalid, notify},
      {"Notify_Wait", "Notify Wait", 0.4 + skew_us, 0, peer, kHcclInvalid, kTransportLocal, kHcclInvalid, 76},
      {all_gather ? "Memcpy" : "Reduce_Inline", "SDMA", 1.0 + wire_us, bytes, peer, kLinkHccs, kTransportSdma,
       all_gather ? kHcclInvalid : kHcclBf16, all_gather ? kNotifyNa : 0},
      {"Notify_Record", "Write Value", 0.7, 0, peer, kHcclInvalid, kTransportSdma, kHcclInvalid, notify + 4},
      {"Notify_Wait", "Notify Wait", 0.4 + rng_.Uniform() * 2.0, 0, peer, kHcclInvalid, kTransportLocal, kHcclInvalid, 72},
      {"Memcpy", "SDMA", 0.6 + bytes / 8e5, bytes, me, kLinkOnChip, kTransportSdma, kHcclInvalid, kNotifyNa},
  };
  int64_t cur = own_s + rng_.HostNs(1.2);
  const int64_t first_s = cur;
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const Sub& s : subs) {
    const int64_t dur = std::max<int64_t>(20, std::llround(rng_.Jitter(s.us, 0.1) * 1000.0));
    spans.emplace_back(cur, cur + dur);
    cur += dur + rng_.HostNs(0.3);
  }
  const int64_t last_e = spans.back().second;
  const int64_t own_e = last_e + rng_.HostNs(1.5);
  d4_ = own_e;
  Task(own_s, own_e, launch, "AI_CORE", kHcclStream, task_id, kNa32);
  const int64_t op_id = ++op_id_;
  const int64_t name_id = db_ ? Cs(op_name) : 0;
  const int64_t group_id = db_ ? Cs(group_hash_) : 0;
  for (size_t i = 0; i < subs.size(); ++i) {
    const Sub& s = subs[i];
    const int64_t gid = Task(spans[i].first, spans[i].second, launch, s.task_type, kHcclStream, task_id,
                             static_cast<int64_t>(i));
    ++rows_;
    if (db_)
      comm_task_.I(name_id).I(gid).I(Cs(s.info_type)).I(0).I(group_id).I(s.notify).I(kHcclInvalid).I(me).I(s.dst)
          .I(s.transport).I(s.size).I(s.data_type).I(s.link).I(op_id).Done();
  }
  ++rows_;
  if (db_)
    comm_op_.I(name_id).I(first_s).I(last_e).I(launch).I(group_id).I(op_id).I(0).I(0).I(kHcclBf16)
        .I(Cs("MESH-RING")).I(count).I(Cs(hcom)).Done();
  if (keep_analysis) {
    cur_comm_.push_back({first_s, last_e});
    const double wait_us = (spans[2].second - spans[2].first + spans[5].second - spans[5].first) / 1000.0;
    const double transit_us = (spans[3].second - spans[3].first) / 1000.0;
    comm_records.push_back({step_, CommRecord{op_name, first_s, last_e, transit_us, wait_us, bytes}});
  }

  // 4. The HCCL stream records the end event (torch_npu records two).
  CannCall end_rec = QueuedRuntimeCall("record_event", "aclrtRecordEvent", 5.0);
  const int64_t er4 = std::max(d4_, end_rec.e + rng_.HostNs(1.0));
  d4_ = er4 + 20;
  Task(er4, er4 + 20, end_rec.conn, "EVENT_RECORD", kHcclStream, NextTaskId(kHcclStream), kNa32);
  QueuedRuntimeCall("record_event", "aclrtRecordEvent", 4.0);
  const int64_t c10d_e = h_ + rng_.HostNs(2.0);
  Torch(c10d_s, c10d_e, main_gtid_, -1, c10d, kTorchOp);
  h_ = c10d_e + rng_.HostNs(2.0);
  // 5. work.wait(): the compute stream waits for the HCCL stream's event.
  CannCall cw = QueuedRuntimeCall("wait_event", "aclrtStreamWaitEvent", 5.5);
  const int64_t cw_s = std::max(d2_, cw.e + rng_.HostNs(1.0));
  const int64_t cw_e = std::max(cw_s + 20, er4 + 20);
  d2_ = cw_e;
  Task(cw_s, cw_e, cw.conn, "EVENT_WAIT", kComputeStream, NextTaskId(kComputeStream), kNa32);
  QueuedRuntimeCall("destroy_event", "aclrtDestroyEvent", 2.5);
}

void Gen::Memcpy(bool h2d, int64_t bytes) {
  if (h2d) {
    // aten::to -> _to_copy -> copy_ -> acl_memcpy_host_to_device (+ Enqueue);
    // the ACL thread runs aclrtMemcpyAsync, whose id the MEMCPY_ASYNC task shares.
    const int64_t s0 = h_, s1 = s0 + rng_.HostNs(4.0), s2 = s1 + rng_.HostNs(3.0), s3 = s2 + rng_.HostNs(3.0);
    const int64_t enq_s = s3 + rng_.HostNs(1.5), enq_e = enq_s + rng_.HostNs(2.0);
    const int64_t e3 = enq_e + rng_.HostNs(0.8), e2 = e3 + rng_.HostNs(1.5), e1 = e2 + rng_.HostNs(1.5),
                  e0 = e1 + rng_.HostNs(2.0);
    h_ = e0 + rng_.HostNs(3.0);
    const int64_t shapes = db_ ? Ts(TorchList({Dims({o_.batch, 1}), "", "", "", "", "", ""})) : 0;
    const int64_t types = db_ ? Ts(TorchList({"long int", "Scalar", "Scalar", "None", "None", "Scalar", "Scalar"})) : 0;
    Torch(s0, e0, main_gtid_, -1, "aten::to", kTorchOp, types, shapes);
    Torch(s1, e1, main_gtid_, -1, "aten::_to_copy", kTorchOp, types, shapes);
    Torch(s2, e2, main_gtid_, -1, "aten::copy_", kTorchOp);
    const int64_t link = OpLink();
    Torch(s3, e3, main_gtid_, link, "acl_memcpy_host_to_device", kTorchOp);
    const int64_t q = Enqueue(enq_s, enq_e);
    const int64_t dq_s = std::max(a_, enq_e + rng_.HostNs(1.2));
    const int64_t c_s = dq_s + rng_.HostNs(1.0), c_e = c_s + rng_.HostNs(12.0);
    const int64_t dq_e = c_e + rng_.HostNs(0.8);
    a_ = dq_e;
    const int64_t conn = Cann(c_s, c_e, kApiAcl, acl_gtid_, "aclrtMemcpyAsync");
    Dequeue(q, dq_s, dq_e, "acl_memcpy_host_to_device");
    Link(link, conn);
    const int64_t ts = std::max(d2_, c_e + rng_.HostNs(2.0));
    const int64_t te = ts + rng_.HostNs(2.4);
    d2_ = te;
    Task(ts, te, conn, "MEMCPY_ASYNC", kComputeStream, NextTaskId(kComputeStream), kNa32);
    return;
  }
  // .item(): aten::item -> _local_scalar_dense; the main thread drains the
  // queue, synchronizes the stream and copies the token back (aclrtMemcpy).
  const int64_t s0 = h_, s1 = s0 + rng_.HostNs(3.5);
  const int64_t sync_s = s1 + rng_.HostNs(2.0);
  const int64_t sync_e = std::max({sync_s + rng_.HostNs(6.0), a_ + rng_.HostNs(3.0), d2_ + rng_.HostNs(4.0)});
  Cann(sync_s, sync_e, kApiAcl, main_gtid_, "aclrtSynchronizeStreamWithTimeout");
  const int64_t m_s = sync_e + rng_.HostNs(1.5);
  const int64_t ts = std::max(d2_, m_s + rng_.HostNs(3.0));
  const int64_t te = ts + rng_.HostNs(2.0);
  const int64_t m_e = te + rng_.HostNs(4.0);
  const int64_t conn = Cann(m_s, m_e, kApiAcl, main_gtid_, "aclrtMemcpy");
  d2_ = te;
  Task(ts, te, conn, "MEMCPY_ASYNC", kComputeStream, NextTaskId(kComputeStream), kNa32);
  (void)bytes;
  const int64_t e1 = m_e + rng_.HostNs(1.0), e0 = e1 + rng_.HostNs(1.5);
  Torch(s0, e0, main_gtid_, -1, "aten::item", kTorchOp);
  Torch(s1, e1, main_gtid_, -1, "aten::_local_scalar_dense", kTorchOp);
  h_ = e0 + rng_.HostNs(2.0);
}

void Gen::Step() {
  const bool prefill = o_.prefill && step_ == 0;
  const int64_t b = o_.batch, hd = kHidden;
  const int64_t q_len = prefill ? o_.prompt : 1;
  const int64_t kv = prefill ? o_.prompt : o_.prompt + step_;  // KV length after this token
  const int64_t m = b * q_len;
  const std::string x = Dims({b, q_len, hd});
  const std::string w = Dims({hd});
  const std::string bf = "c10::BFloat16";
  const int64_t step_s = h_;
  cur_first_task_ = -1;
  cur_compute_.clear();
  cur_comm_.clear();

  Memcpy(true, b * q_len * 8);
  Op(Vector(kGather, {"aten::embedding"}, "aclnnEmbedding", TorchList({Dims({kVocabPerRank * 2, hd}), Dims({b, q_len}), "", "", ""}),
            TorchList({bf, "long int", "Scalar", "Scalar", "Scalar"}), Dims({kVocabPerRank * 2, hd}) + ";" + Dims({b, q_len}),
            "DT_BF16;INT64", "ND;ND", x, "DT_BF16", m * hd * 4.0));
  const int64_t qw = kHeadsPerRank * kHeadDim, kw = kKvHeadsPerRank * kHeadDim;
  const std::string torch_x = x;
  for (int l = 0; l < o_.layers; ++l) {
    Op(Vector(kRmsNorm, {"npu::npu_rms_norm"}, "aclnnRmsNorm", TorchList({x, w, ""}), TorchList({bf, bf, "Scalar"}),
              x + ";" + w, "DT_BF16;DT_BF16", "ND;ND", x + ";" + Dims({b, q_len, 1}), "DT_BF16;FLOAT", m * hd * 6.0));
    for (int64_t n : {qw, kw, kw}) Op(Linear(kAddmm, "aten::addmm", "aclnnAddmm", m, hd, n, true, torch_x));
    const std::string cs = Dims({b, q_len, 1, kHeadDim});
    for (int64_t heads : {kHeadsPerRank, kKvHeadsPerRank}) {
      const std::string t = Dims({b, q_len, heads, kHeadDim});
      OpSpec r = Vector(kRotary, {"npu::npu_rotary_mul"}, "RotaryMul", TorchList({t, cs, cs}), TorchList({bf, bf, bf}),
                        t + ";" + cs + ";" + cs, "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", t, "DT_BF16",
                        m * heads * kHeadDim * 4.0);
      r.aclop = true;
      Op(r);
    }
    const std::string cache = Dims({b, o_.prompt + 4096, kKvHeadsPerRank, kHeadDim});  // preallocated
    for (int i = 0; i < 2; ++i) {
      const std::string upd = Dims({b, q_len, kKvHeadsPerRank, kHeadDim});
      Op(Vector(kScatter, {"npu::scatter_update_"}, "aclnnScatterUpdate", TorchList({cache, Dims({b}), upd, ""}),
                TorchList({bf, "long int", bf, "Scalar"}), cache + ";" + Dims({b}) + ";" + upd, "DT_BF16;INT64;DT_BF16",
                "ND;ND;ND", cache, "DT_BF16", m * kw * 4.0));
    }
    if (prefill) {
      OpSpec a = Vector(kPfa, {"npu::npu_prompt_flash_attention"}, "aclnnPromptFlashAttentionV3",
                        TorchList({Dims({b, q_len, qw}), Dims({b, kv, kw}), Dims({b, kv, kw}), Dims({b, 1, q_len, kv}), "", ""}),
                        TorchList({bf, bf, bf, "bool", "Scalar", "Scalar"}),
                        Dims({b, q_len, qw}) + ";" + Dims({b, kv, kw}) + ";" + Dims({b, kv, kw}) + ";;" +
                            Dims({b, 1, q_len, kv}) + ";;;;;;;",
                        "DT_BF16;DT_BF16;DT_BF16;BOOL;BOOL;INT64;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;INT8",
                        "ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND", Dims({b, q_len, qw}), "DT_BF16", 0);
      const double flops = 2.0 * 2.0 * b * kHeadsPerRank * q_len * kv * kHeadDim / 2.0;  // causal
      a.dur_us = rng_.Jitter(flops / (kFlopsPerUs * 0.6) + 8.0, 0.05);
      Op(a);
    } else {
      OpSpec a = Vector(kIfa, {"npu::npu_incre_flash_attention"}, "aclnnIncreFlashAttentionV4",
                        TorchList({Dims({b, 1, qw}), Dims({b, kv, kw}), Dims({b, kv, kw}), "", Dims({b}), ""}),
                        TorchList({bf, bf, bf, "None", "long int", "Scalar"}),
                        Dims({b, 1, qw}) + ";" + Dims({b, kv, kw}) + ";" + Dims({b, kv, kw}) + ";;" + Dims({b}) + ";;;;;",
                        "DT_BF16;DT_BF16;DT_BF16;BOOL;INT64;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT",
                        "ND;ND;ND;ND;ND;ND;ND;ND;ND;ND", Dims({b, 1, qw}), "DT_BF16", 2.0 * 2.0 * b * kv * kw);
      a.dur_us += 3.0;  // split-KV combine
      Op(a);
    }
    const std::string attn_x = Dims({b, q_len, qw});
    Op(Linear(kMmV2, "aten::mm", "aclnnMm", m, qw, hd, false, attn_x));
    Collective(false, m * hd * 2, m * hd);
    Op(Vector(kAdd, {"aten::add"}, "aclnnAdd", TorchList({x, x, ""}), TorchList({bf, bf, "Scalar"}), x + ";" + x,
              "DT_BF16;DT_BF16", "ND;ND", x, "DT_BF16", m * hd * 6.0));
    Op(Vector(kRmsNorm, {"npu::npu_rms_norm"}, "aclnnRmsNorm", TorchList({x, w, ""}), TorchList({bf, bf, "Scalar"}),
              x + ";" + w, "DT_BF16;DT_BF16", "ND;ND", x + ";" + Dims({b, q_len, 1}), "DT_BF16;FLOAT", m * hd * 6.0));
    Op(Linear(kMmV3, "aten::mm", "aclnnMm", m, hd, 2 * kInterPerRank, false, torch_x));
    Op(Vector(kSwiGlu, {"npu::npu_swiglu"}, "aclnnSwiGlu", TorchList({Dims({b, q_len, 2 * kInterPerRank}), ""}),
              TorchList({bf, "Scalar"}), Dims({m, 2 * kInterPerRank}), "DT_BF16", "ND", Dims({m, kInterPerRank}), "DT_BF16",
              m * kInterPerRank * 6.0));
    Op(Linear(kMmV3, "aten::mm", "aclnnMm", m, kInterPerRank, hd, false, Dims({b, q_len, kInterPerRank})));
    Collective(false, m * hd * 2, m * hd);
    Op(Vector(kAdd, {"aten::add"}, "aclnnAdd", TorchList({x, x, ""}), TorchList({bf, bf, "Scalar"}), x + ";" + x,
              "DT_BF16;DT_BF16", "ND;ND", x, "DT_BF16", m * hd * 6.0));
  }
  Op(Vector(kRmsNorm, {"npu::npu_rms_norm"}, "aclnnRmsNorm", TorchList({x, w, ""}), TorchList({bf, bf, "Scalar"}),
            x + ";" + w, "DT_BF16;DT_BF16", "ND;ND", x + ";" + Dims({b, q_len, 1}), "DT_BF16;FLOAT", m * hd * 6.0));
  // lm_head on the last position only, then the vocab-parallel all-gather.
  Op(Linear(kMmV2, "aten::mm", "aclnnMm", b, hd, kVocabPerRank, false, Dims({b, 1, hd})));
  Collective(true, b * kVocabPerRank * 2, b * kVocabPerRank);
  Op(Vector(kArgMax, {"aten::argmax"}, "aclnnArgMax", TorchList({Dims({b, kVocabPerRank * 2}), "", ""}),
            TorchList({bf, "Scalar", "Scalar"}), Dims({b, kVocabPerRank * 2}), "DT_BF16", "ND", Dims({b}), "INT64",
            b * kVocabPerRank * 4.0));
  Memcpy(false, b * 8);
  const int64_t step_e = h_ + rng_.HostNs(40.0);
  Torch(step_s, step_e, main_gtid_, -1, "ProfilerStep#" + std::to_string(step_), kTorchOp);
  ++rows_;
  if (db_) step_time_.I(step_).I(step_s).I(step_e).Done();
  if (keep_analysis) {
    // Each stream is serial, so busy time is a sum; the overlap of the two by a merge.
    StepSummary sum{step_, step_s, step_e, cur_first_task_ >= 0 ? cur_first_task_ : step_s, 0, 0, 0, 0};
    sum.last_task = sum.first_task;
    for (const Interval& i : cur_compute_) sum.compute += i.e - i.s, sum.last_task = std::max(sum.last_task, i.e);
    for (const Interval& i : cur_comm_) sum.comm += i.e - i.s, sum.last_task = std::max(sum.last_task, i.e);
    size_t a = 0, c = 0;
    while (a < cur_compute_.size() && c < cur_comm_.size()) {
      const int64_t lo = std::max(cur_compute_[a].s, cur_comm_[c].s), hi = std::min(cur_compute_[a].e, cur_comm_[c].e);
      if (hi > lo) sum.overlap += hi - lo;
      if (cur_compute_[a].e < cur_comm_[c].e) ++a;
      else ++c;
    }
    step_summaries.push_back(sum);
  }
  h_ = step_e + rng_.HostNs(180.0);  // sampling / Python between tokens
  ++step_;
}

// ---------------------------------------------------------------------------

void WriteFixedTables(sqlite3* db, const Options& o, int64_t session_s, int64_t session_e) {
  auto enum_table = [&](const char* table, const EnumRow* rows, size_t n) {
    Stmt s(db, std::string("INSERT INTO ") + table + " VALUES (?,?)");
    for (size_t i = 0; i < n; ++i) s.I(rows[i].id).T(rows[i].name).Done();
  };
  enum_table("ENUM_API_TYPE", kApiTypes, std::size(kApiTypes));
  enum_table("ENUM_HCCL_DATA_TYPE", kHcclDataTypes, std::size(kHcclDataTypes));
  enum_table("ENUM_HCCL_LINK_TYPE", kHcclLinkTypes, std::size(kHcclLinkTypes));
  enum_table("ENUM_HCCL_TRANSPORT_TYPE", kHcclTransportTypes, std::size(kHcclTransportTypes));
  enum_table("ENUM_HCCL_RDMA_TYPE", kHcclRdmaTypes, std::size(kHcclRdmaTypes));
  enum_table("ENUM_MSTX_EVENT_TYPE", kMstxEventTypes, std::size(kMstxEventTypes));
  Stmt(db, "INSERT INTO SESSION_TIME_INFO VALUES (?,?)").I(session_s).I(session_e).Done();
  Stmt(db, "INSERT INTO HOST_INFO VALUES (?,?)").T("3538958389648580163").T("node-0").Done();
  Stmt(db, "INSERT INTO NPU_INFO VALUES (?,?)").I(o.rank).T("Ascend910B").Done();
  Stmt(db, "INSERT INTO RANK_DEVICE_MAP VALUES (?,?)").I(o.rank).I(o.rank).Done();
  {
    Stmt f(db, "INSERT INTO AICORE_FREQ VALUES (?,?,?)");
    f.I(o.rank).I(session_s).I(1800).Done();
    f.I(o.rank).I(session_e).I(1800).Done();
  }
  std::string ranks;
  for (int r = 0; r < o.world; ++r) ranks += (r ? ", " : "") + std::to_string(r);
  const std::string parallel =
      "{\"group_name_3\": {\"group_name\": \"tp\", \"group_rank\": " + std::to_string(o.rank) +
      ", \"global_ranks\": [" + ranks + "]}}";
  const std::pair<const char*, std::string> meta[] = {
      {"SCHEMA_VERSION_MICRO", "0"},
      {"SCHEMA_VERSION_MINOR", "0"},
      {"SCHEMA_VERSION_MAJOR", "1"},
      {"SCHEMA_VERSION", "1.0.0"},
      {"ENV_VARIABLES",
       "{\"ASCEND_GLOBAL_LOG_LEVEL\": \"3\", \"HCCL_RDMA_TC\": \"\", \"HCCL_RDMA_SL\": \"\", \"ACLNN_CACHE_LIMIT\": \"\", "
       "\"HOST_CACHE_CAPACITY\": \"\", \"ASCEND_ENHANCE_ENABLE\": \"\", \"PYTORCH_NPU_ALLOC_CONF\": \"\", "
       "\"ASCEND_LAUNCH_BLOCKING\": \"\", \"HCCL_ALGO\": \"\"}"},
      {"parallel_group_info", parallel},
  };
  Stmt m(db, "INSERT INTO META_DATA VALUES (?,?)");
  for (const auto& [k, v] : meta) m.T(k).T(v).Done();
}

void WriteAnalysisDb(const std::string& path, const Options& o, const Gen& g) {
  const std::string tmp = path + ".tmp";
  sqlite3* db = OpenFresh(tmp);
  Exec(db, "BEGIN");
  for (const char* ddl : kAnalysisSchema) Exec(db, ddl);
  {
  Stmt st(db, "INSERT INTO StepTraceTime VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& s : g.step_summaries) {
    const double us = 1e-3;
    const double stage = (s.last_task - s.first_task) * us;
    const double not_overlapped = (s.comm - s.overlap) * us;
    const double free = std::max(0.0, stage - s.compute * us - not_overlapped);
    st.I(o.rank).T(std::to_string(s.number)).D(s.compute * us).D(not_overlapped).D(s.overlap * us).D(s.comm * us)
        .D(free).D(stage).D(0.0).D(not_overlapped).D((s.first_task - s.s) * us).Done();
  }
  Stmt ct(db, "INSERT INTO CommAnalyzerTime VALUES (?,?,?,?,?,?,?,?,?,?)");
  Stmt bw(db, "INSERT INTO CommAnalyzerBandwidth VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& [step, c] : g.comm_records) {
    const std::string step_name = "step" + std::to_string(step);
    const double elapse_ms = (c.e - c.s) / 1e6, transit_ms = c.transit_us / 1e3, wait_ms = c.wait_us / 1e3;
    ct.T(c.name).T(g.group_hash()).D(c.s / 1e3).D(elapse_ms).D(transit_ms).D(wait_ms).D(wait_ms)
        .D(std::max(0.0, elapse_ms - transit_ms - wait_ms)).T(step_name).T("collective").Done();
    const double mb = c.bytes / 1e6;
    bw.T(c.name).T(g.group_hash()).T("HCCS").D(mb).D(transit_ms).D(transit_ms > 0 ? mb / transit_ms : 0).D(0).D(mb)
        .I(1).D(transit_ms).T(step_name).T("collective").Done();
    bw.T(c.name).T(g.group_hash()).T("SDMA").D(mb).D(transit_ms).D(transit_ms > 0 ? mb / transit_ms : 0).D(0).D(0)
        .I(0).D(0).T(step_name).T("collective").Done();
  }
  }  // statements finalized before the commit and close
  Exec(db, "COMMIT");
  CloseDb(db, tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) Die("rename " + tmp + ": " + std::strerror(errno));
}

bool WriteText(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

void WriteRunFiles(const std::string& dir, const Options& o, int64_t session_s, int64_t session_e) {
  const std::string r = std::to_string(o.rank);
  const std::string info =
      "{\n    \"config\": {\n        \"common_config\": {\n            \"activities\": [\n"
      "                \"ProfilerActivity.CPU\",\n                \"ProfilerActivity.NPU\"\n            ],\n"
      "            \"schedule\": {\n                \"wait\": 0,\n                \"active\": 4096,\n"
      "                \"warmup\": 0,\n                \"repeat\": 1,\n                \"skip_first\": 0\n            },\n"
      "            \"record_shapes\": true,\n            \"profile_memory\": false,\n            \"with_stack\": false,\n"
      "            \"with_flops\": false,\n            \"with_modules\": false\n        },\n"
      "        \"experimental_config\": {\n            \"_profiler_level\": \"Level1\",\n"
      "            \"_aic_metrics\": \"" + std::string(o.pmu ? "ACL_AICORE_PIPE_UTILIZATION" : "ACL_AICORE_NONE") + "\",\n"
      "            \"_l2_cache\": false,\n            \"_msprof_tx\": false,\n            \"_data_simplification\": true,\n"
      "            \"record_op_args\": false,\n            \"_export_type\": \"db\",\n            \"_op_attr\": false,\n"
      "            \"_gc_detect_threshold\": null\n        }\n    },\n"
      "    \"start_info\": {\n        \"syscnt_enable\": true,\n        \"freq\": 100,\n"
      "        \"start_cnt\": 17056624104232,\n        \"start_monotonic\": 170347846588710\n    },\n"
      "    \"end_info\": {\n        \"collectionTimeEnd\": " + std::to_string(session_e) +
      ",\n        \"MonotonicTimeEnd\": " + std::to_string(170347846588710 + (session_e - session_s)) + "\n    },\n"
      "    \"torch_npu_version\": \"2.7.1\",\n    \"cann_version\": \"8.3.RC1\",\n"
      "    \"rank_id\": " + r + "\n}";
  if (!WriteText(dir + "/profiler_info_" + r + ".json", info)) Die("cannot write profiler_info in " + dir);
  std::string ranks;
  for (int i = 0; i < o.world; ++i) ranks += (i ? ", " : "") + std::to_string(i);
  const std::string meta =
      "{\"distributed_args\": {\"tensor_model_parallel_size\": " + std::to_string(o.world) +
      ", \"pipeline_model_parallel_size\": 1, \"data_parallel_size\": 1, \"rank\": " + r +
      ", \"world_size\": " + std::to_string(o.world) +
      "}, \"parallel_group_info\": {\"group_name_3\": {\"group_name\": \"tp\", \"group_rank\": " + r +
      ", \"global_ranks\": [" + ranks + "]}}}";
  if (!WriteText(dir + "/profiler_metadata.json", meta)) Die("cannot write profiler_metadata.json in " + dir);
}

bool MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    std::string p = path.substr(0, i);
    if (mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

[[noreturn]] void Usage(const char* why) {
  if (why) std::fprintf(stderr, "gen_ascend_profiler_db: %s\n", why);
  std::fprintf(stderr,
               "usage: gen_ascend_profiler_db (--out FILE | --run-dir DIR) [--rows N | --steps N] [--layers L]\n"
               "         [--batch B] [--prompt P] [--rank R] [--world W] [--no-prefill] [--pmu]\n"
               "         [--analysis-db FILE] [--seed S] [--quiet]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) Usage("missing value");
      return argv[++i];
    };
    if (a == "--out") o.out = val();
    else if (a == "--run-dir") o.run_dir = val();
    else if (a == "--analysis-db") o.analysis_db = val();
    else if (a == "--rows") o.rows = std::atoll(val());
    else if (a == "--steps") o.steps = std::atoll(val());
    else if (a == "--layers") o.layers = std::atoi(val());
    else if (a == "--batch") o.batch = std::atoll(val());
    else if (a == "--prompt") o.prompt = std::atoll(val());
    else if (a == "--rank") o.rank = std::atoi(val());
    else if (a == "--world") o.world = std::atoi(val());
    else if (a == "--no-prefill") o.prefill = false;
    else if (a == "--pmu") o.pmu = true;
    else if (a == "--seed") o.seed = std::strtoull(val(), nullptr, 10);
    else if (a == "--quiet") o.quiet = true;
    else Usage("unknown flag");
  }
  if (o.out.empty() == o.run_dir.empty()) Usage("give one of --out FILE or --run-dir DIR");
  if (o.rows && o.steps) Usage("give --rows or --steps, not both");
  if (o.layers < 1 || o.batch < 1 || o.prompt < 1 || o.rows < 0 || o.steps < 0 || o.rank < 0 || o.world < 1 ||
      o.rank >= o.world)
    Usage("sizes must be >= 1 and rank < world");
  if (!o.run_dir.empty()) {
    while (o.run_dir.size() > 1 && o.run_dir.back() == '/') o.run_dir.pop_back();
    if (!MakeDirs(o.run_dir + "/ASCEND_PROFILER_OUTPUT")) Die("cannot create " + o.run_dir + ": " + std::strerror(errno));
    o.out = o.run_dir + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_" + std::to_string(o.rank) + ".db";
    if (o.analysis_db.empty()) o.analysis_db = o.run_dir + "/ASCEND_PROFILER_OUTPUT/analysis.db";
  }
  const auto t0 = std::chrono::steady_clock::now();
  // One thread: no SQLite mutexes, no allocation statistics (a mutex per malloc).
  sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);

  // Dry run of one step: rows per step and the id ranges they need.
  Counts per_step;
  {
    Gen dry(o, nullptr, Counts{}, 1);
    dry.Step();
    per_step.tasks = dry.tasks();
    per_step.enqueues = dry.enqueues();
    per_step.cann = dry.cann_calls();
  }
  int64_t steps = o.steps;
  if (!steps) steps = std::max<int64_t>(1, ((o.rows ? o.rows : kDefaultRows) + per_step.tasks - 1) / per_step.tasks);

  const std::string tmp = o.out + ".tmp";
  sqlite3* db = OpenFresh(tmp);
  Exec(db, "BEGIN");
  for (const char* ddl : kSchema) Exec(db, ddl);
  if (o.pmu) Exec(db, kPmuSchema);
  Gen gen(o, db, per_step, steps);
  gen.keep_analysis = !o.analysis_db.empty();
  for (int64_t s = 0; s < steps; ++s) gen.Step();
  // The id ranges above came from the dry run: every step must match it.
  if (gen.enqueues() != per_step.enqueues * steps || gen.tasks() != per_step.tasks * steps)
    Die("internal: steps differ in structure from the dry run");
  const int64_t session_s = kStartNs, session_e = gen.session_end() + 2'000'000;
  gen.CloseStatements();
  WriteFixedTables(db, o, session_s, session_e);
  for (const char* ddl : kIndexes) Exec(db, ddl);
  Exec(db, "COMMIT");
  CloseDb(db, tmp);
  if (std::rename(tmp.c_str(), o.out.c_str()) != 0) Die("rename " + tmp + ": " + std::strerror(errno));
  if (!o.analysis_db.empty()) WriteAnalysisDb(o.analysis_db, o, gen);
  if (!o.run_dir.empty()) WriteRunFiles(o.run_dir, o, session_s, session_e);

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.quiet) {
    struct stat st {};
    stat(o.out.c_str(), &st);
    std::fprintf(stderr,
                 "gen_ascend_profiler_db: %s: %" PRId64 " TASK rows (%" PRId64 " steps, %" PRId64 " per step), %" PRId64
                 " CANN_API, %" PRId64 " PYTORCH_API, %" PRId64 " CONNECTION_IDS, %" PRId64
                 " COMMUNICATION_OP; %" PRId64 " rows in all, %.1f MB in %.2f s (%.2f M rows/s)\n",
                 o.out.c_str(), gen.tasks(), gen.steps(), per_step.tasks, gen.cann_calls(), gen.torch_rows(),
                 gen.links(), gen.comm_ops(), gen.rows_total(), st.st_size / 1e6, secs, gen.rows_total() / secs / 1e6);
  }
  return 0;
}
