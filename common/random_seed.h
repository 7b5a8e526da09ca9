// The seed of the project's generators and random draws when none is given: gen-rmat, gen-grid,
// reorder --order random, gen-update and run-jobs --arrivals. One number for all of them, so that
// a script that leaves --seed out gets the same files and start times from every tool, and the
// tools' --help and engines/README.md's defaults table show the value written here.
#pragma once

#include <cstdint>

namespace graphfs {

inline constexpr uint64_t kDefaultSeed = 1;

}  // namespace graphfs
