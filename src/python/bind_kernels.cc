// Bindings of pypto's fused CPU norm kernels (src/kernels/fused_norm.h) used by
// pypto.fusion. Arguments are float32 C-contiguous buffers (numpy arrays, or
// torch CPU tensors through tensor.numpy(), which shares memory): inputs are
// converted when needed, outputs must already be float32 C-contiguous and
// writeable with the input's shape (they are written in place, never copied).
#include "python/bind_kernels.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "kernels/fused_norm.h"

namespace py = pybind11;

namespace pypto::python {
namespace {

using InputArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using OutputArray = py::array_t<float, py::array::c_style>;

// Tensors at least this large (elements) run with the GIL released, so other
// Python threads proceed while the kernel works. Source: releasing and taking
// the GIL costs ~0.1-0.2 us; 32K elements are ~15 us of kernel work, so the
// release costs < 2% there, and decode-sized calls skip it.
constexpr int64_t kReleaseGilMinElements = int64_t{1} << 15;

struct RowsCols {
  int64_t rows = 0;
  int64_t cols = 0;
};

RowsCols ShapeOf(const py::array& x, const char* name) {
  if (x.ndim() < 1) throw py::value_error(std::string(name) + " must have at least one dimension");
  RowsCols shape;
  shape.cols = x.shape(x.ndim() - 1);
  shape.rows = shape.cols == 0 ? 0 : static_cast<int64_t>(x.size()) / shape.cols;
  return shape;
}

void RequireSameShape(const py::array& a, const py::array& b, const char* a_name, const char* b_name) {
  bool same = a.ndim() == b.ndim();
  for (py::ssize_t d = 0; same && d < a.ndim(); ++d) same = a.shape(d) == b.shape(d);
  if (!same) throw py::value_error(std::string(b_name) + " must have the shape of " + a_name);
}

// Null when absent; otherwise checks it holds one value per column.
const float* OptionalVector(const std::optional<InputArray>& v, int64_t cols, const char* name) {
  if (!v.has_value()) return nullptr;
  if (v->ndim() != 1 || v->shape(0) != cols)
    throw py::value_error(std::string(name) + " must be 1-D with x.shape[-1] = " + std::to_string(cols) + " values");
  return v->data();
}

float* Writable(OutputArray& out, const char* name) {
  if (!out.writeable()) throw py::value_error(std::string(name) + " is read-only");
  return out.mutable_data();
}

template <typename Fn>
void RunKernel(int64_t elements, Fn kernel) {
  if (elements >= kReleaseGilMinElements) {
    py::gil_scoped_release release;
    kernel();
  } else {
    kernel();
  }
}

}  // namespace

void BindKernels(py::module_& m) {
  m.def(
      "rms_norm",
      [](const InputArray& x, const std::optional<InputArray>& weight, float eps, OutputArray out, int max_threads) {
        const RowsCols shape = ShapeOf(x, "x");
        RequireSameShape(x, out, "x", "out");
        const float* w = OptionalVector(weight, shape.cols, "weight");
        float* o = Writable(out, "out");
        RunKernel(shape.rows * shape.cols,
                  [&] { kernels::FusedRmsNorm(x.data(), w, eps, shape.rows, shape.cols, o, max_threads); });
      },
      py::arg("x"), py::arg("weight").none(true), py::arg("eps"), py::arg("out").noconvert(),
      py::arg("max_threads") = 0,
      "out = x / sqrt(mean(x^2, last dim) + eps) * weight (weight may be None), written into out "
      "(float32, C-contiguous, x's shape). max_threads <= 0: the kernel decides (small tensors: one thread).");
  m.def(
      "add_rms_norm",
      [](const InputArray& x, const InputArray& residual, const std::optional<InputArray>& weight, float eps,
         OutputArray out, OutputArray residual_out, int max_threads) {
        const RowsCols shape = ShapeOf(x, "x");
        RequireSameShape(x, residual, "x", "residual");
        RequireSameShape(x, out, "x", "out");
        RequireSameShape(x, residual_out, "x", "residual_out");
        const float* w = OptionalVector(weight, shape.cols, "weight");
        float* o = Writable(out, "out");
        float* r = Writable(residual_out, "residual_out");
        RunKernel(shape.rows * shape.cols, [&] {
          kernels::FusedAddRmsNorm(x.data(), residual.data(), w, eps, shape.rows, shape.cols, o, r, max_threads);
        });
      },
      py::arg("x"), py::arg("residual"), py::arg("weight").none(true), py::arg("eps"), py::arg("out").noconvert(),
      py::arg("residual_out").noconvert(), py::arg("max_threads") = 0,
      "residual_out = x + residual; out = rms_norm(residual_out) * weight, in one kernel.");
  m.def(
      "layer_norm",
      [](const InputArray& x, const std::optional<InputArray>& weight, const std::optional<InputArray>& bias,
         float eps, OutputArray out, int max_threads) {
        const RowsCols shape = ShapeOf(x, "x");
        RequireSameShape(x, out, "x", "out");
        const float* w = OptionalVector(weight, shape.cols, "weight");
        const float* b = OptionalVector(bias, shape.cols, "bias");
        float* o = Writable(out, "out");
        RunKernel(shape.rows * shape.cols,
                  [&] { kernels::FusedLayerNorm(x.data(), w, b, eps, shape.rows, shape.cols, o, max_threads); });
      },
      py::arg("x"), py::arg("weight").none(true), py::arg("bias").none(true), py::arg("eps"),
      py::arg("out").noconvert(), py::arg("max_threads") = 0,
      "out = (x - mean) / sqrt(var + eps) * weight + bias over the last dim (weight, bias may be None).");
  m.def("norm_thread_count", &kernels::NormThreadCount, py::arg("rows"), py::arg("cols"), py::arg("max_threads") = 0,
        "Threads the norm kernels use for a rows x cols tensor (1 = the calling thread only).");
  m.attr("norm_parallel_min_elements") = kernels::kNormParallelMinElements;
  m.attr("has_fused_kernels") = true;
}

}  // namespace pypto::python
