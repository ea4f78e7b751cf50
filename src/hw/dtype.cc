#include "hw/dtype.h"

#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pypto {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kUnknown: return "unknown";
    case DType::kFp64: return "fp64";
    case DType::kFp32: return "fp32";
    case DType::kTf32: return "tf32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kFp8: return "fp8";
    case DType::kFp4: return "fp4";
    case DType::kInt64: return "int64";
    case DType::kInt32: return "int32";
    case DType::kInt16: return "int16";
    case DType::kInt8: return "int8";
    case DType::kInt4: return "int4";
    case DType::kBool: return "bool";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
  }
  return "unknown";
}

double DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kUnknown: return 0;
    case DType::kFp64: case DType::kInt64: case DType::kComplex64: return 8;
    case DType::kFp32: case DType::kTf32: case DType::kInt32: return 4;
    case DType::kFp16: case DType::kBf16: case DType::kInt16: return 2;
    case DType::kFp8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kFp4: case DType::kInt4: return 0.5;
    case DType::kComplex128: return 16;
  }
  return 0;
}

namespace {

std::string Lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == ' ' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

struct Spelling {
  const char* text;
  DType dtype;
};

// Kineto (c10 / ScalarType names, torch 1.x "float"), Ascend (DT_*, upper-case
// names of kernel_details "Input Data Types"), and our own keys.
constexpr Spelling kSpellings[] = {
    {"c10::bfloat16", DType::kBf16}, {"bfloat16", DType::kBf16}, {"dt_bf16", DType::kBf16}, {"bf16", DType::kBf16},
    {"c10::half", DType::kFp16}, {"half", DType::kFp16}, {"float16", DType::kFp16}, {"dt_float16", DType::kFp16},
    {"fp16", DType::kFp16}, {"f16", DType::kFp16},
    {"float", DType::kFp32}, {"float32", DType::kFp32}, {"dt_float", DType::kFp32}, {"dt_float32", DType::kFp32},
    {"fp32", DType::kFp32}, {"f32", DType::kFp32},
    {"double", DType::kFp64}, {"float64", DType::kFp64}, {"dt_double", DType::kFp64}, {"fp64", DType::kFp64},
    {"tf32", DType::kTf32}, {"hf32", DType::kTf32},
    {"c10::float8_e4m3fn", DType::kFp8}, {"c10::float8_e5m2", DType::kFp8}, {"c10::float8_e4m3fnuz", DType::kFp8},
    {"c10::float8_e5m2fnuz", DType::kFp8}, {"float8_e4m3fn", DType::kFp8}, {"float8_e5m2", DType::kFp8},
    {"fp8", DType::kFp8}, {"dt_float8_e4m3fn", DType::kFp8}, {"dt_float8_e5m2", DType::kFp8}, {"hifloat8", DType::kFp8},
    {"dt_hifloat8", DType::kFp8}, {"fp4", DType::kFp4}, {"float4_e2m1fn_x2", DType::kFp4},
    {"long int", DType::kInt64}, {"longint", DType::kInt64}, {"long", DType::kInt64}, {"int64", DType::kInt64},
    {"dt_int64", DType::kInt64}, {"int64_t", DType::kInt64}, {"uint64", DType::kInt64}, {"dt_uint64", DType::kInt64},
    {"int", DType::kInt32}, {"int32", DType::kInt32}, {"dt_int32", DType::kInt32}, {"uint32", DType::kInt32},
    {"dt_uint32", DType::kInt32}, {"short int", DType::kInt16}, {"shortint", DType::kInt16}, {"short", DType::kInt16},
    {"int16", DType::kInt16}, {"dt_int16", DType::kInt16}, {"uint16", DType::kInt16}, {"dt_uint16", DType::kInt16},
    {"signed char", DType::kInt8}, {"signedchar", DType::kInt8}, {"unsigned char", DType::kInt8},
    {"unsignedchar", DType::kInt8}, {"int8", DType::kInt8}, {"uint8", DType::kInt8}, {"dt_int8", DType::kInt8},
    {"dt_uint8", DType::kInt8}, {"char", DType::kInt8}, {"byte", DType::kInt8}, {"int4", DType::kInt4}, {"dt_int4", DType::kInt4},
    {"bool", DType::kBool}, {"dt_bool", DType::kBool},
    {"c10::complex<float>", DType::kComplex64}, {"complex64", DType::kComplex64}, {"complexfloat", DType::kComplex64}, {"dt_complex64", DType::kComplex64},
    {"c10::complex<double>", DType::kComplex128}, {"complex128", DType::kComplex128},
    {"complexdouble", DType::kComplex128},
    {"dt_complex128", DType::kComplex128},
};

}  // namespace

DType ParseDType(std::string_view text) {
  // Called for every tensor of every costed task: a hash lookup, not a scan
  // of the ~80 spellings. emplace keeps the first of a repeated spelling, as
  // the scan in list order did.
  static const std::unordered_map<std::string_view, DType> by_spelling = [] {
    std::unordered_map<std::string_view, DType> map;
    for (const Spelling& s : kSpellings) map.emplace(s.text, s.dtype);
    return map;
  }();
  std::string key = Lower(text);
  if (key.empty()) return DType::kUnknown;
  auto it = by_spelling.find(key);
  return it == by_spelling.end() ? DType::kUnknown : it->second;
}

DType DTypeFromKey(std::string_view key) { return ParseDType(key); }

}  // namespace pypto
