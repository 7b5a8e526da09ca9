// "zstd:LEVEL" (libzstd's one-shot API). Each object keeps one compression and one
// decompression context, created on first use (a decoder never pays for a compression
// context, which at level 3 is a few MiB) and reused for every unit after.
#include <zstd.h>

#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

class ZstdCodec final : public Codec {
 public:
  explicit ZstdCodec(const CodecSpec& spec) : Codec(spec) {}

  Status Compress(std::span<const char> raw, std::string* out) override {
    if (cctx_ == nullptr) {
      cctx_.reset(ZSTD_createCCtx());
      if (cctx_ == nullptr) return Error(ENOMEM, "zstd: cannot create a compression context");
    }
    const size_t start = out->size();
    out->resize(start + ZSTD_compressBound(raw.size()));
    const size_t n = ZSTD_compressCCtx(cctx_.get(), out->data() + start, out->size() - start, DataOrEmpty(raw),
                                       raw.size(), spec().level);
    if (ZSTD_isError(n)) {
      out->resize(start);
      return Error(EIO, spec().Name() + ": compression failed: " + ZSTD_getErrorName(n));
    }
    out->resize(start + n);
    return Status::Ok();
  }

  Status Decompress(std::span<const char> compressed, std::span<char> raw_out) override {
    if (dctx_ == nullptr) {
      dctx_.reset(ZSTD_createDCtx());
      if (dctx_ == nullptr) return Error(ENOMEM, "zstd: cannot create a decompression context");
    }
    char empty;
    // zstd checks its input: a damaged frame or one that would not fit raw_out is an error
    // code, never a write past raw_out.
    const size_t n = ZSTD_decompressDCtx(dctx_.get(), raw_out.empty() ? &empty : raw_out.data(), raw_out.size(),
                                         DataOrEmpty(compressed), compressed.size());
    if (ZSTD_isError(n)) return Corrupt(spec(), ZSTD_getErrorName(n));
    if (n != raw_out.size()) {
      return Corrupt(spec(), "decoded " + std::to_string(n) + " bytes, want " + std::to_string(raw_out.size()));
    }
    return Status::Ok();
  }

  size_t MaxCompressedSize(size_t raw_bytes) const override { return ZSTD_compressBound(raw_bytes); }

 private:
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx_;
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx_;
};

}  // namespace

std::unique_ptr<Codec> NewZstdCodec(const CodecSpec& spec) { return std::make_unique<ZstdCodec>(spec); }

}  // namespace graphfs::compress
