#include "analysis/detectors/token_sequence_pattern.h"

#include <cctype>

namespace pypto::detectors {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Counts above this are not enumerated by the separator check (the rules use {0,1} and {0,2}).
constexpr int kMaxCount = 8;

struct ParsedElement {
  std::vector<std::string> alternatives;
  bool leading_dash = false;   // every alternative written "-word"
  bool trailing_dash = false;  // every alternative written "word-"
  int min_count = 1;
  int max_count = 1;
  int bare_dashes_before = 0;
};

// Reads "{m}" or "{m,n}" at pattern[i]; moves i past it.
bool ReadCount(std::string_view pattern, size_t& i, int& min_count, int& max_count) {
  auto read_int = [&](int& value) {
    const size_t from = i;
    value = 0;
    while (i < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[i])) && value <= kMaxCount)
      value = value * 10 + (pattern[i++] - '0');
    return i > from && value <= kMaxCount;
  };
  ++i;  // '{'
  if (!read_int(min_count)) return false;
  max_count = min_count;
  if (i < pattern.size() && pattern[i] == ',') {
    ++i;
    if (!read_int(max_count)) return false;
  }
  if (i >= pattern.size() || pattern[i] != '}' || max_count < min_count || max_count == 0) return false;
  ++i;
  return true;
}

// Whether every choice of counts writes its tokens with exactly one '-'
// between two of them and none before the first or after the last: then a
// match of the regex is a run of whole tokens and nothing else, and at least
// one token. Enumerates the counts (the rules have a few elements of 0-2).
bool DashesSeparateTokens(const std::vector<ParsedElement>& elements, int bare_dashes_after) {
  std::vector<int> counts;
  for (const ParsedElement& e : elements) counts.push_back(e.min_count);
  while (true) {
    std::string text;
    for (size_t k = 0; k < elements.size(); ++k) {
      text.append(static_cast<size_t>(elements[k].bare_dashes_before), '-');
      for (int r = 0; r < counts[k]; ++r) {
        if (elements[k].leading_dash) text += '-';
        text += 'x';
        if (elements[k].trailing_dash) text += '-';
      }
    }
    text.append(static_cast<size_t>(bare_dashes_after), '-');
    if (text.empty() || text.front() == '-' || text.back() == '-' || text.find("--") != std::string::npos) return false;
    size_t k = 0;
    while (k < counts.size() && counts[k] == elements[k].max_count) counts[k] = elements[k].min_count, ++k;
    if (k == counts.size()) return true;
    ++counts[k];
  }
}

}  // namespace

std::optional<TokenSequencePattern> TokenSequencePattern::Parse(std::string_view pattern) {
  std::vector<ParsedElement> parsed;
  int bare_dashes = 0;
  size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '-') {
      ++bare_dashes;
      ++i;
      continue;
    }
    ParsedElement e;
    e.bare_dashes_before = bare_dashes;
    bare_dashes = 0;
    if (IsWordChar(c)) {
      const size_t from = i;
      while (i < pattern.size() && IsWordChar(pattern[i])) ++i;
      e.alternatives.emplace_back(pattern.substr(from, i - from));
      if (i < pattern.size() && pattern[i] != '-' && pattern[i] != '(') return std::nullopt;  // a count on one character
    } else if (c == '(') {
      const size_t close = pattern.find(')', i);
      if (close == std::string_view::npos) return std::nullopt;
      std::string_view group = pattern.substr(i + 1, close - i - 1);
      for (size_t from = 0;;) {
        const size_t bar = std::min(group.find('|', from), group.size());
        std::string_view alternative = group.substr(from, bar - from);
        const bool leading = alternative.starts_with('-');
        if (leading) alternative.remove_prefix(1);
        const bool trailing = alternative.ends_with('-');
        if (trailing) alternative.remove_suffix(1);
        if (alternative.empty()) return std::nullopt;
        for (char a : alternative)
          if (!IsWordChar(a)) return std::nullopt;
        if (e.alternatives.empty()) {
          e.leading_dash = leading;
          e.trailing_dash = trailing;
        } else if (leading != e.leading_dash || trailing != e.trailing_dash) {
          return std::nullopt;
        }
        e.alternatives.emplace_back(alternative);
        if (bar == group.size()) break;
        from = bar + 1;
      }
      i = close + 1;
      if (i < pattern.size() && pattern[i] == '{' && !ReadCount(pattern, i, e.min_count, e.max_count))
        return std::nullopt;
      if (i < pattern.size() && pattern[i] != '-' && pattern[i] != '(' && !IsWordChar(pattern[i])) return std::nullopt;
    } else {
      return std::nullopt;
    }
    parsed.push_back(std::move(e));
  }
  if (parsed.empty() || !DashesSeparateTokens(parsed, bare_dashes)) return std::nullopt;
  TokenSequencePattern result;
  for (ParsedElement& e : parsed) result.elements_.push_back({std::move(e.alternatives), e.min_count, e.max_count});
  return result;
}

}  // namespace pypto::detectors
