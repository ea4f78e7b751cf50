#include "model/kernel_name.h"

#include <cctype>
#include <cstdint>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "model/string_table.h"

namespace pypto {
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
  auto demangle = [](const std::string& mangled) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                               std::free);
    return status == 0 && out ? std::string(out.get()) : std::string();
  };
  std::string text = demangle(std::string(name));
  if (!text.empty() || name.find("DF16b") == std::string_view::npos || name.find("Dn") != std::string_view::npos)
    return text;
  // DF16b (std::bfloat16_t, in ROCm ck_tile / aiter kernels) is newer than the
  // demangler of libstdc++ 12, which refuses the whole name. Spelled as Dn
  // (another builtin type, so no substitution index moves) it demangles, and
  // Dn's text (decltype(nullptr)) is put back as __bf16.
  std::string spelled(name);
  for (size_t at = 0; (at = spelled.find("DF16b", at)) != std::string::npos;) spelled.replace(at, 5, "Dn");
  text = demangle(spelled);
  constexpr std::string_view kStandIn = "decltype(nullptr)";
  for (size_t at = 0; (at = text.find(kStandIn, at)) != std::string::npos; at += 6) text.replace(at, kStandIn.size(), "__bf16");
  return text;
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
  // Widths in code points ("…" is one), as a table cell counts them, so that a
  // cut name keeps its hash within max_chars and the table's own cut never
  // drops it (two Cijk_… kernels differing after character 64 read alike).
  auto is_continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  size_t out_chars = 0;
  for (char c : out) out_chars += !is_continuation(c);
  if (!elided && out_chars <= max_chars) return out;
  const std::string hash = " #" + ShortHash(name);
  if (out_chars + hash.size() <= max_chars) return out + hash;
  const size_t keep = max_chars > hash.size() + 1 ? max_chars - hash.size() - 1 : 0;
  size_t end = 0, kept_chars = 0;
  for (; end < out.size(); ++end) {
    if (is_continuation(out[end])) continue;
    if (kept_chars == keep) break;
    ++kept_chars;
  }
  return out.substr(0, end) + "…" + hash;
}

}  // namespace pypto
