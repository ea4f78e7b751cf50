#include "importers/common/ascend_vocabulary.h"

#include <array>

namespace pypto::ascend {

TaskTypeInfo ClassifyTaskType(std::string_view t) {
  using K = DeviceTaskKind;
  struct Entry { std::string_view type; K kind; std::string_view core; };
  static constexpr std::array<Entry, 33> kTable = {{
      // compute
      {"AI_CORE", K::kKernel, "AI_CORE"},
      {"AI_VECTOR_CORE", K::kKernel, "AI_VECTOR_CORE"},
      {"MIX_AIC", K::kKernel, "MIX_AIC"},
      {"MIX_AIV", K::kKernel, "MIX_AIV"},
      {"AI_CPU", K::kKernel, "AI_CPU"},
      {"KERNEL_AICORE", K::kKernel, "AI_CORE"},
      {"KERNEL_AIVEC", K::kKernel, "AI_VECTOR_CORE"},
      {"KERNEL_MIX_AIC", K::kKernel, "MIX_AIC"},
      {"KERNEL_MIX_AIV", K::kKernel, "MIX_AIV"},
      {"KERNEL_AICPU", K::kKernel, "AI_CPU"},
      {"DSA_SQE", K::kKernel, "DSA_SQE"},        // random / bitmask generator
      {"STARS_COMMON", K::kKernel, ""},          // DB name of DSA tasks in the 2025 sample
      {"Other", K::kKernel, ""},                 // 2024 trace_view: AI Core kernels (reference §5.1)
      // data movement
      {"MEMCPY_ASYNC", K::kMemcpy, ""},
      {"SDMA_SQE", K::kMemcpy, ""},
      {"PCIE_DMA_SQE", K::kMemcpy, ""},
      // synchronisation
      {"EVENT_RECORD_SQE", K::kSync, ""},
      {"EVENT_WAIT_SQE", K::kSync, ""},
      {"EVENT_RECORD", K::kSync, ""},
      {"EVENT_WAIT", K::kSync, ""},
      {"NOTIFY_RECORD", K::kSync, ""},
      {"NOTIFY_WAIT", K::kSync, ""},
      // communication (whole ops and HCCL sub-tasks)
      {"HCCL", K::kCommunication, ""},
      {"COMMUNICATION", K::kCommunication, ""},
      {"SDMA", K::kCommunication, ""},
      {"RDMA", K::kCommunication, ""},
      {"Notify Wait", K::kCommunication, ""},
      {"Notify Record", K::kCommunication, ""},
      {"Write Value", K::kCommunication, ""},
      {"Reduce_Inline", K::kCommunication, ""},
      // bookkeeping
      {"PLACE_HOLDER_SQE", K::kOther, ""},
      // The profiler's own start/stop markers: not work. As tasks they opened
      // and closed the DB's timeline, so the path ran from one to the other
      // (a 172 ms "kernel-to-kernel gap" over the Level1 AlexNet DB).
      {"PROFILING_ENABLE", K::kAnnotation, ""},
      {"PROFILING_DISABLE", K::kAnnotation, ""},
  }};
  for (const Entry& e : kTable)
    if (e.type == t) return {e.kind, e.core};
  return {K::kOther, ""};
}

}  // namespace pypto::ascend
