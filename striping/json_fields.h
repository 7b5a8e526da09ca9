// Typed reads of fields of graphfs's own JSON metadata (stripe manifests, disks.json,
// .graphfs-disk), which live on disks and may be damaged. nlohmann's get<uint32_t>() turns
// -1 into 4294967295, 2.5 into 2, and 1e30 into undefined behaviour (a float-to-integer
// conversion out of range); these accept only what graphfs writes and return an Error for
// anything else.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"

namespace graphfs {

// `text` parsed; a syntax error is EINVAL with nlohmann's description.
inline Result<nlohmann::json> ParseJson(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return Error(EINVAL, e.what());
  }
}

// A value for an error message: damaged files can hold anything, at any length.
inline std::string ShownJson(const nlohmann::json& v) {
  std::string text = v.dump();
  return text.size() > 80 ? text.substr(0, 80) + "..." : text;
}

// Field `key` of object `j`: a non-negative integer literal no larger than `max`.
inline Result<uint64_t> UnsignedField(const nlohmann::json& j, const char* key, uint64_t max) {
  if (!j.is_object() || !j.contains(key)) return Error(EINVAL, std::string("no field '") + key + "'");
  const nlohmann::json& v = j[key];
  // Non-negative integers parse as number_unsigned; negative ones and fractions do not.
  if (!v.is_number_unsigned())
    return Error(EINVAL, std::string("field '") + key + "' is not a non-negative integer: " + ShownJson(v));
  const uint64_t value = v.get<uint64_t>();
  if (value > max)
    return Error(EINVAL, std::string("field '") + key + "' is " + std::to_string(value) + ", at most " +
                             std::to_string(max));
  return value;
}

// Field `key` of object `j`: a string.
inline Result<std::string> StringField(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return Error(EINVAL, std::string("no field '") + key + "'");
  const nlohmann::json& v = j[key];
  if (!v.is_string()) return Error(EINVAL, std::string("field '") + key + "' is not a string: " + ShownJson(v));
  return v.get<std::string>();
}

}  // namespace graphfs
