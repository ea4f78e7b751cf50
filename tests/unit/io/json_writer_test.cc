// JSON writer: exact microseconds from ns, string escaping and UTF-8 repair,
// checked against hand-written expectations and by parsing the output back.
#include "io/json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <string>

namespace pypto::io {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Quoted(std::string_view text) {
  std::string out;
  io::AppendJsonString(&out, text);
  return out;
}

// Parses a JSON string literal back (simdjson validates UTF-8 and escapes).
std::string ParseBack(const std::string& literal) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(literal);
  std::string_view value;
  auto error = parser.parse(padded).get(value);
  EXPECT_EQ(error, simdjson::SUCCESS) << literal;
  return std::string(value);
}

TEST(MicrosFromNs, ThreeFractionDigitsExactly) {
  EXPECT_EQ(io::MicrosFromNs(0), "0.000");
  EXPECT_EQ(io::MicrosFromNs(1), "0.001");
  EXPECT_EQ(io::MicrosFromNs(999), "0.999");
  EXPECT_EQ(io::MicrosFromNs(1000), "1.000");
  EXPECT_EQ(io::MicrosFromNs(1234567), "1234.567");
  EXPECT_EQ(io::MicrosFromNs(-1), "-0.001");
  EXPECT_EQ(io::MicrosFromNs(-1500), "-1.500");
}

TEST(MicrosFromNs, EpochNanosecondsKeepEveryDigit) {
  // 1.69e18 ns: a double would round the last digits (ulp 256 ns).
  EXPECT_EQ(io::MicrosFromNs(1694039959123456789), "1694039959123456.789");
  EXPECT_EQ(io::MicrosFromNs(std::numeric_limits<int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(io::MicrosFromNs(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

TEST(JsonString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Quoted("line\nnext\ttab\r"), R"("line\nnext\ttab\r")");
  EXPECT_EQ(Quoted(std::string("nul\0x", 5)), R"("nul\u0000x")");
  EXPECT_EQ(Quoted("\x01\x1f"), R"("\u0001\u001f")");
  EXPECT_EQ(ParseBack(Quoted("a\"b\\c\n\x01")), "a\"b\\c\n\x01");
}

TEST(JsonString, KeepsValidUtf8) {
  const std::string text = "12 \xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80";  // µ, €, 😀
  EXPECT_EQ(Quoted(text), "\"" + text + "\"");
  EXPECT_EQ(ParseBack(Quoted(text)), text);
}

TEST(JsonString, ReplacesInvalidUtf8WithOneReplacementPerMaximalSubpart) {
  // Lone byte above 0x7F.
  EXPECT_EQ(ParseBack(Quoted("a\xFF" "b")), "a" + kReplacement + "b");
  // Truncated 3-byte sequence (€ without its last byte): one replacement.
  EXPECT_EQ(ParseBack(Quoted("a\xE2\x82")), "a" + kReplacement);
  EXPECT_EQ(ParseBack(Quoted("\xE2\x82x")), kReplacement + "x");
  // Overlong encoding of '/': C0 is never a lead byte, AF is a stray continuation.
  EXPECT_EQ(ParseBack(Quoted("\xC0\xAF")), kReplacement + kReplacement);
  // UTF-16 surrogate D800 encoded in UTF-8: not a valid scalar value.
  EXPECT_EQ(ParseBack(Quoted("\xED\xA0\x80")), kReplacement + kReplacement + kReplacement);
  // Above U+10FFFF.
  EXPECT_EQ(ParseBack(Quoted("\xF4\x90\x80\x80")), kReplacement + kReplacement + kReplacement + kReplacement);
  // Invalid byte between valid characters leaves them intact.
  EXPECT_EQ(ParseBack(Quoted("\xC2\xB5\x80\xC2\xB5")), "\xC2\xB5" + kReplacement + "\xC2\xB5");
}

TEST(JsonWriter, NestsWithCommasAndParsesBack) {
  std::string out;
  io::JsonWriter json(&out);
  json.BeginObject();
  json.KeyString("name", "k");
  json.KeyInt("negative", -5);
  json.KeyUint("big", std::numeric_limits<uint64_t>::max());
  json.KeyDouble("nan", std::numeric_limits<double>::quiet_NaN());
  json.KeyDouble("half", 0.5);
  json.KeyMicrosFromNs("ts", 1500);
  json.Key("list");
  json.BeginArray();
  json.Int(1);
  json.BeginObject();
  json.EndObject();
  json.BeginArray();
  json.EndArray();
  json.Bool(true);
  json.EndArray();
  json.EndObject();
  EXPECT_TRUE(json.complete());
  EXPECT_EQ(out,
            R"({"name":"k","negative":-5,"big":18446744073709551615,"nan":null,"half":0.5,"ts":1.500,)"
            R"("list":[1,{},[],true]})");

  simdjson::dom::parser parser;
  simdjson::padded_string padded(out);
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(padded).get(root), simdjson::SUCCESS);
  EXPECT_EQ(double(root["ts"]), 1.5);
  EXPECT_EQ(uint64_t(root["big"]), std::numeric_limits<uint64_t>::max());
}

TEST(JsonWriter, IndentedOutputIsValidJson) {
  std::string out;
  io::JsonWriter json(&out);
  json.set_indent(2);
  json.BeginObject();
  json.Key("a");
  json.BeginArray();
  json.Int(1);
  json.Int(2);
  json.EndArray();
  json.Key("empty");
  json.BeginObject();
  json.EndObject();
  json.EndObject();
  EXPECT_EQ(out, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"empty\": {}\n}");
}

}  // namespace
}  // namespace pypto::report
