// Missing metrics degrade to fewer findings with a note naming what was
// missing, never to wrong ones: the planted profiles diagnosed in full, then
// with their shapes stripped, their PMU ratios removed and their devices
// emptied (unknown hardware). Every finding of a degraded profile must be a
// finding of the full profile (same type, same op).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

enum class Strip { kShapes, kPmu, kDevices };

void StripShapes(Profile* p) {
  for (size_t i = 0; i < p->host_ops.size(); ++i) p->host_ops.input_dims[i] = kEmptyStr;
  DeviceTaskDetailTable& d = p->device_tasks.details;
  for (size_t i = 0; i < d.size(); ++i) {
    d.input_shapes[i] = kEmptyStr;
    d.output_shapes[i] = kEmptyStr;
  }
}

void StripPmu(Profile* p) {
  AttributeTable kept;
  const AttributeTable& a = p->attributes;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string_view key = p->Str(a.key(i));
    const bool pmu = (key.substr(0, 4) == "aic_" || key.substr(0, 4) == "aiv_") && key.size() > 6 &&
                     key.substr(key.size() - 6) == "_ratio";
    if (!pmu) kept.Add(a.owner_kind(i), a.owner(i), a.key(i), a.text(i), a.number(i), a.number_text_form(i));
  }
  p->attributes = std::move(kept);
}

void Degrade(Profile* p, Strip s) {
  switch (s) {
    case Strip::kShapes: StripShapes(p); break;
    case Strip::kPmu: StripPmu(p); break;
    case Strip::kDevices: p->devices.rows.clear(); break;
  }
}

// What a note must say (any of the alternatives).
std::vector<std::string> MissingNotes(Strip s) {
  switch (s) {
    case Strip::kShapes: return {"have no usable shapes"};
    case Strip::kPmu: return {"no PMU ratios"};
    // No device row: the accelerator is not identified (no figures), or the
    // Ascend default SKU is assumed because no chip is named.
    case Strip::kDevices: return {"accelerator not identified", "no peak figures", "no chip name"};
  }
  return {};
}

DiagnosticReport DiagnoseProfile(Profile p) {
  auto r = Diagnose(p, DiagnoseOptions{});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

std::string Describe(const DiagnosticReport& r) {
  std::string s;
  for (const Issue& i : r.issues) s += std::string(IssueTypeName(i.type)) + " [" + i.op_name + "] " + i.detail + "\n";
  for (const std::string& n : r.notes) s += "note: " + n + "\n";
  return s;
}

using Key = std::pair<IssueType, std::string>;
std::multiset<Key> Keys(const DiagnosticReport& r) {
  std::multiset<Key> k;
  for (const Issue& i : r.issues) k.insert({i.type, i.op_name});
  return k;
}

struct Case {
  const char* name;
  void (*plant)(PlantKnobs*);
};
const Case kCases[] = {
    {"healthy", [](PlantKnobs*) {}},
    {"bad_matmul", [](PlantKnobs* k) { k->bad_matmul_slowdown = 4; }},
    {"padded_attention", [](PlantKnobs* k) { k->attention_slowdown = 4; }},
    {"kv_cat", [](PlantKnobs* k) { k->kv_cache_cat = true; }},
    {"unfused_norm", [](PlantKnobs* k) { k->unfused_norm_gap_us = 5; }},
    {"host_overhead", [](PlantKnobs* k) { k->host_overhead_us = 40; }},
    {"unfused_rope_swiglu_attention",
     [](PlantKnobs* k) { k->unfused_rope = k->unfused_swiglu = k->unfused_attention = true; k->unfused_gap_us = 4; }},
    {"no_pipe", [](PlantKnobs* k) { k->no_pipe_us = 50; }},
    {"aicpu", [](PlantKnobs* k) { k->aicpu_us = 60; }},
};

class Degraded : public ::testing::TestWithParam<std::tuple<PlantedFlavor, Strip>> {};

TEST_P(Degraded, FewerFindingsWithANoteNeverContradicting) {
  const auto [flavor, strip] = GetParam();
  for (const Case& c : kCases) {
    PlantKnobs k = HealthyKnobs(flavor);
    c.plant(&k);
    const DiagnosticReport full = DiagnoseProfile(BuildPlantedProfile(k));
    Profile p = BuildPlantedProfile(k);
    Degrade(&p, strip);
    const DiagnosticReport less = DiagnoseProfile(std::move(p));
    SCOPED_TRACE(std::string(c.name) + "\nfull:\n" + Describe(full) + "degraded:\n" + Describe(less));
    EXPECT_LE(less.issues.size(), full.issues.size());
    const std::multiset<Key> have = Keys(full);
    for (const Issue& i : less.issues) {
      EXPECT_TRUE(have.count({i.type, i.op_name}) > 0)
          << "finding absent from the full profile: " << IssueTypeName(i.type) << " " << i.op_name;
    }
    bool noted = false;
    for (const std::string& n : less.notes)
      for (const std::string& want : MissingNotes(strip)) noted |= n.find(want) != std::string::npos;
    EXPECT_TRUE(noted) << "no note saying " << MissingNotes(strip)[0];
  }
}

// The roofline findings need shapes and hardware: without them they are gone
// (CUDA has no PMU to fall back on), with a note.
TEST(DegradedRoofline, CudaMatmulAndAttentionNeedShapesAndHardware) {
  for (Strip s : {Strip::kShapes, Strip::kDevices}) {
    PlantKnobs k = HealthyKnobs(PlantedFlavor::kKinetoCuda);
    k.bad_matmul_slowdown = 4;
    k.attention_slowdown = 4;
    const DiagnosticReport full = DiagnoseProfile(BuildPlantedProfile(k));
    Profile p = BuildPlantedProfile(k);
    Degrade(&p, s);
    const DiagnosticReport less = DiagnoseProfile(std::move(p));
    int full_n = 0, less_n = 0;
    for (const Issue& i : full.issues)
      full_n += i.type == IssueType::kMatmulTiling || i.type == IssueType::kAttentionMemoryBound;
    for (const Issue& i : less.issues)
      less_n += i.type == IssueType::kMatmulTiling || i.type == IssueType::kAttentionMemoryBound;
    EXPECT_EQ(full_n, 2) << Describe(full);
    EXPECT_EQ(less_n, 0) << Describe(less);
  }
}

// Ascend without PMU still finds the badly tiled MatMul from its shapes
// (roofline efficiency), and the padded attention from the KV growth.
TEST(DegradedRoofline, AscendWithoutPmuUsesTheRoofline) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.bad_matmul_slowdown = 4;
  k.attention_slowdown = 4;
  Profile p = BuildPlantedProfile(k);
  StripPmu(&p);
  const DiagnosticReport r = DiagnoseProfile(std::move(p));
  bool matmul = false, attention = false;
  for (const Issue& i : r.issues) {
    if (i.type == IssueType::kMatmulTiling) {
      matmul = true;
      EXPECT_EQ(i.op_name, "MatMulV2");
      EXPECT_EQ(i.method, SavingMethod::kRoofline);
    }
    attention |= i.type == IssueType::kAttentionMemoryBound;
  }
  EXPECT_TRUE(matmul) << Describe(r);
  EXPECT_TRUE(attention) << Describe(r);
}

INSTANTIATE_TEST_SUITE_P(
    FlavorsAndStrips, Degraded,
    ::testing::Values(std::make_tuple(PlantedFlavor::kKinetoCuda, Strip::kShapes),
                      std::make_tuple(PlantedFlavor::kKinetoCuda, Strip::kDevices),
                      std::make_tuple(PlantedFlavor::kAscend, Strip::kShapes),
                      std::make_tuple(PlantedFlavor::kAscend, Strip::kPmu),
                      std::make_tuple(PlantedFlavor::kAscend, Strip::kDevices)),
    [](const auto& info) {
      const char* f = std::get<0>(info.param) == PlantedFlavor::kAscend ? "Ascend" : "KinetoCuda";
      const char* s = std::get<1>(info.param) == Strip::kShapes ? "NoShapes"
                      : std::get<1>(info.param) == Strip::kPmu  ? "NoPmu"
                                                                : "NoDevices";
      return std::string(f) + s;
    });

}  // namespace
}  // namespace pypto::testing
