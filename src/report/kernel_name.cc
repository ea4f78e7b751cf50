#include "report/kernel_name.h"

#include <cctype>
#include <cstdint>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "model/string_table.h"

namespace pypto::report {
namespace {

// The string table's hash folded to 16 bits: enough to tell a handful of look-alikes apart.
std::string ShortHash(std::string_view s) {
  const uint64_t h = HashString(s);
  return fmt::format("{:04x}", static_cast<unsigned>((h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) & 0xffff));
}

bool EndsQualifier(char c) { return c == '<' || c == ',' || c == ' ' || c == '(' || c == '>' || c == '*' || c == '&'; }

// Drops "ns::" qualifiers: each name keeps the text after its last "::".
std::string DropQualifiers(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      size_t j = out.size();
      while (j > 0 && !EndsQualifier(out[j - 1])) --j;
      out.resize(j);
      ++i;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

// The demangled form of an Itanium-mangled name ("_ZN…"); "" when it is not one.
// The C++ runtime's demangler (the one c++filt uses), not a hand-written one.
std::string Demangle(std::string_view name) {
  if (!name.starts_with("_Z")) return {};
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string();
}

std::string ShortKernelName(std::string_view name, size_t max_chars) {
  const std::string demangled = Demangle(name);
  if (!demangled.empty()) name = demangled;
  if (name.size() <= max_chars) return std::string(name);  // readable as it is
  std::string_view s = name;
  bool elided = false;
  if (s.starts_with("void ")) s.remove_prefix(5);
  // The parameter list: the last top-level "(…)" at the end.
  if (s.ends_with(")")) {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      else if (s[i] == '(' && --depth == 0) {
        // "(anonymous namespace)" inside the name is not a parameter list,
        // nor "(Pinned -> Device)" after a space.
        if (i > 0 && s[i - 1] != ' ' && !s.substr(i).starts_with("(anonymous namespace)")) {
          s = s.substr(0, i);  // overloads differing only in parameters are rare: no hash for this
        }
        break;
      }
    }
  }
  // Template arguments past the first level, and lambda bodies, become "…".
  std::string kept;
  int depth = 0, brace = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '{') {
      if (brace++ == 0) kept += "{…";
      elided = true;
      continue;
    }
    if (c == '}') {
      if (brace > 0 && --brace == 0) kept += '}';
      continue;
    }
    if (brace > 0) continue;
    if (c == '(' && depth >= 1 && !s.substr(i).starts_with("(anonymous namespace)")) {
      // A function signature inside a template argument (a lambda's enclosing function).
      int parens = 0;
      for (; i < s.size(); ++i) {
        if (s[i] == '(') ++parens;
        else if (s[i] == ')' && --parens == 0) break;
      }
      elided = true;
      continue;
    }
    if (c == '<') {
      if (++depth == 2) { kept += "<…"; elided = true; }
      else if (depth == 1) kept += c;
      continue;
    }
    if (c == '>') {
      if (depth == 1 || depth == 2) kept += '>';
      if (depth > 0) --depth;
      continue;
    }
    if (depth >= 2) continue;
    kept += c;
  }
  for (size_t at; (at = kept.find("(anonymous namespace)::")) != std::string::npos;) kept.erase(at, 23);
  std::string out = DropQualifiers(kept);
  const std::string hash = elided ? " #" + ShortHash(name) : std::string();
  if (out.size() + hash.size() > max_chars && max_chars > hash.size() + 1) {
    // Cut on a UTF-8 boundary ("…" is 3 bytes).
    size_t cut = max_chars - hash.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "…";
    if (hash.empty()) return out + " #" + ShortHash(name);
  }
  return out + hash;
}

}  // namespace pypto::report
