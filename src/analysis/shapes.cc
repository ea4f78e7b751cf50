#include "analysis/shapes.h"

#include <limits>
#include <vector>

#include <fmt/format.h>

namespace pypto {

int64_t TensorShape::dim(int i) const {
  if (i < 0) i += rank;
  return (i >= 0 && i < rank) ? dims[i] : 0;
}

int64_t TensorShape::elements() const {
  if (!present) return 0;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = dims[i];
    if (d <= 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

double TensorShape::bytes() const { return static_cast<double>(elements()) * DTypeBytes(dtype); }

uint8_t OpShapes::tensor_count() const {
  uint8_t n = 0;
  for (int i = 0; i < count; ++i) n += inputs[i].present ? 1 : 0;
  return n;
}

const TensorShape* OpShapes::tensor(int i) const {
  for (int k = 0; k < count; ++k)
    if (inputs[k].present && i-- == 0) return &inputs[k];
  return nullptr;
}

DType OpShapes::first_dtype() const {
  for (int k = 0; k < count; ++k)
    if (inputs[k].present && inputs[k].dtype != DType::kUnknown) return inputs[k].dtype;
  return DType::kUnknown;
}

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Minimal recursive reader for nested integer lists: "[[4096, 1024], [1024], [], [[2, 3], [2, 3]]]".
class DimsReader {
 public:
  DimsReader(std::string_view s, OpShapes* out) : s_(s), out_(out) {}

  Status Read() {
    Skip();
    if (!Eat('[')) return Error("expected '['");
    Skip();
    if (Eat(']')) return Status::Ok();
    int input_index = 0;
    for (;;) {
      Skip();
      Status st = ReadInput(input_index++);
      if (!st.ok()) return st;
      Skip();
      if (Eat(',')) continue;
      if (Eat(']')) break;
      return Error("expected ',' or ']'");
    }
    return Status::Ok();
  }
  // Source position of each input in the type list (TensorList inputs expand).
  const std::vector<int>& input_of_entry() const { return input_of_entry_; }

 private:
  Status ReadInput(int input_index) {
    if (pos_ < s_.size() && s_[pos_] != '[') {
      // A scalar written inline (rare): skip the token.
      while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ']') ++pos_;
      return Add(nullptr, 0, input_index, false);
    }
    Eat('[');
    Skip();
    if (Eat(']')) return Add(nullptr, 0, input_index, false);  // [] = scalar / None
    if (pos_ < s_.size() && s_[pos_] == '[') {
      // TensorList: one input per inner list.
      out_->list_inputs = true;
      for (;;) {
        Skip();
        Status st = ReadTensor(input_index);
        if (!st.ok()) return st;
        Skip();
        if (Eat(',')) continue;
        if (Eat(']')) return Status::Ok();
        return Error("expected ',' or ']' in a tensor list");
      }
    }
    --pos_;  // back to '['
    return ReadTensor(input_index);
  }

  Status ReadTensor(int input_index) {
    if (!Eat('[')) return Error("expected '['");
    int64_t dims[kMaxShapeRank] = {};
    int rank = 0;
    Skip();
    if (Eat(']')) return Add(dims, 0, input_index, true);  // rank-0 tensor written as []
    for (;;) {
      Skip();
      bool neg = Eat('-');
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return Error("expected a dimension");
      int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return Error("dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (rank < kMaxShapeRank) dims[rank] = neg ? -v : v;
      else out_->truncated = true;
      ++rank;
      Skip();
      if (Eat(',')) continue;
      if (Eat(']')) break;
      return Error("expected ',' or ']' in dimensions");
    }
    return Add(dims, rank > kMaxShapeRank ? kMaxShapeRank : rank, input_index, true);
  }

  Status Add(const int64_t* dims, int rank, int input_index, bool present) {
    input_of_entry_.push_back(input_index);
    if (out_->count >= kMaxShapeInputs) {
      out_->truncated = true;
      return Status::Ok();
    }
    TensorShape& t = out_->inputs[out_->count++];
    t = TensorShape{};
    t.present = present;
    t.rank = static_cast<uint8_t>(rank);
    for (int i = 0; i < rank; ++i) t.dims[i] = dims[i];
    return Status::Ok();
  }

  void Skip() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  Status Error(const char* what) const {
    return InvalidArgumentError(fmt::format("Input Dims '{}': {} at offset {}", s_.substr(0, 120), what, pos_));
  }

  std::string_view s_;
  size_t pos_ = 0;
  OpShapes* out_;
  std::vector<int> input_of_entry_;
};

// Splits a JSON list of strings ["c10::BFloat16", "Scalar", ""] into items.
std::vector<std::string_view> SplitTypeList(std::string_view s) {
  std::vector<std::string_view> items;
  size_t i = 0;
  while (i < s.size()) {
    size_t q = s.find('"', i);
    if (q == std::string_view::npos) break;
    size_t e = q + 1;
    while (e < s.size() && s[e] != '"') e += (s[e] == '\\') ? 2 : 1;
    if (e >= s.size()) break;
    items.push_back(s.substr(q + 1, e - q - 1));
    i = e + 1;
  }
  return items;
}

}  // namespace

Status ParseKinetoShapes(std::string_view dims, std::string_view types, OpShapes* out) {
  *out = OpShapes{};
  DimsReader reader(dims, out);
  Status st = reader.Read();
  if (!st.ok()) {
    *out = OpShapes{};
    return st;
  }
  if (types.empty()) return Status::Ok();
  std::vector<std::string_view> items = SplitTypeList(types);
  // Map each parsed entry back to its source input for its dtype.
  const std::vector<int>& src = reader.input_of_entry();
  for (int k = 0; k < out->count && k < static_cast<int>(src.size()); ++k) {
    int input = src[k];
    if (input >= 0 && input < static_cast<int>(items.size())) {
      DType d = ParseDType(items[input]);
      // TensorList types are written "TensorList": dtype unknown for the list.
      out->inputs[k].dtype = d;
    }
  }
  return Status::Ok();
}

Status ParseAscendShapes(std::string_view shapes, std::string_view types, OpShapes* out) {
  *out = OpShapes{};
  auto trim = [](std::string_view v) {
    while (!v.empty() && (IsSpace(v.front()) || v.front() == '"')) v.remove_prefix(1);
    while (!v.empty() && (IsSpace(v.back()) || v.back() == '"')) v.remove_suffix(1);
    return v;
  };
  shapes = trim(shapes);
  types = trim(types);
  if (shapes.empty()) return Status::Ok();
  size_t start = 0;
  for (;;) {
    size_t end = shapes.find(';', start);
    std::string_view item = trim(shapes.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (out->count >= kMaxShapeInputs) {
      out->truncated = true;
    } else {
      TensorShape& t = out->inputs[out->count++];
      t = TensorShape{};
      if (!item.empty()) {
        t.present = true;
        size_t p = 0;
        int rank = 0;
        while (p <= item.size()) {
          size_t c = item.find(',', p);
          std::string_view d = trim(item.substr(p, c == std::string_view::npos ? std::string_view::npos : c - p));
          int64_t v = 0;
          bool neg = !d.empty() && d.front() == '-';
          if (neg) d.remove_prefix(1);
          if (d.empty()) {
            *out = OpShapes{};
            return InvalidArgumentError(fmt::format("Input Shapes '{}': empty dimension", shapes.substr(0, 120)));
          }
          for (char ch : d) {
            if (ch < '0' || ch > '9' || v > (std::numeric_limits<int64_t>::max() - 9) / 10) {
              *out = OpShapes{};
              return InvalidArgumentError(fmt::format("Input Shapes '{}': bad dimension '{}'", shapes.substr(0, 120), d));
            }
            v = v * 10 + (ch - '0');
          }
          if (rank < kMaxShapeRank) t.dims[rank] = neg ? -v : v;
          else out->truncated = true;
          ++rank;
          if (c == std::string_view::npos) break;
          p = c + 1;
        }
        t.rank = static_cast<uint8_t>(rank > kMaxShapeRank ? kMaxShapeRank : rank);
      }
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  // A trailing ';' is one more (empty) input: the type lists count it too
  // (FlashAttentionScoreGrad in pta_advisor_ut_llm_matmul_fa: 10 entries, 10 types).
  if (!types.empty()) {
    size_t s = 0;
    for (int k = 0; k < out->count; ++k) {
      size_t e = types.find(';', s);
      std::string_view item = trim(types.substr(s, e == std::string_view::npos ? std::string_view::npos : e - s));
      out->inputs[k].dtype = ParseDType(item);
      if (e == std::string_view::npos) break;
      s = e + 1;
    }
  }
  return Status::Ok();
}

Status ParseHostOpShapes(std::string_view dims, std::string_view types, OpShapes* out) {
  size_t first = 0;
  while (first < dims.size() && IsSpace(dims[first])) ++first;
  if (first < dims.size() && dims[first] != '[') return ParseAscendShapes(dims, types, out);
  return ParseKinetoShapes(dims, types, out);
}

int DecodeStorageFormats(std::string_view formats, OpShapes* shapes) {
  int decoded = 0;
  size_t start = 0;
  for (int k = 0; k < shapes->count && start <= formats.size(); ++k) {
    const size_t end = formats.find(';', start);
    std::string_view format = formats.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    while (!format.empty() && (IsSpace(format.front()) || format.front() == '"')) format.remove_prefix(1);
    while (!format.empty() && (IsSpace(format.back()) || format.back() == '"')) format.remove_suffix(1);
    if (format.starts_with("FORMAT_")) format.remove_prefix(7);
    TensorShape& t = shapes->inputs[k];
    const int r = t.rank;
    auto& d = t.dims;
    if (t.present && format == "FRACTAL_NZ" && r >= 4) {
      const int64_t m = d[r - 3] * d[r - 2], n = d[r - 4] * d[r - 1];
      d[r - 4] = m;
      d[r - 3] = n;
      d[r - 2] = d[r - 1] = 0;
      t.rank = static_cast<uint8_t>(r - 2);
      ++decoded;
    } else if (t.present && format == "NC1HWC0" && r == 5) {
      const int64_t c = d[1] * d[4];
      d[1] = c;
      d[4] = 0;
      t.rank = 4;
      ++decoded;
    } else if (t.present && format == "FRACTAL_Z" && r == 4) {
      const int64_t rows = d[1] * d[2], cols = d[0] * d[3];
      d[0] = rows;
      d[1] = cols;
      d[2] = d[3] = 0;
      t.rank = 2;
      ++decoded;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return decoded;
}

}  // namespace pypto
