// A PartitionSource that plays graphfs's part in engine tests, so integrated
// mode runs without a mount: it cuts `column` into chunks of `chunk_edges`
// records (a chunk may straddle blocks: the engine must not care), and per
// iteration hands out the chunks holding an active source, shuffled, packed
// into LP files of at most `partition_bytes` (at least one chunk each). Like
// the daemon it insists on the protocol: SetActive starts an iteration, Next
// until `end`, Done only for a held LP; a violation is an error the engine
// returns, so tests see it. With `asks_ahead` it holds two LPs as the daemon does
// for a job with `hold` 2: Next closes and unlinks the LP before the last one.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine_test_util.h"
#include "engines/core/partition_source.h"
#include "grid/grid_layout.h"

namespace graphfs::engine::testing {

struct FakePartitionCounts {
  uint64_t created = 0;
  uint64_t destroyed = 0;
  uint64_t set_active = 0;
  uint64_t set_all_active = 0;
  uint64_t partitions = 0;  // LPs handed out
  uint64_t done = 0;
  uint64_t ends = 0;
  uint64_t chunk_edges_out = 0;  // edge records in the LPs handed out
  uint64_t asked_holding = 0;    // Next called while the LP of the last Next was held
  std::atomic<uint64_t> turns{0};      // LPs handed out as turns (turn_every)
  std::atomic<uint64_t> end_turns{0};  // EndTurn calls, each for a turn handed out and not ended
  std::atomic<uint64_t> stray_end_turns{0};  // EndTurn with no turn outstanding
};

struct FakePartitionOptions {
  uint64_t chunk_edges = 5;
  uint64_t partition_bytes = 256;
  uint32_t seed = 1;
  uint64_t junk_bytes = 0;  // appended to every LP (a broken daemon)
  bool asks_ahead = false;  // holds two LPs (PartitionSource::AsksAhead)
  uint64_t turn_every = 0;  // every N-th LP is a turn at the cores (0: none)
};

class FakePartitions : public PartitionSource {
 public:
  FakePartitions(const grid::GridLayout& layout, std::string dir, FakePartitionOptions options,
                 std::shared_ptr<FakePartitionCounts> counts = std::make_shared<FakePartitionCounts>())
      : dir_(std::move(dir)), options_(options), counts_(std::move(counts)), rng_(options.seed) {
    column_ = ReadFile(layout.OrderFile(grid::EdgeOrder::kColumn));
    edge_ = layout.edge_size();
    vertices_ = layout.vertices();
    ++counts_->created;
  }
  ~FakePartitions() override {
    Release();
    ReleasePrevious();
    ++counts_->destroyed;
  }

  bool AsksAhead() const override { return options_.asks_ahead; }

  const std::shared_ptr<FakePartitionCounts>& counts() const { return counts_; }

  Status SetActive(const Bitmap* active) override {
    if (iterating_) return Error(EBUSY, "fake graphfs: SetActive before the last iteration reached end");
    Release();  // a new active set ends the use of what the job held
    ReleasePrevious();
    if (active != nullptr && active->bits() != vertices_) return Error(EINVAL, "fake graphfs: bitmap of wrong size");
    ++(active == nullptr ? counts_->set_all_active : counts_->set_active);
    const uint64_t chunk_bytes = options_.chunk_edges * edge_;
    std::vector<std::pair<uint64_t, uint64_t>> chunks;  // offset, length in column
    for (uint64_t offset = 0; offset < column_.size(); offset += chunk_bytes) {
      const uint64_t length = std::min<uint64_t>(chunk_bytes, column_.size() - offset);
      bool wanted = active == nullptr;
      for (uint64_t e = offset; e < offset + length && !wanted; e += edge_) {
        int32_t source;
        std::memcpy(&source, column_.data() + e, 4);
        wanted = active->Get(static_cast<uint32_t>(source));
      }
      if (wanted) chunks.push_back({offset, length});
    }
    std::shuffle(chunks.begin(), chunks.end(), rng_);
    pending_.clear();
    for (const auto& chunk : chunks) {
      if (pending_.empty() || pending_.back().size() + chunk.second > options_.partition_bytes) pending_.emplace_back();
      pending_.back() += column_.substr(chunk.first, chunk.second);
    }
    iterating_ = true;
    return Status::Ok();
  }

  Result<LogicalPartition> Next() override {
    if (fd_ >= 0) ++counts_->asked_holding;
    // Reading next ends the use of the held LP (holding two: of the one before it).
    ReleasePrevious();
    if (options_.asks_ahead) {
      prev_fd_ = std::exchange(fd_, -1);
      prev_path_ = path_;
    }
    Release();
    if (!iterating_) return Error(EINVAL, "fake graphfs: Next without an active set");
    LogicalPartition lp;
    if (pending_.empty()) {
      iterating_ = false;
      ++counts_->ends;
      lp.end = true;
      return lp;
    }
    std::string bytes = std::move(pending_.front());
    pending_.erase(pending_.begin());
    counts_->chunk_edges_out += bytes.size() / edge_;
    bytes.append(options_.junk_bytes, '\0');
    path_ = dir_ + "/lp-" + std::to_string(counts_->partitions++);
    WriteFile(path_, bytes);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return Error::FromErrno("fake graphfs: open " + path_);
    lp.fd = fd_;
    lp.path = path_;
    lp.bytes = bytes.size();
    if (options_.turn_every != 0 && counts_->partitions % options_.turn_every == 0) {
      lp.turn = true;
      ++counts_->turns;
      ++turns_outstanding_;
    }
    return lp;
  }

  // Called by the stream's thread while a Next() of asks_ahead may run on another.
  Status EndTurn() override {
    uint64_t n = turns_outstanding_.load();
    do {
      if (n == 0) {
        ++counts_->stray_end_turns;
        return Error(EINVAL, "fake graphfs: EndTurn without a turn");
      }
    } while (!turns_outstanding_.compare_exchange_weak(n, n - 1));
    ++counts_->end_turns;
    return Status::Ok();
  }

  Status Done() override {
    if (fd_ < 0 && prev_fd_ < 0) return Error(EINVAL, "fake graphfs: Done without a held LP");
    ++counts_->done;
    Release();
    ReleasePrevious();
    return Status::Ok();
  }

 private:
  void ReleasePrevious() {
    if (prev_fd_ < 0) return;
    ::close(prev_fd_);
    ::unlink(prev_path_.c_str());
    prev_fd_ = -1;
  }
  void Release() {
    if (fd_ < 0) return;
    ::close(fd_);
    ::unlink(path_.c_str());
    fd_ = -1;
  }

  std::string dir_;
  FakePartitionOptions options_;
  std::shared_ptr<FakePartitionCounts> counts_;
  std::mt19937 rng_;
  std::string column_;
  size_t edge_ = 8;
  uint64_t vertices_ = 0;
  std::vector<std::string> pending_;
  bool iterating_ = false;
  int fd_ = -1;
  std::string path_;
  int prev_fd_ = -1;  // with asks_ahead: the LP before the last, still held
  std::string prev_path_;
  std::atomic<uint64_t> turns_outstanding_{0};
};

}  // namespace graphfs::engine::testing
