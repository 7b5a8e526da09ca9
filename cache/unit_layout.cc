#include "cache/unit_layout.h"

#include <algorithm>

namespace graphfs::cache {

UnitExtent BlockLayout::At(uint64_t index, uint64_t file_size) const {
  UnitExtent e;
  e.index = index;
  e.offset = index * block_;
  if (e.offset < file_size) e.length = std::min(block_, file_size - e.offset);
  return e;
}

Result<std::shared_ptr<const ChunkLayout>> ChunkLayout::Create(std::vector<Chunk> chunks, uint64_t file_size) {
  uint64_t next = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].length == 0 || chunks[i].offset != next)
      return Error(EINVAL, "chunk " + std::to_string(i) + " does not start where chunk " + std::to_string(i) +
                               " - 1 ends (offset " + std::to_string(chunks[i].offset) + ", expected " +
                               std::to_string(next) + ")");
    next += chunks[i].length;
  }
  if (next != file_size)
    return Error(EINVAL, "chunks cover " + std::to_string(next) + " bytes of a " + std::to_string(file_size) +
                             "-byte file");
  return std::shared_ptr<const ChunkLayout>(new ChunkLayout(std::move(chunks), file_size));
}

UnitExtent ChunkLayout::At(uint64_t index, uint64_t file_size) const {
  UnitExtent e;
  e.index = index;
  if (index < chunks_.size() && file_size == file_size_) {
    e.offset = chunks_[index].offset;
    e.length = chunks_[index].length;
    e.weight = chunks_[index].weight;
  } else {
    e.offset = file_size;
  }
  return e;
}

UnitExtent ChunkLayout::Find(uint64_t offset, uint64_t file_size) const {
  if (offset >= file_size_ || file_size != file_size_) return At(chunks_.size(), file_size);
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), offset,
                             [](uint64_t o, const Chunk& c) { return o < c.offset; });
  return At(static_cast<uint64_t>(it - chunks_.begin()) - 1, file_size);
}

}  // namespace graphfs::cache
