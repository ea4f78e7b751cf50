// What the binding's files share: the error carrier, UTF-8-safe strings, and
// LoadedProfile, the Python handle of a ProfileSession.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "session/profile_session.h"

namespace pypto::python {

namespace py = pybind11;

// A non-OK Status on its way to Python (translated in the module init).
struct EngineError {
  Status status;
};

// Profile strings are bytes from other people's files: invalid UTF-8 becomes
// U+FFFD instead of a UnicodeDecodeError in the caller.
inline py::str Text(std::string_view s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}
inline py::list TextList(const std::vector<std::string>& items) {
  py::list out;
  for (const std::string& s : items) out.append(Text(s));
  return out;
}
inline py::dict TextDict(const std::map<std::string, std::string>& items) {
  py::dict out;
  for (const auto& [k, v] : items) out[Text(k)] = Text(v);
  return out;
}

template <typename T>
T Unwrap(StatusOr<T>&& value) {
  if (!value.ok()) throw EngineError{value.status()};
  return std::move(*value);
}
inline void Check(const Status& status) {
  if (!status.ok()) throw EngineError{status};
}

// The Python handle of a ProfileSession: every engine product (classes,
// structure, diagnosis per options) is computed once per profile and shared by
// the calls below.
class LoadedProfile {
 public:
  explicit LoadedProfile(std::unique_ptr<ProfileSession> session) : session_(std::move(session)) {}
  ProfileSession& session() { return *session_; }
  Profile& profile() { return session_->profile(); }
  const OperatorCallGraph& graph() const { return session_->graph(); }

 private:
  std::unique_ptr<ProfileSession> session_;
};

// Columnar tables of a loaded profile (bind_tables.cc).
void BindProfileTables(py::class_<LoadedProfile, std::shared_ptr<LoadedProfile>>& cls);

}  // namespace pypto::python
