// Input shapes of one op, parsed from the text the profile keeps:
//   Kineto  Input Dims  "[[4096, 1024], [1024], []]"  + Input type "[\"c10::BFloat16\", \"float\", \"Scalar\"]"
//   Ascend  Input Shapes "4096,1,2048;1024;"          + Input Data Types "DT_BF16;FLOAT16;"
// into fixed-size structs (no heap): at most kMaxShapeInputs inputs of rank
// at most kMaxShapeRank. Lists nested deeper (TensorList inputs such as the
// tensors of aten::cat) are flattened one level: each tensor of the list is
// one input, and `list_inputs` says so.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/status.h"
#include "hw/dtype.h"

namespace pypto {

inline constexpr int kMaxShapeRank = 8;
inline constexpr int kMaxShapeInputs = 12;

struct TensorShape {
  std::array<int64_t, kMaxShapeRank> dims{};
  uint8_t rank = 0;
  DType dtype = DType::kUnknown;
  bool present = false;       // false for scalars, None and empty entries ("[]", ";;")

  int64_t dim(int i) const;   // negative i counts from the end; 0 when out of range
  int64_t elements() const;   // product of dims (1 for rank 0 present tensors), saturating
  double bytes() const;       // elements × dtype size (0 when the dtype is unknown)
};

struct OpShapes {
  std::array<TensorShape, kMaxShapeInputs> inputs{};
  uint8_t count = 0;          // entries filled (scalars included, as not-present)
  bool truncated = false;     // more inputs or dims than fit: the tail was dropped
  bool list_inputs = false;   // a TensorList was flattened into inputs
  uint8_t tensor_count() const;  // present inputs
  // The i-th present tensor (0-based), or nullptr.
  const TensorShape* tensor(int i) const;
  // Dtype of the first present tensor with a known dtype (kUnknown if none).
  DType first_dtype() const;
};

// Kineto/PyTorch text. `types` may be empty (dtypes stay unknown). Errors
// (InvalidArgument) for text that is not a nested list of integers.
Status ParseKinetoShapes(std::string_view dims, std::string_view types, OpShapes* out);
// Ascend kernel_details text (quotes already removed by the importer; stray
// '"' are ignored). Empty entries are scalar/None inputs.
Status ParseAscendShapes(std::string_view shapes, std::string_view types, OpShapes* out);
// A host operator's "Input Dims" / "Input type" as the profiler wrote them:
// Kineto's nested list ("[[8, 1, 3584], [3584]]", types ["c10::BFloat16", …])
// or torch_npu's trace_view text ("8,1,3584;\r\n3584", types
// "BFloat16;\r\nBFloat16", the Ascend list form with line breaks), told
// apart by the first character.
Status ParseHostOpShapes(std::string_view dims, std::string_view types, OpShapes* out);

// Ascend tiled storage formats, written per input in "Input Formats" /
// "Output Formats" (';'-separated, as the shapes; a "FORMAT_" prefix is
// accepted). The shapes the profiler writes are the stored (tiled) ones; this
// turns each into the logical shape the op computes on, in place:
//   FRACTAL_NZ [..., N1, M1, M0, N0] → [..., M1·M0, N1·N0]  (an M×N matrix in
//              16×16 fractals: "9496,256,16,16" is 4096 × 151936, an lm_head)
//   NC1HWC0    [N, C1, H, W, C0]     → [N, C1·C0, H, W]     (channels padded to C0)
//   FRACTAL_Z  [C1·H·W, N1, N0, C0]  → [N1·N0, C1·H·W·C0]  (a conv weight as its GEMM
//              view: Cout × Cin·kH·kW, channels padded)
// ND, NCHW, NHWC and other plain formats are left as they are. Returns how
// many tensors were decoded. Source: CANN's format documentation (the
// project's Ascend format reference, tiled formats).
int DecodeStorageFormats(std::string_view formats, OpShapes* shapes);

}  // namespace pypto
