#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

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

// Attribute values: a number whose cell is already in a text form (its
// shortest form, or fixed notation) is not interned: its text is given back by
// formatting the number. Any other spelling is interned as written, so no
// export changes a cell's text.
TEST(AttributeText, NumbersInATextFormAreNotInternedAndReadBackAsWritten) {
  Profile p;
  const StrId key = p.Intern("aic_mac_ratio");
  const size_t strings_before = p.strings.size();
  struct Cell { std::string_view text; double number; bool stored_as_number; };
  const Cell cells[] = {
      {"0.599", 0.599, true},          // to_chars(0.599) == "0.599"
      {"81431", 81431, true},          // integral: no ".0"
      {"0.0", 0.0, true},              // fixed, 1 decimal
      {"30.250", 30.25, true},         // fixed, 3 decimals
      {"-1.000000", -1.0, true},       // fixed, 6 decimals
      {"1764246877073569.640", 1764246877073569.640, false},  // the double is ...569.750: kept as written
      {"1e16", 1e16, false},           // to_chars gives "1e+16"
      {"+1.5", 1.5, false},            // a sign no form writes
      {"1.5\t", 1.5, false},           // trailing tab (CANN's Start Time cells)
      {"0.1000000000000000055511151231257827021181583404541015625000", 0.1, false},  // 58 decimals
      {"N/A", std::nan(""), false},    // not a number
  };
  for (const Cell& c : cells) p.AddAttribute(OwnerKind::kDeviceTask, 0, key, c.text, c.number);
  for (size_t i = 0; i < std::size(cells); ++i) {
    EXPECT_EQ(p.AttributeText(i), cells[i].text) << i;
    EXPECT_EQ(p.attributes.text(i) == kEmptyStr, cells[i].stored_as_number) << i;
  }
  // Only the six cells kept as written were interned.
  EXPECT_EQ(p.strings.size(), strings_before + 6);
}

// The compact storage gives back every row as added: owners kept once per run
// of consecutive rows, text-only values boxed in the number's NaN, the text of
// a number not in its shortest form in a side list. Expected values are the
// ones passed to Add, row by row.
TEST(AttributeTable, ReadsBackEveryRowAsAdded) {
  struct Row { OwnerKind kind; uint32_t owner; StrId key; StrId text; double number; };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double negative_nan = -nan;  // another NaN bit pattern: read back as NaN
  const std::vector<Row> rows = {
      {OwnerKind::kDeviceTask, 7, 3, kEmptyStr, 0.599},            // shortest number
      {OwnerKind::kDeviceTask, 7, 4, 11, 0.0},                     // "+0": number and text
      {OwnerKind::kDeviceTask, 7, 5, 12, nan},                     // text only
      {OwnerKind::kHostOp, 7, 3, kEmptyStr, nan},                  // same owner, other kind: a new run
      {OwnerKind::kDeviceTask, 8, 3, 0xFFFFFFF0u, nan},            // a large string id
      {OwnerKind::kDeviceTask, 7, 6, kEmptyStr, -1e300},           // owner 7 again, later: a new run
      {OwnerKind::kDevice, 0, 9, kEmptyStr, negative_nan},
      {OwnerKind::kDevice, 0, 10, 13, 42},
  };
  AttributeTable table;
  for (const Row& r : rows) table.Add(r.kind, r.owner, r.key, r.text, r.number);
  ASSERT_EQ(table.size(), rows.size());
  EXPECT_EQ(table.run_count(), 5u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(table.owner_kind(i), rows[i].kind) << i;
    EXPECT_EQ(table.owner(i), rows[i].owner) << i;
    EXPECT_EQ(table.key(i), rows[i].key) << i;
    EXPECT_EQ(table.text(i), rows[i].text) << i;
    if (std::isnan(rows[i].number)) EXPECT_TRUE(std::isnan(table.number(i))) << i;
    else EXPECT_EQ(table.number(i), rows[i].number) << i;
  }
  size_t visited = 0;
  table.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    EXPECT_EQ(i, visited++);
    EXPECT_EQ(kind, rows[i].kind) << i;
    EXPECT_EQ(owner, rows[i].owner) << i;
  });
  EXPECT_EQ(visited, rows.size());

  AttributeTable same;
  for (const Row& r : rows) same.Add(r.kind, r.owner, r.key, r.text, r.number);
  EXPECT_TRUE(same == table);
  same.Add(OwnerKind::kDevice, 0, 10, kEmptyStr, 1);
  EXPECT_FALSE(same == table);
  same.Clear();
  EXPECT_EQ(same.size(), 0u);
  EXPECT_EQ(same.run_count(), 0u);
}

// Keys are 2-byte slots until a table has more than 65536 distinct keys (or a
// key id too large to index); then every row keeps its key id, the rows
// added before included. Expected: the keys as added, row by row.
TEST(AttributeTable, ManyDistinctKeysSwitchToKeyIdsPerRow) {
  for (const bool sparse : {false, true}) {
    AttributeTable table;
    std::vector<StrId> keys;
    for (uint32_t i = 0; i < 70000; ++i) keys.push_back(sparse && i == 3 ? (StrId{1} << 30) : 1 + i % 69000);
    for (uint32_t i = 0; i < keys.size(); ++i) table.Add(OwnerKind::kDevice, 0, keys[i], kEmptyStr, i);
    ASSERT_EQ(table.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(table.key(i), keys[i]) << "row " << i << " sparse " << sparse;
    EXPECT_EQ(table.number(69999), 69999);
  }
  AttributeTable few;  // 4 keys: slots
  for (StrId k : {7u, 9u, 7u, 3u, 9u, 11u}) few.Add(OwnerKind::kStep, 1, k, kEmptyStr, 0);
  EXPECT_EQ(few.key(0), 7u);
  EXPECT_EQ(few.key(4), 9u);
  EXPECT_EQ(few.key(5), 11u);
}

}  // namespace
}  // namespace pypto
