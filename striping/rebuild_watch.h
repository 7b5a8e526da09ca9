// What a rebuild run by the mount's daemon (rebuild.h, RebuildRequest::live) has passed, and the
// rows that writes changed behind it (docs/parity.md, "Writes while the daemon rebuilds"). Files
// that lost the disk keep taking writes while the rebuild runs: degraded, as before it, on the
// present disks only. A row the rebuild has not reached yet is rebuilt from what the row holds
// when it gets there; a row it has passed is remembered here by the write (under the row's lock,
// which the rebuild holds while it reads the row, so each write lands either before the rebuild
// read the row or is remembered), and the rebuild does it again before the disk is switched in.
//
// The switch: once the rows remembered are few, the rebuild holds writes of the files that lost
// the disk (Hold; a write waits in AwaitRelease, outside its file's locks, so that the switch can
// hand the file the disk), does the rows left, and switches; Release lets the writes go on, onto
// the disk switched in. In memory only: after a kill the write-intent records (stale_rows.h),
// which every write with the disk lost marks first, tell a resumed rebuild which rows to redo.
//
// Files come and go while the rebuild runs: a file the daemon creates with the disk missing (the
// plain copy of a compressed file's first write: its part there lost from the start) is told here
// once it is durable and named (Created), and the rebuild does its rows too; a file whose parts
// are removed (Removed, before they go) is dropped by the rebuild, with what it had put on the
// new disk. Creations are held like writes for the last pass: DiskSet::BeginCreate waits while
// the writes are held, and the rebuild's hold waits for the creations under way
// (DiskSet::AwaitCreations).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace graphfs {

class RebuildWatch {
 public:
  // Rows of `file_id` below `next_row` are on the new disk (the rebuild holds the lock of row
  // next_row - 1 as it says so). UINT64_MAX: every row, and any the file grows to.
  void Passed(const std::string& file_id, uint64_t next_row);
  // A write changed rows [first, end) of `file_id` on the present disks (in place, or cut them):
  // those the rebuild has passed are remembered.
  void Written(const std::string& file_id, uint64_t first, uint64_t end);
  // The rows remembered since the last call, by file, and forgets them.
  std::map<std::string, std::set<uint64_t>> TakeWritten();
  // How many rows are remembered now.
  uint64_t written() const;

  // A file created with the disk lost (`path`: its stub), durable and named: the rebuild does its
  // rows. TakeCreated hands over those told since the last call.
  struct CreatedFile {
    std::string path;
    std::string file_id;
  };
  void Created(CreatedFile file);
  std::vector<CreatedFile> TakeCreated();
  // The parts of `file_id` are about to be removed (the file unlinked, or replaced by its copy):
  // the rebuild drops it.
  void Removed(const std::string& file_id);
  bool removed(const std::string& file_id) const;
  std::set<std::string> RemovedFiles() const;

  // Writes of files that lost the disk wait from Hold until Release.
  void Hold();
  void Release();
  bool holding() const;
  // Returns once the writes are released.
  void AwaitRelease() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable released_;
  std::map<std::string, uint64_t> passed_;  // file id → rows passed
  std::map<std::string, std::set<uint64_t>> written_;
  uint64_t count_ = 0;  // rows in written_
  std::vector<CreatedFile> created_;
  std::set<std::string> removed_;
  bool holding_ = false;
};

}  // namespace graphfs
