// Who read a unit recently, as *visits*: one per pass of a process over the unit (the
// 1 MiB requests of one pass count once). The number of visits within the window is the
// "how many jobs want it, how often" half of a unit's priority when jobs have not said
// what they need: several processes reading a unit count once each, and a unit one
// process reads at every iteration counts more than one it read once.
#pragma once

#include <array>
#include <cstdint>

namespace graphfs::cache {

class ReaderSet {
 public:
  static constexpr int kSlots = 16;  // visits remembered

  // Records a read by `pid` at `now_ns`: a new visit unless the same process touched the
  // unit within `same_pass_ns`. The oldest visit makes room.
  void Touch(uint32_t pid, int64_t now_ns, int64_t same_pass_ns) {
    Slot* oldest = &slots_[0];
    for (Slot& s : slots_) {
      if (s.last_ns != 0 && s.pid == pid && now_ns - s.last_ns <= same_pass_ns) {
        s.last_ns = now_ns;
        return;
      }
      if (s.last_ns < oldest->last_ns) oldest = &s;
    }
    *oldest = {pid, now_ns};
  }
  // Visits within `window_ns` before `now_ns`.
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
  // When the visit before the latest one was last read; 0 if there was none.
  int64_t previous_ns() const {
    int64_t last = 0, previous = 0;
    for (const Slot& s : slots_) {
      if (s.last_ns > last) {
        previous = last;
        last = s.last_ns;
      } else if (s.last_ns > previous) {
        previous = s.last_ns;
      }
    }
    return previous;
  }

 private:
  struct Slot {
    uint32_t pid = 0;
    int64_t last_ns = 0;  // 0: empty
  };
  std::array<Slot, kSlots> slots_{};
};

}  // namespace graphfs::cache
