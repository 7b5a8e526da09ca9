#include "striping/row_repair.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace graphfs {

namespace {

// "row 17: disks 1, 3 failed (disk 1: why; disk 3: why), parity 1"
Error RowLost(const StripeMap& map, uint64_t row, const std::vector<uint32_t>& slots,
              const std::map<uint32_t, std::string>& why) {
  std::vector<std::pair<uint32_t, uint32_t>> disks;  // disk, slot
  for (uint32_t s : slots) disks.push_back({map.SlotDisk(row, s), s});
  std::sort(disks.begin(), disks.end());
  std::string names, reasons;
  for (const auto& [disk, slot] : disks) {
    names += (names.empty() ? "" : ", ") + std::to_string(disk);
    auto it = why.find(slot);
    if (it != why.end())
      reasons += (reasons.empty() ? "" : "; ") + std::string("disk ") + std::to_string(disk) + ": " + it->second;
  }
  return Error(EIO, "row " + std::to_string(row) + ": disk" + (disks.size() == 1 ? " " : "s ") + names + " failed" +
                        (reasons.empty() ? "" : " (" + reasons + ")") + ", parity " + std::to_string(map.parity()));
}

Result<RowRepairPlan> Plan(const StripeMap& map, uint64_t stored_size, uint64_t row, std::span<const uint32_t> rebuild,
                           std::span<const uint32_t> failed, uint64_t begin, uint64_t length,
                           const std::map<uint32_t, std::string>& why) {
  const uint32_t n = map.disks(), d = map.data_units();
  if (map.parity() == 0) return Error(EINVAL, "row repair: the layout has no parity");
  if (rebuild.empty()) return Error(EINVAL, "row repair: no unit to rebuild");
  if (row >= map.Rows(stored_size))
    return Error(EINVAL, "row repair: row " + std::to_string(row) + " of a file of " +
                             std::to_string(map.Rows(stored_size)) + " rows");
  if (begin > map.unit() || length > map.unit() - begin)
    return Error(EINVAL, "row repair: bytes " + std::to_string(begin) + "+" + std::to_string(length) +
                             " of a unit of " + std::to_string(map.unit()));
  std::vector<bool> wanted(n, false), failing(n, false);
  for (uint32_t s : rebuild) {
    if (s >= n) return Error(EINVAL, "row repair: slot " + std::to_string(s) + " of a row of " + std::to_string(n));
    if (wanted[s]) return Error(EINVAL, "row repair: slot " + std::to_string(s) + " asked for twice");
    wanted[s] = failing[s] = true;
  }
  for (uint32_t s : failed) {
    if (s >= n) return Error(EINVAL, "row repair: slot " + std::to_string(s) + " of a row of " + std::to_string(n));
    failing[s] = true;
  }

  RowRepairPlan plan;
  plan.row = row;
  plan.begin = begin;
  plan.length = length;
  plan.rebuild.assign(rebuild.begin(), rebuild.end());
  for (uint32_t s = 0; s < n && plan.sources.size() < d; ++s) {
    const uint64_t unit_length = map.RowUnitLength(row, s, stored_size);
    const uint64_t read = unit_length > begin ? std::min(length, unit_length - begin) : 0;
    // A unit with none of the range is zeros there, whatever its disk's state.
    if (wanted[s] || (failing[s] && read > 0)) continue;
    plan.sources.push_back({s, map.SlotDisk(row, s), row * map.unit() + begin, read});
  }
  if (plan.sources.size() < d) {
    std::vector<uint32_t> lost;
    for (uint32_t s = 0; s < n; ++s)
      if (failing[s]) lost.push_back(s);
    return RowLost(map, row, lost, why);
  }
  // The codec rebuilds from the first D units it is not told are lost: those must be the
  // sources, so every slot before the last source that is not one is lost too.
  const uint32_t last = plan.sources.back().slot;
  size_t next = 0;
  for (uint32_t s = 0; s < n; ++s) {
    const bool source = next < plan.sources.size() && plan.sources[next].slot == s;
    if (source) ++next;
    if ((s < last && !source) || (s > last && wanted[s])) plan.lost.push_back(s);
  }
  return plan;
}

}  // namespace

Result<RowRepairPlan> PlanRowRepair(const StripeMap& map, uint64_t stored_size, uint64_t row,
                                    std::span<const uint32_t> rebuild, std::span<const uint32_t> failed,
                                    uint64_t begin, uint64_t length) {
  return Plan(map, stored_size, row, rebuild, failed, begin, length, {});
}

Result<RowRepairPlan> PlanRowRepair(const StripeMap& map, uint64_t stored_size, uint64_t row,
                                    std::span<const uint32_t> rebuild, std::span<const uint32_t> failed,
                                    uint64_t begin, uint64_t length, const std::map<uint32_t, std::string>& why) {
  return Plan(map, stored_size, row, rebuild, failed, begin, length, why);
}

Status RebuildRange(const ParityCodec& codec, const RowRepairPlan& plan, std::span<const std::span<char>> sources,
                    std::span<const std::span<char>> out) {
  const uint32_t n = codec.units();
  if (sources.size() != plan.sources.size() || out.size() != plan.rebuild.size())
    return Error(EINVAL, "row repair: " + std::to_string(sources.size()) + " sources and " +
                             std::to_string(out.size()) + " outputs for a plan of " +
                             std::to_string(plan.sources.size()) + " and " + std::to_string(plan.rebuild.size()));
  if (plan.sources.size() != codec.data_units())
    return Error(EINVAL, "row repair: a plan of " + std::to_string(plan.sources.size()) + " sources for a codec of " +
                             std::to_string(codec.data_units()) + " data units");
  for (const auto& s : sources)
    if (s.size() != plan.length)
      return Error(EINVAL, "row repair: a source buffer of " + std::to_string(s.size()) + " bytes for a range of " +
                               std::to_string(plan.length));
  for (const auto& o : out)
    if (o.size() != plan.length)
      return Error(EINVAL, "row repair: an output buffer of " + std::to_string(o.size()) + " bytes for a range of " +
                               std::to_string(plan.length));

  // Units the codec neither reads nor writes still need a span of the row's length.
  std::string unused(plan.length, '\0');
  std::vector<std::string> scratch;  // lost units nobody asked for
  scratch.reserve(plan.lost.size());
  std::vector<std::span<char>> row(n, std::span<char>(unused));
  for (size_t i = 0; i < plan.sources.size(); ++i) {
    const RowSource& src = plan.sources[i];
    if (src.slot >= n || src.read_length > plan.length)
      return Error(EINVAL, "row repair: source slot " + std::to_string(src.slot) + " does not fit the codec");
    std::memset(sources[i].data() + src.read_length, 0, plan.length - src.read_length);
    row[src.slot] = sources[i];
  }
  for (uint32_t s : plan.lost) {
    if (s >= n) return Error(EINVAL, "row repair: lost slot " + std::to_string(s) + " does not fit the codec");
    auto it = std::find(plan.rebuild.begin(), plan.rebuild.end(), s);
    if (it != plan.rebuild.end()) {
      row[s] = out[static_cast<size_t>(it - plan.rebuild.begin())];
    } else {
      scratch.emplace_back(plan.length, '\0');
      row[s] = scratch.back();
    }
  }
  Status s = codec.Reconstruct(row, plan.lost);
  if (!s.ok()) return s.error().Wrap("row " + std::to_string(plan.row));
  return Status::Ok();
}

Status RepairRange(const StripeMap& map, const ParityCodec& codec, uint64_t stored_size, uint64_t row,
                   std::span<const uint32_t> rebuild, std::span<const uint32_t> failed, uint64_t begin,
                   std::span<const std::span<char>> out, const RowSourceReader& read) {
  if (codec.units() != map.disks() || codec.parity() != map.parity())
    return Error(EINVAL, "row repair: a codec of " + std::to_string(codec.units()) + " units and parity " +
                             std::to_string(codec.parity()) + " for a layout of " + std::to_string(map.disks()) +
                             " and " + std::to_string(map.parity()));
  if (out.empty()) return Error(EINVAL, "row repair: no output buffer");
  const uint64_t length = out[0].size();
  std::vector<uint32_t> failing(failed.begin(), failed.end());
  std::map<uint32_t, std::string> why;
  // Each pass either succeeds or adds a failed slot: at most N passes.
  for (;;) {
    auto plan = Plan(map, stored_size, row, rebuild, failing, begin, length, why);
    if (!plan.ok()) return plan.error();
    std::vector<std::string> buffers;
    buffers.reserve(plan->sources.size());
    bool read_all = true;
    for (const RowSource& src : plan->sources) {
      buffers.emplace_back(length, '\0');
      if (src.read_length == 0) continue;
      Status s = read(src, std::span<char>(buffers.back()).first(src.read_length));
      if (!s.ok()) {
        failing.push_back(src.slot);
        why[src.slot] = s.error().message();
        read_all = false;
        break;
      }
    }
    if (!read_all) continue;
    std::vector<std::span<char>> spans(buffers.begin(), buffers.end());
    return RebuildRange(codec, *plan, spans, out);
  }
}

}  // namespace graphfs
