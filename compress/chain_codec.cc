// A filter stage, then a backend over its output: shuffle-zstd, shuffle-lz4 (the byte shuffle
// in front) and svb-zstd (the graph codec in front). Payload: the filter's output length
// (u32, little-endian: the backend must be told how many bytes to produce, and LZ4 blocks do
// not say), then the backend's payload. Both stages' buffers live in the object, reused.
#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

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
    scratch_.resize(length);
    GRAPHFS_RETURN_IF_ERROR(backend_->Decompress(compressed.subspan(4), scratch_));
    return filter_->Decompress(scratch_, raw_out);
  }

  size_t MaxCompressedSize(size_t raw_bytes) const override {
    return 4 + backend_->MaxCompressedSize(filter_->MaxCompressedSize(raw_bytes));
  }

 private:
  std::unique_ptr<Codec> filter_;
  std::unique_ptr<Codec> backend_;
  std::string filtered_;       // the filter's output when compressing
  std::vector<char> scratch_;  // the backend's output when decompressing
};

}  // namespace

std::unique_ptr<Codec> NewChainCodec(const CodecSpec& spec, std::unique_ptr<Codec> filter,
                                     std::unique_ptr<Codec> backend) {
  return std::make_unique<ChainCodec>(spec, std::move(filter), std::move(backend));
}

}  // namespace graphfs::compress
