// "lz4": liblz4's block format at its default acceleration. LZ4_compress_default keeps its
// hash table on the stack, so there is no context to reuse; LZ4_decompress_safe checks its
// input and never writes past the output it is given.
#include <lz4.h>

#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

class Lz4Codec final : public Codec {
 public:
  explicit Lz4Codec(const CodecSpec& spec) : Codec(spec) {}

  Status Compress(std::span<const char> raw, std::string* out) override {
    if (raw.size() > kMaxUnitBytes) {
      return Error(EFBIG, spec().Name() + ": " + std::to_string(raw.size()) + " bytes is more than a unit takes");
    }
    const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
    const size_t start = out->size();
    out->resize(start + static_cast<size_t>(bound));
    const int n = LZ4_compress_default(DataOrEmpty(raw), out->data() + start, static_cast<int>(raw.size()), bound);
    if (n <= 0) {
      out->resize(start);
      return Error(EIO, spec().Name() + ": compression failed");
    }
    out->resize(start + static_cast<size_t>(n));
    return Status::Ok();
  }

  Status Decompress(std::span<const char> compressed, std::span<char> raw_out) override {
    if (compressed.size() > MaxCompressedSize(kMaxUnitBytes) || raw_out.size() > kMaxUnitBytes) {
      return Corrupt(spec(), "larger than a unit");
    }
    char empty;
    const int n = LZ4_decompress_safe(DataOrEmpty(compressed), raw_out.empty() ? &empty : raw_out.data(),
                                      static_cast<int>(compressed.size()), static_cast<int>(raw_out.size()));
    if (n < 0) return Corrupt(spec(), "damaged LZ4 block");
    if (static_cast<size_t>(n) != raw_out.size()) {
      return Corrupt(spec(), "decoded " + std::to_string(n) + " bytes, want " + std::to_string(raw_out.size()));
    }
    return Status::Ok();
  }

  // LZ4_COMPRESSBOUND in size_t.
  size_t MaxCompressedSize(size_t raw_bytes) const override { return raw_bytes + raw_bytes / 255 + 16; }
};

}  // namespace

std::unique_ptr<Codec> NewLz4Codec(const CodecSpec& spec) { return std::make_unique<Lz4Codec>(spec); }

}  // namespace graphfs::compress
