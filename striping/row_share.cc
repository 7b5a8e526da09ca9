#include "striping/row_share.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace graphfs {

uint64_t RowShare::BlockLength(uint64_t block, uint64_t end, uint64_t unit_end) const {
  const uint64_t at = block * block_;
  if (at >= unit_end) return 0;
  const uint64_t length = std::min(block_, unit_end - at);
  return at + length <= end ? length : 0;
}

void RowShare::PutLocked(const Key& key, const char* bytes, uint64_t length) {
  auto [it, added] = blocks_.try_emplace(key);
  if (!added) return;
  it->second.assign(bytes, length);
  order_.push_back(key);
  stats_.put_bytes += length;
  stats_.held_bytes += length;
  pool_->Hold(length);
}

RowShare::RowShare(uint64_t block, std::shared_ptr<RowSharePool> pool) : block_(block), pool_(std::move(pool)) {
  pool_->Join(this);
}

RowShare::~RowShare() {
  pool_->Leave(this);  // no Trim of the pool's runs on this share after this
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseLocked(stats_.held_bytes);
}

void RowShare::ReleaseLocked(uint64_t length) {
  stats_.held_bytes -= length;
  pool_->Release(length);
}

uint64_t RowShare::DropOldestLocked(uint64_t bytes) {
  uint64_t dropped = 0;
  while (dropped < bytes && !order_.empty()) {
    auto it = blocks_.find(order_.front());
    order_.pop_front();
    if (it == blocks_.end()) continue;  // taken already
    dropped += it->second.size();
    stats_.dropped_bytes += it->second.size();
    ReleaseLocked(it->second.size());
    blocks_.erase(it);
  }
  // Taken keys leave their entries in `order_`; keep it from growing without bound.
  if (order_.size() > 2 * blocks_.size() + 1024) {
    std::deque<Key> live;
    for (const Key& k : order_)
      if (blocks_.count(k) != 0) live.push_back(k);
    order_ = std::move(live);
  }
  return dropped;
}

uint64_t RowShare::DropOldest(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return DropOldestLocked(bytes);
}

void RowShare::FitPool() {
  if (pool_->Over() == 0) return;
  pool_->Trim(this);
  if (const uint64_t over = pool_->Over(); over > 0) DropOldest(over);
}

void RowShare::Put(uint64_t row, uint32_t slot, uint64_t begin, std::span<const char> bytes, uint64_t unit_end) {
  std::unique_lock<std::mutex> lock(mu_);
  for (uint64_t at = 0; at < bytes.size(); at += block_) {
    const uint64_t length = std::min<uint64_t>(block_, bytes.size() - at);
    // A piece of a block is kept only when the block ends there: the unit's end.
    if (length < block_ && begin + at + length != unit_end) break;
    PutLocked(Key{row, slot, (begin + at) / block_}, bytes.data() + at, length);
  }
  lock.unlock();
  FitPool();
}

bool RowShare::Take(uint64_t row, uint32_t slot, uint64_t begin, uint64_t length, char* out) {
  if (length == 0 || begin % block_ != 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t first = begin / block_, last = (begin + length - 1) / block_;
  for (uint64_t b = first; b <= last; ++b) {
    auto it = blocks_.find(Key{row, slot, b});
    const uint64_t need = std::min(block_, begin + length - b * block_);
    if (it == blocks_.end() || it->second.size() < need) return false;
  }
  for (uint64_t b = first; b <= last; ++b) {
    auto it = blocks_.find(Key{row, slot, b});
    const uint64_t need = std::min(block_, begin + length - b * block_);
    std::memcpy(out + (b - first) * block_, it->second.data(), need);
    stats_.taken_bytes += it->second.size();
    ReleaseLocked(it->second.size());
    blocks_.erase(it);
  }
  return true;
}

RowShare::Claimed RowShare::Claim(const void* reader, std::span<const Want> wants, Waiter* waiter) {
  Claimed claimed;
  claimed.got.reserve(wants.size());
  claimed.read.resize(wants.size());
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t w = 0; w < wants.size(); ++w) {
    const Want& want = wants[w];
    if (want.length == 0 || want.begin % block_ != 0) {
      claimed.got.push_back(Got::kRead);
      claimed.read[w] = {{want.begin, want.length}};
      continue;
    }
    const uint64_t first = want.begin / block_, last = (want.begin + want.length - 1) / block_;
    const uint64_t end = want.begin + want.length;
    auto held = [&](uint64_t b, uint64_t need) {
      auto h = blocks_.find(Key{want.row, want.slot, b});
      return h != blocks_.end() && h->second.size() >= need ? h : blocks_.end();
    };
    auto flying = [&](uint64_t b, uint64_t need) {
      auto f = flights_.find(Key{want.row, want.slot, b});
      return f != flights_.end() && f->second.reader != reader && f->second.length >= need ? f : flights_.end();
    };
    // Block by block: held ones are taken, ones in flight for another read awaited, and the runs
    // of blocks nobody has are read by the claimer (in flight for it from now on) — each run on
    // its own, so that blocks others have between two runs are not read again.
    std::vector<ReadRange>& read = claimed.read[w];
    bool any_flight = false;
    for (uint64_t b = first; b <= last; ++b) {
      const uint64_t need = std::min(block_, end - b * block_);
      char* out = want.out + (b - first) * block_;
      if (auto h = held(b, need); h != blocks_.end()) {
        std::memcpy(out, h->second.data(), need);
        stats_.taken_bytes += h->second.size();
        ReleaseLocked(h->second.size());
        blocks_.erase(h);
        continue;
      }
      if (auto f = flying(b, need); f != flights_.end()) {
        f->second.waiting.push_back({waiter, w, out, need});
        any_flight = true;
        ++claimed.awaited;
        continue;
      }
      const uint64_t at = b * block_;
      if (!read.empty() && read.back().begin + read.back().length == at) {
        read.back().length += need;
      } else {
        read.push_back({at, need});
      }
      const Key key{want.row, want.slot, b};
      const uint64_t length = BlockLength(b, end, want.unit_end);
      if (length == 0 || flights_.count(key) != 0) continue;  // a part of a block; or in flight for itself
      flights_.emplace(key, Flight{reader, length, {}});
    }
    if (read.empty()) {
      claimed.got.push_back(any_flight ? Got::kAwaited : Got::kTaken);
      continue;
    }
    claimed.got.push_back(Got::kRead);
  }
  return claimed;
}

void RowShare::Deliver(const void* reader, uint64_t row, uint32_t slot, uint64_t begin, uint64_t length,
                       const char* bytes, bool keep) {
  if (length == 0) return;
  std::vector<std::pair<Await, const char*>> told;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t first = begin / block_, last = (begin + length - 1) / block_;
    for (uint64_t b = first; b <= last; ++b) {
      const Key key{row, slot, b};
      auto f = flights_.find(key);
      if (f == flights_.end() || f->second.reader != reader) continue;
      Flight flight = std::move(f->second);
      flights_.erase(f);
      const char* from = bytes == nullptr ? nullptr : bytes + (b * block_ - begin);
      if (from != nullptr && flight.waiting.empty() && keep) PutLocked(key, from, flight.length);
      for (const Await& a : flight.waiting) {
        told.push_back({a, from});
        if (from != nullptr) stats_.awaited_bytes += a.length;
      }
    }
  }
  FitPool();
  // Outside the lock: the copies (the waiter's memory stays until it has heard of each of its
  // blocks, and `bytes` until this returns), and the waiters, one of which, told of its last
  // block, may finish its read here and deliver in turn.
  for (const auto& [a, from] : told) {
    if (from != nullptr) std::memcpy(a.out, from, a.length);
    a.waiter->Arrived(a.want, from != nullptr);
  }
}

void RowShare::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.dropped_bytes += stats_.held_bytes;
  ReleaseLocked(stats_.held_bytes);
  blocks_.clear();
  order_.clear();
}

RowShare::Stats RowShare::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace graphfs
