#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <string>

#include "model/profile.h"
#include "model/string_table.h"

namespace pypto {
namespace {

TEST(StringTable, EmptyStringIsIdZero) {
  StringTable table;
  EXPECT_EQ(table.Intern(""), kEmptyStr);
  EXPECT_EQ(table.Get(kEmptyStr), "");
}

TEST(StringTable, InterningIsIdempotentAndStable) {
  StringTable table;
  StrId a = table.Intern("aten::mm");
  StrId b = table.Intern("aten::addmm");
  EXPECT_NE(a, b);
  EXPECT_EQ(table.Intern(std::string("aten::mm")), a);
  // Grow far past the initial slot count; earlier views must stay valid.
  std::string_view first = table.Get(a);
  for (int i = 0; i < 100000; ++i) table.Intern("name_" + std::to_string(i));
  EXPECT_EQ(table.Get(a), "aten::mm");
  EXPECT_EQ(first.data(), table.Get(a).data());
  EXPECT_EQ(table.Find("name_99999"), table.Intern("name_99999"));
  EXPECT_EQ(table.Find("never interned"), kEmptyStr);
  EXPECT_EQ(table.size(), 100003u);
}

TEST(StringTable, LargeStringsAreStoredWhole) {
  StringTable table;
  std::string big(1 << 20, 'x');
  StrId id = table.Intern(big);
  EXPECT_EQ(table.Get(id), big);
  EXPECT_EQ(table.Intern(big), id);
}

TEST(Profile, TracksAreKeyedByOpaqueTokens) {
  Profile p;
  uint32_t t1 = p.TrackFor("1234", "stream 7", TrackKind::kDeviceStream);
  uint32_t t2 = p.TrackFor("1234", "7", TrackKind::kDeviceStream);
  EXPECT_NE(t1, t2);
  EXPECT_EQ(p.TrackFor("1234", "stream 7", TrackKind::kHostThread), t1);
  EXPECT_EQ(p.tracks.size(), 2u);
}

TEST(Profile, DataLossKeepsFirstLocationAndCounts) {
  Profile p;
  p.CountLoss(LossKind::kTextReplaced, "invalid UTF-8", "a.json: byte 10");
  p.CountLoss(LossKind::kTextReplaced, "invalid UTF-8", "a.json: byte 99", 2);
  EXPECT_EQ(p.data_loss["invalid UTF-8"].count, 3u);
  EXPECT_EQ(p.data_loss["invalid UTF-8"].first_location, "a.json: byte 10");
  EXPECT_EQ(p.data_loss["invalid UTF-8"].kind, LossKind::kTextReplaced);
  EXPECT_EQ(p.TotalDataLoss(), 3u);
}

TEST(Profile, LossKindsHaveNamesSeveritiesAndDescriptions) {
  // Every kind: a stable name that parses back, a severity, a description.
  for (size_t i = 0; i < kLossKindCount; ++i) {
    const LossKind kind = static_cast<LossKind>(i);
    const LossKindInfo& info = DescribeLoss(kind);
    EXPECT_EQ(ParseLossKind(info.name), kind) << info.name;
    EXPECT_GT(std::string(info.description).size(), 20u) << info.name;
  }
  EXPECT_EQ(DescribeLoss(LossKind::kRowSkipped).severity, LossSeverity::kHigh);
  EXPECT_EQ(DescribeLoss(LossKind::kTextReplaced).severity, LossSeverity::kLow);
  EXPECT_STREQ(LossSeverityName(DescribeLoss(LossKind::kLinkLost).severity), "medium");
  EXPECT_FALSE(ParseLossKind("nope").has_value());
}

// Attribute values: a number whose cell is already its shortest form is not
// interned (its text is given back by formatting the number); any other
// spelling is interned as written, so no export changes a cell's text.
TEST(AttributeText, ShortestNumbersAreNotInternedAndReadBackAsWritten) {
  Profile p;
  const StrId key = p.Intern("aic_mac_ratio");
  const size_t strings_before = p.strings.size();
  struct Cell { std::string_view text; double number; bool stored_as_number; };
  const Cell cells[] = {
      {"0.599", 0.599, true},          // to_chars(0.599) == "0.599"
      {"81431", 81431, true},          // integral: no ".0"
      {"0.0", 0.0, false},             // to_chars gives "0": kept as written
      {"30.250", 30.25, false},        // trailing zero: kept as written
      {"1e16", 1e16, false},           // to_chars gives "1e+16"
      {"N/A", std::nan(""), false},    // not a number
  };
  for (const Cell& c : cells) p.attributes.Add(OwnerKind::kDeviceTask, 0, key, p.AttributeTextId(c.text, c.number), c.number);
  for (size_t i = 0; i < std::size(cells); ++i) {
    EXPECT_EQ(p.AttributeText(i), cells[i].text) << i;
    EXPECT_EQ(p.attributes.text[i] == kEmptyStr, cells[i].stored_as_number) << i;
  }
  // Only the four cells kept as written were interned.
  EXPECT_EQ(p.strings.size(), strings_before + 4);
}

}  // namespace
}  // namespace pypto
