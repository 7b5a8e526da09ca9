// Whole files as strings, and reproducible random bytes: what the tests compare byte for byte.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace graphfs::testing {

// The file's bytes ("" when it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces the file's bytes with `data` (creating it).
inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// `n` pseudo-random bytes, the same for the same seed.
inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&s[i], &v, std::min<size_t>(8, n - i));
  }
  return s;
}

// `size` bytes that compress to about half: letters at random from alphabets of 2 to 64 letters,
// another alphabet every 37,000 bytes, so that a file's units compress to frames of varied
// lengths that start and end anywhere in the stripe units and parity rows (frames of one length
// could tile the rows exactly). The same for the same seed.
inline std::string CompressibleBytes(uint64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(size, '\0');
  uint64_t alphabet = 12;
  for (uint64_t i = 0; i < size; ++i) {
    if (i % 37000 == 0) alphabet = 2 + rng() % 63;
    s[i] = static_cast<char>('0' + rng() % alphabet);
  }
  return s;
}

}  // namespace graphfs::testing
