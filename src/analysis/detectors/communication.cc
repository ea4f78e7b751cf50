// (11) communication: collectives the step waits for, and the rank that makes
// the others wait.
//
//   * Exposed communication per device over the analysed steps: Ascend
//     step_trace_time Communication(Not Overlapped) when the step row has it
//     (msprof-analyze overall summary), else the communication segments of the
//     step's critical path (graph/critical_path.cc: collectives on the path,
//     not overlapped by compute). Flagged when it exceeds
//     min_exposed_share (0.10) of the step: the TensorBoard plugin's
//     "communication time / step time > 0.1" rule (diagnosis-rules §2, rule 4).
//   * Wait vs transfer: communication.json's Wait Time per op against its
//     transfer time (the op's Transit Time or its transports', the longer;
//     msprof-analyze communication analysis), else the HCCL sub-tasks in the
//     steps (Notify Wait = waiting for a peer; SDMA / RDMA / Memcpy /
//     Reduce_Inline / Write Value = moving data); NCCL/RCCL kernels do not
//     split the two, which the detail says.
//   * Achieved bandwidth per transport (communication.json Transit Size /
//     Transit Time), named against the 0.8 x 18 GB/s SDMA reference of
//     msprof-analyze's bandwidth-contention rule.
//   * Several devices (ranks): when their compute time per step spreads by
//     more than slow_rank_spread (0.05; msprof-analyze slow_rank_analyzer
//     (max - min) / mean) and the fastest rank exposes communication itself
//     (over min_exposed_share), the rank that computes longest is the one the
//     others wait for in their collectives: a separate finding names it.
//   * Small packets (msprof-analyze packet checker, packet.yaml): over 20 % of
//     the SDMA transfers (communication.json Size Distribution of HCCS, PCIE,
//     SIO) under 16 MB, or of the RDMA transfers under 1 MB: each transfer
//     pays a fixed cost; the time of the small ones is affected.
//   * Byte alignment (msprof-analyze byte_alignment_checker): HCCL SDMA
//     (Memcpy / Reduce_Inline) sub-tasks whose size is not a multiple of 512 B (transfers
//     of at least 512 B; a scalar cannot be aligned); their time is affected.
//   Neither has a published gain: no saving is claimed.
//   * NCCL / RCCL bus bandwidth (nccl-tests' busBw): the kernels' "Collective
//     name", "In/Out msg nelems", "dtype" and "Group size" args give the bytes;
//     bus bytes = bytes x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather,
//     reduce-scatter and all-to-all, x 1 otherwise; shown per collective
//     against the hardware's link bandwidth (NVLink / PCIe / Infinity Fabric).
// Savings (amdahl, bounds):
//   * exposed: min(exposed communication, compute time) per step — the most
//     that overlapping the collectives with compute can hide;
//   * imbalance: slowest compute - mean compute per step, what the waiting
//     ranks stop waiting when the stages are balanced.
// Both are claimed on the step's idle target (kStepIdle), so host_bound's
// claim on the same step is not added to them.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"
#include "core/adaptive_sort.h"
#include "graph/interval_union.h"
#include "hw/dtype.h"

namespace pypto {
namespace {

// Share of the step. Source: TensorBoard plugin recommendation "communication
// time / step time > 0.1" (diagnosis-rules §2, rule 4).
inline constexpr double kDefaultMinExposedShare = 0.10;
// (max - min) / mean of the devices' compute time. Source: msprof-analyze
// cluster/slow_rank_analyzer.py, 0.05 (diagnosis-rules §1.1).
inline constexpr double kDefaultSlowRankSpread = 0.05;
// GB/s. Source: msprof-analyze communication/contention bandwidth_contention.yaml:
// SDMA bandwidth under 0.8 x 18 GB/s is contended (diagnosis-rules §1.1).
inline constexpr double kSdmaReferenceGbps = 18.0;
inline constexpr double kSdmaContendedFraction = 0.8;
// Collectives named in the detail.
inline constexpr size_t kTopCollectives = 3;
// Packet sizes (MB) under which a transfer is small, and the share of small
// transfers that is flagged. Source: msprof-analyze communication/packet
// packet.yaml: SDMA 16 MB, RDMA 1 MB, more than 20 % (diagnosis-rules §1.1).
inline constexpr double kSdmaSmallPacketMb = 16.0;
inline constexpr double kRdmaSmallPacketMb = 1.0;
inline constexpr double kSmallPacketShare = 0.2;
// Bytes. Source: msprof-analyze byte_alignment.yaml: SDMA sizes % 512 != 0.
inline constexpr int64_t kTransferAlignmentBytes = 512;
// A link moving its bytes under this fraction of the fastest link of the same
// transport is slow (0.8: the contention fraction msprof-analyze's SDMA check
// uses, as kSdmaContendedFraction); links moving under kSlowLinkMinMb in the
// analysed steps are not judged (a handful of small packets says nothing).
inline constexpr double kSlowLinkFraction = 0.8;
// NCCL/RCCL collectives whose message is under this are small: latency-bound
// (NCCL picks its LL protocols for them) whatever the link; 1 MB, the RDMA
// small-packet threshold of msprof-analyze, applied to the message size the
// kernel's arguments give (In msg nelems x dtype).
inline constexpr double kNcclSmallMessageMb = 1.0;
inline constexpr double kSlowLinkMinMb = 1.0;
// NCCL/RCCL kernels of the same collective on several ranks end together
// (the last data arrives everywhere within microseconds); when their ends
// agree within this, the ranks' clocks are comparable and a rank's time
// before the last rank started the collective is waiting, the rest transfer.
// 100 us: NTP-synced hosts of one job stay within this; a collective whose
// ends spread more is left unmatched (clocks not comparable).
inline constexpr TimeNs kCollectiveEndToleranceNs = 100'000;

// One NCCL/RCCL kernel of a rank, to be matched with the same collective on
// the other ranks (n-th kernel of the same name on each device).
struct RankKernel {
  TimeNs start = 0, end = 0;
};

// Wait vs transfer of a rank's NCCL/RCCL kernels, from the arrival order of
// the ranks at each collective.
struct ArrivalSplit {
  TimeNs wait_ns = 0, transfer_ns = 0;
  uint64_t matched = 0;    // collectives matched on every rank
  uint64_t unmatched = 0;  // ends too far apart (clocks), or counts that differ
};

// Matches the n-th kernel of each name across the devices that run it and
// splits each rank's kernel time at the last rank's start.
std::map<int32_t, ArrivalSplit> SplitByArrival(
    const std::map<int32_t, std::map<std::string, std::vector<RankKernel>>>& kernels) {
  std::map<int32_t, ArrivalSplit> split;
  if (kernels.size() < 2) return split;
  std::map<std::string, std::vector<int32_t>> devices_of;
  for (const auto& [device, by_name] : kernels)
    for (const auto& [name, list] : by_name) devices_of[name].push_back(device);
  for (const auto& [name, devices] : devices_of) {
    if (devices.size() < 2) continue;
    size_t count = kernels.at(devices[0]).at(name).size();
    bool same_count = true;
    for (int32_t d : devices) same_count = same_count && kernels.at(d).at(name).size() == count;
    if (!same_count) {
      for (int32_t d : devices) split[d].unmatched += kernels.at(d).at(name).size();
      continue;
    }
    for (size_t i = 0; i < count; ++i) {
      TimeNs last_start = 0, first_end = INT64_MAX, last_end = 0;
      for (int32_t d : devices) {
        const RankKernel& k = kernels.at(d).at(name)[i];
        last_start = std::max(last_start, k.start);
        first_end = std::min(first_end, k.end);
        last_end = std::max(last_end, k.end);
      }
      if (last_end - first_end > kCollectiveEndToleranceNs) {
        for (int32_t d : devices) ++split[d].unmatched;
        continue;
      }
      for (int32_t d : devices) {
        const RankKernel& k = kernels.at(d).at(name)[i];
        const TimeNs wait = std::clamp<TimeNs>(last_start - k.start, 0, k.end - k.start);
        split[d].wait_ns += wait;
        split[d].transfer_ns += (k.end - k.start) - wait;
        ++split[d].matched;
      }
    }
  }
  return split;
}

// nccl-tests' bus-bandwidth factor of a collective over n ranks.
double BusFactor(std::string_view collective, double n) {
  if (n <= 1) return 1;
  const std::string c = detectors::LowerAscii(collective);
  if (c.find("allreduce") != std::string::npos || c.find("all_reduce") != std::string::npos) return 2 * (n - 1) / n;
  if (c.find("allgather") != std::string::npos || c.find("all_gather") != std::string::npos ||
      c.find("reducescatter") != std::string::npos || c.find("reduce_scatter") != std::string::npos ||
      c.find("alltoall") != std::string::npos || c.find("all_to_all") != std::string::npos)
    return (n - 1) / n;
  return 1;
}

struct BusTraffic {
  double bus_bytes = 0;
  TimeNs time_ns = 0;
  uint64_t kernels = 0;
};

struct Packets {
  double transfers = 0, small = 0;
  double small_ms = 0;
};

struct Transport {
  double size_mb = 0;
  double time_ms = 0;
};

struct DeviceFigures {
  TimeNs step_ns = 0;
  TimeNs exposed_ns = 0;
  TimeNs communication_ns = 0;  // all collective time (overlapped or not), kUnknownNs-free sum
  TimeNs compute_ns = 0;
  bool from_step_table = false;
  uint64_t steps = 0;
  std::vector<std::pair<size_t, TimeNs>> step_exposed;  // (step index, exposed)
  std::vector<std::pair<size_t, TimeNs>> step_compute;  // (step index, compute)
  // Wait / transfer.
  double wait_ms = 0, transit_ms = 0;  // communication.json
  TimeNs wait_task_ns = 0, transfer_task_ns = 0;
  bool has_json = false, has_sub_tasks = false;
  std::map<std::string, Transport> transports;
  std::map<std::string, TimeNs> collectives;  // name -> time
  std::map<std::string, Packets> packets;     // "SDMA" / "RDMA"
  std::map<std::string, BusTraffic> bus;      // NCCL/RCCL collective name -> bus bytes and time
  // Sub-tasks that move bytes not a multiple of 512.
  std::vector<std::pair<TimeNs, TimeNs>> unaligned;
  uint64_t unaligned_tasks = 0;
  int64_t unaligned_example = 0;
};

// The packet-size class of a communication.json link / transport type: the
// intra-node links carry SDMA transfers.
std::string_view PacketClass(std::string_view transport) {
  if (transport == "HCCS" || transport == "PCIE" || transport == "SIO") return "SDMA";
  if (transport == "RDMA") return "RDMA";
  return "";
}

bool IsWaitTask(std::string_view lower_name) {
  return lower_name.find("notify wait") != std::string_view::npos ||
         lower_name.find("notify_wait") != std::string_view::npos;
}

// "communication/<step>/<op>/<field>": the step's number (step13 -> 13), -1
// when it has none.
int64_t StepNumberOf(std::string_view step) {
  size_t digits = step.find_first_of("0123456789");
  if (digits == std::string_view::npos) return -1;
  int64_t n = 0;
  for (size_t i = digits; i < step.size() && step[i] >= '0' && step[i] <= '9'; ++i) n = n * 10 + (step[i] - '0');
  return n;
}

// A step's device's arrival split; a step of no single device (-1: one host
// annotation over every device) gets the sum over all ranks.
ArrivalSplit ArrivalOf(const std::map<int32_t, ArrivalSplit>& arrival, int32_t device) {
  if (device >= 0) {
    auto it = arrival.find(device);
    return it == arrival.end() ? ArrivalSplit{} : it->second;
  }
  ArrivalSplit sum;
  for (const auto& [d, a] : arrival) {
    sum.wait_ns += a.wait_ns;
    sum.transfer_ns += a.transfer_ns;
    sum.matched += a.matched;
    sum.unmatched += a.unmatched;
  }
  return sum;
}

// Communication and compute time of one step's tasks on one device.
struct StepTaskTimes {
  TimeNs communication_ns = 0;
  TimeNs compute_ns = 0;
};

using RankKernelsByName = std::map<int32_t, std::map<std::string, std::vector<RankKernel>>>;

// What Run gathers before it judges: the figures of every device over the
// analysed steps and the ranks' collectives.
struct CommunicationFigures {
  std::vector<uint32_t> tasks_by_start;  // ctx.tasks sorted by start
  std::vector<int64_t> step_numbers;     // of the analysed steps
  std::map<int32_t, DeviceFigures> devices;
  RankKernelsByName rank_kernels;
  std::map<int32_t, ArrivalSplit> arrival;
};

// Compute per step of the devices that compute (ranks): mean, extremes and
// (max - min) / mean.
struct RankSpread {
  size_t ranks = 0;
  double mean = 0, lo = INFINITY, hi = 0, spread = 0;
  int32_t slowest_device = -1, fastest_device = -1;
  const DeviceFigures* slowest = nullptr;
  const DeviceFigures* fastest = nullptr;
};

class Communication final : public Detector {
 public:
  std::string_view name() const override { return "communication"; }
  IssueType type() const override { return IssueType::kCommunication; }
  // Run reads the path of each analysed step that has no step-table row with
  // Communication(Not Overlapped) (CollectStepFigures).
  bool ReadsStepPaths(const DiagnosisContext& ctx) const override {
    for (size_t s : ctx.steps)
      if (StepRowWithCommunication(*ctx.profile, ctx.graph->Steps()[s]) == nullptr) return true;
    return false;
  }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const double min_share = ctx.options->Param("communication.min_exposed_share", kDefaultMinExposedShare);
    const double max_spread = ctx.options->Param("communication.slow_rank_spread", kDefaultSlowRankSpread);
    CommunicationFigures figures;
    figures.tasks_by_start = TasksByStart(ctx);
    CollectStepFigures(ctx, &figures);
    if (figures.devices.empty()) {
      out->notes.push_back("no analysed step: communication not measured");
      return;
    }
    figures.rank_kernels = CollectRankKernels(*ctx.profile, figures.tasks_by_start);
    figures.arrival = SplitByArrival(figures.rank_kernels);
    AddCommunicationJson(*ctx.profile, figures.step_numbers, &figures.devices);

    for (const auto& [device, f] : figures.devices) AddExposedFinding(ctx, figures, device, f, min_share, out);
    for (const auto& [device, f] : figures.devices) AddTransferFindings(ctx, device, f, out);
    for (const auto& [device, f] : figures.devices) NoteBusBandwidth(ctx, device, f, out);
    NoteSlowLinks(ctx, figures.step_numbers, out);
    AddRankImbalanceFinding(figures.devices, min_share, max_spread, out);
  }

 private:
  // ---- exposed communication and compute per step

  // The steps' tasks by start, so each step reads only its own range
  // (ctx.tasks is by track: a scan per step was steps x tasks). Ties go by
  // row. ctx.tasks is one ascending run per track, so this is a merge of a
  // few runs, not a sort (a std::sort was 30 ms of a 1 M-row
  // kernel_details.csv's diagnose).
  static std::vector<uint32_t> TasksByStart(const DiagnosisContext& ctx) {
    const DeviceTaskTable& t = ctx.profile->device_tasks;
    std::vector<uint32_t> by_start = ctx.tasks;
    SortUnlessSorted(by_start.begin(), by_start.end(),
                     [&](uint32_t a, uint32_t b) { return t.ts[a] != t.ts[b] ? t.ts[a] < t.ts[b] : a < b; });
    return by_start;
  }

  // Each analysed step's figures, added to its device's: from the step table
  // when its row has Communication(Not Overlapped), else from the critical
  // path and the step's tasks.
  static void CollectStepFigures(const DiagnosisContext& ctx, CommunicationFigures* figures) {
    const std::vector<StepInfo>& steps = ctx.graph->Steps();
    for (size_t k = 0; k < ctx.steps.size(); ++k) {
      const size_t s = ctx.steps[k];
      const StepInfo& st = steps[s];
      figures->step_numbers.push_back(st.number);
      const StepRow* row = StepRowWithCommunication(*ctx.profile, st);
      DeviceFigures& f = figures->devices[st.device];
      ++f.steps;
      if (row != nullptr) {
        AddStepRowFigures(*row, s, &f);
        ScanStepTasks(ctx, figures->tasks_by_start, st.device, ctx.step_windows[k], &f);  // wait / transfer and names only
      } else {
        AddCriticalPathFigures(ctx, figures->tasks_by_start, k, &f);
      }
    }
  }

  // The last step-table row of the step that has Communication(Not Overlapped).
  static const StepRow* StepRowWithCommunication(const Profile& p, const StepInfo& st) {
    const StepRow* row = nullptr;
    for (const StepRow& r : p.steps.rows)
      if (r.number == st.number && r.device == st.device && r.communication_not_overlapped != kUnknownNs) row = &r;
    return row;
  }

  static void AddStepRowFigures(const StepRow& row, size_t step, DeviceFigures* f) {
    f->from_step_table = true;
    const TimeNs computing = row.computing == kUnknownNs ? 0 : row.computing;
    const TimeNs free = row.free == kUnknownNs ? 0 : row.free;
    f->step_ns += computing + row.communication_not_overlapped + free;
    f->exposed_ns += row.communication_not_overlapped;
    f->communication_ns += row.communication == kUnknownNs ? row.communication_not_overlapped : row.communication;
    f->compute_ns += computing;
    f->step_exposed.push_back({step, row.communication_not_overlapped});
    f->step_compute.push_back({step, computing});
  }

  // Step k (index into ctx.steps) without a step-table row: exposed is the
  // communication on its critical path.
  static void AddCriticalPathFigures(const DiagnosisContext& ctx, const std::vector<uint32_t>& tasks_by_start, size_t k,
                                     DeviceFigures* f) {
    const size_t s = ctx.steps[k];
    const StepInfo& st = ctx.graph->Steps()[s];
    const TimeNs exposed = ctx.StepPath(k).breakdown_ns[static_cast<size_t>(PathSegmentKind::kCommunication)];
    const StepTaskTimes times = ScanStepTasks(ctx, tasks_by_start, st.device, ctx.step_windows[k], f);
    f->step_ns += st.latency_ns();
    f->exposed_ns += exposed;
    f->communication_ns += times.communication_ns;
    f->compute_ns += times.compute_ns;
    f->step_exposed.push_back({s, exposed});
    f->step_compute.push_back({s, times.compute_ns});
  }

  // The tasks of one step window on one device (-1: every device): their
  // communication and compute time; the collectives, wait / transfer
  // sub-tasks, messages and unaligned copies go into f.
  static StepTaskTimes ScanStepTasks(const DiagnosisContext& ctx, const std::vector<uint32_t>& tasks_by_start,
                                     int32_t device, TimeWindow w, DeviceFigures* f) {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& t = p.device_tasks;
    // The rows come by start, so the unions of communication and compute
    // grow as they come; wait and transfer spans are few, and sorted after.
    SortedUnionLength comm, compute;
    std::vector<std::pair<TimeNs, TimeNs>> wait, transfer;
    auto first = std::lower_bound(tasks_by_start.begin(), tasks_by_start.end(), w.start,
                                  [&](uint32_t r, TimeNs v) { return t.ts[r] < v; });
    for (auto it = first; it != tasks_by_start.end() && t.ts[*it] < w.end; ++it) {
      const uint32_t r = *it;
      if (device >= 0 && p.tracks.device[t.track[r]] != device) continue;
      const TimeNs end = t.ts[r] + std::max<TimeNs>(t.dur[r], 0);
      if (t.kind[r] == DeviceTaskKind::kCommunication) {
        comm.Add(t.ts[r], end);
        const std::string name = detectors::LowerAscii(p.Str(t.name[r]));
        const bool whole_op = name.find("hcom_") != std::string::npos || name.find("nccl") != std::string::npos ||
                              name.find("rccl") != std::string::npos || p.Str(t.category[r]) == "communication_op";
        if (whole_op) {
          AddWholeCollective(ctx, r, f);
        } else {
          f->has_sub_tasks = true;
          (IsWaitTask(name) ? wait : transfer).push_back({t.ts[r], end});
          CountUnalignedCopy(t, r, name, end, f);
        }
      } else if (t.kind[r] == DeviceTaskKind::kKernel) {
        compute.Add(t.ts[r], end);
      }
    }
    f->wait_task_ns += IntervalUnionLength(wait);
    f->transfer_task_ns += IntervalUnionLength(transfer);
    return {comm.Total(), compute.Total()};
  }

  // A whole collective (NCCL/RCCL kernel, HCCL hcom_ op): its time by name and,
  // from the kernel's arguments, its message size and bus bytes.
  static void AddWholeCollective(const DiagnosisContext& ctx, uint32_t r, DeviceFigures* f) {
    const Profile& p = *ctx.profile;
    const DeviceTaskTable& t = p.device_tasks;
    f->collectives[std::string(p.Str(t.name[r]))] += t.dur[r];
    const std::string collective = ctx.TaskAttributeText(r, "Collective name");
    const double n = ctx.TaskAttribute(r, "Group size");
    const double elem = DTypeBytes(ParseDType(ctx.TaskAttributeText(r, "dtype")));  // c10 names: Float, Half, Long …
    const bool gathers = collective.find("gather") != std::string_view::npos;
    const double nelems = ctx.TaskAttribute(r, gathers ? "Out msg nelems" : "In msg nelems");
    const bool sized = !collective.empty() && elem > 0 && nelems > 0 && t.dur[r] > 0;
    if (!sized) return;
    Packets& messages = f->packets["NCCL"];
    ++messages.transfers;
    if (nelems * elem < kNcclSmallMessageMb * 1e6) {
      ++messages.small;
      messages.small_ms += double(t.dur[r]) / 1e6;
    }
    BusTraffic& b = f->bus[std::string(collective)];
    b.bus_bytes += nelems * elem * BusFactor(collective, std::isnan(n) ? 1 : n);
    b.time_ns += t.dur[r];
    ++b.kernels;
  }

  // SDMA copies (the DB's TASK type "SDMA", trace_view's Memcpy /
  // Reduce_Inline sub-tasks) of at least 512 B whose size is not a multiple of it.
  static void CountUnalignedCopy(const DeviceTaskTable& t, uint32_t r, std::string_view lower_name, TimeNs end,
                                 DeviceFigures* f) {
    const bool moves_data = lower_name.find("sdma") != std::string_view::npos ||
                            lower_name.find("memcpy") != std::string_view::npos ||
                            lower_name.find("reduce_inline") != std::string_view::npos;
    if (!moves_data || t.bytes[r] < kTransferAlignmentBytes || t.bytes[r] % kTransferAlignmentBytes == 0) return;
    f->unaligned.push_back({t.ts[r], end});
    ++f->unaligned_tasks;
    if (f->unaligned_example == 0) f->unaligned_example = t.bytes[r];
  }

  // Whole collectives (NCCL/RCCL kernels, HCCL hcom_ ops) per rank (device), to split wait from transfer by the
  // ranks' arrival at each collective when several ranks are given.
  static RankKernelsByName CollectRankKernels(const Profile& p, const std::vector<uint32_t>& tasks_by_start) {
    const DeviceTaskTable& t = p.device_tasks;
    RankKernelsByName rank_kernels;
    for (uint32_t r : tasks_by_start) {
      if (t.kind[r] != DeviceTaskKind::kCommunication) continue;
      const std::string name = detectors::LowerAscii(p.Str(t.name[r]));
      if (name.find("nccl") == std::string::npos && name.find("rccl") == std::string::npos &&
          name.find("hcom_") == std::string::npos)
        continue;  // whole collectives only (HCCL sub-tasks are split by Notify Wait)
      rank_kernels[p.tracks.device[t.track[r]]][std::string(p.Str(t.name[r]))].push_back(
          {t.ts[r], t.ts[r] + std::max<TimeNs>(t.dur[r], 0)});
    }
    return rank_kernels;
  }

  // ---- communication.json (per device, the analysed steps only)

  // Keys "communication/<step>/<op>/<field>" of the devices.
  static void AddCommunicationJson(const Profile& p, const std::vector<int64_t>& step_numbers,
                                   std::map<int32_t, DeviceFigures>* devices) {
    const AttributeTable& a = p.attributes;
    a.ForEachRowOf(OwnerKind::kDevice, [&](size_t i, uint32_t owner) {
      if (owner >= p.devices.rows.size()) return;
      std::string_view key = p.Str(a.key(i));
      if (!key.starts_with("communication/")) return;
      const size_t s1 = key.find('/', 14), s3 = key.rfind('/');
      if (s1 == std::string_view::npos || s3 <= s1) return;
      const std::string_view step = key.substr(14, s1 - 14), op = key.substr(s1 + 1, s3 - s1 - 1),
                             field = key.substr(s3 + 1);
      if (op == "Total Op Info" || std::isnan(a.number(i))) return;
      const int64_t number = StepNumberOf(step);
      if (number >= 0 && std::find(step_numbers.begin(), step_numbers.end(), number) == step_numbers.end()) return;
      auto it = devices->find(p.devices.rows[owner].index);
      if (it == devices->end()) return;
      DeviceFigures& f = it->second;
      f.has_json = true;
      AddCommunicationJsonField(op, field, a.number(i), &f);
    });
  }

  static void AddCommunicationJsonField(std::string_view op, std::string_view field, double v, DeviceFigures* f) {
    if (field == "Wait Time(ms)") f->wait_ms += v;
    else if (field == "Transit Time(ms)") f->transit_ms += v;
    else if (field == "Elapse Time(ms)") f->collectives[std::string(op.substr(0, op.find('@')))] += TimeNs(v * 1e6);
    else if (const size_t at = field.find(" Size Distribution "); at != std::string_view::npos)
      AddSizeDistribution(field, at, v, f);
    else if (field.ends_with(" Transit Size(MB)")) f->transports[std::string(field.substr(0, field.find(' ')))].size_mb += v;
    else if (field.ends_with(" Transit Time(ms)")) f->transports[std::string(field.substr(0, field.find(' ')))].time_ms += v;
  }

  // "<link> Size Distribution <size> Count" / "... <size> Time(ms)": field[at] is the " Size Distribution ".
  static void AddSizeDistribution(std::string_view field, size_t at, double v, DeviceFigures* f) {
    const std::string_view cls = PacketClass(field.substr(0, at));
    if (cls.empty()) return;
    std::string_view rest = field.substr(at + 19);  // "<size> Count" / "<size> Time(ms)"
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos) return;
    const double size_mb = std::strtod(std::string(rest.substr(0, sp)).c_str(), nullptr);
    const bool small = size_mb < (cls == "SDMA" ? kSdmaSmallPacketMb : kRdmaSmallPacketMb);
    Packets& pk = f->packets[std::string(cls)];
    if (rest.substr(sp + 1) == "Count") {
      pk.transfers += v;
      if (small) pk.small += v;
    } else if (small) {
      pk.small_ms += v;
    }
  }

  // ---- exposed communication findings

  // An issue when the device's exposed communication is over min_share of its
  // step, else a note (when it communicates at all).
  static void AddExposedFinding(const DiagnosisContext& ctx, const CommunicationFigures& figures, int32_t device,
                                const DeviceFigures& f, double min_share, DetectorOutput* out) {
    const double share = f.step_ns > 0 ? double(f.exposed_ns) / double(f.step_ns) : 0;
    const std::string who = device >= 0 ? fmt::format("device {}", device) : std::string("the device");
    if (f.exposed_ns == 0 || share <= min_share) {
      if (f.communication_ns > 0)
        out->notes.push_back(fmt::format("{}: exposed communication {:.1f}% of the step ({} of {} collective "
                                         "time), not over {:.0f}%", who, 100 * share,
                                         detectors::FormatUs(f.exposed_ns), detectors::FormatUs(f.communication_ns),
                                         100 * min_share));
      return;
    }
    Issue issue;
    issue.type = IssueType::kCommunication;
    issue.op_type = "exposed communication";
    std::vector<std::pair<std::string, TimeNs>> top(f.collectives.begin(), f.collectives.end());
    std::sort(top.begin(), top.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    issue.op_name = top.empty() ? "communication" : top[0].first;
    issue.profile_op_name = fmt::format("collectives of {}", who);
    issue.affected_ns = f.exposed_ns;
    issue.method = SavingMethod::kAmdahl;
    AddOverlapSavings(f, &issue);
    issue.saving_formula = "per step min(exposed communication, compute time): the most that overlapping the "
                           "collectives with compute can hide (bucketed / asynchronous collectives)";
    issue.detail = fmt::format("{}: exposed communication {} = {:.1f}% of the step ({}) > {:.0f}%", who,
                               detectors::FormatUs(f.exposed_ns), 100 * share,
                               f.from_step_table ? "step_trace_time Communication(Not Overlapped)"
                                                 : "communication on the critical path",
                               100 * min_share);
    if (f.communication_ns > f.exposed_ns)
      issue.detail += fmt::format("; {} of collective time overlapped with compute",
                                  detectors::FormatUs(f.communication_ns - f.exposed_ns));
    const double wait_share = DescribeWaitVsTransfer(figures, device, f, &issue.detail);
    if (!std::isnan(wait_share) && wait_share > 0.5)
      issue.detail += ": mostly waiting for a peer rank (its compute or host), not moving data";
    DescribeTransportBandwidth(f, &issue);
    DescribeBusBandwidth(ctx, f, &issue);
    issue.detail += LongestCollectives(top);
    issue.evidence.count = f.steps;
    issue.evidence.total_ns = f.exposed_ns;
    detectors::AddMetric(&issue, "exposed_communication_us", double(f.exposed_ns) / 1000.0, "us");
    detectors::AddMetric(&issue, "communication_us", double(f.communication_ns) / 1000.0, "us");
    detectors::AddMetric(&issue, "compute_us", double(f.compute_ns) / 1000.0, "us");
    detectors::AddMetric(&issue, "exposed_share", share, "ratio");
    if (!std::isnan(wait_share)) detectors::AddMetric(&issue, "wait_share", wait_share, "ratio");
    out->issues.push_back(std::move(issue));
  }

  static void AddOverlapSavings(const DeviceFigures& f, Issue* issue) {
    for (size_t k = 0; k < f.step_exposed.size(); ++k) {
      const TimeNs saved = std::min(f.step_exposed[k].second, f.step_compute[k].second);
      if (saved > 0) issue->savings.push_back({SavingTargetKind::kStepIdle, uint32_t(f.step_exposed[k].first), saved});
    }
  }

  // Appends the wait vs transfer split of the device's collectives, from the
  // first source that has it; returns the wait share (NaN when unknown).
  static double DescribeWaitVsTransfer(const CommunicationFigures& figures, int32_t device, const DeviceFigures& f,
                                       std::string* detail) {
    double wait_share = std::nan("");
    // The op-level Transit Time of communication.json can be near 0 while
    // its transports moved data for tens of ms: the transfer time is the
    // longer of the two. Link types (HCCS) and transport types (SDMA) list
    // the same transfers, so transports are not added together.
    double transfer_ms = f.transit_ms;
    for (const auto& [transport, tr] : f.transports) transfer_ms = std::max(transfer_ms, tr.time_ms);
    const size_t rank_count = figures.rank_kernels.size();
    if (f.has_json && f.wait_ms + transfer_ms > 0) {
      wait_share = f.wait_ms / (f.wait_ms + transfer_ms);
      *detail += fmt::format("; wait {:.1f} ms vs transfer {:.1f} ms (communication.json)", f.wait_ms, transfer_ms);
    } else if (f.has_sub_tasks && f.wait_task_ns + f.transfer_task_ns > 0) {
      wait_share = double(f.wait_task_ns) / double(f.wait_task_ns + f.transfer_task_ns);
      *detail += fmt::format("; wait {} (Notify Wait) vs transfer {} (HCCL tasks)",
                             detectors::FormatUs(f.wait_task_ns), detectors::FormatUs(f.transfer_task_ns));
    } else if (ArrivalSplit a = ArrivalOf(figures.arrival, device); a.matched > 0 && a.wait_ns + a.transfer_ns > 0) {
      wait_share = double(a.wait_ns) / double(a.wait_ns + a.transfer_ns);
      *detail += fmt::format("; wait {} (in its collectives before the last rank arrived, {} collective "
                             "kernel(s) matched across {} ranks{}) vs transfer {}",
                             detectors::FormatUs(a.wait_ns), a.matched, rank_count,
                             a.unmatched > 0 ? fmt::format(", {} not matched", a.unmatched) : std::string(),
                             detectors::FormatUs(a.transfer_ns));
    } else {
      *detail += rank_count < 2
                     ? "; one rank given: wait and transfer are not told apart (one kernel per collective; "
                       "give every rank's profile to split them)"
                     : "; the ranks' collectives could not be matched (counts or clocks differ): wait and "
                       "transfer are not told apart";
    }
    return wait_share;
  }

  // communication.json bandwidth per transport, against the contended SDMA reference.
  static void DescribeTransportBandwidth(const DeviceFigures& f, Issue* issue) {
    for (const auto& [transport, tr] : f.transports) {
      if (tr.time_ms <= 0) continue;
      const double gbps = tr.size_mb / tr.time_ms;  // MB/ms = GB/s
      issue->detail += fmt::format("; {} {:.1f} MB at {:.1f} GB/s", transport, tr.size_mb, gbps);
      if ((transport == "SDMA" || transport == "HCCS") && gbps < kSdmaContendedFraction * kSdmaReferenceGbps)
        issue->detail += fmt::format(" (under {:.1f} GB/s: contended)", kSdmaContendedFraction * kSdmaReferenceGbps);
      detectors::AddMetric(issue, transport + "_bandwidth_gbps", gbps, "GB/s");
    }
  }

  // NCCL/RCCL bus bandwidth per collective, against the link bandwidth.
  static void DescribeBusBandwidth(const DiagnosisContext& ctx, const DeviceFigures& f, Issue* issue) {
    for (const auto& [collective, b] : f.bus) {
      const double gbps = b.bus_bytes / double(b.time_ns);
      const double link = ctx.hardware_known ? ctx.hardware->link_bandwidth.value : 0;
      issue->detail += fmt::format("; {} bus bandwidth {:.1f} GB/s", collective, gbps);
      if (link > 0) issue->detail += fmt::format(" ({:.0f}% of the {:.0f} GB/s link)", 100 * gbps * 1e9 / link, link / 1e9);
      detectors::AddMetric(issue, collective + "_bus_bandwidth_gbps", gbps, "GB/s");
    }
  }

  // "; longest: <name> <time>, ..." of the first kTopCollectives of top (longest first); empty when none.
  static std::string LongestCollectives(const std::vector<std::pair<std::string, TimeNs>>& top) {
    std::string names;
    for (size_t k = 0; k < top.size() && k < kTopCollectives; ++k)
      names += (names.empty() ? "" : ", ") + fmt::format("{} {}", top[k].first, detectors::FormatUs(top[k].second));
    return names.empty() ? std::string() : "; longest: " + names;
  }

  // ---- the rank the others wait for

  static void AddRankImbalanceFinding(const std::map<int32_t, DeviceFigures>& devices, double min_share,
                                      double max_spread, DetectorOutput* out) {
    const RankSpread ranks = MeasureRankSpread(devices);
    if (ranks.ranks < 2) return;
    if (ranks.spread <= max_spread || ranks.slowest == nullptr || ranks.fastest == nullptr) {
      out->notes.push_back(fmt::format("compute per step spreads {:.1f}% across {} devices, not over {:.0f}%",
                                       100 * ranks.spread, ranks.ranks, 100 * max_spread));
      return;
    }
    const DeviceFigures& fast = *ranks.fastest;
    // Uneven compute makes the others wait only where they wait in their
    // collectives: the fastest rank must expose communication itself (over
    // min_exposed_share of its step). A host-bound job with uneven kernels
    // (seen: 26 % spread, no collective on any path) is not held by a rank.
    const double fast_exposed = fast.step_ns > 0 ? double(fast.exposed_ns) / double(fast.step_ns) : 0;
    if (fast_exposed <= min_share) {
      out->notes.push_back(fmt::format("compute per step spreads {:.1f}% across {} devices, but device {} exposes "
                                       "{:.1f}% of its step in communication (not over {:.0f}%): no rank holds the "
                                       "others", 100 * ranks.spread, ranks.ranks, ranks.fastest_device,
                                       100 * fast_exposed, 100 * min_share));
      return;
    }
    out->issues.push_back(RankImbalanceIssue(ranks, max_spread));
  }

  // Compute per step of the devices (ranks) with steps and compute; the rest
  // is left at its defaults when fewer than two.
  static RankSpread MeasureRankSpread(const std::map<int32_t, DeviceFigures>& devices) {
    std::vector<std::pair<int32_t, const DeviceFigures*>> ranks;
    for (const auto& [device, f] : devices)
      if (device >= 0 && f.steps > 0 && f.compute_ns > 0) ranks.push_back({device, &f});
    RankSpread r;
    r.ranks = ranks.size();
    if (ranks.size() < 2) return r;
    for (const auto& [device, f] : ranks) {
      const double c = double(f->compute_ns) / double(f->steps);
      r.mean += c / double(ranks.size());
      if (c > r.hi) r.hi = c, r.slowest_device = device, r.slowest = f;
      if (c < r.lo) r.lo = c, r.fastest_device = device, r.fastest = f;
    }
    r.spread = r.mean > 0 ? (r.hi - r.lo) / r.mean : 0;
    return r;
  }

  static Issue RankImbalanceIssue(const RankSpread& ranks, double max_spread) {
    const DeviceFigures& slow = *ranks.slowest;
    const DeviceFigures& fast = *ranks.fastest;
    Issue issue;
    issue.type = IssueType::kCommunication;
    issue.op_type = "rank imbalance";
    issue.op_name = fmt::format("device {}", ranks.slowest_device);
    issue.profile_op_name = fmt::format("compute of device {}", ranks.slowest_device);
    // What the waiting rank idles per step for the slow one, over the steps.
    const TimeNs gap = static_cast<TimeNs>((ranks.hi - ranks.lo) * double(fast.steps));
    issue.affected_ns = gap;
    issue.method = SavingMethod::kAmdahl;
    for (const auto& [step, compute] : slow.step_compute) {
      const TimeNs saved = static_cast<TimeNs>(std::max(0.0, double(compute) - ranks.mean));
      if (saved > 0) issue.savings.push_back({SavingTargetKind::kStepIdle, uint32_t(step), saved});
    }
    issue.saving_formula = "per step slowest compute - mean compute across devices: what balancing the stages saves";
    std::string waits;
    if (fast.has_json) waits = fmt::format(", waiting {:.1f} ms in its collectives (communication.json)", fast.wait_ms);
    else if (fast.wait_task_ns > 0) waits = fmt::format(", waiting {} in Notify Wait", detectors::FormatUs(fast.wait_task_ns));
    issue.detail = fmt::format(
        "device {} computes {} per step, device {} {} (spread {:.0f}% of the mean > {:.0f}%): device {} is the rank "
        "the others wait for; device {} exposes {} of communication{}",
        ranks.slowest_device, detectors::FormatUs(TimeNs(ranks.hi)), ranks.fastest_device,
        detectors::FormatUs(TimeNs(ranks.lo)), 100 * ranks.spread, 100 * max_spread, ranks.slowest_device,
        ranks.fastest_device, detectors::FormatUs(fast.exposed_ns), waits);
    issue.evidence.count = ranks.ranks;
    issue.evidence.total_ns = gap;
    detectors::AddMetric(&issue, "compute_spread", ranks.spread, "ratio");
    detectors::AddMetric(&issue, "slowest_device", ranks.slowest_device, "index");
    detectors::AddMetric(&issue, "slowest_compute_us", ranks.hi / 1000.0, "us");
    detectors::AddMetric(&issue, "fastest_compute_us", ranks.lo / 1000.0, "us");
    return issue;
  }

  // ---- notes and transfer findings

  // nccl-tests bus bandwidth per collective, against the link bandwidth.
  // communication_matrix.json: per link (device and src-dst) and transport,
  // the bytes and time of the analysed steps' collectives (the "-total" rows);
  // a link under kSlowLinkFraction of the fastest link of its transport
  // moves the same bytes slower (msprof-analyze slow-link analysis). Said
  // with the time it costs at the fastest link's bandwidth.
  static void NoteSlowLinks(const DiagnosisContext& ctx, const std::vector<int64_t>& step_numbers, DetectorOutput* out) {
    const Profile& p = *ctx.profile;
    const AttributeTable& a = p.attributes;
    struct Link {
      std::string transport;
      double size_mb = 0, time_ms = 0;
    };
    // (device, "src-dst", op) -> fields; then summed per (device, src-dst).
    std::map<std::tuple<int32_t, std::string, std::string>, Link> rows;
    a.ForEachRowOf(OwnerKind::kDevice, [&](size_t i, uint32_t owner) {
      if (owner >= p.devices.rows.size()) return;
      std::string_view key = p.Str(a.key(i));
      if (!key.starts_with("communication_matrix/")) return;
      key.remove_prefix(21);
      const size_t s1 = key.find('/'), s3 = key.rfind('/');
      if (s1 == std::string_view::npos || s3 <= s1) return;
      const size_t s2 = key.rfind('/', s3 - 1);
      if (s2 <= s1) return;
      const std::string_view step = key.substr(0, s1), op = key.substr(s1 + 1, s2 - s1 - 1),
                             link = key.substr(s2 + 1, s3 - s2 - 1), field = key.substr(s3 + 1);
      if (op.find("-total@") == std::string_view::npos) return;  // the per-op totals, not the per-packet rows
      const int64_t number = StepNumberOf(step);
      if (number >= 0 && std::find(step_numbers.begin(), step_numbers.end(), number) == step_numbers.end()) return;
      Link& l = rows[{p.devices.rows[owner].index, std::string(link), std::string(op)}];
      if (field == "Transport Type") l.transport = p.AttributeText(i);
      else if (field == "Transit Size(MB)" && !std::isnan(a.number(i))) l.size_mb = a.number(i);
      else if (field == "Transit Time(ms)" && !std::isnan(a.number(i))) l.time_ms = a.number(i);
    });
    std::map<std::pair<int32_t, std::string>, Link> links;
    for (const auto& [k, l] : rows) {
      if (l.transport.empty() || l.transport == "LOCAL") continue;  // on-chip copies are not a link
      Link& sum = links[{std::get<0>(k), std::get<1>(k)}];
      sum.transport = l.transport;
      sum.size_mb += l.size_mb;
      sum.time_ms += l.time_ms;
    }
    std::map<std::string, double> fastest;  // transport -> GB/s
    for (const auto& [k, l] : links)
      if (l.time_ms > 0 && l.size_mb >= kSlowLinkMinMb) fastest[l.transport] = std::max(fastest[l.transport], l.size_mb / l.time_ms);
    for (const auto& [transport, best] : fastest) {
      std::string all, slow;
      double lost_ms = 0;
      for (const auto& [k, l] : links) {
        if (l.transport != transport || l.time_ms <= 0 || l.size_mb < kSlowLinkMinMb) continue;
        const double gbps = l.size_mb / l.time_ms;  // MB/ms = GB/s
        const std::string name = fmt::format("device {} link {}", k.first, k.second);
        all += fmt::format("{}{} {:.1f} GB/s", all.empty() ? "" : ", ", name, gbps);
        if (gbps < kSlowLinkFraction * best) {
          slow += fmt::format("{}{}", slow.empty() ? "" : ", ", name);
          lost_ms += l.time_ms - l.size_mb / best;
        }
      }
      out->notes.push_back(
          slow.empty()
              ? fmt::format("{} links (communication_matrix): {}; none under {:.0f}% of the fastest", transport, all,
                            100 * kSlowLinkFraction)
              : fmt::format("{} links (communication_matrix): {}; slow: {} (under {:.0f}% of the fastest, {:.1f} GB/s): "
                            "{:.1f} ms more than at the fastest link's bandwidth",
                            transport, all, slow, 100 * kSlowLinkFraction, best, lost_ms));
    }
  }

  static void NoteBusBandwidth(const DiagnosisContext& ctx, int32_t device, const DeviceFigures& f,
                               DetectorOutput* out) {
    const double link = ctx.hardware_known ? ctx.hardware->link_bandwidth.value : 0;
    for (const auto& [collective, b] : f.bus) {
      const double gbps = b.bus_bytes / double(b.time_ns);  // bytes per ns = GB/s
      std::string vs = link > 0 ? fmt::format(" = {:.0f}% of the {:.0f} GB/s per-direction link of {}", 100 * gbps * 1e9 / link,
                                              link / 1e9, ctx.hardware->id)
                                : std::string(" (no link bandwidth for this device in the hardware table)");
      out->notes.push_back(fmt::format("{}: {} {} kernel(s), {} in all: bus bandwidth {:.1f} GB/s{} (nccl-tests busBw)",
                                       device >= 0 ? fmt::format("device {}", device) : std::string("the device"),
                                       b.kernels, collective, detectors::FormatUs(b.time_ns), gbps, vs));
    }
  }

  // Small packets and unaligned transfers of one device: issues when over
  // the minimum share of the step, notes under it (they carry no saving).
  static void AddTransferFindings(const DiagnosisContext& ctx, int32_t device, const DeviceFigures& f,
                                  DetectorOutput* out) {
    const std::string who = device >= 0 ? fmt::format("device {}", device) : std::string("the device");
    auto emit = [&](Issue issue) {
      if (ctx.ShareOfStep(issue.affected_ns) < ctx.options->min_issue_share) {
        out->notes.push_back(issue.detail + fmt::format(" ({:.2f}% of the step: not reported)",
                                                        100 * ctx.ShareOfStep(issue.affected_ns)));
        return;
      }
      issue.type = IssueType::kCommunication;
      issue.method = SavingMethod::kNone;
      issue.saving_formula = "no published gain: measure with pypto compare";
      out->issues.push_back(std::move(issue));
    };
    for (const auto& [cls, pk] : f.packets) {
      if (pk.transfers <= 0 || pk.small / pk.transfers <= kSmallPacketShare) continue;
      Issue issue;
      issue.op_type = "small packets";
      issue.op_name = fmt::format("{} {} transfers", who, cls);
      issue.affected_ns = TimeNs(pk.small_ms * 1e6);
      issue.evidence.count = uint64_t(pk.small);
      issue.evidence.total_ns = issue.affected_ns;
      const bool nccl = cls == "NCCL";
      issue.detail = fmt::format("{}: {:.0f} of {:.0f} {} {} ({:.0f}%) are under {:.0f} MB (> {:.0f}%), {:.1f} ms "
                                 "of {} time ({})",
                                 who, pk.small, pk.transfers, cls, nccl ? "collective messages" : "transfers",
                                 100 * pk.small / pk.transfers,
                                 nccl ? kNcclSmallMessageMb : cls == "SDMA" ? kSdmaSmallPacketMb : kRdmaSmallPacketMb,
                                 100 * kSmallPacketShare, pk.small_ms, nccl ? "collective" : "transfer",
                                 nccl ? "kernel arguments In msg nelems x dtype; batch small collectives or bucket "
                                        "them into larger ones"
                                      : "communication.json Size Distribution");
      detectors::AddMetric(&issue, "small_transfers", pk.small, "count");
      detectors::AddMetric(&issue, "transfers", pk.transfers, "count");
      detectors::AddMetric(&issue, "small_share", pk.small / pk.transfers, "ratio");
      emit(std::move(issue));
    }
    if (f.unaligned_tasks > 0) {
      Issue issue;
      issue.op_type = "byte alignment";
      issue.op_name = fmt::format("{} unaligned transfers", who);
      issue.affected_ns = IntervalUnionLength(f.unaligned);
      issue.evidence.count = f.unaligned_tasks;
      issue.evidence.total_ns = issue.affected_ns;
      issue.detail = fmt::format("{}: {} HCCL SDMA (Memcpy / Reduce_Inline) task(s) move sizes that are not a multiple of "
                                 "{} B (e.g. {} B), {} in all",
                                 who, f.unaligned_tasks, kTransferAlignmentBytes, f.unaligned_example,
                                 detectors::FormatUs(issue.affected_ns));
      emit(std::move(issue));
    }
  }
};

}  // namespace

const Detector& CommunicationDetector() {
  static const Communication detector;
  return detector;
}

}  // namespace pypto
