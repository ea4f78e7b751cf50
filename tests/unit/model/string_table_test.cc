#include <algorithm>
#include <array>
#include <cstring>
#include <gtest/gtest.h>

#include <random>

#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "model/plain_decimal.h"
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
// of consecutive rows, text-only values as their string id, the text of a
// number not in its shortest form in a side list. Expected values are the
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
  // ForEachRowOf visits the rows of one owner kind, in order, and no other:
  // expected, the rows of `rows` with that kind.
  for (OwnerKind kind : {OwnerKind::kDeviceTask, OwnerKind::kHostOp, OwnerKind::kDevice, OwnerKind::kTrack}) {
    std::vector<size_t> expected, seen;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].kind == kind) expected.push_back(i);
    table.ForEachRowOf(kind, [&](size_t i, uint32_t owner) {
      seen.push_back(i);
      EXPECT_EQ(owner, rows[i].owner) << i;
    });
    EXPECT_EQ(seen, expected) << static_cast<int>(kind);
  }

  AttributeTable same;
  for (const Row& r : rows) same.Add(r.kind, r.owner, r.key, r.text, r.number);
  EXPECT_TRUE(same == table);
  same.Add(OwnerKind::kDevice, 0, 10, kEmptyStr, 1);
  EXPECT_FALSE(same == table);
  same.Clear();
  EXPECT_EQ(same.size(), 0u);
  EXPECT_EQ(same.run_count(), 0u);
}

// AddDecimal stores the row Add stores for the number mantissa / 10^scale
// with the same text form: the tables are equal row for row (operator==
// compares the storage, which is unique for a row sequence), for every form
// a caller may pass, shortest and fixed with the scale's decimals (the fast
// path) and every other. Mantissas: the edges (0, ±1, ±(2^31 - 1), INT32_MIN,
// multiples of 10, whose shortest text would not end in their last digit)
// and random ones of every length; scales 0..15.
TEST(AttributeTable, AddDecimalStoresWhatAddStores) {
  std::vector<int32_t> mantissas = {0, 1, -1, 7, 10, -10, 100, 120, 2147483647, -2147483647,
                                    std::numeric_limits<int32_t>::min(), 2147483640, 999999999, 1000000000};
  std::mt19937 rng(61206);
  for (int i = 0; i < 400; ++i) {
    const int32_t magnitude = static_cast<int32_t>(rng() % 2147483647u) >> (rng() % 31);
    mantissas.push_back(rng() % 2 ? magnitude : -magnitude);
  }
  for (int scale = 0; scale <= AttributeTable::kMaxDecimalTextScale; ++scale) {
    for (const uint8_t form : {kShortestNumberText, static_cast<uint8_t>(1 + scale), static_cast<uint8_t>(2 + scale),
                               static_cast<uint8_t>(1), kNoNumberTextForm}) {
      AttributeTable by_add, by_decimal;
      uint32_t owner = 0;
      for (const int32_t m : mantissas) {
        const double value = static_cast<double>(m) / kExactPowersOfTen[scale];
        by_add.Add(OwnerKind::kDeviceTask, owner / 3, 2 + owner % 3, kEmptyStr, value, form);
        by_decimal.AddDecimal(OwnerKind::kDeviceTask, owner / 3, 2 + owner % 3, m, scale, form);
        ++owner;
      }
      ASSERT_TRUE(by_add == by_decimal) << "scale " << scale << " form " << int(form);
      for (size_t row = 0; row < by_add.size(); ++row) {
        const double a = by_add.number(row), b = by_decimal.number(row);
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << row;
      }
    }
  }
}

// Numbers: a decimal m / 10^s with a 32-bit m is kept in 4 bytes, any other
// number whole in a side list; both must read back bit for bit, with the text
// form given to Add. Expected: the values passed to Add (the whole ones are
// those no 32-bit mantissa over 10^0..10^15 gives back exactly).
TEST(AttributeTable, EveryNumberReadsBackBitForBit) {
  struct Number { double value; uint8_t form; };
  const Number numbers[] = {
      {0.599, kShortestNumberText}, {81431, kShortestNumberText}, {0.0, 1 + 1},  // "0.0"
      {0.0, 1 + 3},                                                                // "0.000"
      {-0.0, kShortestNumberText},      // -0.0: 0 / 10^s is +0.0, so kept whole
      {30.25, 1 + 3},                   // "30.250": mantissa 30250, scale 3
      {1.5e-5, kShortestNumberText},    // scale 6
      {2147483647, kShortestNumberText}, {-2147483647, kShortestNumberText},  // the int32 limits
      {2147483648.0, kShortestNumberText},         // 2^31: whole
      {1764246877073569.75, 1 + 3},                // a timestamp in µs: whole, fixed 3 decimals
      {0.1 + 0.2, kShortestNumberText},            // 0.30000000000000004: 17 digits, whole
      {1e300, kShortestNumberText}, {-1e-300, kShortestNumberText},
      {std::numeric_limits<double>::infinity(), kShortestNumberText},
      {0.125, 1 + 20},                  // 20 decimals: beyond the kept scales, whole with its form
      {1.2, 1 + 40},                    // the longest fixed form
  };
  AttributeTable table;
  for (const Number& n : numbers) table.Add(OwnerKind::kDeviceTask, 0, 1, kEmptyStr, n.value, n.form);
  for (size_t i = 0; i < std::size(numbers); ++i) {
    const double back = table.number(i);
    EXPECT_EQ(std::memcmp(&back, &numbers[i].value, sizeof back), 0) << i << ": " << back;
    EXPECT_EQ(table.number_text_form(i), numbers[i].form) << i;
    EXPECT_EQ(table.text(i), kEmptyStr) << i;
  }
  // A text form no table writes (not 1..40 decimals) reads as the shortest.
  table.Add(OwnerKind::kDeviceTask, 0, 1, kEmptyStr, 2.5, 200);
  EXPECT_EQ(table.number_text_form(table.size() - 1), kShortestNumberText);
  EXPECT_EQ(table.number(table.size() - 1), 2.5);

  // A kernel_details-like table (ratios with 3 decimals, cycle counts): every
  // value compact, so a row costs its value (4 bytes), key slot (1) and
  // encoding (1); 10,000 rows, two for each owner.
  AttributeTable pmu;
  constexpr size_t kRows = 10000;
  pmu.Reserve(kRows);
  for (size_t i = 0; i < kRows; ++i)
    pmu.Add(OwnerKind::kDeviceTask, static_cast<uint32_t>(i / 2), 1 + i % 2, kEmptyStr,
            i % 2 ? static_cast<double>(i * 37) : static_cast<double>(i % 1000) / 1000, i % 2 ? 0 : 1 + 3);
  for (size_t i = 0; i < kRows; ++i)
    ASSERT_EQ(pmu.number(i), i % 2 ? static_cast<double>(i * 37) : static_cast<double>(i % 1000) / 1000) << i;
  // A run keeps its begin's low 32 bits; its owner (the run index) and kind
  // (device task) keep nothing (OwnerRunTable).
  const size_t runs = kRows / 2, run_bytes = 4;
  EXPECT_LE(pmu.MemoryBytes(), kRows * (4 + 1 + 1) + runs * run_bytes * 2 + 1024);  // runs grow by doubling
}

// AppendFrom copies a staged table's rows as they are stored; the table must
// end equal (operator==: the storage, unique for a row sequence) to one that
// got the same rows through Add, each row read back from the staged table and
// its key, text and owner mapped by hand. Rows: every kind of value (decimals
// shortest and fixed, whole numbers, -0.0, numbers with their text, text
// alone, neither), owners of every kind (host ops and device tasks moved by
// their bases, the others not), 300 keys (past the one-byte pair codes) in a
// destination that already holds rows; the string map is a permutation, so a
// wrong or missing mapping shows.
TEST(AttributeTable, AppendFromGivesTheTableAddGives) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double values[] = {0.599, 81431, 0.0, -0.0, 30.25, 2147483648.0, 1764246877073569.75, 0.1 + 0.2,
                           1e300, -1.5e-5, nan};
  const uint8_t forms[] = {kShortestNumberText, 1 + 3, 1 + 1, kNoNumberTextForm, 1 + 20};
  const OwnerKind kinds[] = {OwnerKind::kHostOp, OwnerKind::kDeviceTask, OwnerKind::kTrack, OwnerKind::kDevice,
                             OwnerKind::kStep};
  constexpr StrId kStrings = 1000;
  std::mt19937 rng(71207);
  std::vector<StrId> string_map(kStrings);
  for (StrId id = 0; id < kStrings; ++id) string_map[id] = id;
  std::shuffle(string_map.begin() + 1, string_map.end(), rng);  // the empty string stays 0

  AttributeTable staged;
  for (int i = 0; i < 5000; ++i) {
    const OwnerKind kind = kinds[rng() % std::size(kinds)];
    const uint32_t owner = static_cast<uint32_t>(i / 4 + rng() % 2);
    const StrId key = 1 + static_cast<StrId>(rng() % 300);
    const StrId text = rng() % 3 == 0 ? 301 + static_cast<StrId>(rng() % 600) : kEmptyStr;
    staged.Add(kind, owner, key, text, values[rng() % std::size(values)], forms[rng() % std::size(forms)]);
  }
  constexpr uint32_t kHostBase = 1000, kTaskBase = 77;
  for (int prefilled : {0, 40}) {
    AttributeTable by_add, by_append;
    for (int i = 0; i < prefilled; ++i) {
      by_add.Add(OwnerKind::kDeviceTask, i, 1 + i % 7, kEmptyStr, i * 0.5);
      by_append.Add(OwnerKind::kDeviceTask, i, 1 + i % 7, kEmptyStr, i * 0.5);
    }
    staged.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
      if (kind == OwnerKind::kHostOp) owner += kHostBase;
      if (kind == OwnerKind::kDeviceTask) owner += kTaskBase;
      by_add.Add(kind, owner, string_map[staged.key(i)], string_map[staged.text(i)], staged.number(i),
                 staged.number_text_form(i));
    });
    by_append.AppendFrom(staged, &string_map, [&](OwnerKind kind, uint32_t owner) {
      if (kind == OwnerKind::kHostOp) return owner + kHostBase;
      return kind == OwnerKind::kDeviceTask ? owner + kTaskBase : owner;
    });
    ASSERT_EQ(by_append.size(), by_add.size());
    ASSERT_TRUE(by_append == by_add) << "prefilled " << prefilled;
  }
  // Owners given run by run (the strings as they are): the same as Add with
  // each owner mapped, here reversed (owner o -> 5000 - o) whatever its kind.
  AttributeTable by_add_owned, by_append_owned;
  staged.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    by_add_owned.Add(kind, 5000 - owner, staged.key(i), staged.text(i), staged.number(i),
                     staged.number_text_form(i));
  });
  by_append_owned.AppendFrom(staged, nullptr, [](OwnerKind, uint32_t owner) { return 5000 - owner; });
  EXPECT_TRUE(by_append_owned == by_add_owned);
  // The same in a table with more than 2^16 distinct keys (key ids a row).
  AttributeTable wide_staged, wide_add, wide_append;
  std::vector<StrId> identity(70100);
  for (StrId id = 0; id < identity.size(); ++id) identity[id] = id;
  for (StrId key = 1; key < 70000; key += 7) wide_staged.Add(OwnerKind::kStep, key, key, kEmptyStr, key * 0.25);
  wide_staged.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    wide_add.Add(kind, owner, wide_staged.key(i), wide_staged.text(i), wide_staged.number(i),
                 wide_staged.number_text_form(i));
  });
  wide_append.AppendFrom(wide_staged, &identity, [](OwnerKind, uint32_t owner) { return owner; });
  EXPECT_TRUE(wide_append == wide_add);
}

// Id columns keep 4 bytes a row while every id fits in 32 bits and widen for
// every row at the first that does not, by push_back or by set. Expected: the
// ids as written, kNoId included; equality by value whatever the width.
TEST(IdColumn, ReadsBackEveryIdAcrossTheWidening) {
  const int64_t int32_max = std::numeric_limits<int32_t>::max();
  const int64_t int32_min = std::numeric_limits<int32_t>::min();
  IdColumn ids;
  const std::vector<int64_t> narrow = {0, kNoId, 17, int32_max, int32_min + 1, -5};
  for (int64_t id : narrow) ids.push_back(id);
  const size_t narrow_bytes = ids.MemoryBytes();
  for (size_t i = 0; i < narrow.size(); ++i) EXPECT_EQ(ids[i], narrow[i]) << i;
  IdColumn copy;
  copy.Append(ids);
  EXPECT_TRUE(copy == ids);

  ids.push_back(int32_min);  // INT32_MIN is the narrow marker of kNoId: kept wide
  ids.set(1, int32_max + 1);
  std::vector<int64_t> all = narrow;
  all.push_back(int32_min);
  all[1] = int32_max + 1;
  ASSERT_EQ(ids.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(ids[i], all[i]) << i;
  EXPECT_GT(ids.MemoryBytes(), narrow_bytes);

  // A narrow column and a wide one with the same ids are equal.
  IdColumn narrow_again, wide_again;
  for (int64_t id : {3, 4}) narrow_again.push_back(id);
  wide_again.push_back(int64_t{1} << 40);
  wide_again.set(0, 3);
  wide_again.push_back(4);
  EXPECT_TRUE(narrow_again == wide_again);
  wide_again.Append(copy);
  narrow_again.Append(copy);
  EXPECT_TRUE(narrow_again == wide_again);
  EXPECT_EQ(wide_again[3], kNoId);
  narrow_again.clear();
  EXPECT_EQ(narrow_again.size(), 0u);
}

// Launch dimensions are kept once per distinct (grid, block); each task reads
// back the dimensions it was added with. Expected: the rows as added; three
// distinct pairs (zeros included) among five tasks.
TEST(DeviceTaskTable, LaunchDimsAreKeptOncePerDistinctPairAndReadBackPerTask) {
  DeviceTaskTable tasks;
  const std::array<int32_t, 3> dims[5][2] = {
      {{0, 0, 0}, {0, 0, 0}},       // an Ascend task: none
      {{50, 1, 1}, {256, 1, 1}},
      {{50, 1, 1}, {256, 1, 1}},    // the same again
      {{50, 1, 1}, {128, 2, 1}},    // same grid, other block
      {{0, 0, 0}, {0, 0, 0}},
  };
  for (const auto& d : dims) {
    DeviceTaskRow row;
    std::copy(d[0].begin(), d[0].end(), row.grid);
    std::copy(d[1].begin(), d[1].end(), row.block);
    tasks.Add(row);
  }
  for (size_t i = 0; i < std::size(dims); ++i) {
    EXPECT_EQ(tasks.grid(i), dims[i][0]) << i;
    EXPECT_EQ(tasks.block(i), dims[i][1]) << i;
  }
  EXPECT_EQ(tasks.launch_dims_table.size(), 3u);
  EXPECT_EQ(tasks.launch_dims[0], 0u);  // id 0 is all zeros
  EXPECT_EQ(tasks.launch_dims[1], tasks.launch_dims[2]);
  tasks.launch_dims_table.Clear();
  EXPECT_EQ(tasks.launch_dims_table.size(), 1u);
  EXPECT_EQ(tasks.launch_dims_table.IdOf({{50, 1, 1}, {128, 2, 1}}), 1u);
}

// Ascend facts are kept once per distinct set among recent tasks; every task
// reads back the facts it was added with. Expected: the rows as added (tasks
// 0 and 2 share their facts, task 3 has none, task 4 differs by one shape).
TEST(DeviceTaskTable, RepeatedAscendFactsShareOneDetailRow) {
  DeviceTaskTable tasks;
  auto row_with = [](int32_t block_dim, StrId op_type, StrId shapes) {
    DeviceTaskRow row;
    row.block_dim = block_dim;
    row.op_type = op_type;
    row.input_shapes = shapes;
    return row;
  };
  const DeviceTaskRow rows[] = {row_with(24, 7, 8), row_with(40, 9, 10), row_with(24, 7, 8), DeviceTaskRow{},
                                row_with(24, 7, 11)};
  for (const DeviceTaskRow& row : rows) tasks.Add(row);
  for (size_t i = 0; i < std::size(rows); ++i) {
    EXPECT_EQ(tasks.block_dim(i), rows[i].block_dim) << i;
    EXPECT_EQ(tasks.op_type(i), rows[i].op_type) << i;
    EXPECT_EQ(tasks.input_shapes(i), rows[i].input_shapes) << i;
    EXPECT_EQ(tasks.output_formats(i), kEmptyStr) << i;
  }
  EXPECT_EQ(tasks.detail[0], tasks.detail[2]);
  EXPECT_EQ(tasks.detail[3], kNoIndex);
  EXPECT_EQ(tasks.details.size(), 3u);
  // New facts for a task (as kernel_details enriches a trace_view task): its
  // own row changes, the task that shared the old one keeps its facts.
  tasks.detail[2] = tasks.details.RowOf({48, -1, 12, 8, kEmptyStr, kEmptyStr, kEmptyStr, kEmptyStr, kEmptyStr});
  EXPECT_EQ(tasks.block_dim(2), 48);
  EXPECT_EQ(tasks.op_type(2), 12u);
  EXPECT_EQ(tasks.block_dim(0), 24);
  EXPECT_EQ(tasks.op_type(0), 7u);
  tasks.details.Clear();
  EXPECT_EQ(tasks.details.size(), 0u);
  EXPECT_EQ(tasks.details.RowOf({24, -1, 7, 8, kEmptyStr, kEmptyStr, kEmptyStr, kEmptyStr, kEmptyStr}), 0);
}

// Keys are 1-byte slots up to 256 distinct keys, then 2-byte slots up to
// 65536 (or until a key id too large to index); then every row keeps its key
// id, the rows added before included. Expected: the keys as added, row by row.
// A row's key and encoding share one byte while the table has at most 256
// distinct (key, encoding) pairs; the 257th pair moves every row to a key
// slot and an encoding byte. 40 keys, each written in 9 ways (shortest with
// 0..3 decimals, fixed with 1..3 decimals, a text, a number with its text):
// the last is stored as the first (a whole number, shortest), so 8 encodings
// a key, 320 pairs. Rows go way by way, so the 257th pair is the 17th key's
// third fixed form, with rows of ways 0-5 before it and of 6-8 after it, and
// a second pass after that. Every row must read back its key, its number bit
// for bit, its text and its text form.
TEST(AttributeTable, KeyAndEncodingShareAByteUntilThe257thPair) {
  struct Row { StrId key; StrId text; double number; uint8_t form; };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Row> rows;
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t way = 0; way < 9; ++way) {
      for (uint32_t k = 0; k < 40; ++k) {
        const StrId key = 100 + k;
        const double mantissa = 1 + (k + pass) % 7;  // last digit not 0: shortest keeps the scale
        switch (way) {
          case 0: case 1: case 2: case 3:
            rows.push_back({key, kEmptyStr, mantissa / std::pow(10.0, way), kShortestNumberText}); break;
          case 4: case 5: case 6:  // fixed, with way - 3 decimals ("1.0", "1.00", "1.000")
            rows.push_back({key, kEmptyStr, mantissa, static_cast<uint8_t>(1 + (way - 3))}); break;
          case 7: rows.push_back({key, 500 + k, nan, kShortestNumberText}); break;
          default: rows.push_back({key, 700 + k, mantissa, kShortestNumberText}); break;
        }
      }
    }
  }
  AttributeTable table;
  for (size_t i = 0; i < rows.size(); ++i)
    table.Add(OwnerKind::kDeviceTask, static_cast<uint32_t>(i / 25), rows[i].key, rows[i].text, rows[i].number,
              rows[i].form);
  ASSERT_EQ(table.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(table.key(i), rows[i].key) << i;
    EXPECT_EQ(table.text(i), rows[i].text) << i;
    EXPECT_EQ(table.owner(i), i / 25) << i;
    if (std::isnan(rows[i].number)) {
      EXPECT_TRUE(std::isnan(table.number(i))) << i;
    } else {
      EXPECT_EQ(table.number(i), rows[i].number) << i;
      EXPECT_EQ(table.number_text_form(i), rows[i].text == kEmptyStr ? rows[i].form : kShortestNumberText) << i;
    }
  }
  // The same rows give the same storage; the first 256 pairs' rows alone too.
  AttributeTable same;
  for (size_t i = 0; i < rows.size(); ++i)
    same.Add(OwnerKind::kDeviceTask, static_cast<uint32_t>(i / 25), rows[i].key, rows[i].text, rows[i].number,
             rows[i].form);
  EXPECT_TRUE(same == table);
}

TEST(AttributeTable, ManyDistinctKeysSwitchToKeyIdsPerRow) {
  for (const uint32_t distinct : {256u, 257u, 300u}) {  // the last byte slot, the first 2-byte one
    AttributeTable table;
    for (uint32_t i = 0; i < 2 * distinct; ++i) table.Add(OwnerKind::kDevice, 0, 5 + i % distinct, kEmptyStr, i);
    for (uint32_t i = 0; i < 2 * distinct; ++i) ASSERT_EQ(table.key(i), 5 + i % distinct) << i << " of " << distinct;
  }
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
