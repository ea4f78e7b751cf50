#include "importers/ascend_db/analysis_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "importers/ascend_csv/ascend_tables.h"
#include "importers/common/csv_values.h"
#include "importers/common/sqlite_input.h"
#include "importers/common/number_text.h"

namespace pypto::ascend {
namespace {

using sqlite_input::Row;

constexpr char kLossUnreadable[] = "ascend-pt: analysis.db unreadable (communication and step analysis lost)";
constexpr char kLossTruncated[] = "ascend-pt: analysis.db truncated (rows on the missing pages lost)";
constexpr char kLossTable[] = "ascend-pt: analysis.db table unreadable (its rows lost)";
constexpr char kLossNotNumeric[] = "ascend-pt: analysis.db value is not a number";

// A NUMERIC cell as text (SQLite renders a REAL with up to 15 significant
// digits, so the µs values keep their written precision).
std::string CellText(const Row& row, int col) { return row.IsNull(col) ? std::string() : std::string(row.Text(col)); }

class AnalysisDbReader {
 public:
  AnalysisDbReader(const std::string& path, int32_t device, const ImportOptions& options, Profile* profile)
      : path_(path), device_(device), options_(options), p_(*profile) {}

  void Run(const AnalysisDbNeeds& needs) {
    auto db = sqlite_input::OpenUntrusted(path_, options_.limits);
    if (!db.ok()) return Lose(LossKind::kFileUnreadable, kLossUnreadable, db.status().message());
    db_ = std::move(*db);
    auto truncated = sqlite_input::TruncationProblem(path_, options_.limits);
    if (!truncated.ok()) return Lose(LossKind::kFileUnreadable, kLossUnreadable, truncated.status().message());
    if (!truncated->empty()) p_.CountLoss(LossKind::kTruncated, kLossTruncated, path_ + ": " + *truncated);
    auto tables = sqlite_input::TableNames(db_.get(), path_);
    if (!tables.ok()) return Lose(LossKind::kFileUnreadable, kLossUnreadable, tables.status().message());
    tables_ = std::move(*tables);
    if (tables_.empty()) return Lose(LossKind::kFileUnreadable, kLossUnreadable, path_ + ": byte 0: database holds no table");
    p_.source_files.push_back(path_);
    ReadSteps(needs.steps);
    ReadCommunicationTime(needs.communication);
    ReadBandwidth(needs.communication);
    uint64_t matrix_rows = 0;
    Read("CommAnalyzerMatrix", {"hccl_op_name"}, [&](const Row&) { ++matrix_rows; });
    std::string what = std::to_string(steps_) + " step rows, " + std::to_string(comm_ops_) + " communication ops, " +
                       std::to_string(matrix_rows) + " link-matrix rows";
    if (!needs.steps || !needs.communication)
      what += " (" + std::string(!needs.steps ? "steps" : "") + (!needs.steps && !needs.communication ? " and " : "") +
              (!needs.communication ? "communication" : "") + " already read from the text files)";
    p_.notes.push_back(path_ + ": " + what);
  }

 private:
  void Lose(LossKind kind, const char* reason, const std::string& where) { p_.CountLoss(kind, reason, where); }

  // Reads `table` when present; a failing query is counted, not raised.
  void Read(const std::string& table, const std::vector<std::string>& columns,
            const std::function<void(const Row&)>& on_row) {
    if (!tables_.count(table)) return;
    Status s = sqlite_input::SelectRows(
        db_.get(), path_, table, columns,
        [&](const Row& row) {
          on_row(row);
          return Status::Ok();
        },
        "", options_.cancel);
    if (!s.ok()) Lose(LossKind::kFileUnreadable, kLossTable, s.message());
  }

  // µs or ms text → ns; counts a cell that is not a number.
  TimeNs Ns(const Row& row, int col, bool millis, const std::string& table, const char* column) {
    if (row.IsNull(col)) return kUnknownNs;
    const std::string text = CellText(row, col);
    auto ns = millis ? number_text::MillisToNs(text) : number_text::MicrosToNs(text);
    if (!ns) {
      Lose(LossKind::kValueRepaired, kLossNotNumeric, sqlite_input::RowLocation(path_, table, row.index()) + " column " + column);
      return kUnknownNs;
    }
    return *ns;
  }

  void ReadSteps(bool wanted) {
    static const std::vector<std::string> kColumns = {
        "deviceId", "step", "computing", "communication_not_overlapped", "overlapped", "communication", "free",
        "stage", "bubble", "communication_not_overlapped_and_exclude_receive", "preparing"};
    static constexpr TimeNs StepRow::*kFields[] = {
        &StepRow::computing, &StepRow::communication_not_overlapped, &StepRow::overlapped, &StepRow::communication,
        &StepRow::free, &StepRow::stage, &StepRow::bubble, &StepRow::communication_not_overlapped_excluding_receive,
        &StepRow::preparing};
    const StrId source = p_.Intern("analysis.db StepTraceTime");
    Read("StepTraceTime", kColumns, [&](const Row& row) {
      ++steps_;
      if (!wanted) return;
      StepRow step;
      step.source = source;
      step.ts = kUnknownNs;
      step.dur = kUnknownNs;
      step.device = device_;
      const std::string number = CellText(row, 1);
      if (auto n = number_text::ParseInt64(number)) step.number = *n;
      for (size_t k = 0; k < std::size(kFields); ++k)
        step.*kFields[k] = Ns(row, static_cast<int>(k) + 2, false, "StepTraceTime", kColumns[k + 2].c_str());
      // Step time as msprof-analyze defines it (computing + not-overlapped communication + free).
      if (step.computing != kUnknownNs && step.communication_not_overlapped != kUnknownNs && step.free != kUnknownNs)
        step.dur = SaturatingAdd(SaturatingAdd(step.computing, step.communication_not_overlapped), step.free);
      EnsureNpuDevice(&p_, device_);
      // The database's own STEP_TIME row of that step (start and end) gets the breakdown.
      for (StepRow& existing : p_.steps.rows) {
        if (existing.number != step.number || step.number < 0 || existing.computing != kUnknownNs) continue;
        if (existing.device >= 0 && existing.device != device_) continue;
        for (auto field : kFields) existing.*field = step.*field;
        existing.device = device_;  // the database's STEP_TIME has no device column; the run's rank is known
        return;
      }
      step.name = p_.Intern("Step " + number);
      p_.steps.rows.push_back(step);
    });
  }

  std::string OpPrefix(const Row& row, int op_col, int group_col, int step_col) {
    std::string op = CellText(row, op_col);
    const std::string group = CellText(row, group_col);
    if (!group.empty()) op += "@" + group;
    return "communication/" + CellText(row, step_col) + "/" + op + "/";
  }

  // A number cell as an attribute. The text is the shortest form that reads
  // back to the same double (SQLite's own text rendering keeps 15 digits, which
  // cuts a µs epoch timestamp to 10 µs).
  void Attr(std::string_view key, const Row& row, int col) {
    if (row.IsNull(col)) return;
    const uint32_t owner = EnsureNpuDevice(&p_, device_);
    if (row.Type(col) == SQLITE_TEXT) {
      const std::string text = CellText(row, col);
      auto v = csv::ParseDouble(text);
      if (!v) Lose(LossKind::kValueRepaired, kLossNotNumeric, sqlite_input::RowLocation(path_, "CommAnalyzer", row.index()) + " column " + std::string(key));
      p_.attributes.Add(OwnerKind::kDevice, owner, p_.Intern(key), p_.Intern(text),
                        v ? *v : std::numeric_limits<double>::quiet_NaN());
      return;
    }
    NumberAttr(key, row.Real(col));
  }
  // The text is formatted on the stack: each communication op has a key of
  // its own per figure (hundreds of thousands on a long run), and a string
  // allocated per figure and per key was 3-5 % of reading them (interning
  // the keys is most of the rest).
  void NumberAttr(std::string_view key, double value) {
    const uint32_t owner = EnsureNpuDevice(&p_, device_);
    fmt::memory_buffer text;
    fmt::format_to(std::back_inserter(text), "{}", value);
    p_.AddAttribute(OwnerKind::kDevice, owner, p_.Intern(key), std::string_view(text.data(), text.size()), value);
  }
  // `prefix` followed by `name`, in one buffer kept across rows.
  std::string_view Key(const std::string& prefix, std::string_view name) {
    key_.assign(prefix);
    key_.append(name);
    return key_;
  }

  void ReadCommunicationTime(bool wanted) {
    // Table columns → the communication.json "Communication Time Info" keys.
    static const std::vector<std::string> kColumns = {"hccl_op_name", "group_name", "step", "start_timestamp",
                                                      "elapse_time", "transit_time", "wait_time",
                                                      "synchronization_time", "idle_time"};
    static constexpr const char* kKeys[] = {"Start Timestamp(us)", "Elapse Time(ms)", "Transit Time(ms)",
                                            "Wait Time(ms)", "Synchronization Time(ms)", "Idle Time(ms)"};
    Read("CommAnalyzerTime", kColumns, [&](const Row& row) {
      ++comm_ops_;
      if (!wanted) return;
      const std::string prefix = OpPrefix(row, 0, 1, 2);
      for (size_t k = 0; k < std::size(kKeys); ++k) Attr(Key(prefix, kKeys[k]), row, static_cast<int>(k) + 3);
      // The ratios communication.json adds, as msprof-analyze computes them:
      // wait / (wait + transit), synchronization / (synchronization + transit).
      const double transit = row.Real(5), wait = row.Real(6), sync = row.Real(7);
      // communication.json writes them rounded to 4 decimals (msprof-analyze's round(x, 4)).
      auto ratio = [](double part, double rest) {
        return part + rest > 0 ? std::round(part / (part + rest) * 1e4) / 1e4 : 0.0;
      };
      if (!std::isnan(transit) && !std::isnan(wait)) NumberAttr(Key(prefix, "Wait Time Ratio"), ratio(wait, transit));
      if (!std::isnan(transit) && !std::isnan(sync)) NumberAttr(Key(prefix, "Synchronization Time Ratio"), ratio(sync, transit));
    });
  }

  void ReadBandwidth(bool wanted) {
    static const std::vector<std::string> kColumns = {"hccl_op_name", "group_name", "step", "transport_type",
                                                      "transit_size", "transit_time", "bandwidth"};
    static constexpr const char* kKeys[] = {"Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"};
    Read("CommAnalyzerBandwidth", kColumns, [&](const Row& row) {
      if (!wanted) return;
      // Only transports that moved data, as for communication.json.
      if (!(row.Real(4) > 0)) return;
      const std::string prefix = OpPrefix(row, 0, 1, 2) + CellText(row, 3) + " ";
      for (size_t k = 0; k < std::size(kKeys); ++k) Attr(Key(prefix, kKeys[k]), row, static_cast<int>(k) + 4);
    });
  }

  const std::string& path_;
  const int32_t device_;
  const ImportOptions& options_;
  Profile& p_;
  sqlite_input::DbHandle db_;
  std::set<std::string> tables_;
  uint64_t steps_ = 0, comm_ops_ = 0;
  std::string key_;  // Key's buffer
};

}  // namespace

void ImportAnalysisDb(const std::string& path, int32_t device, const AnalysisDbNeeds& needs,
                      const ImportOptions& options, Profile* profile) {
  AnalysisDbReader(path, device, options, profile).Run(needs);
}

}  // namespace pypto::ascend
