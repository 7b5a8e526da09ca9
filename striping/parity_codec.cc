#include "striping/parity_codec.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <bitset>
#include <string>

#include "striping/stripe_map.h"

namespace graphfs {

// The layout offers what the codec can rebuild.
static_assert(ParityCodec::kMaxParity == StripeLayout::kMaxParity);

namespace {

// ISA-L takes an int length: longer units are coded in slices (the code works byte by byte).
constexpr uint64_t kSlice = uint64_t{1} << 30;

Status SameLength(uint64_t expected, uint64_t got, const std::string& which) {
  if (got == expected) return Status::Ok();
  return Error(EINVAL, "parity: " + which + " is " + std::to_string(got) + " bytes, the row's units are " +
                           std::to_string(expected));
}

// out[r] = tables(in) for every slice of `length` bytes.
void Code(uint64_t length, int sources, int outputs, unsigned char* tables, std::vector<unsigned char*>& in,
          std::vector<unsigned char*>& out) {
  std::vector<unsigned char*> in_at(in.size()), out_at(out.size());
  for (uint64_t at = 0; at < length; at += kSlice) {
    const int len = static_cast<int>(std::min(kSlice, length - at));
    for (size_t i = 0; i < in.size(); ++i) in_at[i] = in[i] + at;
    for (size_t i = 0; i < out.size(); ++i) out_at[i] = out[i] + at;
    ec_encode_data(len, sources, outputs, tables, in_at.data(), out_at.data());
  }
}

}  // namespace

Result<ParityCodec> ParityCodec::Create(uint32_t units, uint32_t parity) {
  if (parity < 1 || parity > kMaxParity)
    return Error(EINVAL, "parity: " + std::to_string(parity) + " parity units per row; 1 to " +
                             std::to_string(kMaxParity) + " are supported");
  if (parity >= units)
    return Error(EINVAL, "parity: " + std::to_string(parity) + " parity units need more than " +
                             std::to_string(parity) + " disks (a row of " + std::to_string(units) +
                             " units would hold no data)");
  if (units > kMaxUnits)
    return Error(EINVAL, "parity: rows of " + std::to_string(units) + " units; at most " +
                             std::to_string(kMaxUnits) + " (GF(2^8))");
  return ParityCodec(units, parity);
}

ParityCodec::ParityCodec(uint32_t units, uint32_t parity)
    : units_(units), parity_(parity), matrix_(size_t{units} * (units - parity)),
      encode_tables_(size_t{32} * (units - parity) * parity) {
  const int k = static_cast<int>(data_units());
  gf_gen_rs_matrix(matrix_.data(), static_cast<int>(units), k);
  ec_init_tables(k, static_cast<int>(parity), &matrix_[size_t{data_units()} * data_units()], encode_tables_.data());
}

Status ParityCodec::Encode(std::span<const std::span<const char>> data,
                           std::span<const std::span<char>> parity) const {
  if (data.size() != data_units() || parity.size() != parity_)
    return Error(EINVAL, "parity: encoding takes " + std::to_string(data_units()) + " data and " +
                             std::to_string(parity_) + " parity units, got " + std::to_string(data.size()) +
                             " and " + std::to_string(parity.size()));
  const uint64_t length = data[0].size();
  for (size_t i = 1; i < data.size(); ++i)
    GRAPHFS_RETURN_IF_ERROR(SameLength(length, data[i].size(), "data unit " + std::to_string(i)));
  for (size_t i = 0; i < parity.size(); ++i)
    GRAPHFS_RETURN_IF_ERROR(SameLength(length, parity[i].size(), "parity unit " + std::to_string(i)));
  if (length == 0) return Status::Ok();
  // ISA-L's pointers are not const; it only reads the sources.
  std::vector<unsigned char*> in, out;
  for (const auto& d : data) in.push_back(reinterpret_cast<unsigned char*>(const_cast<char*>(d.data())));
  for (const auto& p : parity) out.push_back(reinterpret_cast<unsigned char*>(p.data()));
  Code(length, static_cast<int>(data_units()), static_cast<int>(parity_),
       const_cast<unsigned char*>(encode_tables_.data()), in, out);
  return Status::Ok();
}

Status ParityCodec::Reconstruct(std::span<const std::span<char>> row, std::span<const uint32_t> lost) const {
  if (row.size() != units_)
    return Error(EINVAL, "parity: a row has " + std::to_string(units_) + " units, got " + std::to_string(row.size()));
  if (lost.size() > parity_)
    return Error(EINVAL, "parity: " + std::to_string(lost.size()) + " lost units in a row, more than its " +
                             std::to_string(parity_) + " parity units can rebuild");
  std::bitset<kMaxUnits> is_lost;
  for (uint32_t l : lost) {
    if (l >= units_)
      return Error(EINVAL, "parity: lost unit " + std::to_string(l) + " of a row of " + std::to_string(units_));
    if (is_lost[l]) return Error(EINVAL, "parity: unit " + std::to_string(l) + " listed twice as lost");
    is_lost[l] = true;
  }
  const uint64_t length = row[0].size();
  for (size_t i = 1; i < row.size(); ++i)
    GRAPHFS_RETURN_IF_ERROR(SameLength(length, row[i].size(), "unit " + std::to_string(i)));
  if (lost.empty() || length == 0) return Status::Ok();

  // The first N-K survivors, and the inverse of their rows of the matrix: it maps them back to
  // the data units.
  const uint32_t k = data_units();
  std::vector<uint32_t> sources;
  for (uint32_t i = 0; i < units_ && sources.size() < k; ++i)
    if (!is_lost[i]) sources.push_back(i);
  std::vector<unsigned char> survivors(size_t{k} * k), inverse(size_t{k} * k);
  for (uint32_t r = 0; r < k; ++r)
    std::copy_n(&matrix_[size_t{sources[r]} * k], k, &survivors[size_t{r} * k]);
  if (gf_invert_matrix(survivors.data(), inverse.data(), static_cast<int>(k)) != 0)
    return Error(EIO, "parity: the surviving units of a row cannot be inverted");  // not for K <= 3
  // A lost data unit is its row of the inverse; a lost parity unit its matrix row times it.
  std::vector<unsigned char> decode(size_t{k} * lost.size());
  for (size_t e = 0; e < lost.size(); ++e) {
    unsigned char* out = &decode[e * k];
    if (lost[e] < k) {
      std::copy_n(&inverse[size_t{lost[e]} * k], k, out);
      continue;
    }
    const unsigned char* parity_row = &matrix_[size_t{lost[e]} * k];
    for (uint32_t i = 0; i < k; ++i) {
      unsigned char s = 0;
      for (uint32_t j = 0; j < k; ++j) s ^= gf_mul(parity_row[j], inverse[size_t{j} * k + i]);
      out[i] = s;
    }
  }
  std::vector<unsigned char> tables(size_t{32} * k * lost.size());
  ec_init_tables(static_cast<int>(k), static_cast<int>(lost.size()), decode.data(), tables.data());
  std::vector<unsigned char*> in, out;
  for (uint32_t s : sources) in.push_back(reinterpret_cast<unsigned char*>(row[s].data()));
  for (uint32_t l : lost) out.push_back(reinterpret_cast<unsigned char*>(row[l].data()));
  Code(length, static_cast<int>(k), static_cast<int>(lost.size()), tables.data(), in, out);
  return Status::Ok();
}

}  // namespace graphfs
