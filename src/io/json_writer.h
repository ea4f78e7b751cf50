// A small streaming JSON writer for every layer that writes JSON (reports,
// Chrome trace export, advisor artifacts). It appends to a caller-owned std::string and handles commas,
// nesting and escaping, so renderers only say what to write.
//
// Strings are always written as valid JSON of valid UTF-8: quotes, backslashes
// and control characters are escaped, and every invalid UTF-8 sequence becomes
// U+FFFD (one per maximal invalid subpart, as Unicode 15 §3.9 recommends), since
// profile names come from untrusted files (reference kineto §10, defects 7-8).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/value_sink.h"

namespace pypto::io {

// Appends `text` to `out` as a JSON string literal (with the quotes).
void AppendJsonString(std::string* out, std::string_view text);

// Length of the valid UTF-8 sequence at text[i], or the negated length of the
// maximal invalid subpart there (to be replaced by one U+FFFD).
int Utf8SequenceAt(std::string_view text, size_t i);

// Appends the exact decimal microseconds of a nanosecond count, with three
// fraction digits ("1694039959123.456", "-0.001"). Integer arithmetic only: an
// epoch time in ns (~1.7e18) does not survive a round trip through double.
void AppendMicrosFromNs(std::string* out, int64_t ns);
std::string MicrosFromNs(int64_t ns);

// Appends a double as JSON: shortest form that round-trips; NaN and infinities
// (not representable in JSON) become null.
void AppendJsonDouble(std::string* out, double value);

// JSON text. `final`, so calls on a JsonWriter itself (the Chrome trace export
// writes millions of events) are direct calls, not virtual ones.
class JsonWriter final : public ValueSink {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject() override;
  void EndObject() override;
  void BeginArray() override;
  void EndArray() override;
  void Key(std::string_view key) override;

  void String(std::string_view value) override;
  void Int(int64_t value) override;
  void Uint(uint64_t value) override;
  void Double(double value) override;
  void Bool(bool value) override;
  void Null() override;
  void MicrosFromNs(int64_t ns) override;

  // Optional pretty printing: newline + indentation between members.
  void set_indent(int spaces) { indent_ = spaces; }
  // True when every opened object/array was closed.
  bool complete() const { return stack_.empty(); }

 private:
  void BeforeValue();
  void NewlineAndIndent();

  std::string* out_;
  // One entry per open container: whether it already holds a member.
  std::vector<bool> stack_;
  bool after_key_ = false;
  int indent_ = 0;
};

}  // namespace pypto::io
