// Sequence patterns over a stream of tokens, as msprof-analyze's fusion rules
// (timeline_fusion_ops.yaml) write them: regular expressions over the text
// "-tok-tok-…-", each token an op name, such as
//   "(pow-){0,1}(mean-){0,1}(add-){0,1}rsqrt-mul(-type_as){0,1}".
// Those rules use only whole tokens, groups of alternative tokens and {m,n}
// counts, with '-' between tokens; TokenSequencePattern reads that subset
// and matches it token by token, finding what std::regex_search on the text
// finds (greedy counts, alternatives in order, the match ending before a
// '-'). std::regex tried each position character by character, a fifth of a
// diagnosis on a long trace and still ~85 ms on a 300 MB one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pypto::detectors {

class TokenSequencePattern {
 public:
  // nullopt when `pattern` uses anything beyond words, '|' alternatives in
  // one level of parentheses, {m,n} / {m} counts and '-' separators.
  static std::optional<TokenSequencePattern> Parse(std::string_view pattern);

  // The tokens matched from tokens[first] on (how many), or nullopt when the
  // pattern does not match there. `Token` converts to std::string_view.
  template <typename Tokens>
  std::optional<size_t> MatchAt(const Tokens& tokens, size_t first) const {
    const std::optional<size_t> end = MatchFrom(0, 0, first, [&](size_t i, std::string_view want) {
      return i < tokens.size() && std::string_view(tokens[i]) == want;
    });
    if (!end) return std::nullopt;
    return *end - first;
  }

 private:
  struct Element {
    std::vector<std::string> alternatives;
    int min_count = 1;
    int max_count = 1;
  };
  // Backtracking as ECMAScript regex does: another repetition of an element
  // before the next element, each alternative in order.
  template <typename Equal>
  std::optional<size_t> MatchFrom(size_t element, int repeats, size_t token, const Equal& equal) const {
    if (element == elements_.size()) return token;
    const Element& e = elements_[element];
    if (repeats < e.max_count) {
      for (const std::string& alternative : e.alternatives) {
        if (!equal(token, alternative)) continue;
        if (std::optional<size_t> end = MatchFrom(element, repeats + 1, token + 1, equal)) return end;
      }
    }
    if (repeats >= e.min_count) return MatchFrom(element + 1, 0, token, equal);
    return std::nullopt;
  }
  std::vector<Element> elements_;
};

}  // namespace pypto::detectors
