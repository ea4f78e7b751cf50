#include "advisor/model_config.h"

#include <algorithm>
#include <map>

#include "analysis/cost_model.h"
#include "hw/dtype.h"
#include "hw/hardware.h"

namespace pypto::advisor {

void ModelConfig::FillFrom(const ModelConfig& o) {
  if (arch.empty()) arch = o.arch;
  if (num_layers <= 0) num_layers = o.num_layers;
  if (num_heads <= 0) num_heads = o.num_heads;
  if (num_kv_heads <= 0) num_kv_heads = o.num_kv_heads;
  if (head_dim <= 0) head_dim = o.head_dim;
  if (hidden <= 0) hidden = o.hidden;
  if (dtype.empty()) dtype = o.dtype;
  if (max_seq <= 0) max_seq = o.max_seq;
  if (!o.source.empty()) source = source.empty() ? o.source : source + "; " + o.source;
}

namespace {

// KV heads from the key tensor: the query dim (not the last) equal to the
// head count names the heads axis; the key's size there is the KV head count.
// 3-D (BSH) keys: H_kv / head_dim.
int32_t KvHeads(const OpShapes& shapes, int64_t heads, int64_t head_dim) {
  const TensorShape* q = shapes.tensor(0);
  const TensorShape* k = shapes.tensor(1);
  if (!q || !k || heads <= 0) return 0;
  if (q->rank == 4 && k->rank == 4) {
    for (int i = 1; i < 3; ++i)
      if (q->dim(i) == heads && k->dim(i) > 0 && heads % k->dim(i) == 0) return int32_t(k->dim(i));
  }
  if (q->rank == 3 && k->rank == 3 && head_dim > 0 && k->dim(2) % head_dim == 0) {
    const int64_t kv = k->dim(2) / head_dim;
    if (kv > 0 && heads % kv == 0) return int32_t(kv);
  }
  return 0;
}

}  // namespace

ModelConfig InferModelConfig(const OperatorCallGraph& graph, const OpClassification& classes,
                             const ModelStructure* structure) {
  ModelConfig config;
  const Profile& p = graph.profile();
  if (structure) {
    config.num_layers = structure->layers;
    config.arch = structure->model_arch;
  }
  // The attention shape with the most device time.
  struct Shape { TimeNs total = 0; uint32_t task = 0; };
  std::map<std::string, Shape> by_shape;
  const DeviceTaskTable& t = p.device_tasks;
  for (uint32_t task = 0; task < t.size() && task < classes.task_class.size(); ++task) {
    if (classes.task_class[task] != OpClass::kAttention) continue;
    if (t.kind[task] != DeviceTaskKind::kKernel) continue;
    CostInput in = CostInputForTask(p, graph, classes, task);
    if (!in.has_shapes) continue;
    std::string key(in.name);
    key += '|';
    for (int i = 0; i < in.shapes.count; ++i)
      for (int d = 0; d < in.shapes.inputs[i].rank; ++d) key += std::to_string(in.shapes.inputs[i].dims[d]) + ",";
    Shape& s = by_shape[key];
    if (s.total == 0) s.task = task;
    s.total += std::max<TimeNs>(t.dur[task], 1);
  }
  const Shape* best = nullptr;
  for (const auto& [key, s] : by_shape)
    if (!best || s.total > best->total) best = &s;
  HardwareSpec generic;  // shapes only: the roofline figures are not used here
  int64_t max_kv = 0;
  if (best) {
    CostInput in = CostInputForTask(p, graph, classes, best->task);
    OpCost cost = EstimateCost(in, generic);
    const TensorShape* q = in.shapes.tensor(0);
    if (q && q->rank < 4) {
      // BSH / SBH / TND: heads are merged into H; the shapes alone do not give them.
      cost.heads = 0;
      cost.head_dim = 0;
    }
    if (cost.heads > 0) config.num_heads = int32_t(cost.heads);
    if (cost.head_dim > 0) config.head_dim = int32_t(cost.head_dim);
    if (cost.dtype != DType::kUnknown) config.dtype = DTypeName(cost.dtype);
    config.num_kv_heads = KvHeads(in.shapes, cost.heads, cost.head_dim);
    config.source = "profile: attention " + std::string(in.name) + " (" + in.shape_source + ")";
    for (const auto& [key, s] : by_shape) {
      OpCost c = EstimateCost(CostInputForTask(p, graph, classes, s.task), generic);
      max_kv = std::max(max_kv, c.s_kv);
    }
  }
  if (structure)
    for (const StepStructure& s : structure->steps) max_kv = std::max(max_kv, s.kv_len);
  if (max_kv > 0) config.max_seq = max_kv;
  if (config.num_heads > 0 && config.head_dim > 0) config.hidden = config.num_heads * config.head_dim;
  if (config.num_layers > 0) {
    config.source += config.source.empty() ? "" : "; ";
    config.source += "layers: structure (repeating layer pattern)";
  }
  return config;
}

Backend BackendOfReport(const DiagnosticReport& report) {
  if (!report.hardware_id.empty()) {
    StatusOr<HardwareSpec> hw = FindHardware(report.hardware_id);
    if (hw.ok()) {
      switch (hw->family) {
        case HardwareFamily::kAscend: return Backend::kAscend;
        case HardwareFamily::kNvidiaGpu: return Backend::kCuda;
        case HardwareFamily::kAmdGpu: return Backend::kRocm;
        case HardwareFamily::kCpu: return Backend::kCpu;
        default: break;
      }
    }
  }
  const std::string& f = report.format;
  if (f.find("ascend") != std::string::npos || f.find("msprof") != std::string::npos) return Backend::kAscend;
  return Backend::kCpu;
}

}  // namespace pypto::advisor
