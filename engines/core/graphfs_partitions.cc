#include "engines/core/graphfs_partitions.h"

#include <utility>

#include "engines/graphfs_client.hpp"

namespace graphfs::engine {

namespace {

Error Convert(const graphfs_client::Error& e) { return Error(e.code, e.message); }

class GraphfsPartitions : public PartitionSource {
 public:
  GraphfsPartitions(graphfs_client::Job job, uint64_t whole_chunks_after)
      : job_(std::move(job)), whole_chunks_after_(whole_chunks_after) {}

  Status SetActive(const Bitmap* active) override {
    if (whole_chunks_after_ != 0 && ++iterations_ == whole_chunks_after_ + 1) {
      const graphfs_client::Status s = job_.SetWholeChunks(true);
      if (!s.ok()) return Convert(s.error());
    }
    const graphfs_client::Status s = active == nullptr ? job_.SetAllActive()
                                                       : job_.SetActive(active->words(), active->bits());
    if (!s.ok()) return Convert(s.error());
    return Status::Ok();
  }

  Result<LogicalPartition> Next() override {
    current_ = graphfs_client::Partition();  // reading `next` ends our use of the last LP anyway
    auto lp = job_.Next(/*read_map=*/false);  // the stream needs the bytes only
    if (!lp.ok()) return Convert(lp.error());
    current_ = std::move(*lp);
    LogicalPartition out;
    out.end = current_.end;
    out.fd = current_.fd();
    out.path = current_.path;
    out.bytes = current_.bytes;
    out.spans.reserve(current_.pieces.size());
    for (const graphfs_client::Piece& p : current_.pieces) out.spans.emplace_back(p.data, p.length);
    return out;
  }

  Status Done() override {
    current_ = graphfs_client::Partition();  // close the LP before it disappears
    const graphfs_client::Status s = job_.Done();
    if (!s.ok()) return Convert(s.error());
    return Status::Ok();
  }

 private:
  graphfs_client::Job job_;
  const uint64_t whole_chunks_after_;
  uint64_t iterations_ = 0;
  graphfs_client::Partition current_;
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
  return std::unique_ptr<PartitionSource>(std::make_unique<GraphfsPartitions>(std::move(*job), whole_chunks_after));
}

}  // namespace graphfs::engine
