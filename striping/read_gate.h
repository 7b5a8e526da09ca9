// Lets the reads of a striped file with parity run together, and a write or truncate of it run
// alone. A read must not see a row halfway through its in-place write: its data and sums would
// disagree, and the read would "repair" the new bytes back to the old ones from the parity
// (parity_write.h). Unlike a shared_mutex, a read may leave from another thread than the one it
// entered on — an asynchronous read leaves on the I/O worker that completes it. A waiting writer
// does not hold back new reads: a reader may start a second read before it waits for its first
// (the LP loader keeps two batches in flight), and holding it back would wait for ever.
#pragma once

#include <condition_variable>
#include <mutex>

namespace graphfs {

class ReadGate {
 public:
  void EnterRead() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !writing_; });
    ++readers_;
  }
  void LeaveRead() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--readers_ == 0) cv_.notify_all();
  }
  void LockWrite() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !writing_ && readers_ == 0; });
    writing_ = true;
  }
  void UnlockWrite() {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    cv_.notify_all();
  }
  // Holds the gate for a write or truncate until the end of its scope.
  class WriteScope {
   public:
    explicit WriteScope(ReadGate& gate) : gate_(gate) { gate_.LockWrite(); }
    ~WriteScope() { gate_.UnlockWrite(); }
    WriteScope(const WriteScope&) = delete;
    WriteScope& operator=(const WriteScope&) = delete;

   private:
    ReadGate& gate_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int readers_ = 0;
  bool writing_ = false;
};

}  // namespace graphfs
