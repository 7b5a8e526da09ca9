// How a file is cut into cache units: the chunks of its chunk index when it has one
// (so a unit is exactly what the priority formula talks about), else stripe-aligned
// blocks (so a unit is one contiguous read from one disk).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"

namespace graphfs::cache {

struct UnitExtent {
  uint64_t index = 0;   // unit number inside the file
  uint64_t offset = 0;  // file bytes [offset, offset + length)
  uint64_t length = 0;  // 0: past the end of the file
  double weight = 1.0;  // priority weight (mean source degree of an indexed chunk, 1 for a block)
};

class UnitLayout {
 public:
  virtual ~UnitLayout() = default;
  // The unit holding byte `offset` of a file of `file_size` bytes (length 0 past the end).
  virtual UnitExtent Find(uint64_t offset, uint64_t file_size) const = 0;
  // Unit `index` (length 0 past the end).
  virtual UnitExtent At(uint64_t index, uint64_t file_size) const = 0;
  // Units of a file of `file_size` bytes.
  virtual uint64_t Count(uint64_t file_size) const = 0;
  virtual const char* kind() const = 0;  // "block" or "chunk", for stats
};

// Fixed blocks of `block` bytes from offset 0; the last one ends with the file.
class BlockLayout final : public UnitLayout {
 public:
  explicit BlockLayout(uint64_t block) : block_(block) {}
  UnitExtent Find(uint64_t offset, uint64_t file_size) const override {
    return offset < file_size ? At(offset / block_, file_size) : UnitExtent{offset / block_, file_size, 0, 1.0};
  }
  UnitExtent At(uint64_t index, uint64_t file_size) const override;
  uint64_t Count(uint64_t file_size) const override { return (file_size + block_ - 1) / block_; }
  const char* kind() const override { return "block"; }
  uint64_t block() const { return block_; }

 private:
  uint64_t block_;
};

// Chunks given by their start offsets; they must tile [0, file_size) without gaps.
class ChunkLayout final : public UnitLayout {
 public:
  struct Chunk {
    uint64_t offset = 0;
    uint64_t length = 0;
    double weight = 1.0;
  };
  // Fails unless the chunks are non-empty, in order and tile [0, file_size) exactly.
  static Result<std::shared_ptr<const ChunkLayout>> Create(std::vector<Chunk> chunks, uint64_t file_size);
  UnitExtent Find(uint64_t offset, uint64_t file_size) const override;
  UnitExtent At(uint64_t index, uint64_t file_size) const override;
  uint64_t Count(uint64_t file_size) const override { return file_size == file_size_ ? chunks_.size() : 0; }
  const char* kind() const override { return "chunk"; }
  size_t size() const { return chunks_.size(); }

 private:
  explicit ChunkLayout(std::vector<Chunk> chunks, uint64_t file_size)
      : chunks_(std::move(chunks)), file_size_(file_size) {}
  std::vector<Chunk> chunks_;
  uint64_t file_size_;  // the size the chunks were cut for; any other size means "past the end"
};

}  // namespace graphfs::cache
