// A filter stage, then a backend over its output: shuffle-zstd, shuffle-lz4 (the byte shuffle
// in front) and svb-zstd (the graph codec in front). Payload: the filter's output length
// (u32, little-endian: the backend must be told how many bytes to produce, and LZ4 blocks do
// not say), then the backend's payload. The compressing stage's buffer lives in the object;
// the decompressing one's comes from a pool the process's decoders share (DecodeScratch).
#include <algorithm>
#include <cerrno>

#include "common/buffer_pool.h"
#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

// The backend's output while a unit is decoded, shared by every decoder of the process and
// given back once the filter has read it. Kept in each codec object (as first written), a
// unit's worth (2 MiB) stayed resident in every thread that had ever decoded — decoders are
// per thread (unit_frame.cc): the cache's prefetchers, the LP loaders and libfuse's workers —,
// ~48 MiB of the daemon's memory outside every use the mount's budget counts at scale 22, which
// the budget then took out of the frames (docs/memory-as-cache.md, thirteenth part). Idle ones
// beyond kDecodeScratchIdleBytes are let go; the ones kept spare the next decodes a fresh mapping.
constexpr uint64_t kDecodeScratchIdleBytes = 8ull << 20;

BufferPool& DecodeScratch() {
  static BufferPool* pool = new BufferPool(kDecodeScratchIdleBytes);  // never destroyed: used until exit
  return *pool;
}

class ChainCodec final : public Codec {
 public:
  ChainCodec(const CodecSpec& spec, std::unique_ptr<Codec> filter, std::unique_ptr<Codec> backend)
      : Codec(spec), filter_(std::move(filter)), backend_(std::move(backend)) {}

  Status Compress(std::span<const char> raw, std::string* out) override {
    filtered_.clear();
    GRAPHFS_RETURN_IF_ERROR(filter_->Compress(raw, &filtered_));
    PutU32(out, static_cast<uint32_t>(filtered_.size()));
    return backend_->Compress(filtered_, out);
  }

  Status Decompress(std::span<const char> compressed, std::span<char> raw_out) override {
    if (compressed.size() < 4) return Corrupt(spec(), "shorter than its 4-byte length");
    const uint64_t length = GetU32(compressed.data());
    // A length the filter could never have produced for this raw size is damage, and must
    // not size the scratch buffer.
    if (length > filter_->MaxCompressedSize(raw_out.size())) {
      return Corrupt(spec(), "first stage of " + std::to_string(length) + " bytes for " +
                                 std::to_string(raw_out.size()) + " raw bytes");
    }
    AlignedBuffer scratch = DecodeScratch().Take(std::max<uint64_t>(length, 1));
    if (!scratch.ok()) return Error(ENOMEM, "no memory to decode a unit (" + std::to_string(length) + " bytes)");
    const std::span<char> stage(scratch.data(), length);
    Status decoded = backend_->Decompress(compressed.subspan(4), stage);
    if (decoded.ok()) decoded = filter_->Decompress(stage, raw_out);
    DecodeScratch().Give(std::move(scratch));
    return decoded;
  }

  size_t MaxCompressedSize(size_t raw_bytes) const override {
    return 4 + backend_->MaxCompressedSize(filter_->MaxCompressedSize(raw_bytes));
  }

 private:
  std::unique_ptr<Codec> filter_;
  std::unique_ptr<Codec> backend_;
  std::string filtered_;  // the filter's output when compressing
};

}  // namespace

std::unique_ptr<Codec> NewChainCodec(const CodecSpec& spec, std::unique_ptr<Codec> filter,
                                     std::unique_ptr<Codec> backend) {
  return std::make_unique<ChainCodec>(spec, std::move(filter), std::move(backend));
}

}  // namespace graphfs::compress
