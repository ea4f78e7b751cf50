// LoadedProfile: a profile read by the engine, its call graph and every
// product of its ProfileSession (diagnosis, advice, tuning config, analysis
// summary, report), computed once per profile and options. load_profile()
// makes one; the Python package wraps it in OperatorCallGraph.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "advisor/advise_profile.h"
#include "advisor/optimizers.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "importers/detect.h"
#include "python/bind_options.h"
#include "python/bind_results.h"
#include "python/py_object_sink.h"
#include "report/analysis_json.h"
#include "report/analysis_summary.h"
#include "report/analysis_text.h"
#include "report/chrome_trace_export.h"
#include "report/profile_report.h"
#include "report/sqlite_export.h"
#include "session/profile_session.h"

namespace pypto::python {
namespace {

using report::AnalysisSummary;
using report::SummaryOptions;

// How often a long engine call running on a worker thread looks at Python's
// signal flag (Ctrl-C), in ms. Source: the reliability issue asks for Ctrl-C
// to be honoured within one second; 50 ms keeps the reaction well inside it.
constexpr int kSignalPollMs = 50;

// Runs `work` on a worker thread without the GIL while this thread polls
// Python's signal handlers; a KeyboardInterrupt sets `cancel`, waits for the
// worker (the engine checks the flag at least every few MB) and re-raises.
template <typename Fn>
auto RunCancellable(std::atomic<bool>* cancel, Fn work) -> decltype(work()) {
  using Result = decltype(work());
  std::optional<Result> result;
  std::atomic<bool> done{false};
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      result.emplace(work());
    } catch (...) {
      failure = std::current_exception();
    }
    done.store(true, std::memory_order_release);
  });
  bool interrupted = false;
  while (!done.load(std::memory_order_acquire)) {
    {
      py::gil_scoped_release release;
      std::this_thread::sleep_for(std::chrono::milliseconds(kSignalPollMs));
    }
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      cancel->store(true);
    }
  }
  {
    py::gil_scoped_release release;
    worker.join();
  }
  if (interrupted) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

std::shared_ptr<LoadedProfile> Load(const std::string& path, const std::string& format, const std::string& cann_version,
                                    bool follow_symlinks, uint64_t max_input_bytes) {
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  ImportOptions import;
  import.forced_format = format;
  import.cann_version = cann_version;
  import.limits.follow_symlinks = follow_symlinks;
  if (max_input_bytes > 0) import.limits.max_input_bytes = max_input_bytes;
  import.cancel = cancel.get();
  StatusOr<std::unique_ptr<ProfileSession>> loaded =
      RunCancellable(cancel.get(), [&] { return ProfileSession::Open(path, import); });
  return std::make_shared<LoadedProfile>(Unwrap(std::move(loaded)));
}

py::dict BusyTimeDict(const BusyTime& b) {
  py::dict d;
  d["device"] = b.device;
  d["stream"] = b.stream;
  d["label"] = Text(b.label);
  d["task_count"] = b.task_count;
  d["task_sum_ns"] = b.task_sum_ns;
  d["busy_ns"] = b.busy_ns;
  d["window_ns"] = b.window_ns;
  d["utilization"] = b.utilization;
  d["share"] = b.share;
  return d;
}

std::optional<TimeWindow> StepWindow(const OperatorCallGraph& graph, std::optional<size_t> step) {
  if (!step) return std::nullopt;
  if (*step >= graph.Steps().size())
    throw EngineError{InvalidArgumentError("step index " + std::to_string(*step) + " out of range (the profile has " +
                                           std::to_string(graph.Steps().size()) + " steps)")};
  return graph.Steps()[*step].span();
}

// The analysis summary of `pypto analyze` for one step number (all when none).
AnalysisSummary Summary(LoadedProfile& p, std::optional<int64_t> step, size_t top) {
  SummaryOptions options;
  options.step_number = step;
  if (top > 0) options.top_rows = top;
  StatusOr<AnalysisSummary> summary = InternalError("not run");
  {
    py::gil_scoped_release release;
    summary = report::SummarizeAnalysis(p.graph(), options);
  }
  AnalysisSummary s = Unwrap(std::move(summary));
  if (s.source_path.empty()) s.source_path = p.profile().metadata["source_path"];
  return s;
}

report::ProfileReportData ReportData(LoadedProfile& p, const py::dict& kw) {
  report::ReportOptions options;
  options.diagnose = DiagnoseOptionsFrom(kw);
  StatusOr<report::ProfileReportData> data = InternalError("not run");
  {
    py::gil_scoped_release release;
    data = report::CollectProfileReport(p.session(), options);
  }
  return Unwrap(std::move(data));
}

const DiagnosticReport& Diagnosed(LoadedProfile& p, const DiagnoseOptions& options) {
  StatusOr<const DiagnosticReport*> report = InternalError("not run");
  {
    py::gil_scoped_release release;
    report = p.session().Diagnosis(options);
  }
  return *Unwrap(std::move(report));
}

}  // namespace

void BindLoadedProfile(py::module_& m) {
  using Handle = std::shared_ptr<LoadedProfile>;
  py::class_<LoadedProfile, Handle> profile(m, "LoadedProfile",
      "A profile read by the engine, with its operator call graph.");
  profile
      .def_property_readonly("metadata", [](LoadedProfile& p) { return TextDict(p.profile().metadata); })
      .def_property_readonly("notes", [](LoadedProfile& p) { return TextList(p.profile().notes); })
      .def_property_readonly("data_loss", [](LoadedProfile& p) {
        py::dict d;
        for (const auto& [reason, entry] : p.profile().data_loss) {
          const LossKindInfo& kind = DescribeLoss(entry.kind);
          d[Text(reason)] =
              py::make_tuple(entry.count, Text(entry.first_location), kind.name, LossSeverityName(kind.severity));
        }
        return d;
      })
      .def("op_count", [](LoadedProfile& p) { return p.graph().OpCount(); })
      .def("steps", [](LoadedProfile& p) {
        py::list out;
        for (const StepInfo& s : p.graph().Steps()) {
          py::dict d;
          d["number"] = s.number;
          d["name"] = Text(s.name);
          d["source"] = Text(s.source);
          d["device"] = s.device;
          d["cpu_start_ns"] = s.cpu.start;
          d["cpu_end_ns"] = s.cpu.end;
          d["latency_ns"] = s.latency_ns();
          d["device_task_count"] = s.device_task_count;
          out.append(d);
        }
        return out;
      })
      .def("step_shapes", [](LoadedProfile& p, const std::string& model_arch) {
        const StatusOr<ModelStructure>* structure = nullptr;
        {
          py::gil_scoped_release release;
          structure = &p.session().Structure(model_arch);
        }
        Check(structure->status());
        const std::vector<StepInfo>& steps = p.graph().Steps();
        auto known = [](int64_t v) { return v > 0 ? py::object(py::int_(v)) : py::object(py::none()); };
        py::list out;
        for (const StepStructure& s : (*structure)->steps) {
          py::dict d;
          d["step"] = s.step;
          d["number"] = s.step < steps.size() ? steps[s.step].number : -1;
          d["phase"] = StepPhaseName(s.phase);
          d["phase_reason"] = Text(s.phase_reason);
          d["tokens"] = known(s.tokens);
          d["query_len"] = known(s.query_len);
          d["kv_len"] = known(s.kv_len);
          d["batch"] = known(s.batch);
          out.append(d);
        }
        return out;
      }, py::arg("model_arch") = "",
      "Per step, what the model-structure analysis read from its shapes: phase (prefill / decode / unknown) "
      "and why, tokens (GEMM rows), query_len and kv_len (attention S_q, S_kv) and batch (None when unknown).")
      .def("ai_core_utilization", [](LoadedProfile& p, std::optional<size_t> step) {
        py::list out;
        for (const BusyTime& b : p.graph().AiCoreUtilization(StepWindow(p.graph(), step))) out.append(BusyTimeDict(b));
        return out;
      }, py::arg("step") = py::none())
      .def("compute_unit_utilization", [](LoadedProfile& p, std::optional<size_t> step) {
        return p.graph().ComputeUnitUtilization(StepWindow(p.graph(), step));
      }, py::arg("step") = py::none())
      .def("device_busy_times", [](LoadedProfile& p, std::optional<size_t> step) {
        py::list out;
        for (const BusyTime& b : p.graph().DeviceBusyTimes(StepWindow(p.graph(), step))) out.append(BusyTimeDict(b));
        return out;
      }, py::arg("step") = py::none())
      .def("critical_path_latency_ns", [](LoadedProfile& p, std::optional<size_t> step) {
        StatusOr<TimeNs> latency = [&] {
          py::gil_scoped_release release;
          return p.graph().CriticalPathLatency(step);
        }();
        return Unwrap(std::move(latency));
      }, py::arg("step") = py::none())
      .def("analysis", [](LoadedProfile& p, std::optional<int64_t> step, size_t top) {
        const AnalysisSummary summary = Summary(p, step, top);
        return ToPython([&](io::ValueSink& sink) { report::WriteAnalysis(sink, summary); });
      }, py::arg("step") = py::none(), py::arg("top") = 0,
      "The `pypto analyze --json` document (pypto.analyze/1) as dicts and lists; STEP is a step number.")
      .def("analysis_text", [](LoadedProfile& p, std::optional<int64_t> step, size_t top) {
        return Text(report::RenderAnalysisText(Summary(p, step, top)));
      }, py::arg("step") = py::none(), py::arg("top") = 0, "The `pypto analyze` terminal text.")
      .def("export_chrome_trace", [](LoadedProfile& p, const std::string& path, bool force,
                                     std::optional<size_t> critical_path_step) {
        report::ChromeTraceOptions options;
        options.critical_path_step = critical_path_step;
        Status s;
        {
          py::gil_scoped_release release;
          s = report::ExportChromeTraceFile(p.graph(), options, path, force);
        }
        Check(s);
      }, py::arg("path"), py::arg("force") = false, py::arg("critical_path_step") = py::none())
      .def("export_sqlite", [](LoadedProfile& p, const std::string& path, bool force, bool findings,
                               const py::dict& diagnose) {
        const DiagnoseOptions options = DiagnoseOptionsFrom(diagnose);
        StatusOr<report::SqliteExportStats> stats = InternalError("not run");
        {
          py::gil_scoped_release release;
          StatusOr<const DiagnosticReport*> report = static_cast<const DiagnosticReport*>(nullptr);
          if (findings) report = p.session().Diagnosis(options);
          if (!report.ok()) stats = report.status();
          else stats = report::ExportSqlite(p.graph(), *report, path, force);
        }
        const report::SqliteExportStats s = Unwrap(std::move(stats));
        py::dict d;
        d["host_ops"] = s.host_ops;
        d["device_tasks"] = s.device_tasks;
        d["steps"] = s.steps;
        d["issues"] = s.issues;
        return d;
      }, py::arg("path"), py::arg("force") = false, py::arg("findings") = true, py::arg("diagnose") = py::dict())
      .def("diagnose", [](const Handle& p, const py::dict& kw) {
        // The session's diagnosis for these options (computed once), kept alive by the profile.
        const DiagnosticReport& report = Diagnosed(*p, DiagnoseOptionsFrom(kw));
        return BoundDiagnosis{std::shared_ptr<const DiagnosticReport>(p, &report)};
      }, py::arg("options") = py::dict())
      .def("advise", [](LoadedProfile& p, const py::dict& kw, const std::string& model_config_json,
                        const std::string& backend, const std::string& output_dir, bool force) {
        advisor::AdviseProfileOptions options;
        options.diagnose = DiagnoseOptionsFrom(kw);
        options.user_model = ModelConfigFrom(model_config_json);
        options.advise.backend = backend;
        options.output_dir = output_dir;
        options.force = force;
        StatusOr<advisor::AdviseProfileResult> result = InternalError("not run");
        {
          py::gil_scoped_release release;
          result = p.session().Advise(options);
        }
        return BoundAdvice{std::make_shared<const advisor::AdviseProfileResult>(Unwrap(std::move(result)))};
      }, py::arg("options") = py::dict(), py::arg("model_config_json") = "", py::arg("backend") = "",
         py::arg("output_dir") = "", py::arg("force") = false)
      .def("tiling_config", [](LoadedProfile& p, const py::dict& kw, const std::string& backend_name) {
        const DiagnosticReport& r = Diagnosed(p, DiagnoseOptionsFrom(kw));
        advisor::Backend backend = advisor::BackendOfReport(r);
        if (!backend_name.empty() && !advisor::BackendFromName(backend_name, &backend))
          throw EngineError{InvalidArgumentError("unknown backend '" + backend_name + "' (ascend, cuda, rocm, cpu)")};
        return BoundTuningConfig{
            advisor::TilingOptimizer(p.graph(), p.session().Classes()).GenerateTuningConfig(r, backend)};
      }, py::arg("options") = py::dict(), py::arg("backend") = "")
      .def("report", [](LoadedProfile& p, const py::dict& kw, const std::string& fmt) {
        const report::ProfileReportData data = ReportData(p, kw);
        std::string text;
        {
          py::gil_scoped_release release;
          text = fmt == "json" ? report::RenderProfileJson(data)
                 : fmt == "markdown" ? report::RenderProfileMarkdown(data)
                                     : report::RenderProfileHtml(data);
        }
        return Text(text);
      }, py::arg("options") = py::dict(), py::arg("format") = "html",
      "The `pypto report` text: html (default), markdown or json.")
      .def("report_document", [](LoadedProfile& p, const py::dict& kw) {
        const report::ProfileReportData data = ReportData(p, kw);
        return ToPython([&](io::ValueSink& sink) { report::WriteProfileReport(sink, data); });
      }, py::arg("options") = py::dict(), "The `pypto report --json` document (pypto.report/1) as dicts and lists.");
  BindProfileTables(profile);

  m.def("load_profile", &Load, py::arg("path"), py::arg("format") = "", py::arg("cann_version") = "",
        py::arg("follow_symlinks") = false, py::arg("max_input_bytes") = 0,
        "Detects the format of PATH (file or directory), imports it and builds the call graph. "
        "Ctrl-C stops the import.");
}

}  // namespace pypto::python
