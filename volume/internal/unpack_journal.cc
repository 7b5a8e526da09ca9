#include "volume/internal/unpack_journal.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "striping/json_fields.h"
#include "striping/manifest.h"

namespace graphfs::volume {

namespace {

// The records' directory on every present disk: a record is written on the first (with a disk
// missing an unpack still runs: striping/file_creation.h), and looked for on all, since the disk
// that held it may be the one missing at the next mount (then its copy's parts stay until it is
// back: what is left is disk space, never a wrong file).
std::vector<std::string> RecordDirs(const DiskSet& disks) {
  std::vector<std::string> dirs;
  for (uint32_t d = 0; d < disks.size(); ++d)
    if (disks.state(d) != DiskState::kMissing) dirs.push_back(disks.path(d) + "/" + kPendingUnpackDir);
  return dirs;
}
std::string RecordPath(const std::string& dir, const std::string& new_id) { return dir + "/" + new_id + ".json"; }

// The records in `dir` finished (FinishPendingUnpacks, one disk's records).
UnpackOutcome FinishPendingUnpacksIn(const std::string& dir, const DiskSet& disks,
                                     const std::function<void(const std::string&)>& remove_parts);

Result<UnpackRecord> DecodeRecord(const std::string& text) {
  auto j = ParseJson(text);
  if (!j.ok()) return j.error();
  UnpackRecord r;
  auto old_id = StringField(*j, "old");
  if (!old_id.ok()) return old_id.error();
  auto new_id = StringField(*j, "new");
  if (!new_id.ok()) return new_id.error();
  auto stub = StringField(*j, "stub");
  if (!stub.ok()) return stub.error();
  r.old_id = *old_id;
  r.new_id = *new_id;
  r.stub = *stub;
  if (r.old_id.empty() || r.new_id.empty() || r.old_id == r.new_id) return Error(EINVAL, "bad file ids");
  return r;
}

}  // namespace

Status WriteUnpackRecord(const DiskSet& disks, const UnpackRecord& record) {
  const std::vector<std::string> dirs = RecordDirs(disks);
  if (dirs.empty()) return Error(ENODEV, "no disk of the set is present");
  const std::string& dir = dirs.front();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Error::FromErrno("create " + dir);
  const nlohmann::json j = {{"old", record.old_id}, {"new", record.new_id}, {"stub", record.stub}};
  return WriteFileAtomic(RecordPath(dir, record.new_id), j.dump() + "\n");
}

void DropUnpackRecord(const DiskSet& disks, const std::string& new_id) {
  for (const std::string& dir : RecordDirs(disks)) {
    const std::string path = RecordPath(dir, new_id);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) LogError(Error::FromErrno("remove " + path).message());
  }
}

UnpackOutcome FinishPendingUnpacks(const DiskSet& disks, const std::function<void(const std::string&)>& remove_parts) {
  UnpackOutcome out;
  for (const std::string& dir : RecordDirs(disks)) {
    const UnpackOutcome here = FinishPendingUnpacksIn(dir, disks, remove_parts);
    out.finished += here.finished;
    out.kept += here.kept;
  }
  return out;
}

namespace {

UnpackOutcome FinishPendingUnpacksIn(const std::string& dir, const DiskSet& disks,
                                     const std::function<void(const std::string&)>& remove_parts) {
  UnpackOutcome out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;  // none was ever written
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) names.push_back(name);
    // A record the kill caught half written never took effect: no part was created after it.
    if (name.find(".json.tmp.") != std::string::npos) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    auto text = ReadSmallFile(path);
    auto record = text.ok() ? DecodeRecord(*text) : Result<UnpackRecord>(text.error());
    if (!record.ok()) {
      LogError("pending unpack record " + path + " is unreadable (" + record.error().message() +
               "): kept, no parts removed");
      ++out.kept;
      continue;
    }
    std::string loser;
    if (record->stub.empty()) {
      // Unlinked while open: neither copy has a name any more.
      remove_parts(record->old_id);
      loser = record->new_id;
    } else {
      auto m = ReadManifest(record->stub);
      if (m.ok() && *m && (*m)->file_id == record->new_id) loser = record->old_id;
      if (m.ok() && *m && (*m)->file_id == record->old_id) loser = record->new_id;
      if (loser.empty()) {
        LogError("pending unpack " + name + ": " + record->stub + " names neither " + record->old_id + " nor " +
                 record->new_id + " (renamed or replaced since): both kept; remove the parts no file names by hand");
        ++out.kept;
        continue;
      }
    }
    remove_parts(loser);
    DropUnpackRecord(disks, record->new_id);
    LogError("pending unpack of " + (record->stub.empty() ? std::string("an unlinked file") : record->stub) +
             " finished: parts of " + loser + " removed");
    ++out.finished;
  }
  return out;
}

}  // namespace

}  // namespace graphfs::volume
