// Small helpers shared by the per-detector tests that run on planted profiles
// (unit/planted/planted_profiles.h): diagnose, find an issue or a note, and
// describe a report in failure messages.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "session/profile_session.h"
#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "unit/planted/planted_profiles.h"
#include "unit/profile_builder.h"

namespace pypto::testing {

// Every detector, default options (min_issue_share 1%): what a user sees.
inline DiagnosticReport DiagnoseWithAllDetectors(Profile&& p) {
  auto r = Diagnose(p, DiagnoseOptions{});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

inline DiagnosticReport RunPlanted(const PlantKnobs& k, PlantedFacts* facts = nullptr) {
  return DiagnoseWithAllDetectors(BuildPlantedProfile(k, facts));
}

// Only `detector`, with `params` ("<detector>.<name>" -> value) and every
// finding kept however small.
// Diagnose indexes the profile in place (non-const); a profile may be diagnosed again.
inline DiagnosticReport DiagnoseOnly(Profile& p, const char* detector, std::map<std::string, double> params = {}) {
  DiagnoseOptions o;
  o.only = {detector};
  o.min_issue_share = 0;
  o.params = std::move(params);
  auto r = Diagnose(p, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

inline DiagnosticReport DiagnoseOnly(Profile&& p, const char* detector, std::map<std::string, double> params = {}) {
  return DiagnoseOnly(p, detector, std::move(params));
}

inline DiagnosticReport DiagnoseFixtureOnly(const std::string& rel, std::vector<std::string> only) {
  DiagnoseOptions o;
  o.only = std::move(only);
  o.min_issue_share = 0;  // see every finding, however small
  auto r = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/" + rel, o);
  EXPECT_TRUE(r.ok()) << rel << ": " << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

inline std::string Describe(const DiagnosticReport& r) {
  std::string s;
  for (const Issue& i : r.issues)
    s += std::string(IssueTypeName(i.type)) + " [" + i.op_name + " / " + i.op_type + "] share=" +
         std::to_string(i.affected_share) + " saved=" + std::to_string(i.saved_ns) + " " + i.detail + "\n";
  for (const std::string& n : r.notes) s += "note: " + n + "\n";
  return s;
}

inline const Issue* FindIssue(const DiagnosticReport& r, IssueType type) {
  for (const Issue& i : r.issues)
    if (i.type == type) return &i;
  return nullptr;
}

inline const Issue* FindIssueByOp(const DiagnosticReport& r, IssueType type, std::string_view op) {
  for (const Issue& i : r.issues)
    if (i.type == type && i.op_name == op) return &i;
  return nullptr;
}

inline std::vector<const Issue*> IssuesOf(const DiagnosticReport& r, IssueType type) {
  std::vector<const Issue*> v;
  for (const Issue& i : r.issues)
    if (i.type == type) v.push_back(&i);
  return v;
}

inline bool HasNoteContaining(const DiagnosticReport& r, std::string_view text) {
  for (const std::string& n : r.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

inline const char* FlavorName(PlantedFlavor f) { return f == PlantedFlavor::kAscend ? "Ascend" : "KinetoCuda"; }

}  // namespace pypto::testing
