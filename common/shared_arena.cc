#include "common/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace graphfs {

namespace {

std::atomic<uint64_t> next_arena_id{1};
std::atomic<uint64_t> process_populated{0};
std::atomic<uint64_t> process_populated_budgeted{0};
std::atomic<uint64_t> process_punched{0};

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14
#endif

uint64_t RoundUp(uint64_t bytes) { return (bytes + SharedArena::kGranule - 1) / SharedArena::kGranule * SharedArena::kGranule; }

}  // namespace

Result<std::shared_ptr<SharedArena>> SharedArena::Create(const std::string& name, const Options& options) {
  if (options.virtual_bytes == 0 || options.virtual_bytes % kGranule != 0)
    return Error(EINVAL, "shared memory " + name + ": size " + std::to_string(options.virtual_bytes) +
                             " is not a positive multiple of " + std::to_string(kGranule));
  UniqueFd fd(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return Error::FromErrno("memfd_create " + name);
  if (::ftruncate(fd.get(), static_cast<off_t>(options.virtual_bytes)) != 0)
    return Error::FromErrno("ftruncate memfd " + name);
  // The daemon's mapping covers the whole size: nobody may shrink it under us.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    return Error::FromErrno("seal memfd " + name);
  void* base = ::mmap(nullptr, options.virtual_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd.get(), 0);
  if (base == MAP_FAILED) return Error::FromErrno("mmap memfd " + name);
  return std::shared_ptr<SharedArena>(new SharedArena(std::move(fd), static_cast<char*>(base), options));
}

SharedArena::SharedArena(UniqueFd fd, char* base, const Options& options)
    : fd_(std::move(fd)), base_(base), options_(options), id_(next_arena_id.fetch_add(1)) {
  free_[0] = options_.virtual_bytes;
  resident_.assign((options_.virtual_bytes / kGranule + 63) / 64, 0);
  stats_.virtual_bytes = options_.virtual_bytes;
}

SharedArena::~SharedArena() {
  if (options_.idle_counter) options_.idle_counter->fetch_sub(reported_idle_, std::memory_order_relaxed);
  ::munmap(base_, options_.virtual_bytes);
}

void SharedArena::ReportIdle() {
  if (!options_.idle_counter) return;
  const uint64_t idle = stats_.resident_bytes - std::min(stats_.resident_bytes, stats_.used_bytes);
  if (idle >= reported_idle_) {
    options_.idle_counter->fetch_add(idle - reported_idle_, std::memory_order_relaxed);
  } else {
    options_.idle_counter->fetch_sub(reported_idle_ - idle, std::memory_order_relaxed);
  }
  reported_idle_ = idle;
}

uint64_t SharedArena::CountResident(uint64_t first, uint64_t count) const {
  uint64_t n = 0;
  for (uint64_t g = first; g < first + count; ++g) n += Resident(g);
  return n;
}

void SharedArena::SetResident(uint64_t first, uint64_t count, bool resident) {
  for (uint64_t g = first; g < first + count; ++g) {
    const uint64_t bit = uint64_t{1} << (g % 64);
    if (resident) {
      resident_[g / 64] |= bit;
    } else {
      resident_[g / 64] &= ~bit;
    }
  }
}

Result<SharedArena::Slice> SharedArena::Take(uint64_t bytes, Use use) {
  const uint64_t length = RoundUp(std::max<uint64_t>(bytes, 1));
  Slice slice;
  uint64_t fresh = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The window of `length` bytes, granule-aligned inside a free range, that has the most
    // resident granules (the lowest of those): a fresh page costs a zeroing fault now and,
    // once the idle bytes are over their allowance, a punch later. First-fit took a hole
    // punched below a kept slice (a free range whose low part was punched before its high
    // part was freed and kept) and left the kept bytes idle. Past resident_end_ every granule
    // is fresh: one window there. The scan covers free bytes below resident_end_ at most.
    const uint64_t count = length / kGranule;
    auto it = free_.end();
    uint64_t at = 0, least_fresh = UINT64_MAX;
    for (auto f = free_.begin(); f != free_.end() && least_fresh > 0; ++f) {
      if (f->second < length) continue;
      const uint64_t first = f->first / kGranule;
      const uint64_t last_start = first + (f->second - length) / kGranule;  // the last window's first granule
      const uint64_t scan_end = std::min(last_start, std::max(first, resident_end_ / kGranule));
      // Windows starting at first .. scan_end, their resident count kept as the window slides.
      uint64_t resident = CountResident(first, count);
      for (uint64_t g = first;; ++g) {
        if (count - resident < least_fresh) {
          least_fresh = count - resident;
          it = f;
          at = g * kGranule;
          if (least_fresh == 0) break;
        }
        if (g >= scan_end) break;
        resident -= Resident(g);
        resident += Resident(g + count);
      }
    }
    if (it == free_.end()) {
      ++stats_.take_failures;
      return Error(ENOMEM, "shared memory: no free " + std::to_string(length) + "-byte slice in " +
                               std::to_string(options_.virtual_bytes) + " bytes (" + std::to_string(stats_.used_bytes) +
                               " in use)");
    }
    slice.offset = at;
    slice.length = length;
    slice.data = base_ + slice.offset;
    const uint64_t range = it->first, range_length = it->second;
    free_.erase(it);
    if (at > range) free_[range] = at - range;
    if (range + range_length > at + length) free_[at + length] = range + range_length - (at + length);
    fresh = least_fresh * kGranule;
    SetResident(slice.offset / kGranule, count, true);
    resident_end_ = std::max(resident_end_, slice.offset + length);
    stats_.resident_bytes += fresh;
    stats_.used_bytes += length;
    stats_.peak_used_bytes = std::max(stats_.peak_used_bytes, stats_.used_bytes);
    ++stats_.slices;
    slice.budgeted = use == Use::kBudgeted;
    if (slice.budgeted) {
      stats_.budgeted_bytes += length;
      // Budgeted bytes in use leave less room for idle ones.
      if (stats_.resident_bytes > stats_.used_bytes + IdleAllowed()) TrimResident();
    }
    ReportIdle();
  }
  // Fault the fresh pages in with one call rather than one trap per 4 KiB page as the
  // writer touches them (best effort: older kernels say EINVAL, and the writer faults).
  if (fresh > 0) {
    (void)::madvise(slice.data, slice.length, MADV_POPULATE_WRITE);
    process_populated.fetch_add(fresh, std::memory_order_relaxed);
    if (slice.budgeted) process_populated_budgeted.fetch_add(fresh, std::memory_order_relaxed);
  }
  return slice;
}

void SharedArena::Give(const Slice& slice) {
  if (slice.data == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  stats_.used_bytes -= slice.length;
  if (slice.budgeted) stats_.budgeted_bytes -= slice.length;
  --stats_.slices;
  uint64_t offset = slice.offset, length = slice.length;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + length == next->first) {
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      free_.erase(prev);
    }
  }
  free_[offset] = length;
  if (stats_.resident_bytes > stats_.used_bytes + IdleAllowed()) TrimResident();
  ReportIdle();
}

uint64_t SharedArena::IdleAllowed() const {
  const uint64_t left = options_.budget > stats_.budgeted_bytes ? options_.budget - stats_.budgeted_bytes : 0;
  return std::max(options_.idle_limit, left);
}

void SharedArena::TrimResident() {
  // Free bytes kept resident beyond the limit are punched from the highest offsets down: Take
  // fits from the lowest, so the low ones are the next to be reused (slices of different
  // sizes leave holes that a larger one does not fit; punching the slice just given, as a
  // first version did, punched 6.8 GB in a 57 s run). Under the lock, so that no Take can
  // populate a range while it is punched.
  const uint64_t limit = stats_.used_bytes + IdleAllowed();  // resident bytes allowed
  for (auto it = free_.rbegin(); it != free_.rend() && stats_.resident_bytes > limit; ++it) {
    const uint64_t first = it->first / kGranule;
    uint64_t g = std::min(it->first + it->second, resident_end_) / kGranule;
    while (g > first && stats_.resident_bytes > limit) {
      // The highest run of resident granules below g.
      while (g > first && !Resident(g - 1)) --g;
      uint64_t from = g;
      while (from > first && Resident(from - 1) &&
             stats_.resident_bytes - (g - from) * kGranule > limit)
        --from;
      if (from == g) break;
      if (::fallocate(fd_.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from * kGranule),
                      static_cast<off_t>((g - from) * kGranule)) != 0)
        return;  // the bytes stay resident: counted as such
      SetResident(from, g - from, false);
      stats_.resident_bytes -= (g - from) * kGranule;
      stats_.punched_bytes += (g - from) * kGranule;
      process_punched.fetch_add((g - from) * kGranule, std::memory_order_relaxed);
      g = from;
    }
  }
}

SharedArena::Stats SharedArena::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

SharedArena::Churn SharedArena::ProcessChurn() {
  return {process_populated.load(std::memory_order_relaxed), process_populated_budgeted.load(std::memory_order_relaxed),
          process_punched.load(std::memory_order_relaxed)};
}

SharedBytes SharedBytes::Allocate(const std::shared_ptr<SharedArena>& arena, uint64_t bytes, SharedArena::Use use) {
  SharedBytes b;
  b.size_ = bytes;
  if (arena != nullptr) {
    auto slice = arena->Take(bytes, use);
    if (slice.ok()) {
      b.arena_ = arena;
      b.slice_ = *slice;
      b.data_ = slice->data;
      return b;
    }
  }
  b.heap_ = AlignedBuffer(static_cast<size_t>(std::max<uint64_t>(bytes, 1)));
  b.data_ = b.heap_.data();
  return b;
}

SharedBytes& SharedBytes::operator=(SharedBytes&& other) noexcept {
  if (this != &other) {
    Reset();
    arena_ = std::move(other.arena_);
    slice_ = std::exchange(other.slice_, SharedArena::Slice{});
    heap_ = std::move(other.heap_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void SharedBytes::Reset() {
  if (arena_ != nullptr) arena_->Give(slice_);
  arena_.reset();
  slice_ = SharedArena::Slice{};
  heap_ = AlignedBuffer();
  data_ = nullptr;
  size_ = 0;
}

}  // namespace graphfs
