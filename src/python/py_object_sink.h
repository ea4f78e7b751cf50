// Engine documents as native Python objects. The renderers write every
// structured document through io::ValueSink; this sink builds dicts, lists,
// ints, floats, strings, bools and None from the same calls, so the package
// reads the diagnosis, advice, comparison and analysis without parsing JSON
// text the engine has just written. Needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>
#include <utility>
#include <vector>

#include "io/value_sink.h"

namespace pypto::python {

namespace py = pybind11;

class PyObjectSink final : public io::ValueSink {
 public:
  void BeginObject() override;
  void EndObject() override;
  void BeginArray() override;
  void EndArray() override;
  void Key(std::string_view key) override;
  void String(std::string_view value) override;
  void Int(int64_t value) override;
  void Uint(uint64_t value) override;
  // NaN and infinities become None, as they are null in the JSON form.
  void Double(double value) override;
  void Bool(bool value) override;
  void Null() override;
  // The float Python's json module reads from the JSON form's exact decimal.
  void MicrosFromNs(int64_t ns) override;

  // The finished document (None before anything was written).
  py::object Take() { return std::move(root_); }

 private:
  void Put(py::object value);

  // Open containers, innermost last, each with the key its next value goes under.
  struct Open {
    py::object container;
    py::object pending_key;
  };
  std::vector<Open> open_;
  py::object root_ = py::none();
};

// Runs `write(sink)` and returns the document it wrote.
template <typename WriteFn>
py::object ToPython(WriteFn&& write) {
  PyObjectSink sink;
  write(sink);
  return sink.Take();
}

}  // namespace pypto::python
