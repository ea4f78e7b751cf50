// pypto's saved profile: a profile exported with `export-sqlite` and loaded
// back through format detection gives the same figures as the original, and
// bad files give clear errors (file, table, row, reason), never a crash.
#include <algorithm>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "session/profile_session.h"
#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "importers/detect.h"
#include "importers/pypto_db/pypto_db_importer.h"
#include "report/analysis_summary.h"
#include "report/sqlite_export.h"

namespace pypto {
namespace {

using report::AnalysisSummary;
using report::SummarizeAnalysis;

const std::string kFixtures = std::string(PYPTO_FIXTURES_DIR);
const std::string kKinetoTrace =
    kFixtures + "/kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz";
const std::string kKinetoCudaGraph = kFixtures + "/kineto/tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz";
const std::string kAscendPt = kFixtures + "/ascend/pta_level2_llm_cann83";
const std::string kAscendPtLevel1 = kFixtures + "/ascend/pta_level1_alexnet_cann8";
const std::string kAscendDb =
    kFixtures + "/ascend/pta_db_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";

std::string TempPath(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "pypto_db_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::filesystem::remove(path);
  return path;
}

struct Run {
  std::unique_ptr<ProfileSession> session;
  AnalysisSummary summary;
  DiagnosticReport diagnosis;
};

Run Analyze(const std::string& path) {
  Run run;
  StatusOr<std::unique_ptr<ProfileSession>> loaded = ProfileSession::Open(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return run;
  run.session = std::move(loaded).value();
  StatusOr<AnalysisSummary> summary = SummarizeAnalysis(run.session->graph());
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  if (summary.ok()) run.summary = std::move(summary).value();
  StatusOr<DiagnosticReport> diagnosis = DiagnoseGraph(run.session->graph(), DiagnoseOptions{});
  EXPECT_TRUE(diagnosis.ok()) << diagnosis.status().ToString();
  if (diagnosis.ok()) run.diagnosis = std::move(diagnosis).value();
  return run;
}

// Exports `source` (with its diagnosis) to a fresh file named `name`.
std::string Save(const std::string& source, const std::string& name) {
  Run run = Analyze(source);
  const std::string out = TempPath(name);
  if (!run.session) return out;
  StatusOr<report::SqliteExportStats> stats = report::ExportSqlite(run.session->graph(), &run.diagnosis, out, false);
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  return out;
}

void Exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// A saved copy of the Kineto fixture changed by `sql`.
std::string SavedAndChanged(const std::string& name, const std::string& sql) {
  static const std::string saved = Save(kKinetoTrace, "base.db");
  const std::string path = TempPath(name);
  std::filesystem::copy_file(saved, path);
  Exec(path, sql);
  return path;
}

std::string LoadError(const std::string& path) {
  StatusOr<Profile> p = LoadProfile(path, {});
  EXPECT_FALSE(p.ok()) << path << " loaded";
  return p.ok() ? std::string() : p.status().ToString();
}

void ExpectSameFigures(const std::string& source, const std::string& name) {
  SCOPED_TRACE(source);
  const std::string saved = Save(source, name);
  StatusOr<const Importer*> detected = DetectFormat(saved, {});
  ASSERT_TRUE(detected.ok()) << detected.status().ToString();
  EXPECT_EQ((*detected)->name(), "pypto");

  Run a = Analyze(source);
  Run b = Analyze(saved);
  ASSERT_TRUE(a.session && b.session);
  const Profile& pa = a.session->profile();
  const Profile& pb = b.session->profile();
  EXPECT_EQ(pb.metadata.at("format"), "pypto");
  EXPECT_EQ(pb.metadata.at("source_format"), pa.metadata.at("format"));
  EXPECT_EQ(pb.host_ops.size(), pa.host_ops.size());
  EXPECT_EQ(pb.device_tasks.size(), pa.device_tasks.size());
  EXPECT_EQ(pb.attributes.size(), pa.attributes.size());
  EXPECT_EQ(pb.flows.size(), pa.flows.size());
  EXPECT_EQ(pb.counters.size(), pa.counters.size());
  EXPECT_EQ(pb.steps.size(), pa.steps.size());
  EXPECT_EQ(pb.devices.size(), pa.devices.size());
  EXPECT_EQ(pb.TotalDataLoss(), pa.TotalDataLoss());
  auto tasks_with_details = [](const Profile& p) {
    return std::count_if(p.device_tasks.detail.begin(), p.device_tasks.detail.end(), [](int32_t d) { return d >= 0; });
  };
  EXPECT_EQ(tasks_with_details(pb), tasks_with_details(pa));

  EXPECT_EQ(b.summary.op_count, a.summary.op_count);
  EXPECT_GT(a.summary.host_op_total + a.summary.device_task_total, 0u);
  EXPECT_EQ(b.summary.total_device_busy_ns, a.summary.total_device_busy_ns);
  EXPECT_EQ(b.summary.critical_path.latency_ns, a.summary.critical_path.latency_ns);
  ASSERT_EQ(b.summary.steps.size(), a.summary.steps.size());
  for (size_t i = 0; i < a.summary.steps.size(); ++i) {
    EXPECT_EQ(b.summary.steps[i].number, a.summary.steps[i].number);
    EXPECT_EQ(b.summary.steps[i].latency_ns, a.summary.steps[i].latency_ns);
    EXPECT_EQ(b.summary.steps[i].device_task_count, a.summary.steps[i].device_task_count);
    EXPECT_EQ(b.summary.steps[i].breakdown, a.summary.steps[i].breakdown);
  }
  ASSERT_EQ(b.summary.top_host_ops.size(), a.summary.top_host_ops.size());
  for (size_t i = 0; i < a.summary.top_host_ops.size(); ++i) {
    EXPECT_EQ(b.summary.top_host_ops[i].name, a.summary.top_host_ops[i].name);
    EXPECT_EQ(b.summary.top_host_ops[i].self_ns, a.summary.top_host_ops[i].self_ns);
    EXPECT_EQ(b.summary.top_host_ops[i].count, a.summary.top_host_ops[i].count);
  }
  ASSERT_EQ(b.summary.top_device_tasks.size(), a.summary.top_device_tasks.size());
  for (size_t i = 0; i < a.summary.top_device_tasks.size(); ++i) {
    EXPECT_EQ(b.summary.top_device_tasks[i].name, a.summary.top_device_tasks[i].name);
    EXPECT_EQ(b.summary.top_device_tasks[i].total_ns, a.summary.top_device_tasks[i].total_ns);
  }
  EXPECT_EQ(b.diagnosis.hardware_id, a.diagnosis.hardware_id);
  EXPECT_EQ(b.diagnosis.estimated_saved_ns, a.diagnosis.estimated_saved_ns);
  ASSERT_EQ(b.diagnosis.issues.size(), a.diagnosis.issues.size());
  for (size_t i = 0; i < a.diagnosis.issues.size(); ++i) {
    EXPECT_EQ(b.diagnosis.issues[i].type, a.diagnosis.issues[i].type);
    EXPECT_EQ(b.diagnosis.issues[i].op_name, a.diagnosis.issues[i].op_name);
    EXPECT_EQ(b.diagnosis.issues[i].saved_ns, a.diagnosis.issues[i].saved_ns);
  }
}

TEST(PyptoDbRoundTrip, KinetoTraceKeepsEveryFigure) { ExpectSameFigures(kKinetoTrace, "kineto.db"); }

TEST(PyptoDbRoundTrip, KinetoCudaGraphTraceKeepsEveryFigure) {
  ExpectSameFigures(kKinetoCudaGraph, "kineto_cudagraph.db");
}

TEST(PyptoDbRoundTrip, AscendPtDirectoryKeepsEveryFigure) { ExpectSameFigures(kAscendPt, "ascend_pt.db"); }

TEST(PyptoDbRoundTrip, AscendPtLevel1KeepsEveryFigure) { ExpectSameFigures(kAscendPtLevel1, "ascend_pt_l1.db"); }

TEST(PyptoDbRoundTrip, AscendDatabaseKeepsEveryFigure) { ExpectSameFigures(kAscendDb, "ascend_db.db"); }

TEST(PyptoDbRoundTrip, SavedProfileSavesAgainIdentically) {
  const std::string once = Save(kAscendPt, "once.db");
  const std::string twice = Save(once, "twice.db");
  StatusOr<Profile> a = LoadProfile(once, {});
  StatusOr<Profile> b = LoadProfile(twice, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->host_ops.size(), a->host_ops.size());
  EXPECT_EQ(b->device_tasks.size(), a->device_tasks.size());
  EXPECT_EQ(b->metadata.at("source_format"), "pypto");
}

// Every enum value written by the export reads back as itself.
TEST(PyptoDbRoundTrip, EveryKindNameReadsBack) {
  Profile p;
  const uint32_t host = p.TrackFor("1", "2", TrackKind::kHostThread);
  const uint32_t dev = p.DeviceTrack("gpu 0", "stream 7", 0, 7);
  p.TrackFor("x", "y", TrackKind::kOther);
  const HostOpKind host_kinds[] = {HostOpKind::kOperator, HostOpKind::kUserAnnotation, HostOpKind::kRuntime,
                                   HostOpKind::kDriver,   HostOpKind::kPython,         HostOpKind::kOther};
  const DeviceTaskKind task_kinds[] = {DeviceTaskKind::kKernel,        DeviceTaskKind::kMemcpy,
                                       DeviceTaskKind::kMemset,        DeviceTaskKind::kCommunication,
                                       DeviceTaskKind::kSync,          DeviceTaskKind::kAnnotation,
                                       DeviceTaskKind::kOther};
  int64_t t = 1000;
  for (HostOpKind k : host_kinds) {
    HostOpRow r;
    r.name = p.Intern("op");
    r.kind = k;
    r.track = host;
    r.ts = t;
    r.dur = 10;
    t += 100;
    p.host_ops.Add(r);
  }
  for (DeviceTaskKind k : task_kinds) {
    DeviceTaskRow r;
    r.name = p.Intern("task");
    r.kind = k;
    r.track = dev;
    r.ts = t;
    r.dur = 10;
    r.grid[0] = 4;
    r.block[2] = 32;
    r.mix_block_dim = 3;
    r.output_formats = p.Intern("ND");
    t += 100;
    p.device_tasks.Add(r);
  }
  for (DeviceKind k : {DeviceKind::kCpu, DeviceKind::kCuda, DeviceKind::kRocm, DeviceKind::kNpu, DeviceKind::kOther})
    p.devices.rows.push_back(DeviceRow{0, k, p.Intern(DeviceKindName(k))});
  StepRow step;
  step.number = 3;
  step.ts = 1000;
  step.dur = t;
  step.computing = 42;
  p.steps.rows.push_back(step);
  for (OwnerKind k : {OwnerKind::kHostOp, OwnerKind::kDeviceTask, OwnerKind::kTrack, OwnerKind::kDevice, OwnerKind::kStep})
    p.attributes.Add(k, 0, p.Intern("key"), p.Intern("1.5"), 1.5);
  p.flows.Add(~0ull, p.Intern("ac2g"), 's', host, 1000);
  p.counters.Add(p.Intern("mem"), dev, 1000, 2.5);
  p.metadata["format"] = "synthetic";

  StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(p, {});
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::string out = TempPath("kinds.db");
  ASSERT_TRUE(report::ExportSqlite(*graph, nullptr, out, false).ok());
  StatusOr<Profile> back = LoadProfile(out, {});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->host_ops.size(), std::size(host_kinds));
  for (size_t i = 0; i < std::size(host_kinds); ++i) EXPECT_EQ(back->host_ops.kind[i], host_kinds[i]);
  ASSERT_EQ(back->device_tasks.size(), std::size(task_kinds));
  for (size_t i = 0; i < std::size(task_kinds); ++i) {
    EXPECT_EQ(back->device_tasks.kind[i], task_kinds[i]);
    EXPECT_EQ(back->device_tasks.grid(i)[0], 4);
    EXPECT_EQ(back->device_tasks.block(i)[2], 32);
    EXPECT_EQ(back->device_tasks.mix_block_dim(i), 3);
    EXPECT_EQ(back->Str(back->device_tasks.output_formats(i)), "ND");
  }
  ASSERT_EQ(back->devices.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(back->devices.rows[i].kind, p.devices.rows[i].kind);
  ASSERT_EQ(back->attributes.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(back->attributes.owner_kind(i), p.attributes.owner_kind(i));
  ASSERT_EQ(back->tracks.size(), 3u);
  EXPECT_EQ(back->tracks.kind[2], TrackKind::kOther);
  EXPECT_EQ(back->tracks.stream[1], 7);
  ASSERT_EQ(back->flows.size(), 1u);
  EXPECT_EQ(back->flows.id[0], ~0ull);
  EXPECT_EQ(back->flows.phase[0], 's');
  ASSERT_EQ(back->counters.size(), 1u);
  EXPECT_EQ(back->counters.Rows().at(0).value, 2.5);
  ASSERT_EQ(back->steps.size(), 1u);
  EXPECT_EQ(back->steps.rows[0].computing, 42);
  EXPECT_EQ(back->steps.rows[0].free, kUnknownNs);
  EXPECT_EQ(back->metadata.at("source_format"), "synthetic");
}

// ------------------------------------------------------------------ detection

TEST(PyptoDbDetect, AscendDatabaseIsStillAscendDb) {
  StatusOr<const Importer*> detected = DetectFormat(kAscendDb, {});
  ASSERT_TRUE(detected.ok()) << detected.status().ToString();
  EXPECT_EQ((*detected)->name(), "ascend-db");
  EXPECT_EQ(PyptoDbImporter()->Sniff({kAscendDb, io::PathKind::kFile, "SQLite format 3\0"}), 0);
}

TEST(PyptoDbDetect, AscendImporterDoesNotClaimSavedProfile) {
  const std::string saved = Save(kKinetoTrace, "sniff.db");
  std::ifstream in(saved, std::ios::binary);
  std::string prefix(4096, '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  const SniffInput input{saved, io::PathKind::kFile, prefix};
  EXPECT_EQ(FindImporter("ascend-db")->Sniff(input), 0);
  EXPECT_GT(PyptoDbImporter()->Sniff(input), 60);
}

TEST(PyptoDbDetect, SchemaOneFileIsReadWithForcedFormat) {
  // A version-1 file: no application id, no profile_steps / flows / counters.
  const std::string path = SavedAndChanged(
      "schema1.db",
      "PRAGMA application_id=0; DROP TABLE profile_steps; DROP TABLE flows; DROP TABLE counters;"
      "UPDATE meta SET value='pypto.sqlite/1' WHERE key='schema'; UPDATE meta SET value='1' WHERE key='schema_version';"
      "VACUUM;");
  // Without the header id the file is no longer known by its first bytes: the
  // Ascend importer is tried and says what it lacks; --format pypto reads it.
  StatusOr<Profile> guessed = LoadProfile(path, {});
  ASSERT_FALSE(guessed.ok());
  EXPECT_NE(guessed.status().ToString().find("not an Ascend profiler database: missing table"), std::string::npos);
  ImportOptions forced;
  forced.forced_format = "pypto";
  StatusOr<Profile> p = LoadProfile(path, forced);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_GT(p->host_ops.size(), 0u);
  ASSERT_FALSE(p->notes.empty());
  EXPECT_NE(p->notes.back().find("pypto.sqlite/1"), std::string::npos);
}

// ------------------------------------------------------------------ bad input

TEST(PyptoDbBadInput, TruncatedFileIsAClearError) {
  const std::string saved = Save(kKinetoTrace, "whole.db");
  const std::string path = TempPath("truncated.db");
  std::filesystem::copy_file(saved, path);
  std::filesystem::resize_file(path, 5000);
  const std::string error = LoadError(path);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("malformed"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, MissingHostOpsTableNamesIt) {
  const std::string path = SavedAndChanged("no_host_ops.db", "DROP VIEW host_ops_v; DROP TABLE host_ops;");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find(path + ": saved pypto profile (schema 2) lacks table host_ops"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, ParentOutOfRangeNamesRowAndColumn) {
  const std::string path = SavedAndChanged("bad_parent.db", "UPDATE host_ops SET parent = 99999 WHERE id = 2;");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find(path + ": table host_ops row 3: column parent: host op 99999 beyond the"), std::string::npos)
      << error;
}

TEST(PyptoDbBadInput, MissingColumnIsNamed) {
  const std::string path =
      SavedAndChanged("no_dur.db", "DROP VIEW device_tasks_v; ALTER TABLE device_tasks DROP COLUMN dur;");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find(path + ": table device_tasks: missing column dur"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, WrongTypeIsNamed) {
  const std::string path = SavedAndChanged("text_ts.db", "UPDATE device_tasks SET ts = 'soon' WHERE id = 0;");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find(path + ": table device_tasks row 1: column ts: expected an integer, found text"),
            std::string::npos)
      << error;
}

TEST(PyptoDbBadInput, StringIdOutsideTheTable) {
  const std::string path = SavedAndChanged("bad_name.db", "UPDATE host_ops SET name_id = 4000000000 WHERE id = 0;");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("table host_ops row 1: column name_id: string id 4000000000 is not in table strings"),
            std::string::npos)
      << error;
}

TEST(PyptoDbBadInput, TrackOutOfRange) {
  const std::string path = SavedAndChanged("bad_track.db", "UPDATE device_tasks SET track = -5 WHERE id = 0;");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("table device_tasks row 1: column track: track -5 beyond the"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, MetaWithoutSchemaKey) {
  const std::string path = SavedAndChanged("no_schema.db", "DELETE FROM meta WHERE key = 'schema';");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("not a saved pypto profile: table meta has no 'schema' key"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, NewerSchemaIsRefused) {
  const std::string path = SavedAndChanged("future.db", "UPDATE meta SET value = 'pypto.sqlite/99' WHERE key = 'schema';");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("schema 'pypto.sqlite/99' is not readable"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, NonDenseIdsAreRefused) {
  const std::string path = SavedAndChanged("gap.db", "UPDATE host_ops SET id = id + 1000 WHERE id = (SELECT max(id) FROM host_ops);");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("column id: expected"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, NegativeDurationAndOrphanAttributeAreCountedLoss) {
  const std::string path = SavedAndChanged(
      "neg_dur.db",
      "UPDATE device_tasks SET dur = -7 WHERE id = 0; UPDATE host_ops SET dur = 9223372036854775807 WHERE id = 1;"
      "INSERT INTO attributes VALUES('device_task', 123456789, 'k', 'v', NULL);");
  StatusOr<Profile> p = LoadProfile(path, {});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->device_tasks.dur[0], 0);
  EXPECT_EQ(p->host_ops.dur[1], 0);
  EXPECT_EQ(p->data_loss.at("device_tasks: negative or overflowing dur (read as 0)").count, 1u);
  EXPECT_EQ(p->data_loss.at("host_ops: negative or overflowing dur (read as 0)").first_location,
            path + ": table host_ops row 2");
  EXPECT_EQ(p->data_loss.at("attributes: owner row out of range (skipped)").count, 1u);
  // Each reason keeps its kind: a repaired value and a lost link.
  EXPECT_EQ(p->data_loss.at("device_tasks: negative or overflowing dur (read as 0)").kind, LossKind::kValueRepaired);
  EXPECT_EQ(p->data_loss.at("attributes: owner row out of range (skipped)").kind, LossKind::kLinkLost);
}

TEST(PyptoDbBadInput, DataLossKindsSurviveASaveAndOldFilesReadAsUnclassified) {
  // A saved file holds the kind; one without the column (an older pypto) reads back as unclassified.
  const std::string path = SavedAndChanged(
      "loss_kinds.db", "INSERT INTO data_loss VALUES('a', 2, 'here', 'row_skipped');"
                       "ALTER TABLE data_loss RENAME TO old_loss;"
                       "CREATE TABLE data_loss(reason TEXT PRIMARY KEY, count INTEGER NOT NULL, first_location TEXT);"
                       "INSERT INTO data_loss SELECT reason, count, first_location FROM old_loss;");
  StatusOr<Profile> old_file = LoadProfile(path, {});
  ASSERT_TRUE(old_file.ok()) << old_file.status().ToString();
  EXPECT_EQ(old_file->data_loss.at("a").kind, LossKind::kUnclassified);
  const std::string kept = SavedAndChanged("loss_kinds_new.db", "INSERT INTO data_loss VALUES('a', 2, 'here', 'row_skipped');");
  StatusOr<Profile> new_file = LoadProfile(kept, {});
  ASSERT_TRUE(new_file.ok()) << new_file.status().ToString();
  EXPECT_EQ(new_file->data_loss.at("a").kind, LossKind::kRowSkipped);
  EXPECT_EQ(new_file->data_loss.at("a").count, 2u);
}

TEST(PyptoDbBadInput, HugeDataLossCountSaturates) {
  const std::string path = SavedAndChanged(
      "huge_loss.db", "INSERT INTO data_loss(reason, count, first_location) VALUES('x', 9223372036854775807, 'here');"
                      "INSERT INTO data_loss(reason, count, first_location) VALUES('y', -1, 'there');");
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("table data_loss row"), std::string::npos) << error;
  EXPECT_NE(error.find("column count: value -1 out of range"), std::string::npos) << error;
}

TEST(PyptoDbBadInput, SymlinkIsNotFollowedByDefault) {
  const std::string saved = Save(kKinetoTrace, "target.db");
  const std::string link = TempPath("link.db");
  std::filesystem::create_symlink(saved, link);
  Profile p;
  Status s = ImportPyptoDb(link, {}, &p);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("symbolic link"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace pypto
