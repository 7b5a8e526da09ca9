// The byte shuffle as a codec stage: a filter of the same length, in front of zstd or LZ4
// (chain_codec.cc). On its own it would compress nothing, so it has no name of its own.
#include "compress/byte_shuffle.h"
#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

class ShuffleCodec final : public Codec {
 public:
  explicit ShuffleCodec(const CodecSpec& spec) : Codec(spec) {}

  Status Compress(std::span<const char> raw, std::string* out) override {
    const size_t start = out->size();
    out->resize(start + raw.size());
    ShuffleBytes(raw, spec().record_size, out->data() + start);
    return Status::Ok();
  }

  Status Decompress(std::span<const char> compressed, std::span<char> raw_out) override {
    if (compressed.size() != raw_out.size()) {
      return Corrupt(spec(), "shuffled " + std::to_string(compressed.size()) + " bytes for " +
                                 std::to_string(raw_out.size()));
    }
    UnshuffleBytes(compressed, spec().record_size, raw_out.data());
    return Status::Ok();
  }

  size_t MaxCompressedSize(size_t raw_bytes) const override { return raw_bytes; }
};

}  // namespace

std::unique_ptr<Codec> NewShuffleCodec(const CodecSpec& spec) { return std::make_unique<ShuffleCodec>(spec); }

}  // namespace graphfs::compress
