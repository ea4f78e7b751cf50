// The list of detectors. Adding one: define `const Detector& <Name>Detector();`
// in src/analysis/detectors/<name>.cc and add `X(<Name>)` below.
#include <string>

#include "analysis/detector.h"

#define PYPTO_DETECTORS(X) \
  X(MatmulTiling)          \
  X(AttentionMemoryBound)  \
  X(KvCacheLayout)         \
  X(NormLaunchOverhead)    \
  X(HostBound)             \
  X(AicpuFallback)         \
  X(DynamicShapeCompile)   \
  X(StreamSync)            \
  X(NoPipeBound)           \
  X(FusibleSequence)       \
  X(Communication)          \
  X(InputStall)

namespace pypto {

#define PYPTO_DECLARE_DETECTOR(Name) const Detector& Name##Detector();
PYPTO_DETECTORS(PYPTO_DECLARE_DETECTOR)
#undef PYPTO_DECLARE_DETECTOR

const std::vector<const Detector*>& AllDetectors() {
#define PYPTO_LIST_DETECTOR(Name) &Name##Detector(),
  static const std::vector<const Detector*> detectors = {PYPTO_DETECTORS(PYPTO_LIST_DETECTOR)};
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
