#include "hw/hardware.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include <fmt/format.h>

#include "hw/embedded_data.h"
#include "io/file.h"

namespace pypto {

const char* HardwareFamilyName(HardwareFamily family) {
  switch (family) {
    case HardwareFamily::kAscend: return "ascend";
    case HardwareFamily::kNvidiaGpu: return "nvidia";
    case HardwareFamily::kAmdGpu: return "amd";
    case HardwareFamily::kCpu: return "cpu";
    case HardwareFamily::kOther: return "other";
  }
  return "other";
}

const char* ComputeUnitName(ComputeUnit unit) { return unit == ComputeUnit::kMatrix ? "matrix" : "vector"; }

// ------------------------------------------------------------------ HardwareSpec

double HardwareSpec::PeakFor(ComputeUnit unit, DType dtype) const {
  for (const PeakFlops& p : peaks)
    if (p.unit == unit && p.dtype == dtype) return p.flops;
  return 0;
}

double HardwareSpec::PeakForOp(ComputeUnit unit, DType dtype, const PeakFlops** used) const {
  auto find = [&](ComputeUnit u, DType d) -> const PeakFlops* {
    for (const PeakFlops& p : peaks)
      if (p.unit == u && p.dtype == d && p.flops > 0) return &p;
    return nullptr;
  };
  const PeakFlops* p = find(unit, dtype);
  if (p == nullptr) {
    // Stated fallbacks (docs/cost-model.md): the unit that would run the op.
    if (unit == ComputeUnit::kMatrix) {
      switch (dtype) {
        case DType::kFp8: case DType::kFp4: p = find(unit, DType::kFp16); break;
        case DType::kBf16: p = find(unit, DType::kFp16); break;   // V100-class: no BF16 matrix path
        case DType::kFp16: p = find(unit, DType::kBf16); break;
        case DType::kFp32: case DType::kTf32:
          p = find(unit, DType::kFp32);
          if (p == nullptr) p = find(ComputeUnit::kVector, DType::kFp32);
          break;
        case DType::kFp64: p = find(ComputeUnit::kVector, DType::kFp64); break;
        case DType::kInt4: p = find(unit, DType::kInt8); break;
        case DType::kUnknown:
          p = find(unit, DType::kBf16);
          if (p == nullptr) p = find(unit, DType::kFp16);
          break;
        default: break;
      }
      if (p == nullptr) p = find(ComputeUnit::kVector, DType::kFp32);
    } else {
      // Vector work: the dtype's own figure, else FP16 for 16-bit types, else FP32.
      if (dtype == DType::kBf16) p = find(unit, DType::kFp16);
      if (p == nullptr) p = find(unit, DType::kFp32);
      if (p == nullptr) p = find(unit, DType::kFp16);
    }
  }
  if (used != nullptr) *used = p;
  return p == nullptr ? 0 : p->flops;
}

double HardwareSpec::HeadlinePeak() const {
  double p = PeakFor(ComputeUnit::kMatrix, DType::kBf16);
  if (p <= 0) p = PeakFor(ComputeUnit::kMatrix, DType::kFp16);
  if (p <= 0) p = PeakFor(ComputeUnit::kVector, DType::kFp32);
  return p;
}

double HardwareSpec::RidgePoint() const {
  double p = HeadlinePeak();
  return (p > 0 && memory_bandwidth.value > 0) ? p / memory_bandwidth.value : 0;
}

// ------------------------------------------------------------------ names

std::string NormalizeHardwareName(std::string_view name) {
  std::string s;
  s.reserve(name.size());
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // Vendor and product-line words carry no SKU information.
  static constexpr std::string_view kNoise[] = {"nvidia", "amdinstinct", "instinct", "amd", "tesla", "huawei", "ascend",
                                                "atlas", "geforce"};
  for (std::string_view w : kNoise) {
    for (size_t pos = s.find(w); pos != std::string::npos; pos = s.find(w)) s.erase(pos, w.size());
  }
  return s;
}

// ------------------------------------------------------------------ JSON parsing

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

bool GetDouble(element e, double* out) {
  double d;
  if (!e.get_double().get(d)) { *out = d; return true; }
  int64_t i;
  if (!e.get_int64().get(i)) { *out = static_cast<double>(i); return true; }
  uint64_t u;
  if (!e.get_uint64().get(u)) { *out = static_cast<double>(u); return true; }
  return false;
}

std::string GetString(object o, const char* key) {
  std::string_view s;
  if (o[key].get_string().get(s)) return {};
  return std::string(s);
}

Status ReadSourced(object o, const char* key, SourcedValue* out, std::string_view where) {
  element e;
  if (o[key].get(e)) return Status::Ok();  // absent: keep
  object v;
  if (e.get_object().get(v)) {
    double d;
    if (GetDouble(e, &d)) { out->value = d; out->source.clear(); out->marks.clear(); return Status::Ok(); }
    return InvalidArgumentError(fmt::format("{}: field '{}' must be a number or {{\"value\",\"source\"}}", where, key));
  }
  double d = 0;
  element ve;
  if (v["value"].get(ve) || !GetDouble(ve, &d))
    return InvalidArgumentError(fmt::format("{}: field '{}' has no numeric 'value'", where, key));
  out->value = d;
  out->source = GetString(v, "source");
  out->marks = GetString(v, "marks");
  return Status::Ok();
}

StatusOr<HardwareFamily> ParseFamily(std::string_view s, std::string_view where) {
  if (s == "ascend") return HardwareFamily::kAscend;
  if (s == "nvidia") return HardwareFamily::kNvidiaGpu;
  if (s == "amd") return HardwareFamily::kAmdGpu;
  if (s == "cpu") return HardwareFamily::kCpu;
  if (s == "other") return HardwareFamily::kOther;
  return InvalidArgumentError(fmt::format("{}: unknown family '{}' (ascend, nvidia, amd, cpu, other)", where, s));
}

// Overlays the fields present in `o` on `spec`.
Status ApplyEntry(object o, HardwareSpec* spec, std::string_view where) {
  std::string s;
  if (!(s = GetString(o, "id")).empty()) spec->id = s;
  if (!(s = GetString(o, "display_name")).empty()) spec->display_name = s;
  if (!(s = GetString(o, "family")).empty()) {
    auto f = ParseFamily(s, where);
    if (!f.ok()) return f.status();
    spec->family = *f;
  }
  if (!(s = GetString(o, "sources")).empty()) spec->source_summary = s;
  simdjson::dom::array arr;
  if (!o["aliases"].get_array().get(arr)) {
    for (element a : arr) {
      std::string_view t;
      if (a.get_string().get(t)) return InvalidArgumentError(fmt::format("{}: aliases must be strings", where));
      std::string n = NormalizeHardwareName(t);
      if (!n.empty() && std::find(spec->aliases.begin(), spec->aliases.end(), n) == spec->aliases.end())
        spec->aliases.push_back(n);
    }
  }
  object cores;
  if (!o["cores"].get_object().get(cores)) {
    int64_t i;
    if (!cores["matrix"].get_int64().get(i)) spec->matrix_cores = static_cast<int32_t>(i);
    if (!cores["vector"].get_int64().get(i)) spec->vector_cores = static_cast<int32_t>(i);
    if (!cores["ai_cpu"].get_int64().get(i)) spec->ai_cpu_cores = static_cast<int32_t>(i);
    bool b;
    if (!cores["split"].get_bool().get(b)) spec->split_architecture = b;
    if (!(s = GetString(cores, "source")).empty()) spec->core_source = s;
    if (!(s = GetString(cores, "marks")).empty()) spec->core_source += " (" + s + ")";
  }
  struct Field { const char* key; SourcedValue* v; };
  Field fields[] = {{"clock_hz", &spec->clock_hz},         {"memory_bandwidth", &spec->memory_bandwidth},
                    {"link_bandwidth", &spec->link_bandwidth},
                    {"memory_bytes", &spec->memory_bytes}, {"l2_bytes", &spec->l2_bytes},
                    {"ub_bytes", &spec->ub_bytes},         {"l1_bytes", &spec->l1_bytes},
                    {"l0a_bytes", &spec->l0a_bytes},       {"l0b_bytes", &spec->l0b_bytes},
                    {"l0c_bytes", &spec->l0c_bytes},       {"launch_overhead_us", &spec->launch_overhead_us}};
  for (const Field& f : fields) {
    Status st = ReadSourced(o, f.key, f.v, where);
    if (!st.ok()) return st;
  }
  if (!o["peaks"].get_array().get(arr)) {
    for (element pe : arr) {
      object p;
      if (pe.get_object().get(p)) return InvalidArgumentError(fmt::format("{}: peaks entries must be objects", where));
      PeakFlops peak;
      std::string unit = GetString(p, "unit");
      if (unit == "matrix") peak.unit = ComputeUnit::kMatrix;
      else if (unit == "vector") peak.unit = ComputeUnit::kVector;
      else return InvalidArgumentError(fmt::format("{}: peak unit '{}' is not matrix or vector", where, unit));
      std::string dt = GetString(p, "dtype");
      peak.dtype = DTypeFromKey(dt);
      if (peak.dtype == DType::kUnknown) return InvalidArgumentError(fmt::format("{}: unknown peak dtype '{}'", where, dt));
      element fe;
      if (p["flops"].get(fe) || !GetDouble(fe, &peak.flops) || !(peak.flops >= 0))
        return InvalidArgumentError(fmt::format("{}: peak {} {} has no valid 'flops'", where, unit, dt));
      peak.source = GetString(p, "source");
      peak.marks = GetString(p, "marks");
      auto it = std::find_if(spec->peaks.begin(), spec->peaks.end(),
                             [&](const PeakFlops& x) { return x.unit == peak.unit && x.dtype == peak.dtype; });
      if (it != spec->peaks.end()) *it = peak;
      else spec->peaks.push_back(peak);
    }
  }
  object al;
  if (!o["alignment"].get_object().get(al)) {
    int64_t i;
    struct IntField { const char* key; int32_t* v; };
    IntField ints[] = {{"fractal_elems", &spec->fractal_elems},
                       {"inner_axis_multiple_elems", &spec->inner_axis_multiple_elems},
                       {"inner_axis_align_bytes", &spec->inner_axis_align_bytes},
                       {"attention_dim_multiple", &spec->attention_dim_multiple},
                       {"mma_dim_multiple", &spec->mma_dim_multiple},
                       {"mma_dim_multiple_int8", &spec->mma_dim_multiple_int8},
                       {"cta_tile_m", &spec->cta_tile_m},
                       {"cta_tile_n", &spec->cta_tile_n}};
    for (const IntField& f : ints)
      if (!al[f.key].get_int64().get(i)) *f.v = static_cast<int32_t>(i);
    if (!(s = GetString(al, "source")).empty()) spec->alignment_source = s;
    if (!(s = GetString(al, "marks")).empty()) spec->alignment_source += " (" + s + ")";
  }
  object ma;
  if (!o["max_achievable"].get_object().get(ma)) {
    std::string text = "max achievable:";
    for (auto [k, val] : ma) {
      double d;
      if (GetDouble(val, &d)) text += fmt::format(" {} {:.0f} TFLOP/s;", k, d / 1e12);
    }
    text += " source " + GetString(ma, "source");
    spec->notes.push_back(text);
  }
  return Status::Ok();
}

}  // namespace

// ------------------------------------------------------------------ HardwareTable

namespace {
// Names that select an entry as a stated default ("910b" -> 910B3) are kept
// as pseudo-aliases with a '@' prefix, their notes as "default-for NAME: …".
constexpr char kDefaultMark = '@';
}  // namespace

StatusOr<HardwareTable> HardwareTable::Parse(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(json);
  element root;
  if (auto err = parser.parse(text).get(root))
    return InvalidArgumentError(fmt::format("{}: not valid JSON ({})", origin, simdjson::error_message(err)));
  object top;
  if (root.get_object().get(top)) return InvalidArgumentError(fmt::format("{}: top level must be an object", origin));
  simdjson::dom::array entries;
  if (top["entries"].get_array().get(entries))
    return InvalidArgumentError(fmt::format("{}: missing array 'entries'", origin));
  HardwareTable table;
  size_t index = 0;
  for (element e : entries) {
    std::string where = fmt::format("{}: entries[{}]", origin, index++);
    object o;
    if (e.get_object().get(o)) return InvalidArgumentError(where + ": must be an object");
    HardwareSpec spec;
    std::string base = GetString(o, "extends");
    if (!base.empty()) {
      const HardwareSpec* found = nullptr;
      for (const HardwareSpec& s : table.entries_)
        if (s.id == base) found = &s;
      if (found != nullptr) spec = *found;
      else {
        auto b = Builtin().Find(base);
        if (!b.ok()) return InvalidArgumentError(where + ": extends unknown entry '" + base + "'");
        spec = *b;
        spec.selection.clear();
        spec.notes.clear();
      }
      spec.aliases.clear();  // the base keeps its names; the new entry gets its own
    }
    Status st = ApplyEntry(o, &spec, where);
    if (!st.ok()) return st;
    if (spec.id.empty()) return InvalidArgumentError(where + ": missing 'id'");
    std::string id_norm = NormalizeHardwareName(spec.id);
    if (std::find(spec.aliases.begin(), spec.aliases.end(), id_norm) == spec.aliases.end())
      spec.aliases.insert(spec.aliases.begin(), id_norm);
    simdjson::dom::array defs;
    if (!o["default_for"].get_array().get(defs)) {
      std::string note = GetString(o, "default_note");
      for (element d : defs) {
        std::string_view t;
        if (d.get_string().get(t)) continue;
        spec.aliases.push_back(std::string(1, kDefaultMark) + NormalizeHardwareName(t));
        spec.notes.push_back("default-for " + NormalizeHardwareName(t) + ": " +
                             (note.empty() ? "chosen as the default SKU of this name" : note));
      }
    }
    auto same = std::find_if(table.entries_.begin(), table.entries_.end(),
                             [&](const HardwareSpec& x) { return x.id == spec.id; });
    if (same != table.entries_.end()) *same = std::move(spec);
    else table.entries_.push_back(std::move(spec));
  }
  return table;
}

const HardwareTable& HardwareTable::Builtin() {
  static const HardwareTable* table = [] {
    auto parsed = Parse(EmbeddedData("hardware/hardware.json"), "builtin hardware table");
    // The builtin table is checked by the unit tests; an empty table here means a build problem.
    return new HardwareTable(parsed.ok() ? std::move(parsed).value() : HardwareTable());
  }();
  return *table;
}

Status HardwareTable::Merge(const HardwareTable& other) {
  for (const HardwareSpec& s : other.entries_) {
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const HardwareSpec& x) { return x.id == s.id; });
    if (it != entries_.end()) *it = s;
    else entries_.push_back(s);
  }
  return Status::Ok();
}

namespace {

// Default-SKU notes are stored in the notes with this prefix; only the one for
// the name that selected the entry is kept in the returned spec.
HardwareSpec Finish(const HardwareSpec& entry, std::string selection, std::string_view default_name) {
  HardwareSpec spec = entry;
  spec.notes.clear();
  for (const std::string& n : entry.notes) {
    if (n.rfind("default-for ", 0) == 0) {
      std::string_view rest = std::string_view(n).substr(12);
      if (!default_name.empty() && rest.substr(0, default_name.size()) == default_name &&
          rest.substr(default_name.size(), 2) == ": ")
        spec.notes.push_back(std::string(rest.substr(default_name.size() + 2)));
      continue;
    }
    spec.notes.push_back(n);
  }
  std::vector<std::string> aliases;
  for (const std::string& a : spec.aliases)
    if (!a.empty() && a[0] != kDefaultMark) aliases.push_back(a);
  spec.aliases = std::move(aliases);
  spec.selection = std::move(selection);
  return spec;
}

}  // namespace

StatusOr<HardwareSpec> HardwareTable::Find(std::string_view name) const {
  std::string n = NormalizeHardwareName(name);
  if (n.empty()) return NotFoundError(fmt::format("hardware name '{}' is empty after normalisation", name));
  // 1. exact id / alias
  for (const HardwareSpec& s : entries_)
    for (const std::string& a : s.aliases)
      if (a == n) return Finish(s, fmt::format("name '{}' -> {}", name, s.id), "");
  // 2. stated default of a SKU-less name ("Ascend910B" -> 910B3)
  std::string marked = std::string(1, kDefaultMark) + n;
  for (const HardwareSpec& s : entries_)
    for (const std::string& a : s.aliases)
      if (a == marked) return Finish(s, fmt::format("name '{}' names no SKU -> default {}", name, s.id), n);
  // 3. the longest id/alias (>= 4 chars) that starts the name ("h100nvl" -> h100)
  const HardwareSpec* best = nullptr;
  size_t best_len = 0;
  for (const HardwareSpec& s : entries_)
    for (const std::string& a : s.aliases) {
      if (a.empty() || a[0] == kDefaultMark || a.size() < 4 || a.size() <= best_len) continue;
      if (n.compare(0, a.size(), a) == 0) { best = &s; best_len = a.size(); }
    }
  if (best != nullptr) {
    HardwareSpec spec = Finish(*best, fmt::format("name '{}' -> {} (by prefix '{}')", name, best->id,
                                                  n.substr(0, best_len)), "");
    spec.notes.push_back(fmt::format("'{}' is not in the table; matched {} by name prefix", name, best->id));
    return spec;
  }
  return NotFoundError(fmt::format("hardware '{}' is not in the table (known: see `pypto hardware` / docs/hardware.md)", name));
}

namespace {

std::string UserConfigDir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/pypto";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.config/pypto";
  return {};
}

// Merges a table file into `table`; a missing default file is fine, anything
// else wrong is returned as a note.
void MergeFile(const std::string& path, bool must_exist, HardwareTable* table, std::vector<std::string>* notes) {
  if (path.empty()) return;
  io::PathKind kind = io::GetPathKind(path);
  if (kind == io::PathKind::kMissing) {
    if (must_exist) notes->push_back("hardware table file '" + path + "' not found; builtin table used");
    return;
  }
  io::Limits limits;
  limits.follow_symlinks = true;  // the user's own configuration
  auto text = io::ReadWholeFile(path, limits);
  if (!text.ok()) {
    notes->push_back("hardware table file not read: " + text.status().ToString());
    return;
  }
  auto parsed = HardwareTable::Parse(*text, path);
  if (!parsed.ok()) {
    notes->push_back("hardware table file ignored: " + parsed.status().ToString());
    return;
  }
  (void)table->Merge(*parsed);
  notes->push_back("hardware table file '" + path + "' merged (" + std::to_string(parsed->entries().size()) + " entries)");
}

HardwareTable EffectiveTable(const std::string& extra_path, std::vector<std::string>* notes) {
  HardwareTable table = HardwareTable::Builtin();
  const char* env = std::getenv("PYPTO_HARDWARE_FILE");
  if (env != nullptr && *env != '\0') {
    MergeFile(env, true, &table, notes);
  } else {
    std::string dir = UserConfigDir();
    if (!dir.empty()) MergeFile(dir + "/hardware.json", false, &table, notes);
  }
  MergeFile(extra_path, true, &table, notes);
  return table;
}

}  // namespace

StatusOr<HardwareSpec> FindHardware(std::string_view name) {
  std::vector<std::string> notes;
  HardwareTable table = EffectiveTable("", &notes);
  auto spec = table.Find(name);
  if (spec.ok()) {
    // Only problems with the user file matter to a caller; a successful merge is not news.
    for (const std::string& n : notes)
      if (n.find(" merged (") == std::string::npos) spec->notes.push_back(n);
  }
  return spec;
}

// ------------------------------------------------------------------ detection

namespace {

struct DeviceFacts {
  int32_t row = -1;
  DeviceKind kind = DeviceKind::kOther;
  std::string name;
  double num_sms = 0;
  double total_mem = 0;
  double ai_core_num = 0;
  double aiv_num = 0;
  double aic_frequency_mhz = 0;
  std::string chip_name;  // any attribute that names the chip
};

double NumberOf(const Profile& p, size_t attr) {
  double d = p.attributes.number(attr);
  if (!std::isnan(d)) return d;
  // Numbers written as strings ("1800").
  char* end = nullptr;
  const std::string s = p.AttributeText(attr);
  double v = std::strtod(s.c_str(), &end);
  return (end != s.c_str()) ? v : 0;
}

DeviceFacts CollectFacts(const Profile& profile, int32_t row) {
  DeviceFacts f;
  f.row = row;
  const DeviceRow& d = profile.devices.rows[row];
  f.kind = d.kind;
  f.name = std::string(profile.Str(d.name));
  const AttributeTable& at = profile.attributes;
  at.ForEachRowOf(OwnerKind::kDevice, [&](size_t i, uint32_t owner) {
    if (owner != static_cast<uint32_t>(row)) return;
    std::string_view key = profile.Str(at.key(i));
    // Keys may carry a prefix added by an importer ("info.ai_core_num"): match the tail.
    auto ends = [&](std::string_view k) {
      return key.size() >= k.size() && key.substr(key.size() - k.size()) == k &&
             (key.size() == k.size() || !std::isalnum(static_cast<unsigned char>(key[key.size() - k.size() - 1])));
    };
    if (ends("numSms")) f.num_sms = NumberOf(profile, i);
    else if (ends("totalGlobalMem")) f.total_mem = NumberOf(profile, i);
    else if (ends("ai_core_num")) f.ai_core_num = NumberOf(profile, i);
    else if (ends("aiv_num")) f.aiv_num = NumberOf(profile, i);
    else if (ends("aic_frequency")) f.aic_frequency_mhz = NumberOf(profile, i);
    else if (ends("chip_name") || ends("soc_version") || ends("chip") || ends("device_type"))
      f.chip_name = profile.AttributeText(i);
  });
  return f;
}

const HardwareSpec* BySmCount(const HardwareTable& table, HardwareFamily family, double sms, double total_mem,
                              int* candidates) {
  const HardwareSpec* best = nullptr;
  double best_diff = 0;
  *candidates = 0;
  for (const HardwareSpec& s : table.entries()) {
    if (s.family != family || s.matrix_cores <= 0 || s.matrix_cores != static_cast<int32_t>(sms)) continue;
    ++*candidates;
    double diff = total_mem > 0 && s.memory_bytes.value > 0 ? std::fabs(s.memory_bytes.value - total_mem) : 0;
    if (best == nullptr || diff < best_diff) { best = &s; best_diff = diff; }
  }
  return best;
}

HardwareSpec Unknown(HardwareFamily family, std::string what) {
  HardwareSpec spec;
  spec.id = fmt::format("unknown-{}", HardwareFamilyName(family));
  spec.display_name = "unknown " + std::string(HardwareFamilyName(family)) + " device";
  spec.family = family;
  spec.selection = std::move(what);
  spec.notes.push_back("no peak figures: roofline efficiencies are not computed; pass --hardware NAME or "
                       "peak/bandwidth overrides");
  return spec;
}

void ApplyAscendRuntime(const DeviceFacts& f, HardwareSpec* spec) {
  bool changed = false;
  if (f.ai_core_num > 0 && static_cast<int32_t>(f.ai_core_num) != spec->matrix_cores) {
    spec->notes.push_back(fmt::format("runtime ai_core_num {} replaces the table's {}", f.ai_core_num, spec->matrix_cores));
    spec->matrix_cores = static_cast<int32_t>(f.ai_core_num);
    changed = true;
  }
  if (f.aiv_num > 0 && static_cast<int32_t>(f.aiv_num) != spec->vector_cores) {
    spec->notes.push_back(fmt::format("runtime aiv_num {} replaces the table's {}", f.aiv_num, spec->vector_cores));
    spec->vector_cores = static_cast<int32_t>(f.aiv_num);
  }
  if (f.aic_frequency_mhz > 0 && std::fabs(f.aic_frequency_mhz * 1e6 - spec->clock_hz.value) > 1e6) {
    spec->notes.push_back(fmt::format("runtime aic_frequency {} MHz replaces the table's {:.0f} MHz", f.aic_frequency_mhz,
                                      spec->clock_hz.value / 1e6));
    spec->clock_hz = SourcedValue{f.aic_frequency_mhz * 1e6, "", "profile info.json aic_frequency"};
    changed = true;
  }
  if (!changed || spec->matrix_cores <= 0 || spec->clock_hz.value <= 0) return;
  // Cube peak formula (hardware reference §1; MPA operator_mfu chip_peak_flops.py).
  double fp16 = spec->matrix_cores * spec->clock_hz.value * 8192.0;
  double int8 = spec->matrix_cores * spec->clock_hz.value * 16384.0;
  std::string src = fmt::format("runtime {} AIC x {:.0f} MHz x {} (MPA operator_mfu formula)", spec->matrix_cores,
                                spec->clock_hz.value / 1e6, "8192");
  for (PeakFlops& p : spec->peaks) {
    if (p.unit != ComputeUnit::kMatrix) continue;
    if (p.dtype == DType::kFp16 || p.dtype == DType::kBf16) { p.flops = fp16; p.marks = "d"; p.source = src; }
    else if (p.dtype == DType::kInt8) { p.flops = int8; p.marks = "d"; p.source = src + " x 2 (INT8)"; }
  }
  spec->notes.push_back(fmt::format("cube peak recomputed from runtime values: {:.1f} TFLOP/s FP16/BF16", fp16 / 1e12));
}

}  // namespace

void ApplyHardwareOverrides(const HardwareOverrides& overrides, HardwareSpec* spec) {
  if (overrides.peak_flops > 0) {
    for (DType d : {DType::kBf16, DType::kFp16}) {
      auto it = std::find_if(spec->peaks.begin(), spec->peaks.end(),
                             [&](const PeakFlops& p) { return p.unit == ComputeUnit::kMatrix && p.dtype == d; });
      PeakFlops p{ComputeUnit::kMatrix, d, overrides.peak_flops, "", "user override (peak FLOP/s)"};
      if (it != spec->peaks.end()) *it = p;
      else spec->peaks.push_back(p);
    }
    spec->notes.push_back(fmt::format("user override: matrix FP16/BF16 peak {:.4g} TFLOP/s", overrides.peak_flops / 1e12));
  }
  if (overrides.memory_bandwidth > 0) {
    spec->memory_bandwidth = SourcedValue{overrides.memory_bandwidth, "", "user override (bandwidth)"};
    spec->notes.push_back(fmt::format("user override: memory bandwidth {:.4g} GB/s", overrides.memory_bandwidth / 1e9));
  }
}

bool HasAcceleratorTasks(const Profile& profile) {
  std::vector<int32_t> cpu_devices;
  for (const DeviceRow& row : profile.devices.rows)
    if (row.kind == DeviceKind::kCpu) cpu_devices.push_back(row.index);
  for (size_t t = 0; t < profile.device_tasks.size(); ++t) {
    const DeviceTaskKind kind = profile.device_tasks.kind[t];
    if (kind == DeviceTaskKind::kAnnotation || kind == DeviceTaskKind::kSync) continue;
    const uint32_t track = profile.device_tasks.track[t];
    const int32_t device = track < profile.tracks.size() ? profile.tracks.device[track] : -1;
    if (std::find(cpu_devices.begin(), cpu_devices.end(), device) == cpu_devices.end()) return true;
  }
  return false;
}

namespace {

// The largest Block Dim the profile's cube (AI_CORE, MIX_AIC) and vector
// (AI_VECTOR_CORE, MIX_AIV) tasks ran with, counting a value only when at least
// kMinTasksForCoreEvidence tasks used it (one odd kernel is no evidence).
struct BlockDimEvidence {
  int32_t cube = 0;
  int32_t vector = 0;
};
inline constexpr int kMinTasksForCoreEvidence = 3;

BlockDimEvidence LargestBlockDims(const Profile& profile) {
  const DeviceTaskTable& d = profile.device_tasks;
  std::map<int32_t, int> cube, vector;
  for (size_t t = 0; t < d.size(); ++t) {
    const int32_t dim = d.block_dim(t);
    if (dim <= 0 || d.core_type[t] == kEmptyStr) continue;
    const std::string_view core = profile.Str(d.core_type[t]);
    if (core == "AI_CORE" || core == "MIX_AIC") ++cube[dim];
    if (core == "AI_VECTOR_CORE" || core == "MIX_AIV") ++vector[dim];
  }
  auto largest = [](const std::map<int32_t, int>& counts) {
    int32_t best = 0;
    for (const auto& [dim, n] : counts)
      if (n >= kMinTasksForCoreEvidence) best = std::max(best, dim);
    return best;
  };
  return {largest(cube), largest(vector)};
}

// An Ascend kernel splits its work over at most the chip's cores (Block Dim =
// the cores it asks for). A profile whose kernels ask for more cores than the
// chosen chip has ran on another chip: when the chip was assumed (no name in
// the profile), take the first table entry the Block Dims fit, else say that
// the core counts, peaks and utilization figures are unreliable.
void CheckAscendCoresAgainstBlockDims(const Profile& profile, const HardwareTable& table, bool chip_assumed,
                                      HardwareSpec* spec) {
  const BlockDimEvidence seen = LargestBlockDims(profile);
  auto fits = [&](const HardwareSpec& s) {
    return seen.cube <= s.matrix_cores && (s.vector_cores <= 0 || seen.vector <= s.vector_cores);
  };
  if (fits(*spec)) return;
  const std::string evidence = fmt::format("kernels ran with Block Dim up to {} (cube) / {} (vector)", seen.cube,
                                           seen.vector);
  if (chip_assumed) {
    // Same generation first (the A2 SKUs), then the rest of the Ascend table.
    for (std::string_view id : {"910B2", "910C"}) {
      auto found = table.Find(id);
      if (!found.ok() || !fits(*found)) continue;
      const std::string was = spec->id;
      const int32_t was_cores = spec->matrix_cores;
      const std::vector<std::string> notes = spec->notes;
      *spec = std::move(found).value();
      spec->selection = fmt::format("Ascend profile without a chip name, {}: more than {}'s {} AI cores -> {}",
                                    evidence, was, was_cores, spec->id);
      spec->notes = notes;
      spec->notes.push_back(fmt::format("{}: the chip is taken as {} ({} AIC / {} AIV); pass --hardware to choose",
                                        evidence, spec->id, spec->matrix_cores, spec->vector_cores));
      return;
    }
  }
  spec->notes.push_back(fmt::format("UNRELIABLE: {}, more than {}'s {} AIC / {} AIV: the chip is not the one assumed, "
                                    "so core counts, peaks and utilization figures do not hold; pass --hardware",
                                    evidence, spec->id, spec->matrix_cores, spec->vector_cores));
}

}  // namespace

HardwareSpec DetectHardware(const Profile& profile, const HardwareOverrides& overrides) {
  std::vector<std::string> table_notes;
  HardwareTable table = EffectiveTable(overrides.table_path, &table_notes);
  HardwareSpec spec;
  bool chosen = false;

  if (!overrides.name.empty()) {
    auto found = table.Find(overrides.name);
    if (found.ok()) {
      spec = std::move(found).value();
      spec.selection = "user choice: " + spec.selection;
      chosen = true;
    } else {
      table_notes.push_back("user hardware '" + overrides.name + "' not found; detecting from the profile");
    }
  }

  // First accelerator device of the profile.
  int32_t accel = -1;
  for (size_t i = 0; i < profile.devices.size(); ++i) {
    DeviceKind k = profile.devices.rows[i].kind;
    if (k == DeviceKind::kCuda || k == DeviceKind::kRocm || k == DeviceKind::kNpu) { accel = static_cast<int32_t>(i); break; }
  }
  // Device tasks without device rows still mean an accelerator (format tells
  // which), unless they all run on a CPU device (the graph's CPU compute tasks
  // of a CPU-only profile).
  if (!chosen && accel < 0 && HasAcceleratorTasks(profile)) {
    auto fmt_it = profile.metadata.find("format");
    std::string format = fmt_it == profile.metadata.end() ? "" : fmt_it->second;
    bool ascend = format.find("ascend") != std::string::npos || format.find("msprof") != std::string::npos;
    if (ascend) {
      auto found = table.Find(kDefaultAscend910BSku);
      if (found.ok()) {
        spec = std::move(found).value();
        spec.selection = fmt::format("Ascend profile ({}) without a chip name -> default {}", format, spec.id);
        spec.notes.push_back("no chip name in the profile: the default Ascend SKU is assumed; pass --hardware to choose");
        chosen = true;
      }
    } else {
      spec = Unknown(HardwareFamily::kNvidiaGpu, "device tasks but no device properties: GPU model unknown");
      chosen = true;
    }
  }

  if (!chosen && accel >= 0) {
    DeviceFacts f = CollectFacts(profile, accel);
    HardwareFamily family = f.kind == DeviceKind::kNpu    ? HardwareFamily::kAscend
                            : f.kind == DeviceKind::kRocm ? HardwareFamily::kAmdGpu
                                                          : HardwareFamily::kNvidiaGpu;
    std::string name = !f.name.empty() ? f.name : f.chip_name;
    if (!name.empty()) {
      auto found = table.Find(name);
      if (found.ok()) {
        spec = std::move(found).value();
        spec.selection = fmt::format("device {} name '{}' -> {}{}", profile.devices.rows[accel].index, name, spec.id,
                                     spec.selection.find("by prefix") != std::string::npos ? " (by prefix)"
                                     : spec.selection.find("no SKU") != std::string::npos ? " (default SKU)"
                                                                                          : "");
        chosen = true;
        // AMD names "AMD Instinct MI250X/MI250" cover two parts: the CU count decides.
        if (family != HardwareFamily::kAscend && f.num_sms > 0 && spec.matrix_cores > 0 &&
            static_cast<int32_t>(f.num_sms) != spec.matrix_cores) {
          int n = 0;
          const HardwareSpec* by_sm = BySmCount(table, spec.family, f.num_sms, f.total_mem, &n);
          if (by_sm != nullptr && NormalizeHardwareName(by_sm->id).substr(0, 4) == NormalizeHardwareName(spec.id).substr(0, 4)) {
            std::string how = fmt::format("device {} name '{}' + numSms {} -> {}", profile.devices.rows[accel].index,
                                          name, f.num_sms, by_sm->id);
            spec = Finish(*by_sm, how, "");
          } else {
            // Fewer SMs than the table (MIG slice, cut-down SKU): scale the peaks.
            double scale = f.num_sms / spec.matrix_cores;
            for (PeakFlops& p : spec.peaks) {
              p.flops *= scale;
              p.marks = p.marks.empty() ? "d" : p.marks + ",d";
              p.source += fmt::format(" x {}/{} SMs (profile numSms)", f.num_sms, spec.matrix_cores);
            }
            spec.notes.push_back(fmt::format("profile numSms {} differs from the table's {}: peaks scaled by {:.3f}",
                                             f.num_sms, spec.matrix_cores, scale));
            spec.matrix_cores = static_cast<int32_t>(f.num_sms);
          }
        }
      }
    }
    if (!chosen && family != HardwareFamily::kAscend && f.num_sms > 0) {
      int n = 0;
      const HardwareSpec* by_sm = BySmCount(table, family, f.num_sms, f.total_mem, &n);
      if (by_sm != nullptr) {
        spec = Finish(*by_sm, fmt::format("device {} {} numSms {} -> {}", profile.devices.rows[accel].index,
                                          name.empty() ? "without a name," : "name '" + name + "' unknown,", f.num_sms,
                                          by_sm->id), "");
        if (n > 1) spec.notes.push_back(fmt::format("{} table entries have {} SMs/CUs; {} chosen by memory size", n, f.num_sms, by_sm->id));
        chosen = true;
      }
    }
    if (!chosen && family == HardwareFamily::kAscend) {
      auto found = table.Find(kDefaultAscend910BSku);
      if (found.ok()) {
        spec = std::move(found).value();
        spec.selection = fmt::format("Ascend device {} {} -> default {}", profile.devices.rows[accel].index,
                                     name.empty() ? "without a chip name" : "'" + name + "' unknown", spec.id);
        spec.notes.push_back("the chip is not named in the profile: the default Ascend SKU is assumed; pass --hardware to choose");
        chosen = true;
      }
    }
    if (!chosen)
      spec = Unknown(family, fmt::format("device {} '{}' (numSms {}) not in the table", profile.devices.rows[accel].index,
                                         name, f.num_sms));
    if (spec.family == HardwareFamily::kAscend) ApplyAscendRuntime(f, &spec);
    chosen = true;
  }

  if (!chosen) {
    auto cal = LoadCalibration(overrides.calibration_path);
    if (cal.ok()) {
      spec = CalibratedCpuSpec(*cal);
    } else {
      auto generic = table.Find("cpu-generic");
      spec = generic.ok() ? std::move(generic).value() : Unknown(HardwareFamily::kCpu, "");
      spec.selection = "CPU-only profile, no calibration file -> generic CPU";
      spec.notes.push_back("run `pypto calibrate` to measure this machine's peak FLOP/s and memory bandwidth");
      if (cal.status().code() != StatusCode::kNotFound) spec.notes.push_back(cal.status().ToString());
    }
  }
  if (spec.family == HardwareFamily::kAscend && spec.matrix_cores > 0) {
    const bool assumed = spec.selection.find("default") != std::string::npos && overrides.name.empty();
    CheckAscendCoresAgainstBlockDims(profile, table, assumed, &spec);
  }
  for (const std::string& n : table_notes)
    if (n.find(" merged (") == std::string::npos || !overrides.table_path.empty()) spec.notes.push_back(n);
  ApplyHardwareOverrides(overrides, &spec);
  return spec;
}

}  // namespace pypto
