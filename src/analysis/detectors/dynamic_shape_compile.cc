// (7) dynamic_shape_compile: operators compiled online while the model runs
// (dynamic shapes, jit_compile), which stalls dispatch on the host.
//
// Rules (diagnosis-rules §1.1):
//   * operator dispatch (msprof-analyze schedule/dispatch/timeline_op_dispatch_analyzer.py):
//     `AscendCL@aclopCompileAndExecute` host calls >= 20 (MAX_OP_COMPILE_NUM);
//     when a trace has no aclopCompileAndExecute but writes the compile itself
//     (`AscendCL@opCompile`), those calls are counted the same way;
//   * dynamic shape (computation/op_compile/dynamic_shape_checker.py): the
//     kernel_details `OP State` column shows no static operator at all. The
//     profile measures no cost for it (host tiling per call is not traced),
//     so it is a note, not a finding with a 0 us saving.
// Saving (measured): the host time spent inside the compile calls, which
// binary kernels (set_compile_mode(jit_compile=False)) do not spend.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"

namespace pypto {
namespace {

// Count of compile calls in the analysed steps. Source: msprof-analyze
// timeline_op_dispatch_analyzer MAX_OP_COMPILE_NUM = 20 (§1.1).
inline constexpr double kDefaultMaxOpCompileNum = 20;

std::string_view ApiName(std::string_view name) {
  size_t at = name.rfind('@');
  return at == std::string_view::npos ? name : name.substr(at + 1);
}

class DynamicShapeCompile final : public Detector {
 public:
  std::string_view name() const override { return "dynamic_shape_compile"; }
  IssueType type() const override { return IssueType::kDynamicShapeCompile; }

  void Run(const DiagnosisContext& ctx, DetectorOutput* out) const override {
    const Profile& p = *ctx.profile;
    const HostOpTable& h = p.host_ops;
    const double max_num = ctx.options->Param("dynamic_shape_compile.max_op_compile_num", kDefaultMaxOpCompileNum);

    // ---- online compile calls
    std::vector<uint32_t> compile_exec, op_compile;
    for (uint32_t op : ctx.host_ops) {
      if (h.kind[op] != HostOpKind::kRuntime && h.kind[op] != HostOpKind::kDriver && h.kind[op] != HostOpKind::kOther)
        continue;
      std::string_view api = ApiName(p.Str(h.name[op]));
      if (api == "aclopCompileAndExecute") compile_exec.push_back(op);
      else if (api == "opCompile") op_compile.push_back(op);
    }
    const bool use_exec = !compile_exec.empty();
    std::vector<uint32_t>& calls = use_exec ? compile_exec : op_compile;
    std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) { return h.ts[a] < h.ts[b]; });
    if (!calls.empty() && double(calls.size()) < max_num) {
      out->notes.push_back(fmt::format("{} {} call(s) in the analysed steps, under the {} of the msprof-analyze "
                                       "dispatch rule", calls.size(), use_exec ? "aclopCompileAndExecute" : "opCompile",
                                       max_num));
    }
    if (!calls.empty() && double(calls.size()) >= max_num) {
      Issue issue;
      issue.type = IssueType::kDynamicShapeCompile;
      std::map<std::string, uint64_t> by_operator;
      TimeNs total = 0;
      for (uint32_t op : calls) {
        total += h.dur[op];
        if (issue.evidence.host_ops.size() < kMaxEvidenceRows) issue.evidence.host_ops.push_back(op);
        issue.savings.push_back({SavingTargetKind::kHostOp, op, h.dur[op]});
        int32_t enclosing = ctx.graph->EnclosingOperator(op);
        if (enclosing >= 0 && static_cast<uint32_t>(enclosing) != op)
          ++by_operator[std::string(p.Str(h.name[enclosing]))];
      }
      std::string top_op;
      uint64_t top_n = 0;
      for (const auto& [name, n] : by_operator)
        if (n > top_n) top_op = name, top_n = n;
      issue.op_name = top_op.empty() ? std::string(use_exec ? "aclopCompileAndExecute" : "opCompile") : top_op;
      issue.op_type = use_exec ? "aclopCompileAndExecute" : "opCompile";
      issue.affected_ns = total;
      issue.evidence.count = calls.size();
      issue.evidence.total_ns = total;
      issue.method = SavingMethod::kMeasuredGap;
      issue.saving_formula = fmt::format("sum of the {} online compile call durations (host)", calls.size());
      std::string ops;
      size_t listed = 0;
      for (const auto& [name, n] : by_operator) {
        if (listed++ == 5) break;
        ops += (ops.empty() ? "" : ", ") + fmt::format("{} x{}", name, n);
      }
      issue.detail = fmt::format("{} {} calls (>= {}), {} of host time", calls.size(), issue.op_type, max_num,
                                 detectors::FormatUs(total));
      if (!ops.empty()) issue.detail += "; compiled under " + ops;
      detectors::AddMetric(&issue, "compile_calls", double(calls.size()), "count");
      detectors::AddMetric(&issue, "compile_time_us", double(total) / 1000.0, "us");
      detectors::AddMetric(&issue, "max_op_compile_num", max_num, "count");
      detectors::AddMetric(&issue, "distinct_operators", double(by_operator.size()), "count");
      out->issues.push_back(std::move(issue));
    }

    // ---- OP State
    // A state is its row's interned text, judged once per distinct text, and
    // the dynamic tasks are counted by label id, named after the loop: a
    // copy, a lowering and a map key per task were most of this detector on
    // a 1 M-row kernel_details.csv (69 -> 26 ms). A row without text (empty, or a number)
    // is neither state.
    enum class OpState : uint8_t { kOther, kDynamic, kStatic };
    const StrId state_key = ctx.AttributeKey("OP State");
    std::unordered_map<StrId, OpState> state_of_text;
    std::unordered_map<StrId, uint64_t> dynamic_by_label;
    uint64_t dynamic = 0, stat = 0;
    for (uint32_t t : ctx.tasks) {
      const std::optional<uint32_t> row = ctx.TaskAttributeRow(t, state_key);
      if (!row) continue;
      const StrId text = p.attributes.text(*row);
      if (text == kEmptyStr) continue;
      auto [known, added] = state_of_text.try_emplace(text, OpState::kOther);
      if (added) {
        const std::string lower = detectors::LowerAscii(p.Str(text));
        known->second = lower == "dynamic" ? OpState::kDynamic : lower == "static" ? OpState::kStatic : OpState::kOther;
      }
      if (known->second == OpState::kDynamic) {
        ++dynamic;
        ++dynamic_by_label[ctx.TaskLabelId(t)];
      } else if (known->second == OpState::kStatic) {
        ++stat;
      }
    }
    std::map<std::string, uint64_t> dynamic_types;
    for (const auto& [label, n] : dynamic_by_label) dynamic_types[std::string(p.Str(label))] += n;
    if (dynamic + stat == 0) {
      if (calls.empty())
        out->notes.push_back("no OP State column and no compile calls in the analysed steps: dynamic-shape check "
                             "had nothing to read");
      return;
    }
    if (stat > 0) {
      if (dynamic > 0)
        out->notes.push_back(fmt::format("{} dynamic and {} static tasks (OP State): the msprof-analyze rule needs "
                                         "no static operator at all", dynamic, stat));
      return;
    }
    // Every kernel dynamic, but the profile measures no cost of it (no
    // compile call at or over the dispatch rule): a note, not a finding with
    // a 0 us saving. When compile calls are counted, their issue above
    // carries the cost.
    std::string types;
    size_t listed = 0;
    for (const auto& [name, n] : dynamic_types) {
      if (listed++ == 5) break;
      types += (types.empty() ? "" : ", ") + name;
    }
    out->notes.push_back(fmt::format(
        "all {} tasks with an OP State are dynamic ({} op types: {}{}), none static; the profile measures no "
        "compile cost for them{}", dynamic, dynamic_types.size(), types, dynamic_types.size() > 5 ? ", ..." : "",
        double(calls.size()) >= max_num ? " beyond the online compile calls reported" : " (no online compile calls at or over the rule)"));
  }
};

}  // namespace

const Detector& DynamicShapeCompileDetector() {
  static const DynamicShapeCompile detector;
  return detector;
}

}  // namespace pypto
