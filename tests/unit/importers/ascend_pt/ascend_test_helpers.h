// Helpers for the Ascend importer tests: fixture paths, temporary run
// directories, and small queries over a loaded Profile.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "importers/detect.h"

namespace pypto::testing {

inline std::string AscendFixture(const std::string& relative) {
  return std::string(PYPTO_FIXTURES_DIR) + "/ascend/" + relative;
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/pypto_ascend_test_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  // Writes `text` to `relative` (creating folders); returns the full path.
  std::string Write(const std::string& relative, const std::string& text) const {
    std::string full = path_ + "/" + relative;
    std::system(("mkdir -p '" + full.substr(0, full.find_last_of('/')) + "'").c_str());
    std::ofstream(full, std::ios::binary) << text;
    return full;
  }
  std::string MakeDir(const std::string& relative) const {
    std::string full = path_ + "/" + relative;
    std::system(("mkdir -p '" + full + "'").c_str());
    return full;
  }

 private:
  std::string path_;
};

inline std::map<std::string, int> CountByCoreType(const Profile& p) {
  std::map<std::string, int> out;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) out[std::string(p.Str(p.device_tasks.core_type[i]))]++;
  return out;
}

inline std::map<std::string, int64_t> DurationByCoreType(const Profile& p) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < p.device_tasks.size(); ++i)
    out[std::string(p.Str(p.device_tasks.core_type[i]))] += p.device_tasks.dur[i];
  return out;
}

inline std::map<std::string, int64_t> DurationByOpType(const Profile& p) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < p.device_tasks.size(); ++i)
    out[std::string(p.Str(p.device_tasks.op_type(i)))] += p.device_tasks.dur[i];
  return out;
}

// First task with this name, or -1.
inline int FindTask(const Profile& p, std::string_view name) {
  for (size_t i = 0; i < p.device_tasks.size(); ++i)
    if (p.Str(p.device_tasks.name[i]) == name) return static_cast<int>(i);
  return -1;
}

// The attribute `key` of an owner: {text, number}; text "<absent>" when missing.
inline std::pair<std::string, double> Attribute(const Profile& p, OwnerKind kind, uint32_t owner,
                                                std::string_view key) {
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == kind && p.attributes.owner(i) == owner && p.Str(p.attributes.key(i)) == key)
      return {p.AttributeText(i), p.attributes.number(i)};
  return {"<absent>", NAN};
}

inline bool HasNoteContaining(const Profile& p, std::string_view text) {
  for (const auto& n : p.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

inline int CountNotesContaining(const Profile& p, std::string_view text) {
  int n = 0;
  for (const auto& note : p.notes) n += note.find(text) != std::string::npos;
  return n;
}

inline std::string Meta(const Profile& p, const std::string& key) {
  auto it = p.metadata.find(key);
  return it == p.metadata.end() ? "<absent>" : it->second;
}

}  // namespace pypto::testing
