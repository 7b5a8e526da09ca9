// What an LRU of the cache's size would have kept: the keys and sizes of the units it would
// hold, no bytes. The cache looks every lookup up here too, so its stats can say how its own
// policy did against the page cache's (an LRU: a cyclic scan larger than it never hits).
// Not thread-safe: the cache calls it under its mutex.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

#include "cache/eviction_policy.h"

namespace graphfs::cache {

class ShadowLru {
 public:
  // A lookup of `length` bytes of `key`: true if an LRU of `capacity` bytes would have had it.
  bool Lookup(const UnitKey& key, uint64_t length, uint64_t capacity);
  void Forget(uint64_t file);  // the file's units are gone (written, truncated)
  uint64_t bytes() const { return bytes_; }

 private:
  struct Item {
    UnitKey key;
    uint64_t length;
  };
  std::list<Item> order_;  // most recent first
  std::unordered_map<UnitKey, std::list<Item>::iterator, UnitKeyHash> where_;
  uint64_t bytes_ = 0;
};

}  // namespace graphfs::cache
