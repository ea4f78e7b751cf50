// The detector registry, generated from PYPTO_ISSUE_TYPES
// (analysis/diagnostic_report.h): one detector per issue type, named
// `<Name>Detector()` in src/analysis/detectors/<id>.cc.
#include <string>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"

namespace pypto {

#define PYPTO_DECLARE_DETECTOR(Name, id, what) const Detector& Name##Detector();
PYPTO_ISSUE_TYPES(PYPTO_DECLARE_DETECTOR)
#undef PYPTO_DECLARE_DETECTOR

const std::vector<const Detector*>& AllDetectors() {
#define PYPTO_LIST_DETECTOR(Name, id, what) &Name##Detector(),
  static const std::vector<const Detector*> detectors = {PYPTO_ISSUE_TYPES(PYPTO_LIST_DETECTOR)};
#undef PYPTO_LIST_DETECTOR
  return detectors;
}

const Detector* FindDetector(std::string_view name) {
  for (const Detector* d : AllDetectors()) {
    if (d->name() == name) return d;
  }
  return nullptr;
}

}  // namespace pypto
