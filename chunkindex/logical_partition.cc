#include "chunkindex/logical_partition.h"

namespace graphfs::chunkindex {

std::string HeldLp::MapText() const {
  std::string out;
  out.reserve(pieces.size() * 40);
  uint64_t at = 0;
  for (const ViewPiece& p : pieces) {
    out += std::to_string(p.chunk) + " " + std::to_string(p.file_offset) + " " + std::to_string(p.length) + " " +
           std::to_string(at) + "\n";
    at += p.length;
  }
  return out;
}

}  // namespace graphfs::chunkindex
