// TokenSequencePattern: the fusion rules' regexes matched token by token. The
// oracle is what the detector did before: std::regex over the "-tok-tok-…-"
// text, tried at each '-', anchored, the match ending before a '-', the
// next search from the match's end (sregex_iterator's non-overlapping order).
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/detectors/detector_util.h"
#include "analysis/detectors/token_sequence_pattern.h"

namespace pypto::detectors {
namespace {

using Span = std::pair<size_t, size_t>;  // [begin, end) of the matched tokens' text, separators between them included

std::vector<Span> RegexMatches(const std::string& text, std::string_view pattern) {
  const std::regex re(std::string("-(") + std::string(pattern) + ")(?=-)");
  std::vector<Span> spans;
  std::smatch m;
  size_t pos = text.find('-');
  while (pos != std::string::npos && pos < text.size()) {
    const auto flags = pos > 0 ? std::regex_constants::match_continuous | std::regex_constants::match_prev_avail
                               : std::regex_constants::match_continuous;
    if (std::regex_search(text.cbegin() + static_cast<std::ptrdiff_t>(pos), text.cend(), m, re, flags)) {
      const size_t length = static_cast<size_t>(m.length(0));
      if (length > 1) spans.emplace_back(pos + 1, pos + length);
      pos = text.find('-', pos + length);
    } else {
      pos = text.find('-', pos + 1);
    }
  }
  return spans;
}

std::vector<Span> TokenMatches(const std::vector<std::string>& tokens, const TokenSequencePattern& pattern) {
  std::vector<size_t> start;  // of each token in "-" + join(tokens, "-") + "-"
  size_t offset = 1;
  for (const std::string& t : tokens) {
    start.push_back(offset);
    offset += t.size() + 1;
  }
  std::vector<Span> spans;
  for (size_t i = 0; i < tokens.size();) {
    const std::optional<size_t> n = pattern.MatchAt(tokens, i);
    if (n && *n > 0) {
      spans.emplace_back(start[i], start[i + *n - 1] + tokens[i + *n - 1].size());
      i += *n;
    } else {
      ++i;
    }
  }
  return spans;
}

std::string Text(const std::vector<std::string>& tokens) {
  std::string text = "-";
  for (const std::string& t : tokens) text += t + "-";
  return text;
}

TEST(TokenSequencePattern, EveryFusionRuleIsReadAsWholeTokens) {
  const std::vector<std::string_view> rules = FusionRulePatterns();
  ASSERT_EQ(rules.size(), 21u);  // kPatterns of fusible_sequence.cc
  for (std::string_view rule : rules) EXPECT_TRUE(TokenSequencePattern::Parse(rule).has_value()) << rule;
}

TEST(TokenSequencePattern, RefusesWhatIsNotASequenceOfWholeTokens) {
  for (std::string_view bad : {
           "",             // nothing to match
           "mul{0,1}",     // a count on one character
           "mul?",         // other quantifiers
           "(add|mul",     // unclosed group
           "((add))",      // nested group
           "(add)*",       // unbounded
           "-add",         // a '-' before the first token
           "add-",         // and after the last
           "add--mul",     // two between tokens
           "add-(mul){0,1}-cat",   // "add--cat" when mul is skipped
           "(add-){0,1}-mul",      // "-mul" when add is skipped
           "(add|-mul)",   // alternatives that place the '-' differently
           "add.mul",      // any other regex syntax
           "(add){0,1}",   // can match no token at all
       }) {
    EXPECT_FALSE(TokenSequencePattern::Parse(bad).has_value()) << bad;
  }
  EXPECT_TRUE(TokenSequencePattern::Parse("(add-){0,2}mul").has_value());
  EXPECT_TRUE(TokenSequencePattern::Parse("add(-mul){2}").has_value());
}

TEST(TokenSequencePattern, GreedyCountsAndWholeTokensAsTheRegex) {
  // rms_norm's rule on "-pow-mean-add-rsqrt-mul-type_as-": the whole chain,
  // counts taken greedily; with "type_as2" last, the optional type_as is
  // left out (it is not the whole token), as the regex's look-ahead leaves it.
  const std::optional<TokenSequencePattern> rms =
      TokenSequencePattern::Parse("(pow-){0,1}(mean-){0,1}(add-){0,1}rsqrt-mul(-type_as){0,1}");
  ASSERT_TRUE(rms.has_value());
  const std::vector<std::string> chain = {"pow", "mean", "add", "rsqrt", "mul", "type_as"};
  EXPECT_EQ(rms->MatchAt(chain, 0), 6u);
  EXPECT_EQ(rms->MatchAt(chain, 2), 4u);
  EXPECT_EQ(rms->MatchAt(chain, 4), std::nullopt);
  const std::vector<std::string> near = {"rsqrt", "mul", "type_as2"};
  EXPECT_EQ(rms->MatchAt(near, 0), 2u);
  const std::vector<std::string> prefix = {"rsqrt", "mul_"};
  EXPECT_EQ(rms->MatchAt(prefix, 0), std::nullopt);
}

TEST(TokenSequencePattern, FindsWhatTheRegexFindsOnRandomStreams) {
  // Streams of the rules' own sequences (with their optional parts in and
  // out), near misses (a prefix, a suffix, an empty token) and other tokens,
  // one after the other in random order, then a few tokens swapped for
  // random ones; each rule's matches, in order, compared with the regex's.
  const std::vector<std::vector<std::string>> sequences = {
      {"pow", "mean", "add", "rsqrt", "mul", "type_as"}, {"rsqrt", "mul"}, {"mean", "rsqrt", "mul", "type_as"},
      {"chunk", "neg", "cat", "mul", "mul", "add"}, {"slice", "neg", "cat", "add"}, {"chunk", "neg", "cat", "mul", "add"},
      {"slice", "silu", "mul"}, {"chunk", "mul", "silu"}, {"slice", "sigmoid", "mul", "mul"},
      {"chunk", "mul", "sigmoid", "mul"}, {"slice", "mul", "mul", "sigmoid"},
      {"matmul", "add", "mul", "masked_fill_", "softmax", "dropout", "matmul"}, {"matmul", "softmax", "matmul"},
      {"matmul", "mul", "add", "softmax", "matmul"}, {"slice", "gelu", "mul"}, {"chunk", "mul", "gelu"},
      {"group_norm", "silu"}, {"mul", "mul", "add"}, {"add", "layer_norm"}, {"softmax", "mul", "masked_fill_"},
      {"softmax", "add"}, {"permute", "contiguous", "reshape"}, {"view", "transpose"},
      {"argsort", "argsort", "index_select"}, {"index_select", "mul", "reduce_sum"}};
  const std::vector<std::string> others = {"mul_", "add_", "type_as2", "", "linear", "ad", "rsqrt_", "mul", "add",
                                           "contiguous", "view", "softmax", "matmul", "silu", "neg", "cat"};
  std::mt19937 rng(20261206);
  std::vector<std::pair<std::string_view, TokenSequencePattern>> rules;
  for (std::string_view rule : FusionRulePatterns()) {
    std::optional<TokenSequencePattern> parsed = TokenSequencePattern::Parse(rule);
    ASSERT_TRUE(parsed.has_value()) << rule;
    rules.emplace_back(rule, std::move(*parsed));
  }
  std::vector<size_t> matches_per_rule(rules.size(), 0);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::string> tokens;
    for (size_t segments = 1 + rng() % 12; segments > 0; --segments) {
      if (rng() % 2 == 0) {
        const std::vector<std::string>& seq = sequences[rng() % sequences.size()];
        tokens.insert(tokens.end(), seq.begin(), seq.end());
      } else {
        for (size_t n = 1 + rng() % 3; n > 0; --n) tokens.push_back(others[rng() % others.size()]);
      }
    }
    for (size_t swaps = rng() % 3; swaps > 0; --swaps) tokens[rng() % tokens.size()] = others[rng() % others.size()];
    const std::string text = Text(tokens);
    for (size_t r = 0; r < rules.size(); ++r) {
      const std::vector<Span> want = RegexMatches(text, rules[r].first);
      ASSERT_EQ(TokenMatches(tokens, rules[r].second), want) << rules[r].first << " on " << text;
      matches_per_rule[r] += want.size();
    }
  }
  for (size_t r = 0; r < rules.size(); ++r) EXPECT_GT(matches_per_rule[r], 0u) << rules[r].first;
}

}  // namespace
}  // namespace pypto::detectors
