// Tensor element types as profiles spell them (Kineto "c10::BFloat16",
// "float"; Ascend "DT_BF16", "FLOAT16", "BF16"), reduced to one enum so the
// hardware table and the cost models agree on what a peak is for.
#pragma once

#include <cstdint>
#include <string_view>

namespace pypto {

enum class DType : uint8_t {
  kUnknown = 0,
  kFp64,
  kFp32,
  kTf32,     // tensor-core mode of FP32 (only as a peak; tensors are FP32)
  kFp16,
  kBf16,
  kFp8,      // e4m3 / e5m2
  kFp4,
  kInt64,
  kInt32,
  kInt16,
  kInt8,     // also uint8
  kInt4,
  kBool,
  kComplex64,
  kComplex128,
};
inline constexpr size_t kDTypeCount = 16;

const char* DTypeName(DType dtype);  // "fp32", "bf16", …
// Bytes per element (0.5 for 4-bit types, 0 for kUnknown).
double DTypeBytes(DType dtype);
// Parses any spelling seen in Kineto and Ascend profiles; kUnknown otherwise
// ("Scalar", "TensorList", "" and unknown names). Case-insensitive.
DType ParseDType(std::string_view text);
// Also accepts the names DTypeName returns and the hardware table's keys
// ("fp16", "bf16", "tf32", "int8" …).
DType DTypeFromKey(std::string_view key);

}  // namespace pypto
