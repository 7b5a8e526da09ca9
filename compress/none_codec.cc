// "none": the bytes as they are. What a frame stores when compression would not shrink a unit.
#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

class NoneCodec final : public Codec {
 public:
  explicit NoneCodec(const CodecSpec& spec) : Codec(spec) {}

  Status Compress(std::span<const char> raw, std::string* out) override {
    out->append(raw.data(), raw.size());
    return Status::Ok();
  }

  Status Decompress(std::span<const char> compressed, std::span<char> raw_out) override {
    if (compressed.size() != raw_out.size()) {
      return Corrupt(spec(), std::to_string(compressed.size()) + " bytes for " + std::to_string(raw_out.size()));
    }
    if (!raw_out.empty()) std::memcpy(raw_out.data(), compressed.data(), raw_out.size());
    return Status::Ok();
  }

  size_t MaxCompressedSize(size_t raw_bytes) const override { return raw_bytes; }
};

}  // namespace

std::unique_ptr<Codec> NewNoneCodec(const CodecSpec& spec) { return std::make_unique<NoneCodec>(spec); }

}  // namespace graphfs::compress
