// The distinct processes that read a unit recently: the "how many jobs want it" half of
// a unit's priority when jobs have not said what they need.
#pragma once

#include <array>
#include <cstdint>

namespace graphfs::cache {

class ReaderSet {
 public:
  static constexpr int kSlots = 8;  // more distinct readers than this all count as 8

  // Records a read by `pid` at `now_ns`; the slot of the longest-idle reader is reused.
  void Touch(uint32_t pid, int64_t now_ns) {
    Slot* victim = &slots_[0];
    for (Slot& s : slots_) {
      if (s.pid == pid && s.last_ns != 0) {
        s.last_ns = now_ns;
        return;
      }
      if (s.last_ns < victim->last_ns) victim = &s;
    }
    *victim = {pid, now_ns};
  }
  // Readers seen within `window_ns` before `now_ns`.
  int Count(int64_t now_ns, int64_t window_ns) const {
    int n = 0;
    for (const Slot& s : slots_) n += (s.last_ns != 0 && now_ns - s.last_ns <= window_ns) ? 1 : 0;
    return n;
  }
  int64_t last_ns() const {
    int64_t t = 0;
    for (const Slot& s : slots_) t = s.last_ns > t ? s.last_ns : t;
    return t;
  }

 private:
  struct Slot {
    uint32_t pid = 0;
    int64_t last_ns = 0;  // 0: empty
  };
  std::array<Slot, kSlots> slots_{};
};

}  // namespace graphfs::cache
