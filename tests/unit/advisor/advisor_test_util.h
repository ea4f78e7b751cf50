// Shared by the advisor tests: profile → graph → diagnosis → advice.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "advisor/optimizers.h"
#include "advisor/tuning_advisor.h"
#include "analysis/detector.h"
#include "analysis/structure.h"
#include "graph/call_graph.h"
#include "importers/detect.h"

namespace pypto::advisor::testing {

struct Advised {
  std::unique_ptr<Profile> profile;
  std::unique_ptr<OperatorCallGraph> graph;
  OpClassification classes;
  DiagnosticReport report;
  ModelConfig model;
  AdviceReport advice;
};

inline std::unique_ptr<Advised> AdviseProfile(Profile profile, const DiagnoseOptions& options = {},
                                              const ModelConfig& user = {}, const std::string& backend = "") {
  auto a = std::make_unique<Advised>();
  a->profile = std::make_unique<Profile>(std::move(profile));
  auto graph = OperatorCallGraph::Build(*a->profile);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return a;
  a->graph = std::make_unique<OperatorCallGraph>(std::move(graph).value());
  auto report = DiagnoseGraph(*a->graph, options);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return a;
  a->report = std::move(report).value();
  a->classes = ClassifyProfile(*a->profile, *a->graph);
  auto structure = AnalyzeStructure(*a->profile, *a->graph, a->classes);
  a->model = user;
  a->model.FillFrom(InferModelConfig(*a->graph, a->classes, structure.ok() ? &*structure : nullptr));
  AdviseOptions ao;
  ao.backend = backend;
  auto advice = Advise(a->report, a->model, ao);
  EXPECT_TRUE(advice.ok()) << advice.status().ToString();
  if (advice.ok()) a->advice = std::move(advice).value();
  return a;
}

inline std::unique_ptr<Advised> AdvisePath(const std::string& path, const DiagnoseOptions& options = {}) {
  auto profile = LoadProfile(path, ImportOptions{});
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  if (!profile.ok()) return std::make_unique<Advised>();
  return AdviseProfile(std::move(profile).value(), options);
}

inline const Recommendation* FindRec(const AdviceReport& a, IssueType type) {
  for (const Recommendation& r : a.recommendations)
    if (r.hotspot_type == type) return &r;
  return nullptr;
}

// A fresh empty directory under the system temp dir.
inline std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("pypto_advisor_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

}  // namespace pypto::advisor::testing
