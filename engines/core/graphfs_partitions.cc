#include "engines/core/graphfs_partitions.h"

#include <utility>

#include "engines/graphfs_client.hpp"

namespace graphfs::engine {

namespace {

Error Convert(const graphfs_client::Error& e) { return Error(e.code, e.message); }

class GraphfsPartitions : public PartitionSource {
 public:
  GraphfsPartitions(graphfs_client::Job job, uint64_t whole_chunks_after, bool asks_ahead)
      : job_(std::move(job)), whole_chunks_after_(whole_chunks_after), asks_ahead_(asks_ahead) {}

  Status SetActive(const Bitmap* active) override {
    if (whole_chunks_after_ != 0 && ++iterations_ == whole_chunks_after_ + 1) {
      const graphfs_client::Status s = job_.SetWholeChunks(true);
      if (!s.ok()) return Convert(s.error());
    }
    previous_ = graphfs_client::Partition();  // a new active set ends the use of both
    current_ = graphfs_client::Partition();
    const graphfs_client::Status s = active == nullptr ? job_.SetAllActive()
                                                       : job_.SetActive(active->words(), active->bits());
    if (!s.ok()) return Convert(s.error());
    return Status::Ok();
  }

  Result<LogicalPartition> Next() override {
    // Reading `next` ends our use of the last LP anyway (holding two: of the one before it).
    previous_ = asks_ahead_ ? std::move(current_) : graphfs_client::Partition();
    current_ = graphfs_client::Partition();
    auto lp = job_.Next(/*read_map=*/false);  // the stream needs the bytes only
    if (!lp.ok()) return Convert(lp.error());
    current_ = std::move(*lp);
    LogicalPartition out;
    out.end = current_.end;
    out.fd = current_.fd();
    out.path = current_.path;
    out.bytes = current_.bytes;
    out.turn = current_.turn;
    out.spans.reserve(current_.pieces.size());
    for (const graphfs_client::Piece& p : current_.pieces) out.spans.emplace_back(p.data, p.length);
    return out;
  }

  // Closes the LP here and tells the daemon nothing: the stream asks for the next LP (or sets
  // the next iteration's active set) at once, and that ends the job's use of this one too. A
  // `done` of its own was a round trip per LP with the job's reader threads idle — 0.7 ms on a
  // loaded 2-core machine, where the daemon's threads take the cores its reply needs — and
  // pagerank-delta alone at the demo's f = 1 ran 8.6 s without it, 9.6 s with it (median of
  // three each, docs/memory-as-cache.md, eighteenth part).
  Status Done() override {
    previous_ = graphfs_client::Partition();  // close the LPs before they disappear
    current_ = graphfs_client::Partition();
    return Status::Ok();
  }

  bool AsksAhead() const override { return asks_ahead_; }

  Status EndTurn() override {
    const graphfs_client::Status s = job_.Yield();
    if (!s.ok()) return Convert(s.error());
    return Status::Ok();
  }

 private:
  graphfs_client::Job job_;
  const uint64_t whole_chunks_after_;
  const bool asks_ahead_;
  uint64_t iterations_ = 0;
  graphfs_client::Partition current_;   // the LP the last Next() returned
  graphfs_client::Partition previous_;  // with asks_ahead_: the one before, still being read
};

}  // namespace

Result<std::unique_ptr<PartitionSource>> OpenGraphfsPartitions(const grid::GridLayout& layout,
                                                               uint64_t partition_bytes, uint64_t whole_chunks_after) {
  auto job = graphfs_client::Job::Init(layout.dir(), partition_bytes);
  if (!job.ok()) return Convert(job.error());
  if (job->vertices() != layout.vertices()) {
    return Error(EINVAL, "graphfs job " + job->name() + ": graphfs says " + layout.dir() + " has " +
                             std::to_string(job->vertices()) + " vertices, its meta says " +
                             std::to_string(layout.vertices()) + " (see " + job->dir() + "/status)");
  }
  // Two LPs held at once: the stream asks for the next while it reads one (a round trip per LP,
  // 1-2 ms on a loaded 2-core machine, off its critical path). A daemon without `hold` (ENOENT)
  // gets one ask at a time.
  const graphfs_client::Status hold = job->SetHold(2);
  if (!hold.ok() && hold.error().code != ENOENT) return Convert(hold.error());
  // Turns at the cores with the mount's other jobs (EdgeStream ends each turn when its threads
  // are done with the LP). A daemon without turns refuses the word: the job computes untimed.
  const graphfs_client::Status turns = job->TakeTurns();
  if (!turns.ok() && turns.error().code != EINVAL) return Convert(turns.error());
  return std::unique_ptr<PartitionSource>(
      std::make_unique<GraphfsPartitions>(std::move(*job), whole_chunks_after, hold.ok()));
}

}  // namespace graphfs::engine
