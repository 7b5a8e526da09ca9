// The byte shuffle (blosc's "shuffle", written here: it is a transpose). The n whole records
// of `record_size` bytes become `record_size` planes of n bytes each — byte 0 of every record,
// then byte 1 of every record, ... — and the len % record_size trailing bytes follow
// unchanged. Fields of neighbouring records share their high bytes (ids from one partition's
// range, float exponents); in planes those bytes lie side by side, where zstd and LZ4 find
// long runs instead of one similar byte every 8 or 12.
#pragma once

#include <cstddef>
#include <span>

namespace graphfs::compress {

// out: in.size() bytes, not overlapping `in`.
void ShuffleBytes(std::span<const char> in, size_t record_size, char* out);
// The inverse: `in` holds the planes (and the tail), out gets the records back.
void UnshuffleBytes(std::span<const char> in, size_t record_size, char* out);

}  // namespace graphfs::compress
