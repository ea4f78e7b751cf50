// Ascend parts of the analyze summary: PMU pipe ratios per op type, the
// op_statistic.csv table and the step_trace_time breakdown of each step. Copies what the graph layer and the
// profile's step table give; computes nothing else.
#include "graph/op_statistic.h"
#include "graph/pipe_ratios.h"
#include "report/analysis_summary.h"

namespace pypto::report {

const std::vector<StepBreakdownField>& StepBreakdownFields() {
  static const std::vector<StepBreakdownField> kFields = {
      {"computing", "Computing"},
      {"communication_not_overlapped", "Communication(Not Overlapped)"},
      {"overlapped", "Overlapped"},
      {"communication", "Communication"},
      {"free", "Free"},
      {"stage", "Stage"},
      {"bubble", "Bubble"},
      {"communication_not_overlapped_excluding_receive", "Communication(Not Overlapped and Exclude Receive)"},
      {"preparing", "Preparing"},
  };
  return kFields;
}

namespace {

std::vector<std::pair<std::string, TimeNs>> Breakdown(const StepRow& row) {
  const TimeNs values[] = {row.computing, row.communication_not_overlapped, row.overlapped,
                           row.communication, row.free, row.stage, row.bubble,
                           row.communication_not_overlapped_excluding_receive, row.preparing};
  std::vector<std::pair<std::string, TimeNs>> out;
  const auto& fields = StepBreakdownFields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (values[i] != kUnknownNs) out.emplace_back(fields[i].key, values[i]);
  return out;
}

}  // namespace

void AddAscendSummary(const OperatorCallGraph& graph, const SummaryOptions& options, AnalysisSummary* summary) {
  const Profile& profile = graph.profile();
  for (StepSummary& step : summary->steps) {
    if (step.number < 0) continue;
    for (const StepRow& row : profile.steps.rows) {
      if (row.number == step.number && row.device == step.device) {
        step.breakdown = Breakdown(row);
        break;
      }
    }
  }
  std::vector<PipeRatioAggregate> ratios = PipeRatiosByOpType(profile);
  summary->distinct_pipe_ratio_op_types = ratios.size();
  if (ratios.size() > options.top_rows) ratios.resize(options.top_rows);
  summary->pipe_ratios_by_op_type = std::move(ratios);
  std::vector<OpStatisticRow> op_statistic = OpStatisticRows(profile);
  summary->op_statistic_rows = op_statistic.size();
  if (op_statistic.size() > options.top_rows) op_statistic.resize(options.top_rows);
  summary->op_statistic = std::move(op_statistic);
}

}  // namespace pypto::report
