// PyTorch profiler (Kineto) Chrome-trace JSON importer, every era from torch 1.8
// to 2.x, plain or gzip, plus the legacy export of torch builds without Kineto.
// Format facts and how each era maps to the model: docs/formats/kineto.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "importers/importer.h"

namespace pypto {

// "kineto": `{"traceEvents": [...]}` objects (and bare arrays of Kineto-looking events).
const Importer* KinetoImporter();
// "kineto-legacy": the bare-array export of torch builds without Kineto
// (pid "CPU functions", no cat, no shapes; reference kineto-format.md §9).
const Importer* KinetoLegacyImporter();

namespace kineto {

enum class TimeParse : uint8_t {
  kOk,
  kInvalid,   // not a number
  kOverflow,  // does not fit int64 nanoseconds
};

// Parses a Chrome-trace time in microseconds, written as a JSON integer
// ("1623142623460111"), a float with up to ns precision ("4909914216204.635"),
// an exponent form ("1.5e3") or the text of a JSON string, into int64
// nanoseconds exactly: integer part x 1000 + the first 3 fraction digits
// (further digits are truncated). Never goes through double.
TimeParse ParseMicrosToNs(std::string_view text, int64_t* ns);

// Communication kernels by name prefix (NCCL renamed ncclKernel_ to
// ncclDevKernel_, HTA #360; RCCL keeps the nccl names and adds rccl ones).
bool IsCommunicationKernelName(std::string_view name);

}  // namespace kineto
}  // namespace pypto
