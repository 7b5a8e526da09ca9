// Codec names, specs and the factory. The names are what users write (`--codecs`, later
// `graphfs-stripe --compress`), the ids what frames store.
#include <zstd.h>

#include <charconv>

#include "compress/codec_impl.h"
#include "compress/svb_codec.h"

namespace graphfs::compress {
namespace {

// Indexed by CodecId.
constexpr std::string_view kNames[kCodecCount] = {"none", "zstd", "lz4", "shuffle-zstd", "shuffle-lz4", "svb",
                                                  "svb-zstd"};

bool IsSvb(CodecId id) { return id == CodecId::kSvb || id == CodecId::kSvbZstd; }

std::string KnownNames() {
  std::string all;
  for (std::string_view n : kNames) {
    if (!all.empty()) all += ", ";
    all += n;
  }
  return all;
}

}  // namespace

std::string_view CodecIdName(CodecId id) {
  const auto i = static_cast<size_t>(id);
  return i < std::size(kNames) ? kNames[i] : "?";
}

const std::vector<std::string_view>& CodecNames() {
  static const std::vector<std::string_view> names(std::begin(kNames), std::end(kNames));
  return names;
}

bool CodecHasLevel(CodecId id) {
  return id == CodecId::kZstd || id == CodecId::kShuffleZstd || id == CodecId::kSvbZstd;
}

std::string CodecSpec::Name() const {
  std::string name(CodecIdName(id));
  if (CodecHasLevel(id)) name += ":" + std::to_string(level);
  return name;
}

Status ValidateCodecSpec(const CodecSpec& spec) {
  if (static_cast<size_t>(spec.id) >= std::size(kNames)) {
    return Error(EINVAL, "codec id " + std::to_string(static_cast<int>(spec.id)) + " is unknown");
  }
  const std::string name(CodecIdName(spec.id));
  if (CodecHasLevel(spec.id)) {
    if (spec.level < 1 || spec.level > ZSTD_maxCLevel()) {
      return Error(EINVAL, "codec " + name + ": level " + std::to_string(spec.level) + " is out of range (1.." +
                               std::to_string(ZSTD_maxCLevel()) + ")");
    }
  } else if (spec.level != 0) {
    return Error(EINVAL, "codec " + name + " takes no level (got " + std::to_string(spec.level) + ")");
  }
  if (IsSvb(spec.id) ? spec.record_size != 8 && spec.record_size != 12
                     : spec.record_size < 1 || spec.record_size > 255) {
    return Error(EINVAL, "codec " + name + ": record size " + std::to_string(spec.record_size) +
                             (IsSvb(spec.id) ? " (it codes edge records: 8 or 12 bytes)" : " (1..255)"));
  }
  return Status::Ok();
}

Result<CodecSpec> ParseCodecSpec(std::string_view text, uint32_t record_size) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  CodecSpec spec;
  spec.record_size = record_size;
  size_t i = 0;
  while (i < std::size(kNames) && kNames[i] != name) ++i;
  if (i == std::size(kNames)) {
    return Error(EINVAL, "unknown codec '" + std::string(text) + "' (known: " + KnownNames() + ")");
  }
  spec.id = static_cast<CodecId>(i);
  if (colon == std::string_view::npos) {
    spec.level = CodecHasLevel(spec.id) ? kDefaultZstdLevel : 0;
  } else {
    if (!CodecHasLevel(spec.id)) {
      return Error(EINVAL, "codec '" + std::string(text) + "': " + std::string(name) + " takes no level");
    }
    const std::string_view digits = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), spec.level);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return Error(EINVAL, "codec '" + std::string(text) + "': level '" + std::string(digits) +
                               "' is not a number (1.." + std::to_string(ZSTD_maxCLevel()) + ")");
    }
  }
  Status valid = ValidateCodecSpec(spec);
  if (!valid.ok()) return valid.error();
  return spec;
}

Result<std::unique_ptr<Codec>> NewCodec(const CodecSpec& spec) {
  Status valid = ValidateCodecSpec(spec);
  if (!valid.ok()) return valid.error();
  switch (spec.id) {
    case CodecId::kNone: return NewNoneCodec(spec);
    case CodecId::kZstd: return NewZstdCodec(spec);
    case CodecId::kLz4: return NewLz4Codec(spec);
    case CodecId::kShuffleZstd: return NewChainCodec(spec, NewShuffleCodec(spec), NewZstdCodec(spec));
    case CodecId::kShuffleLz4: return NewChainCodec(spec, NewShuffleCodec(spec), NewLz4Codec(spec));
    case CodecId::kSvb: return NewSvbCodec(spec, SvbOptions{});
    case CodecId::kSvbZstd: {
      // Weights shuffled: their exponent bytes then lie side by side for zstd.
      SvbOptions options;
      options.shuffle_weights = true;
      return NewChainCodec(spec, NewSvbCodec(spec, options), NewZstdCodec(spec));
    }
  }
  return Error(EINVAL, "codec id " + std::to_string(static_cast<int>(spec.id)) + " is unknown");
}

}  // namespace graphfs::compress
