#include "striping/stripe_unit.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "common/size_parse.h"
#include "striping/calibrate.h"

namespace graphfs {
namespace {

// Powers of two within [kMinStripeUnit, kMaxStripeUnit].
uint64_t Clamp(uint64_t unit) { return std::clamp(unit, kMinStripeUnit, kMaxStripeUnit); }
uint64_t FloorUnit(uint64_t bytes) { return Clamp(std::bit_floor(bytes)); }

// `value` with `decimals` digits after the point.
std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

StripeUnitChoice ChooseStripeUnit(const StripeUnitInputs& in) {
  const uint64_t disks = std::max<uint32_t>(in.disks, 1);
  const uint64_t size = in.file_size;

  // (c) the smallest unit whose request pays at most kRequestCostShare of its transfer time in
  // fixed cost: cost <= share x unit / rate  <=>  unit >= rate x cost / share.
  const bool measured = in.bytes_per_second > 0;
  const double cost = measured ? std::max(in.seconds_per_request, 0.0) : 0.0;
  uint64_t wants = kMinStripeUnit;
  if (measured) {
    // Capped far above any unit before the conversion, so a wild calibration cannot overflow.
    const double bytes = std::min(in.bytes_per_second * cost / kRequestCostShare, 0x1p40);
    wants = std::max(kMinStripeUnit, std::bit_ceil(static_cast<uint64_t>(std::ceil(bytes))));
  }
  const std::string cost_note =
      measured ? "a request costs " + Fixed(cost * 1e3, 2) + " ms at " + Fixed(in.bytes_per_second / 1e6, 0) + " MB/s" +
                     ": units of " + FormatSize(wants) + " or more keep it within " +
                     Fixed(kRequestCostShare * 100, 0) + "% of their transfer"
               : "the disks' cost per request is not measured (graphfs-calibrate)";
  auto per_disk = [&](uint64_t unit) {
    return Fixed(static_cast<double>(size) / static_cast<double>(unit * disks), 1) + " units per disk of a " +
           FormatSize(size) + " file over " + std::to_string(disks) + " disk(s)";
  };
  auto choice = [&](uint64_t unit, const std::string& why) {
    return StripeUnitChoice{unit, FormatSize(unit) + ": " + why + " (" + per_disk(unit) + "; " + cost_note + ")"};
  };

  // A file smaller than 1 MiB per disk: the smallest unit, and it still leaves disks without one.
  if (size < kMinStripeUnit * disks) return choice(kMinStripeUnit, "the smallest unit, the file has less than 1 MiB per disk");

  // (a) no larger than the engines' request (and 16 MiB): their typical one when it is known.
  const bool typical = in.typical_request > 0 && in.typical_request < in.engine_request;
  const uint64_t request = typical ? in.typical_request : in.engine_request;
  const std::string request_name = typical ? "the engines' typical request (a block) of " : "the engines' request of ";
  const uint64_t request_cap = FloorUnit(request);
  const std::string cap_why = request < kMinStripeUnit ? "the smallest unit (" + request_name + FormatSize(request) +
                                                             " is smaller)"
                              : request_cap < kMaxStripeUnit ? "at most " + request_name + FormatSize(request)
                                                             : "the largest unit";
  // (b) no larger than a quarter of the file's share of each disk.
  const uint64_t share = size / (kUnitsPerDisk * disks);
  const uint64_t spread = FloorUnit(share);
  const uint64_t upper = std::min(spread, request_cap);

  if (wants <= upper) {
    if (spread < request_cap)
      return choice(upper, share < kMinStripeUnit
                               ? "the smallest unit (fewer than " + std::to_string(kUnitsPerDisk) + " units per disk even so)"
                               : "the largest unit that leaves at least " + std::to_string(kUnitsPerDisk) +
                                     " units on every disk");
    return choice(upper, cap_why);
  }
  // (c) asks for more than (a) and (b) allow. Against (b) it wins: the request cost is paid on
  // every read of the file, while a file of few units is read in few requests anyway; but the
  // file keeps at least one unit on every disk, or the disks without one would idle while it
  // is read. Against (a) and 16 MiB it loses: a unit larger than the engines' request makes
  // each request a one-disk read, so a lone reader would use one disk at a time.
  const uint64_t one_per_disk = FloorUnit(size / disks);
  const uint64_t unit = std::min({wants, request_cap, one_per_disk});
  if (upper == request_cap) return choice(unit, cap_why + "; the request cost would want " + FormatSize(wants));
  const std::string over_b = "over " + std::to_string(kUnitsPerDisk) + " units per disk (" + FormatSize(spread) +
                             " or less): the request cost is paid on every read";
  if (unit == wants) return choice(unit, "the request cost asks for it, " + over_b);
  if (unit == one_per_disk && one_per_disk < request_cap)
    return choice(unit, "the request cost asks for " + FormatSize(wants) + ", " + over_b +
                            "; held to one unit per disk so that every disk holds some of the file");
  return choice(unit, "the request cost asks for " + FormatSize(wants) + ", " + over_b + "; held to " + cap_why);
}

std::string DiskRequestCost::Describe() const {
  if (calibrated == 0)
    return "no calibration on the " + std::to_string(disks) +
           " disk(s) (graphfs-calibrate): the cost per request is left out";
  return "median of " + std::to_string(calibrated) + " of " + std::to_string(disks) + " disks' calibrations: " +
         Fixed(bytes_per_second / 1e6, 0) + " MB/s, " + Fixed(seconds_per_request * 1e3, 2) + " ms per request";
}

DiskRequestCost MedianRequestCost(const std::vector<std::string>& disk_dirs) {
  std::vector<double> rates, costs;
  for (const std::string& dir : disk_dirs) {
    auto c = LoadCalibration(dir);
    if (!c.ok() || !(c->bytes_per_second > 0)) continue;  // none, damaged, or no rate: left out
    rates.push_back(c->bytes_per_second);
    costs.push_back(std::max(c->seconds_per_request, 0.0));
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  DiskRequestCost cost;
  cost.bytes_per_second = median(rates);
  cost.seconds_per_request = median(costs);
  cost.calibrated = rates.size();
  cost.disks = disk_dirs.size();
  return cost;
}

}  // namespace graphfs
