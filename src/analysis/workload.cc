#include "analysis/workload.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace pypto {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view word) {
  if (word.size() > text.size()) return false;
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

// "...Grad" at the end of an Ascend op type, or followed by a version suffix
// ("FlashAttentionScoreGrad", "RmsNormGrad", "SoftmaxGradV2"): case-sensitive so
// that words like "Gradient" or "upgrade" do not count.
bool HasGradSuffix(std::string_view name) {
  for (size_t at = name.find("Grad"); at != std::string_view::npos; at = name.find("Grad", at + 1)) {
    const size_t after = at + 4;
    if (after == name.size()) return true;
    if (name[after] == 'V' && after + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[after + 1])))
      return true;
    if (name[after] == '_' || name[after] == ' ') return true;  // "RmsNormGrad_1", Ascend task suffixes
    if (std::isupper(static_cast<unsigned char>(name[after]))) return true;  // "MaxPoolGradWithArgmaxV1"
  }
  return false;
}

// Rows that say nothing about the model's work: collectives (a DDP all-reduce
// or a serving all-gather alike), allocations, views and step marks.
bool IsBookkeepingName(std::string_view name) {
  constexpr std::string_view kPrefixes[] = {"gloo:", "nccl:", "c10d::", "hcom", "record_param_comms", "ProfilerStep",
                                            "aten::empty", "aten::view", "aten::as_strided", "aten::detach",
                                            "aten::resolve_", "aten::lift_fresh", "Optimizer."};
  for (std::string_view p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return name.find("AllReduce") != std::string_view::npos || name.find("allReduce") != std::string_view::npos;
}

// A name to quote: autograd's "evaluate_function: X" range is X.
std::string_view QuotedName(std::string_view s) {
  constexpr std::string_view kAutograd = "autograd::engine::evaluate_function: ";
  if (s.rfind(kAutograd, 0) == 0) s.remove_prefix(kAutograd.size());
  if (s.size() > 60) s = s.substr(0, 60);
  return s;
}

}  // namespace

const char* WorkloadName(Workload w) {
  switch (w) {
    case Workload::kInference: return "inference";
    case Workload::kTraining: return "training";
    case Workload::kUnknown: break;
  }
  return "unknown";
}

bool IsBackwardName(std::string_view name) {
  if (name.empty()) return false;
  // torch autograd: "autograd::engine::evaluate_function: MmBackward0", "MmBackward0",
  // aten::convolution_backward, "## backward ##" annotations; kernels named *backward*.
  if (ContainsNoCase(name, "backward")) return true;
  // Ascend op types of the backward pass: FlashAttentionScoreGrad, RmsNormGrad,
  // Conv2DBackpropFilter / Conv2DBackpropInput.
  if (HasGradSuffix(name) || name.find("Backprop") != std::string_view::npos) return true;
  // cuDNN / CUTLASS / flash-attention backward kernels.
  if (name.find("dgrad") != std::string_view::npos || name.find("wgrad") != std::string_view::npos) return true;
  if (name.find("_bwd") != std::string_view::npos) return true;
  return false;
}

bool IsOptimizerName(std::string_view name) {
  if (name.rfind("Optimizer.step#", 0) == 0 || name.rfind("Optimizer.zero_grad#", 0) == 0) return true;
  // Ascend optimizer update ops and torch_npu fused optimizers.
  if (name.rfind("ApplyAdam", 0) == 0 || name.rfind("ApplyGradientDescent", 0) == 0 ||
      name.rfind("ApplyMomentum", 0) == 0 || name.rfind("NpuFused", 0) == 0)
    return true;
  return false;
}

WorkloadClass ClassifyWorkload(const Profile& profile) {
  WorkloadClass out;
  // Low bits: 0 = not looked at, 1 = neither, 2 = backward, 3 = optimizer;
  // kBookkeeping set for IsBookkeepingName: the tests run once per distinct string.
  constexpr uint8_t kBookkeeping = 0x10;
  std::vector<uint8_t> verdict(profile.strings.size(), 0);
  std::vector<uint64_t> backward_by_name(profile.strings.size(), 0);
  uint64_t compute_rows = 0;  // rows other than collectives, allocations and step marks
  auto judge = [&](StrId id) -> uint8_t {
    if (id >= verdict.size()) {
      const std::string_view s = profile.Str(id);
      return IsBookkeepingName(s) ? uint8_t{1 | kBookkeeping} : uint8_t{1};
    }
    if (verdict[id] == 0) {
      const std::string_view s = profile.Str(id);
      verdict[id] = static_cast<uint8_t>((IsOptimizerName(s) ? 3 : IsBackwardName(s) ? 2 : 1) |
                                         (IsBookkeepingName(s) ? kBookkeeping : 0));
    }
    return verdict[id];
  };
  auto count = [&](StrId id) {
    ++out.rows;
    const uint8_t judged = judge(id);
    if (!(judged & kBookkeeping)) ++compute_rows;
    const uint8_t v = judged & 0x0F;
    if (v == 2) ++out.backward_rows, ++backward_by_name[id];
    else if (v == 3) ++out.optimizer_rows, ++backward_by_name[id];
  };
  const HostOpTable& h = profile.host_ops;
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.kind[i] != HostOpKind::kOperator && h.kind[i] != HostOpKind::kUserAnnotation) continue;
    count(h.name[i]);
  }
  const DeviceTaskTable& d = profile.device_tasks;
  for (size_t t = 0; t < d.size(); ++t) {
    if (d.kind[t] == DeviceTaskKind::kAnnotation || d.kind[t] == DeviceTaskKind::kSync) continue;
    const StrId type = d.op_type(t);
    count(type != kEmptyStr && !profile.Str(type).empty() ? type : d.name[t]);
  }
  // Statistics-only exports: op_statistic keeps one attribute per OP Type and
  // column ("op_statistic/<OP Type>/<Core Type>/<column>"); each OP Type counts
  // once. Read only without task rows, which the statistics summarise.
  if (d.size() == 0) {
    std::vector<std::string_view> seen;
    const AttributeTable& attrs = profile.attributes;
    std::vector<uint8_t> key_seen(profile.strings.size(), 0);
    for (size_t i = 0; i < attrs.size(); ++i) {
      const StrId key = attrs.key(i);
      if (key >= key_seen.size() || key_seen[key]) continue;
      key_seen[key] = 1;
      std::string_view k = profile.Str(key);
      if (k.rfind("op_statistic/", 0) != 0) continue;
      k.remove_prefix(13);
      const std::string_view type = k.substr(0, k.find('/'));
      if (std::find(seen.begin(), seen.end(), type) != seen.end()) continue;
      seen.push_back(type);
      const StrId id = profile.strings.Find(type);
      if (id != kEmptyStr) {
        count(id);
      } else {  // not interned on its own: judged (and counted) without a name to quote
        ++out.rows;
        compute_rows += !IsBookkeepingName(type);
        if (IsOptimizerName(type)) ++out.optimizer_rows;
        else if (IsBackwardName(type)) ++out.backward_rows;
      }
    }
  }
  if (out.rows == 0) {
    out.reason = "no operators or device tasks: cannot tell training from inference";
    return out;
  }
  // The names seen most often are the examples.
  std::vector<StrId> named;
  for (StrId id = 0; id < backward_by_name.size(); ++id)
    if (backward_by_name[id] > 0) named.push_back(id);
  std::sort(named.begin(), named.end(), [&](StrId a, StrId b) {
    return backward_by_name[a] != backward_by_name[b] ? backward_by_name[a] > backward_by_name[b] : a < b;
  });
  std::string quoted;
  for (size_t i = 0; i < named.size() && out.examples.size() < kMaxWorkloadExamples; ++i) {
    const std::string s(QuotedName(profile.Str(named[i])));
    if (std::find(out.examples.begin(), out.examples.end(), s) != out.examples.end()) continue;
    quoted += (out.examples.empty() ? "" : ", ") + s;
    out.examples.push_back(s);
  }
  if (out.backward_rows > 0 || out.optimizer_rows > 0) {
    out.kind = Workload::kTraining;
    std::string what;
    if (out.backward_rows > 0) what = fmt::format("{} backward-pass row(s)", out.backward_rows);
    if (out.optimizer_rows > 0)
      what += fmt::format("{}{} optimizer row(s)", what.empty() ? "" : " and ", out.optimizer_rows);
    out.reason = fmt::format("{} among {} ops and tasks ({})", what, out.rows, quoted);
  } else if (compute_rows == 0) {
    out.reason = fmt::format("only collectives, allocations and step marks among {} ops and tasks: cannot tell "
                             "training from inference", out.rows);
  } else {
    out.kind = Workload::kInference;
    out.reason = fmt::format("forward pass only: no backward-pass or optimizer op among {} ops and tasks", out.rows);
  }
  return out;
}

}  // namespace pypto
