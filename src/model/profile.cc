#include "model/profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>

#include "model/plain_decimal.h"

namespace pypto {

uint32_t HostOpTable::Add(const HostOpRow& r) {
  uint32_t row = static_cast<uint32_t>(ts.size());
  name.push_back(r.name);
  category.push_back(r.category);
  kind.push_back(r.kind);
  track.push_back(r.track);
  ts.push_back(r.ts);
  dur.push_back(r.dur);
  depth.push_back(0);
  parent.push_back(kNoIndex);
  input_dims.push_back(r.input_dims);
  input_types.push_back(r.input_types);
  correlation.push_back(r.correlation);
  external_id.push_back(r.external_id);
  sequence_number.push_back(r.sequence_number);
  return row;
}

void HostOpTable::Reserve(size_t n) {
  name.reserve(n); category.reserve(n); kind.reserve(n); track.reserve(n); ts.reserve(n);
  dur.reserve(n); depth.reserve(n); parent.reserve(n); input_dims.reserve(n); input_types.reserve(n);
  correlation.reserve(n); external_id.reserve(n); sequence_number.reserve(n);
}

uint32_t DeviceTaskTable::Add(const DeviceTaskRow& r) {
  uint32_t row = static_cast<uint32_t>(ts.size());
  name.push_back(r.name);
  category.push_back(r.category);
  kind.push_back(r.kind);
  track.push_back(r.track);
  ts.push_back(r.ts);
  dur.push_back(r.dur);
  correlation.push_back(r.correlation);
  external_id.push_back(r.external_id);
  launch_dims.push_back(launch_dims_table.IdOf(
      {{r.grid[0], r.grid[1], r.grid[2]}, {r.block[0], r.block[1], r.block[2]}}));
  bytes.push_back(r.bytes);
  core_type.push_back(r.core_type);
  graph_launched.push_back(r.graph_launched ? 1 : 0);
  launcher.push_back(kNoIndex);
  bool has_detail = r.block_dim >= 0 || r.mix_block_dim >= 0 || r.op_type != kEmptyStr ||
                    r.input_shapes != kEmptyStr || r.input_types != kEmptyStr ||
                    r.input_formats != kEmptyStr || r.output_shapes != kEmptyStr ||
                    r.output_types != kEmptyStr || r.output_formats != kEmptyStr;
  if (has_detail) {
    detail.push_back(details.RowOf(DeviceTaskDetailTable::Facts::Of(r)));
  } else {
    detail.push_back(kNoIndex);
  }
  return row;
}

void DeviceTaskTable::Reserve(size_t n) {
  name.reserve(n); category.reserve(n); kind.reserve(n); track.reserve(n); ts.reserve(n);
  dur.reserve(n); correlation.reserve(n); external_id.reserve(n); launch_dims.reserve(n);
  bytes.reserve(n); core_type.reserve(n); graph_launched.reserve(n); launcher.reserve(n); detail.reserve(n);
}

namespace {
// Slots of the recent-facts table: 64 KB, more than the distinct kernels of a
// decode step (a few hundred), so a step's repeats are found.
constexpr size_t kRecentDetailSlots = size_t{1} << 14;
}  // namespace

int32_t DeviceTaskDetailTable::RowOf(const Facts& facts) {
  if (recent_row_.empty()) recent_row_.assign(kRecentDetailSlots, kNoIndex);
  uint64_t hash = 0x9E3779B97F4A7C15ULL;
  for (uint32_t field : {static_cast<uint32_t>(facts.block_dim), static_cast<uint32_t>(facts.mix_block_dim),
                         facts.op_type, facts.input_shapes, facts.input_types, facts.input_formats,
                         facts.output_shapes, facts.output_types, facts.output_formats}) {
    hash = (hash ^ field) * 0x100000001B3ULL;
    hash ^= hash >> 29;
  }
  int32_t& slot = recent_row_[hash & (kRecentDetailSlots - 1)];
  if (slot != kNoIndex && Get(static_cast<size_t>(slot)) == facts) return slot;
  slot = static_cast<int32_t>(size());
  block_dim.push_back(facts.block_dim);
  mix_block_dim.push_back(facts.mix_block_dim);
  op_type.push_back(facts.op_type);
  input_shapes.push_back(facts.input_shapes);
  input_types.push_back(facts.input_types);
  input_formats.push_back(facts.input_formats);
  output_shapes.push_back(facts.output_shapes);
  output_types.push_back(facts.output_types);
  output_formats.push_back(facts.output_formats);
  return slot;
}

void DeviceTaskDetailTable::Clear() {
  for (auto* column : {&block_dim, &mix_block_dim}) column->clear();
  for (auto* column : {&op_type, &input_shapes, &input_types, &input_formats, &output_shapes, &output_types,
                       &output_formats})
    column->clear();
  std::vector<int32_t>().swap(recent_row_);
}

void IdColumn::Widen() {
  wide_values_.reserve(narrow_.capacity());
  for (size_t row = 0; row < narrow_.size(); ++row) wide_values_.push_back(FromNarrow(narrow_[row]));
  narrow_.clear();
  wide_ = true;
}

void IdColumn::Append(const IdColumn& other) {
  if (other.wide_ && !wide_) Widen();
  if (wide_ == other.wide_) {  // the same width: one copy (the parallel Kineto import appends chunks)
    if (wide_) wide_values_.insert(wide_values_.end(), other.wide_values_.begin(), other.wide_values_.end());
    else narrow_.Append(other.narrow_);
    return;
  }
  wide_values_.reserve(size() + other.size());
  for (size_t row = 0; row < other.size(); ++row) wide_values_.push_back(FromNarrow(other.narrow_[row]));
}

bool IdColumn::operator==(const IdColumn& other) const {
  if (size() != other.size()) return false;
  if (wide_ == other.wide_) return wide_ ? wide_values_ == other.wide_values_ : narrow_ == other.narrow_;
  for (size_t row = 0; row < size(); ++row)
    if ((*this)[row] != other[row]) return false;
  return true;
}

void LaunchDimsTable::Clear() {
  dims_.assign(1, Dims{});
  id_of_.clear();
  id_of_.emplace(Dims{}, 0);
  last_ = 0;
}

uint32_t LaunchDimsTable::IdOf(const Dims& dims) {
  if (dims_[last_] == dims) return last_;
  auto [it, inserted] = id_of_.try_emplace(dims, static_cast<uint32_t>(dims_.size()));
  if (inserted) dims_.push_back(dims);
  last_ = it->second;
  return last_;
}

size_t LaunchDimsTable::MemoryBytes() const {
  constexpr size_t kMapNodeBytes = 64;  // a std::map node of a 24-byte key and an id, with its links
  return dims_.capacity() * sizeof(Dims) + id_of_.size() * kMapNodeBytes;
}

namespace {
// An attribute row's encoding byte: the top two bits say how its value
// reads, the low six bits carry the decimal's scale or the text form.
constexpr uint8_t kEncodingKindMask = 0xC0;
constexpr uint8_t kEncodingLowMask = 0x3F;
// The number is in the sparse whole list; low bits: its text form.
constexpr uint8_t kWholeNumber = 0x00;
// The number is mantissa / 10^s (value: the int32 mantissa, low bits: s); text form shortest.
constexpr uint8_t kDecimalShortest = 0x40;
// The number is mantissa / 10^D (low bits: D); text form fixed with D decimals.
constexpr uint8_t kDecimalFixed = 0x80;
// No number: the value is a text id, or there is neither (a NaN as written).
constexpr uint8_t kBoxedText = 0xFE;
constexpr uint8_t kNoValue = 0xFF;
static_assert(1 + kMaxFixedDecimals <= kEncodingLowMask, "a text form fits the encoding's low bits");

// Largest scale of a kept decimal: 10^s is exact in a double up to 10^22, and
// a mantissa below 2^31 has at most 10 digits, so a scale beyond ~15 only
// matters for numbers below 1e-5 written with many digits (kept whole).
constexpr int kMaxDecimalScale = 15;
constexpr const double (&kPowersOfTen)[kMaxDecimalScale + 1] = kExactPowersOfTen;
constexpr double kMantissaLimit = 2147483648.0;  // 2^31: the mantissa is an int32

// Key ids indexed directly when looking up a key's slot: 4 bytes each, so at
// most 64 MB for a profile with 16 M strings (its string table is far larger).
constexpr StrId kMaxSlotIndexedKeyId = StrId{1} << 24;

uint64_t BitsOf(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double DecimalValue(int32_t mantissa, int scale) { return static_cast<double>(mantissa) / kPowersOfTen[scale]; }

// Whether `value` is exactly mantissa / 10^scale with an int32 mantissa. The
// read-back is the same division, so the check is what number() returns, bit
// for bit (-0.0 and any value the division would not give back stay whole).
bool AsDecimal(double value, int scale, int32_t* mantissa) {
  const double scaled = value * kPowersOfTen[scale];
  if (!(std::fabs(scaled) < kMantissaLimit)) return false;
  *mantissa = static_cast<int32_t>(std::nearbyint(scaled));
  return BitsOf(DecimalValue(*mantissa, scale)) == BitsOf(value);
}
}  // namespace

void AttributeTable::Reserve(size_t n) {
  switch (key_width_) {
    case KeyWidth::kPairCode: pair_code_.reserve(n); break;
    case KeyWidth::kByteSlot: key_byte_slot_.reserve(n); break;
    case KeyWidth::kShortSlot: key_slot_.reserve(n); break;
    case KeyWidth::kKeyId: key_wide_.reserve(n); break;
  }
  value_.reserve(n);
  if (key_width_ != KeyWidth::kPairCode) encoding_.reserve(n);
}

void AttributeTable::Clear() {
  runs_.clear();
  pair_code_.clear();
  pairs_.clear();
  code_of_pair_.clear();
  key_byte_slot_.clear();
  key_slot_.clear();
  slot_key_.clear();
  slot_of_key_.clear();
  key_width_ = KeyWidth::kPairCode;
  key_wide_.clear();
  value_.clear();
  encoding_.clear();
  whole_row_.clear();
  whole_bits_.clear();
  number_text_row_.clear();
  number_text_.clear();
}

size_t AttributeTable::MemoryBytes() const {
  return runs_.MemoryBytes() + pair_code_.capacity() + pairs_.capacity() * sizeof(SlotEncoding) +
         code_of_pair_.capacity() * sizeof(uint16_t) + key_byte_slot_.capacity() +
         key_slot_.capacity() * sizeof(uint16_t) + slot_key_.capacity() * sizeof(StrId) +
         slot_of_key_.capacity() * sizeof(uint32_t) + key_wide_.capacity() * sizeof(StrId) + value_.MemoryBytes() +
         encoding_.capacity() + whole_row_.capacity() * sizeof(size_t) + whole_bits_.capacity() * sizeof(uint64_t) +
         number_text_row_.capacity() * sizeof(size_t) + number_text_.capacity() * sizeof(StrId);
}

void AttributeTable::AppendRow(OwnerKind kind, uint32_t owner_row, StrId key_id, uint8_t encoding, uint32_t value) {
  const size_t runs = runs_.size();
  if (runs == 0 || runs_.owner(runs - 1) != owner_row || runs_.kind(runs - 1) != kind)
    runs_.push_back(size(), kind, owner_row);
  // The value goes last: size() counts the rows before this one until then
  // (AddKey reads every row's key when it widens them).
  if (key_width_ == KeyWidth::kPairCode) {
    // A pair seen before (a kernel_details.csv's every row but the first few): no call.
    uint16_t code = 0;
    if (key_id < slot_of_key_.size() && slot_of_key_[key_id] != 0)
      code = code_of_pair_[(slot_of_key_[key_id] - 1) * kEncodings + encoding];
    if (code != 0) {
      pair_code_.push_back(static_cast<uint8_t>(code - 1));
      value_.push_back(value);
      return;
    }
    if (AddPairCode(key_id, encoding)) {
      value_.push_back(value);
      return;
    }
  }
  encoding_.push_back(encoding);
  // A key seen before, in byte slots: no call.
  if (key_width_ == KeyWidth::kByteSlot && key_id < slot_of_key_.size() && slot_of_key_[key_id] != 0)
    key_byte_slot_.push_back(static_cast<uint8_t>(slot_of_key_[key_id] - 1));
  else
    AddKey(key_id);
  value_.push_back(value);
}

bool AttributeTable::AddPairCode(StrId key_id, uint8_t encoding) {
  const bool known_key = key_id < slot_of_key_.size() && slot_of_key_[key_id] != 0;
  // A 257th pair, a 257th key or a key id too large to index: one byte no
  // longer holds the pair.
  if (pairs_.size() == kMaxPairCodes ||
      (!known_key && (key_id >= kMaxSlotIndexedKeyId || slot_key_.size() == kMaxPairCodes))) {
    PairCodesToSlots();
    return false;
  }
  if (!known_key) {
    AddSlot(key_id);
    code_of_pair_.resize(slot_key_.size() * kEncodings, 0);
  }
  const uint32_t slot = slot_of_key_[key_id] - 1;
  pairs_.push_back({static_cast<uint8_t>(slot), encoding});
  code_of_pair_[slot * kEncodings + encoding] = static_cast<uint16_t>(pairs_.size());
  pair_code_.push_back(static_cast<uint8_t>(pairs_.size() - 1));
  return true;
}

void AttributeTable::AddSlot(StrId key_id) {
  if (key_id >= slot_of_key_.size()) slot_of_key_.resize(static_cast<size_t>(key_id) + 1, 0);
  slot_key_.push_back(key_id);
  slot_of_key_[key_id] = static_cast<uint32_t>(slot_key_.size());
}

void AttributeTable::PairCodesToSlots() {
  // The rows before keep their keys' slots (all below 256) and encodings.
  key_byte_slot_.reserve(pair_code_.capacity());
  encoding_.reserve(pair_code_.capacity());
  for (uint8_t code : pair_code_) {
    key_byte_slot_.push_back(pairs_[code].slot);
    encoding_.push_back(pairs_[code].encoding);
  }
  std::vector<uint8_t>().swap(pair_code_);
  std::vector<SlotEncoding>().swap(pairs_);
  std::vector<uint16_t>().swap(code_of_pair_);
  key_width_ = KeyWidth::kByteSlot;
}

void AttributeTable::Add(OwnerKind kind, uint32_t owner_row, StrId key_id, StrId text_id, double number_value,
                         uint8_t text_form) {
  const size_t row = size();
  if (std::isnan(number_value)) {
    AppendRow(kind, owner_row, key_id, text_id == kEmptyStr ? kNoValue : kBoxedText,
              text_id == kEmptyStr ? 0 : text_id);
    return;
  }
  if (text_id != kEmptyStr) {
    number_text_row_.push_back(row);
    number_text_.push_back(text_id);
  }
  // The text form applies only when no text is kept; one the table cannot
  // write back (not shortest, not 1..40 decimals) reads as shortest.
  uint8_t form = text_id == kEmptyStr ? text_form : kShortestNumberText;
  if (form > 1 + kMaxFixedDecimals) form = kShortestNumberText;
  int32_t mantissa = 0;
  if (form != kShortestNumberText) {
    const int decimals = form - 1;
    if (decimals <= kMaxDecimalScale && AsDecimal(number_value, decimals, &mantissa)) {
      AppendRow(kind, owner_row, key_id, static_cast<uint8_t>(kDecimalFixed | decimals),
                static_cast<uint32_t>(mantissa));
      return;
    }
  } else {
    // The smallest scale that gives the number back.
    for (int scale = 0; scale <= kMaxDecimalScale; ++scale) {
      if (!(std::fabs(number_value) * kPowersOfTen[scale] < kMantissaLimit)) break;
      if (AsDecimal(number_value, scale, &mantissa)) {
        AppendRow(kind, owner_row, key_id, static_cast<uint8_t>(kDecimalShortest | scale),
                  static_cast<uint32_t>(mantissa));
        return;
      }
    }
  }
  AppendRow(kind, owner_row, key_id, static_cast<uint8_t>(kWholeNumber | form), 0);
  whole_row_.push_back(row);
  whole_bits_.push_back(BitsOf(number_value));
}

void AttributeTable::AddDecimal(OwnerKind kind, uint32_t owner_row, StrId key_id, int32_t mantissa, int scale,
                                uint8_t text_form) {
  static_assert(kMaxDecimalTextScale <= kMaxDecimalScale);
  // Add finds the same row when:
  // - the form is fixed with `scale` decimals: mantissa / 10^scale, times
  //   10^scale, rounds back to the mantissa (|mantissa| < 2^31 is far below
  //   2^53), and its division gives the value back;
  // - the form is shortest and the last digit is not 0 (or there is no
  //   point): no smaller scale gives the value back, as a decimal of at most
  //   15 significant digits (DBL_DIG) and a different one are different
  //   doubles, and this scale does.
  // INT32_MIN fails Add's |mantissa| < 2^31 and goes through Add, as does
  // any other form.
  const bool fixed = text_form == 1 + scale;
  const bool shortest = text_form == kShortestNumberText && (scale == 0 || mantissa % 10 != 0);
  if (scale < 0 || scale > kMaxDecimalTextScale || mantissa == std::numeric_limits<int32_t>::min() ||
      !(fixed || shortest)) {
    const double value = scale >= 0 && scale <= kMaxDecimalScale
                             ? DecimalValue(mantissa, scale)
                             : static_cast<double>(mantissa) / std::pow(10.0, scale);  // outside the contract
    Add(kind, owner_row, key_id, kEmptyStr, value, text_form);
    return;
  }
  AppendRow(kind, owner_row, key_id, static_cast<uint8_t>((fixed ? kDecimalFixed : kDecimalShortest) | scale),
            static_cast<uint32_t>(mantissa));
}

void AttributeTable::AppendFrom(const AttributeTable& from, const std::vector<StrId>* string_map,
                                const std::function<uint32_t(OwnerKind, uint32_t)>& owner_of) {
  auto mapped = [&](StrId id) { return string_map ? (*string_map)[id] : id; };
  // from's side lists are ascending by row, as its rows are read here.
  size_t next_whole = 0, next_number_text = 0;
  for (size_t r = 0; r < from.runs_.size(); ++r) {
    const OwnerRun run_rows = from.run(r);
    const uint32_t owner = owner_of(run_rows.kind, run_rows.owner);
    for (size_t i = run_rows.begin; i < run_rows.end; ++i) {
      const uint8_t encoding = from.Encoding(i);
      const size_t row = size();
      // In Add's order: a number's text before the row, its whole bits after.
      if (next_number_text < from.number_text_row_.size() && from.number_text_row_[next_number_text] == i) {
        number_text_row_.push_back(row);
        number_text_.push_back(mapped(from.number_text_[next_number_text++]));
      }
      const uint32_t value = encoding == kBoxedText ? mapped(from.value_[i]) : from.value_[i];
      AppendRow(run_rows.kind, owner, mapped(from.key(i)), encoding, value);
      if ((encoding & kEncodingKindMask) == kWholeNumber) {
        whole_row_.push_back(row);
        whole_bits_.push_back(from.whole_bits_[next_whole++]);
      }
    }
  }
}

void AttributeTable::AddKey(StrId key_id) {
  if (key_width_ == KeyWidth::kKeyId) {
    key_wide_.push_back(key_id);
    return;
  }
  // Key ids are string ids, dense from 0; one far beyond them (a table filled
  // by hand) would make the slot index huge, so it switches to key ids too.
  const bool sparse_id = key_id >= kMaxSlotIndexedKeyId;
  if (!sparse_id && key_id >= slot_of_key_.size()) slot_of_key_.resize(static_cast<size_t>(key_id) + 1, 0);
  if (sparse_id || slot_of_key_[key_id] == 0) {
    if (sparse_id || slot_key_.size() > std::numeric_limits<uint16_t>::max()) {
      // A 65537th distinct key, or an id too large to index: every row keeps its key id from now on.
      const size_t rows = size();
      key_wide_.reserve(std::max(key_byte_slot_.capacity(), key_slot_.capacity()));
      for (size_t row = 0; row < rows; ++row) key_wide_.push_back(key(row));
      key_wide_.push_back(key_id);
      std::vector<uint8_t>().swap(key_byte_slot_);
      std::vector<uint16_t>().swap(key_slot_);
      std::vector<StrId>().swap(slot_key_);
      std::vector<uint32_t>().swap(slot_of_key_);
      key_width_ = KeyWidth::kKeyId;
      return;
    }
    if (key_width_ == KeyWidth::kByteSlot && slot_key_.size() > std::numeric_limits<uint8_t>::max()) {
      // A 257th distinct key: 2-byte slots from now on, the rows before included.
      key_slot_.reserve(key_byte_slot_.capacity());
      key_slot_.assign(key_byte_slot_.begin(), key_byte_slot_.end());
      std::vector<uint8_t>().swap(key_byte_slot_);
      key_width_ = KeyWidth::kShortSlot;
    }
    AddSlot(key_id);
  }
  const uint32_t slot = slot_of_key_[key_id] - 1;
  if (key_width_ == KeyWidth::kByteSlot) key_byte_slot_.push_back(static_cast<uint8_t>(slot));
  else key_slot_.push_back(static_cast<uint16_t>(slot));
}

size_t OwnerRunTable::RunOf(size_t row) const {
  // Runs [first run of row's high part, first run of the next) begin in the
  // same 2^32 rows: a bisection of their low parts.
  const size_t high = row >> 32;
  if (high > high_starts_.size()) return size() - 1;  // past the last run's start
  const size_t first = high == 0 ? 0 : high_starts_[high - 1];
  const size_t last = high < high_starts_.size() ? high_starts_[high] : size();
  const uint32_t low = static_cast<uint32_t>(row);
  auto it = std::upper_bound(begin_low_.begin() + first, begin_low_.begin() + last, low);
  return static_cast<size_t>(it - begin_low_.begin()) - 1;
}

StrId AttributeTable::text(size_t row) const {
  if (Encoding(row) == kBoxedText) return static_cast<StrId>(value_[row]);
  if (number_text_row_.empty()) return kEmptyStr;
  auto it = std::lower_bound(number_text_row_.begin(), number_text_row_.end(), row);
  return it != number_text_row_.end() && *it == row ? number_text_[it - number_text_row_.begin()] : kEmptyStr;
}

double AttributeTable::number(size_t row) const {
  const uint8_t encoding = Encoding(row);
  switch (encoding & kEncodingKindMask) {
    case kDecimalShortest:
    case kDecimalFixed:
      return DecimalValue(static_cast<int32_t>(value_[row]), encoding & kEncodingLowMask);
    case kWholeNumber: {
      auto it = std::lower_bound(whole_row_.begin(), whole_row_.end(), row);
      double value;
      const uint64_t bits = whole_bits_[it - whole_row_.begin()];
      std::memcpy(&value, &bits, sizeof value);
      return value;
    }
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

uint8_t AttributeTable::number_text_form(size_t row) const {
  const uint8_t encoding = Encoding(row);
  switch (encoding & kEncodingKindMask) {
    case kWholeNumber: return encoding & kEncodingLowMask;
    case kDecimalFixed: return static_cast<uint8_t>(1 + (encoding & kEncodingLowMask));
    default: return kShortestNumberText;
  }
}

namespace {
// Shortest decimal text that reads back as `value` ("0.599", "81431", "1e+16").
std::string_view ShortestText(double value, char (&buffer)[32]) {
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return result.ec == std::errc() ? std::string_view(buffer, result.ptr - buffer) : std::string_view();
}

// Fixed-notation text is tried for numbers below 1e21 only: at most 22
// characters before the point, a point and kMaxFixedDecimals digits.
constexpr double kFixedTextMaxMagnitude = 1e21;
constexpr size_t kFixedTextBuffer = 80;

// Fixed notation with `decimals` digits after the point ("1.200").
std::string_view FixedText(double value, int decimals, char (&buffer)[kFixedTextBuffer]) {
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  return result.ec == std::errc() ? std::string_view(buffer, result.ptr - buffer) : std::string_view();
}
}  // namespace

uint8_t Profile::NumberTextForm(std::string_view cell, double number) {
  if (std::isnan(number) || cell.empty()) return kNoNumberTextForm;
  if (const std::optional<PlainDecimal> plain = ParsePlainDecimal(cell);
      plain && BitsOf(plain->Value()) == BitsOf(number))
    if (const std::optional<uint8_t> form = PlainDecimalTextForm(*plain)) return *form;
  char buffer[32];
  if (ShortestText(number, buffer) == cell) return kShortestNumberText;
  // Fixed notation: digits, a point, then D digits ("0.000", "-1.250"); the
  // magnitude check keeps the formatted text inside the buffer.
  const size_t point = cell.find('.');
  if (point == std::string_view::npos || std::fabs(number) >= kFixedTextMaxMagnitude) return kNoNumberTextForm;
  const size_t decimals = cell.size() - point - 1;
  if (decimals == 0 || decimals > kMaxFixedDecimals) return kNoNumberTextForm;
  char fixed[kFixedTextBuffer];
  return FixedText(number, static_cast<int>(decimals), fixed) == cell ? static_cast<uint8_t>(1 + decimals)
                                                                       : kNoNumberTextForm;
}

Profile::AttributeTextRef Profile::AttributeTextOf(std::string_view cell, double number) {
  const uint8_t form = NumberTextForm(cell, number);
  if (form != kNoNumberTextForm) return {kEmptyStr, form};
  return {Intern(cell), kShortestNumberText};
}

void Profile::AddAttribute(OwnerKind kind, uint32_t owner, StrId key, std::string_view cell, double number) {
  const AttributeTextRef text = AttributeTextOf(cell, number);
  attributes.Add(kind, owner, key, text.text, number, text.form);
}

std::string Profile::AttributeText(size_t row) const {
  const StrId id = attributes.text(row);
  const double number = attributes.number(row);
  if (id != kEmptyStr || std::isnan(number)) return std::string(Str(id));
  const uint8_t form = attributes.number_text_form(row);
  if (form != kShortestNumberText) {
    char fixed[kFixedTextBuffer];
    return std::string(FixedText(number, form - 1, fixed));
  }
  char buffer[32];
  return std::string(ShortestText(number, buffer));
}

void FlowTable::Add(uint64_t flow_id, StrId cat, char ph, uint32_t track_row, TimeNs time) {
  id.push_back(flow_id);
  category.push_back(cat);
  phase.push_back(ph);
  track.push_back(track_row);
  ts.push_back(time);
}

void FlowTable::Reserve(size_t n) {
  id.reserve(n); category.reserve(n); phase.reserve(n); track.reserve(n); ts.reserve(n);
}

namespace {
// The names of each enum in value order; Parse* searches the same list, so a
// name and its parse cannot disagree.
constexpr const char* kTrackKindNames[] = {"host_thread", "device_stream", "other"};
constexpr const char* kHostOpKindNames[] = {"operator", "user_annotation", "runtime", "driver", "python", "other"};
constexpr const char* kDeviceTaskKindNames[] = {"kernel", "memcpy",     "memset", "communication",
                                                "sync",   "annotation", "other"};
constexpr const char* kOwnerKindNames[] = {"host_op", "device_task", "track", "device", "step"};
constexpr const char* kDeviceKindNames[] = {"cpu", "cuda", "rocm", "npu", "other"};
static_assert(std::size(kHostOpKindNames) == kHostOpKindCount);
static_assert(std::size(kDeviceTaskKindNames) == kDeviceTaskKindCount);

template <typename Enum, size_t N>
const char* EnumName(const char* const (&names)[N], Enum value, const char* fallback) {
  const size_t i = static_cast<size_t>(value);
  return i < N ? names[i] : fallback;
}
template <typename Enum, size_t N>
std::optional<Enum> ParseEnum(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<Enum>(i);
  return std::nullopt;
}
}  // namespace

const char* TrackKindName(TrackKind kind) { return EnumName(kTrackKindNames, kind, "other"); }
std::optional<TrackKind> ParseTrackKind(std::string_view name) { return ParseEnum<TrackKind>(kTrackKindNames, name); }
const char* HostOpKindName(HostOpKind kind) { return EnumName(kHostOpKindNames, kind, "other"); }
std::optional<HostOpKind> ParseHostOpKind(std::string_view name) {
  return ParseEnum<HostOpKind>(kHostOpKindNames, name);
}
const char* DeviceTaskKindName(DeviceTaskKind kind) { return EnumName(kDeviceTaskKindNames, kind, "other"); }
std::optional<DeviceTaskKind> ParseDeviceTaskKind(std::string_view name) {
  return ParseEnum<DeviceTaskKind>(kDeviceTaskKindNames, name);
}
const char* OwnerKindName(OwnerKind kind) { return EnumName(kOwnerKindNames, kind, "other"); }
std::optional<OwnerKind> ParseOwnerKind(std::string_view name) { return ParseEnum<OwnerKind>(kOwnerKindNames, name); }
const char* DeviceKindName(DeviceKind kind) { return EnumName(kDeviceKindNames, kind, "other"); }
std::optional<DeviceKind> ParseDeviceKind(std::string_view name) {
  return ParseEnum<DeviceKind>(kDeviceKindNames, name);
}

uint32_t Profile::TrackFor(std::string_view pid_token, std::string_view tid_token, TrackKind kind) {
  StrId pid = strings.Intern(pid_token);
  StrId tid = strings.Intern(tid_token);
  auto [it, inserted] = track_index_.try_emplace({pid, tid}, static_cast<uint32_t>(tracks.size()));
  if (inserted) {
    tracks.pid_token.push_back(pid);
    tracks.tid_token.push_back(tid);
    tracks.name.push_back(kEmptyStr);
    tracks.process_name.push_back(kEmptyStr);
    tracks.kind.push_back(kind);
    tracks.device.push_back(-1);
    tracks.stream.push_back(-1);
  }
  return it->second;
}

uint32_t Profile::DeviceTrack(std::string_view pid_token, std::string_view tid_token, int32_t device,
                             int64_t stream) {
  uint32_t track = TrackFor(pid_token, tid_token, TrackKind::kDeviceStream);
  tracks.kind[track] = TrackKind::kDeviceStream;
  tracks.device[track] = device;
  tracks.stream[track] = stream;
  return track;
}

void Profile::CountLoss(LossKind kind, const std::string& reason, const std::string& location, uint64_t n) {
  auto& entry = data_loss[reason];
  if (entry.count == 0) {
    entry.first_location = location;
    entry.kind = kind;
  }
  entry.count += n;
}

namespace {
constexpr LossKindInfo kLossKinds[] = {
    {"file_unreadable", LossSeverity::kHigh, "a whole file of the profile was not read: everything it holds is missing"},
    {"truncated", LossSeverity::kHigh, "the input ends early: rows after the cut are missing"},
    {"row_skipped", LossSeverity::kHigh, "a timed row or event was skipped: its time and counts are missing"},
    {"link_lost", LossSeverity::kMedium,
     "a relation between rows (launch flow, owner, rank) was lost: attribution is weaker, times are kept"},
    {"value_repaired", LossSeverity::kMedium,
     "a value was clamped, read as 0, as unknown or as text: the row is kept with that value"},
    {"value_ignored", LossSeverity::kLow,
     "a field was ignored (duplicate key, unusable id, bogus window end): the figures are unchanged"},
    {"text_replaced", LossSeverity::kLow, "text was repaired (invalid UTF-8 replaced): names only"},
    {"unclassified", LossSeverity::kMedium, "read back from a profile saved by an older pypto, without its kind"},
};
static_assert(std::size(kLossKinds) == kLossKindCount);
}  // namespace

const LossKindInfo& DescribeLoss(LossKind kind) {
  const size_t i = static_cast<size_t>(kind);
  return kLossKinds[i < kLossKindCount ? i : static_cast<size_t>(LossKind::kUnclassified)];
}

const char* LossSeverityName(LossSeverity severity) {
  switch (severity) {
    case LossSeverity::kHigh: return "high";
    case LossSeverity::kMedium: return "medium";
    case LossSeverity::kLow: return "low";
  }
  return "medium";
}

std::optional<LossKind> ParseLossKind(std::string_view name) {
  for (size_t i = 0; i < kLossKindCount; ++i)
    if (name == kLossKinds[i].name) return static_cast<LossKind>(i);
  return std::nullopt;
}

uint64_t Profile::TotalDataLoss() const {
  uint64_t total = 0;
  for (const auto& [reason, entry] : data_loss) total += entry.count;
  return total;
}

size_t Profile::MemoryBytes() const { return MemoryBytesByTable().total(); }

Profile::TableBytes Profile::MemoryBytesByTable() const {
  auto vec = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  TableBytes b;
  b.strings = strings.memory_bytes();
  const auto& h = host_ops;
  b.host_ops = vec(h.name) + vec(h.category) + vec(h.kind) + vec(h.track) + vec(h.ts) + vec(h.dur) + vec(h.depth) +
               vec(h.parent) + vec(h.input_dims) + vec(h.input_types) + h.correlation.MemoryBytes() +
               h.external_id.MemoryBytes() + h.sequence_number.MemoryBytes();
  const auto& d = device_tasks;
  b.device_tasks = vec(d.name) + vec(d.category) + vec(d.kind) + vec(d.track) + vec(d.ts) + vec(d.dur) +
                   d.correlation.MemoryBytes() + d.external_id.MemoryBytes() + d.launch_dims.MemoryBytes() +
                   d.launch_dims_table.MemoryBytes() + d.bytes.MemoryBytes() + vec(d.core_type) +
                   d.graph_launched.MemoryBytes() + d.launcher.MemoryBytes() + vec(d.detail);
  const auto& x = d.details;
  b.device_tasks += vec(x.block_dim) + vec(x.mix_block_dim) + vec(x.op_type) + vec(x.input_shapes) +
                    vec(x.input_types) + vec(x.input_formats) + vec(x.output_shapes) + vec(x.output_types) +
                    vec(x.output_formats);
  b.attributes = attributes.MemoryBytes();
  b.flows = vec(flows.id) + vec(flows.category) + vec(flows.phase) + vec(flows.track) + vec(flows.ts);
  b.counters = counters.MemoryBytes();
  return b;
}

}  // namespace pypto
