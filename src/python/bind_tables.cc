// LoadedProfile's tables as numpy columns: the Python package reads the
// engine's rows and op classes directly instead of exporting the profile to a
// temporary SQLite file and querying it back. Strings are ids into the
// profile's string table; `strings(ids)` decodes the ones a caller needs.
#include <pybind11/numpy.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/op_class.h"
#include "model/profile.h"
#include "python/bind_common.h"

namespace pypto::python {
namespace {

template <typename Out, typename In>
py::array_t<Out> Column(const std::vector<In>& values) {
  py::array_t<Out> out(static_cast<py::ssize_t>(values.size()));
  Out* data = out.mutable_data();
  for (size_t i = 0; i < values.size(); ++i) data[i] = static_cast<Out>(values[i]);
  return out;
}

template <typename Enum>
py::list Names(size_t count, const char* (*name)(Enum)) {
  py::list out;
  for (size_t i = 0; i < count; ++i) out.append(name(static_cast<Enum>(i)));
  return out;
}

py::list OpClassNames() {
  py::list out;
  for (size_t i = 0; i < kOpClassCount; ++i) out.append(OpClassName(static_cast<OpClass>(i)));
  return out;
}

}  // namespace

void BindProfileTables(py::class_<LoadedProfile, std::shared_ptr<LoadedProfile>>& cls) {
  cls.def("host_ops", [](LoadedProfile& p) {
        const HostOpTable& h = p.profile().host_ops;
        const OpClassification& classes = p.session().Classes();
        py::dict d;
        d["ts"] = Column<int64_t>(h.ts);
        d["dur"] = Column<int64_t>(h.dur);
        d["kind"] = Column<uint8_t>(h.kind);
        d["track"] = Column<uint32_t>(h.track);
        d["name"] = Column<uint32_t>(h.name);
        d["input_dims"] = Column<uint32_t>(h.input_dims);
        d["op_class"] = Column<uint8_t>(classes.host_class);
        d["kind_names"] = Names<HostOpKind>(kHostOpKindCount, &HostOpKindName);
        d["op_class_names"] = OpClassNames();
        return d;
      },
      "Host operators as numpy columns: ts and dur (int64 ns), kind (index into kind_names), track, name and "
      "input_dims (string ids: strings()), op_class (index into op_class_names).")
      .def("device_tasks", [](LoadedProfile& p) {
        const DeviceTaskTable& t = p.profile().device_tasks;
        const TrackTable& tracks = p.profile().tracks;
        const OpClassification& classes = p.session().Classes();
        std::vector<int32_t> device(t.size());
        for (size_t i = 0; i < t.size(); ++i) device[i] = tracks.device[t.track[i]];
        py::dict d;
        d["ts"] = Column<int64_t>(t.ts);
        d["dur"] = Column<int64_t>(t.dur);
        d["kind"] = Column<uint8_t>(t.kind);
        d["track"] = Column<uint32_t>(t.track);
        d["device"] = Column<int32_t>(device);
        d["name"] = Column<uint32_t>(t.name);
        d["op_class"] = Column<uint8_t>(classes.task_class);
        d["kind_names"] = Names<DeviceTaskKind>(kDeviceTaskKindCount, &DeviceTaskKindName);
        d["op_class_names"] = OpClassNames();
        return d;
      },
      "Device tasks as numpy columns: ts and dur (int64 ns), kind (index into kind_names), track, device, name "
      "(string id: strings()), op_class (index into op_class_names).")
      .def("attributes", [](LoadedProfile& p, const std::string& owner_kind, const std::string& key_prefix) {
        const Profile& profile = p.profile();
        const AttributeTable& a = profile.attributes;
        std::optional<OwnerKind> kind;
        if (!owner_kind.empty()) {
          kind = ParseOwnerKind(owner_kind);
          if (!kind) {
            throw EngineError{InvalidArgumentError("unknown owner kind '" + owner_kind +
                                                   "' (host_op, device_task, track, device, step)")};
          }
        }
        std::vector<uint32_t> owner, key, text;
        std::vector<double> number;
        std::vector<int8_t> decimals;
        a.ForEachRow([&](size_t i, OwnerKind row_kind, uint32_t row_owner) {
          if (kind && row_kind != *kind) return;
          if (!key_prefix.empty() && !profile.Str(a.key(i)).starts_with(key_prefix)) return;
          owner.push_back(row_owner);
          key.push_back(a.key(i));
          text.push_back(a.text(i));
          number.push_back(a.number(i));
          const uint8_t form = a.number_text_form(i);
          decimals.push_back(form == kShortestNumberText ? int8_t{-1} : static_cast<int8_t>(form - 1));
        });
        py::dict d;
        d["owner"] = Column<uint32_t>(owner);
        d["key"] = Column<uint32_t>(key);
        d["text"] = Column<uint32_t>(text);
        d["number"] = Column<double>(number);
        d["decimals"] = Column<int8_t>(decimals);
        return d;
      }, py::arg("owner_kind") = "", py::arg("key_prefix") = "",
      "Attributes (PMU ratios, kernel arguments, Ascend communication.json fields …) of one owner kind "
      "(host_op, device_task, track, device, step; all when empty) whose key starts with KEY_PREFIX: owner (row of "
      "the owner's table), key and text (string ids), number (NaN when not numeric).")
      .def("strings", [](LoadedProfile& p, const std::vector<uint32_t>& ids) {
        const Profile& profile = p.profile();
        py::list out;
        for (uint32_t id : ids) {
          if (id >= profile.strings.size())
            throw EngineError{InvalidArgumentError("string id " + std::to_string(id) + " out of range")};
          out.append(Text(profile.Str(id)));
        }
        return out;
      }, py::arg("ids"), "The strings of these ids (from the tables' name, key, text and input_dims columns).");
}

}  // namespace pypto::python
