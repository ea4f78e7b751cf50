#include "python/py_object_sink.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "io/json_writer.h"
#include "python/bind_common.h"

namespace pypto::python {
namespace {

// Below 2^53 ns an int64 converts to double exactly, so ns / 1000.0 is the
// correctly rounded quotient: the same double as parsing the exact decimal.
// Beyond (epoch timestamps) the conversion itself would round first, so the
// decimal text is parsed instead.
constexpr int64_t kExactDoubleIntegerLimit = int64_t{1} << 53;

}  // namespace

void PyObjectSink::Put(py::object value) {
  if (open_.empty()) {
    root_ = std::move(value);
    return;
  }
  Open& top = open_.back();
  if (py::isinstance<py::dict>(top.container)) {
    py::dict dict = py::reinterpret_borrow<py::dict>(top.container);
    dict[top.pending_key] = std::move(value);
    top.pending_key = py::object();
  } else {
    py::reinterpret_borrow<py::list>(top.container).append(std::move(value));
  }
}

void PyObjectSink::BeginObject() { open_.push_back({py::dict(), py::object()}); }
void PyObjectSink::BeginArray() { open_.push_back({py::list(), py::object()}); }

void PyObjectSink::EndObject() {
  py::object done = std::move(open_.back().container);
  open_.pop_back();
  Put(std::move(done));
}

void PyObjectSink::EndArray() { EndObject(); }

void PyObjectSink::Key(std::string_view key) { open_.back().pending_key = Text(key); }
void PyObjectSink::String(std::string_view value) { Put(Text(value)); }
void PyObjectSink::Int(int64_t value) { Put(py::int_(value)); }
void PyObjectSink::Uint(uint64_t value) { Put(py::int_(value)); }
void PyObjectSink::Double(double value) { Put(std::isfinite(value) ? py::object(py::float_(value)) : py::none()); }
void PyObjectSink::Bool(bool value) { Put(py::bool_(value)); }
void PyObjectSink::Null() { Put(py::none()); }

void PyObjectSink::MicrosFromNs(int64_t ns) {
  if (ns > -kExactDoubleIntegerLimit && ns < kExactDoubleIntegerLimit) {
    Put(py::float_(static_cast<double>(ns) / 1000.0));
    return;
  }
  const std::string text = io::MicrosFromNs(ns);
  Put(py::reinterpret_steal<py::object>(PyFloat_FromString(py::str(text).ptr())));
}

}  // namespace pypto::python
