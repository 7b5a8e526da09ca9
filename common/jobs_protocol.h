// The jobs protocol's defaults (MOUNT/.graphfs/jobs/, README.md's "The control directory"), in
// one place for both of its ends: the daemon (fusefs/jobs_dir.h: the LP size of a job that writes
// no partition_size) and the C++ client (engines/graphfs_client.hpp: what its users ask for unless
// told otherwise), which may include nothing of each other. Self-contained and C++17, like the
// client: the package installs it beside the client's header (as graphfs/common/jobs_protocol.h).
#pragma once

#include <cstdint>

namespace graphfs::jobs_protocol {

// Bytes per logical partition (LP).
inline constexpr uint64_t kDefaultPartitionBytes = uint64_t{256} << 20;

}  // namespace graphfs::jobs_protocol
