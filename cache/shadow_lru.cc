#include "cache/shadow_lru.h"

namespace graphfs::cache {

bool ShadowLru::Lookup(const UnitKey& key, uint64_t length, uint64_t capacity) {
  auto it = where_.find(key);
  const bool hit = it != where_.end();
  if (hit) {
    bytes_ -= it->second->length;
    order_.erase(it->second);
  }
  if (length <= capacity) {
    order_.push_front({key, length});
    where_[key] = order_.begin();
    bytes_ += length;
  } else if (hit) {
    where_.erase(it);
  }
  while (bytes_ > capacity && !order_.empty()) {
    bytes_ -= order_.back().length;
    where_.erase(order_.back().key);
    order_.pop_back();
  }
  return hit;
}

void ShadowLru::Forget(uint64_t file) {
  for (auto it = order_.begin(); it != order_.end();) {
    if (it->key.file == file) {
      bytes_ -= it->length;
      where_.erase(it->key);
      it = order_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace graphfs::cache
