#include "striping/journal_replay.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"
#include "striping/io_engine.h"
#include "striping/row_journal.h"
#include "striping/striped_file.h"

namespace graphfs {

Result<StripeManifest> ReplayRowJournal(const DiskSet& disks, const std::string& stub, const StripeManifest& m,
                                        bool* replayed) {
  if (replayed != nullptr) *replayed = false;
  // The mount journals the writes of files with sums only, and never writes a compressed one.
  if (m.sum_block == 0 || m.packed) return m;
  auto pending = RowJournal::HasPending(disks, m);
  if (!pending.ok()) return pending.error().Wrap(stub);
  if (!*pending) return m;
  const std::string why = stub + ": its row journal holds writes not known to be in place (its writer was killed "
                                 "and the file was not opened writable since), which must be replayed before its "
                                 "parts are read";
  const std::string how = "; mount the graph read-write once (the mount replays it), or run this where the file "
                          "and its disks are writable";
  UniqueFd fd(::open(stub.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int e = errno;
    return Error(e, why + "; opening it for writing: " + std::strerror(e) + how);
  }
  IoEngineOptions io;
  io.disks = disks.size();
  auto engine = IoEngine::Start(io);
  if (!engine.ok()) return engine.error().Wrap(why);
  {
    StripedFileOptions o;
    o.writable = true;   // what makes Open replay the journal
    o.direct_io = false;
    auto file = StripedFile::Open(disks, engine->get(), std::move(fd), m, o);
    if (!file.ok()) return Error(file.error().code(), why + "; replaying: " + file.error().message() + how);
  }  // closed (and flushed) before its engine stops
  auto after = ReadManifest(stub);
  if (!after.ok()) return after.error();
  if (!*after) return Error(EIO, stub + ": not a striped file any more after its journal's replay");
  if (replayed != nullptr) *replayed = true;
  return **after;
}

}  // namespace graphfs
