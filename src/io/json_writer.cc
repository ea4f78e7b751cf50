#include "io/json_writer.h"

#include <charconv>
#include <cmath>
#include <cassert>

namespace pypto::io {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
constexpr int64_t kNsPerMicro = 1000;

// Length of the UTF-8 sequence that `lead` starts, 0 if `lead` cannot start one.
int SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;  // continuation byte, overlong lead C0/C1, or F5..FF
}

// Allowed range of the byte after `lead`: the narrow ranges exclude overlong
// forms (E0, F0), UTF-16 surrogates (ED) and code points above U+10FFFF (F4).
void SecondByteRange(unsigned char lead, unsigned char* low, unsigned char* high) {
  *low = 0x80;
  *high = 0xBF;
  if (lead == 0xE0) *low = 0xA0;
  else if (lead == 0xED) *high = 0x9F;
  else if (lead == 0xF0) *low = 0x90;
  else if (lead == 0xF4) *high = 0x8F;
}

// Length of the valid UTF-8 sequence at text[i], or the negated length of the
// maximal invalid subpart to replace by one U+FFFD.
int ValidSequenceAt(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const int length = SequenceLength(lead);
  if (length == 0) return -1;
  if (length == 1) return 1;
  unsigned char low, high;
  SecondByteRange(lead, &low, &high);
  int consumed = 1;
  while (consumed < length && i + consumed < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i + consumed]);
    if (byte < low || byte > high) break;
    ++consumed;
    low = 0x80;
    high = 0xBF;
  }
  return consumed == length ? length : -consumed;
}

void AppendEscapedControl(std::string* out, unsigned char c) {
  switch (c) {
    case '\b': out->append("\\b"); return;
    case '\f': out->append("\\f"); return;
    case '\n': out->append("\\n"); return;
    case '\r': out->append("\\r"); return;
    case '\t': out->append("\\t"); return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
    }
  }
}

void AppendUint(std::string* out, uint64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out->append(buffer, result.ptr);
}

}  // namespace

int Utf8SequenceAt(std::string_view text, size_t i) { return ValidSequenceAt(text, i); }

void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '"') out->append("\\\"");
      else if (c == '\\') out->append("\\\\");
      else if (c < 0x20) AppendEscapedControl(out, c);
      else out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const int length = ValidSequenceAt(text, i);
    if (length > 0) {
      out->append(text.substr(i, length));
      i += length;
    } else {
      out->append(kReplacementCharacter);
      i += -length;
    }
  }
  out->push_back('"');
}

void AppendMicrosFromNs(std::string* out, int64_t ns) {
  // Work on the magnitude as unsigned so INT64_MIN does not overflow.
  const bool negative = ns < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (negative) out->push_back('-');
  AppendUint(out, magnitude / kNsPerMicro);
  const auto fraction = static_cast<unsigned>(magnitude % kNsPerMicro);
  out->push_back('.');
  out->push_back(static_cast<char>('0' + fraction / 100));
  out->push_back(static_cast<char>('0' + fraction / 10 % 10));
  out->push_back(static_cast<char>('0' + fraction % 10));
}

std::string MicrosFromNs(int64_t ns) {
  std::string text;
  AppendMicrosFromNs(&text, ns);
  return text;
}

void AppendJsonDouble(std::string* out, double value) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out->append(buffer, result.ptr);
}

void JsonWriter::NewlineAndIndent() {
  if (indent_ <= 0) return;
  out_->push_back('\n');
  out_->append(stack_.size() * indent_, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (stack_.back()) out_->push_back(',');
    stack_.back() = true;
    NewlineAndIndent();
  }
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_->push_back('{');
  stack_.push_back(false);
}

void JsonWriter::EndObject() {
  assert(!stack_.empty());
  const bool had_members = stack_.back();
  stack_.pop_back();
  if (had_members) NewlineAndIndent();
  out_->push_back('}');
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_->push_back('[');
  stack_.push_back(false);
}

void JsonWriter::EndArray() {
  assert(!stack_.empty());
  const bool had_members = stack_.back();
  stack_.pop_back();
  if (had_members) NewlineAndIndent();
  out_->push_back(']');
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(out_, key);
  out_->append(indent_ > 0 ? ": " : ":");
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(out_, value);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out_->append(buffer, result.ptr);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  AppendUint(out_, value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  AppendJsonDouble(out_, value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonWriter::MicrosFromNs(int64_t ns) {
  BeforeValue();
  AppendMicrosFromNs(out_, ns);
}

}  // namespace pypto::io
