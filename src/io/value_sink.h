// The one interface every structured document of the engine is written
// through (diagnosis, advice, comparison, analysis summary, tuning config).
// JsonWriter renders it as JSON text for files and the CLI; the Python binding
// implements it with native Python objects, so the package gets dicts, lists,
// ints and floats without a JSON-text round trip, from the same writer code.
#pragma once

#include <cstdint>
#include <string_view>

namespace pypto::io {

class ValueSink {
 public:
  virtual ~ValueSink() = default;

  virtual void BeginObject() = 0;
  virtual void EndObject() = 0;
  virtual void BeginArray() = 0;
  virtual void EndArray() = 0;
  // Object member name; the next call writes its value.
  virtual void Key(std::string_view key) = 0;

  virtual void String(std::string_view value) = 0;
  virtual void Int(int64_t value) = 0;
  virtual void Uint(uint64_t value) = 0;
  // NaN and infinities are null in JSON (not representable there).
  virtual void Double(double value) = 0;
  virtual void Bool(bool value) = 0;
  virtual void Null() = 0;
  // Nanoseconds written as exact microseconds with 3 fraction digits.
  virtual void MicrosFromNs(int64_t ns) = 0;

  // Key + value shorthands.
  void KeyString(std::string_view key, std::string_view value) { Key(key); String(value); }
  void KeyInt(std::string_view key, int64_t value) { Key(key); Int(value); }
  void KeyUint(std::string_view key, uint64_t value) { Key(key); Uint(value); }
  void KeyDouble(std::string_view key, double value) { Key(key); Double(value); }
  void KeyBool(std::string_view key, bool value) { Key(key); Bool(value); }
  void KeyMicrosFromNs(std::string_view key, int64_t ns) { Key(key); MicrosFromNs(ns); }
};

}  // namespace pypto::io
