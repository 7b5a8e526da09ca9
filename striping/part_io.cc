#include "striping/part_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "striping/row_journal.h"
#include "striping/stale_rows.h"
#include "striping/unit_sums.h"

namespace graphfs {

Status WriteAll(int fd, const char* buf, uint64_t len, uint64_t offset, const std::string& what) {
  while (len > 0) {
    ssize_t n = ::pwrite(fd, buf, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(what);
    }
    buf += n;
    len -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Result<uint64_t> ReadFull(int fd, char* buf, uint64_t len, uint64_t offset, const std::string& what) {
  uint64_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd, buf + got, len - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(what);
    }
    if (n == 0) break;
    got += static_cast<uint64_t>(n);
  }
  return got;
}

Result<std::vector<UniqueFd>> OpenParts(const DiskSet& disks, const std::string& id, int flags,
                                        const std::vector<bool>& lost) {
  std::vector<UniqueFd> parts;
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (d < lost.size() && lost[d]) {
      parts.emplace_back();
      continue;
    }
    const std::string p = disks.PartPath(d, id);
    parts.emplace_back(::open(p.c_str(), flags | O_CLOEXEC));
    if (!parts.back().valid()) return Error::FromErrno("open part on disk " + std::to_string(d) + " (" + p + ")");
  }
  return parts;
}

void RemovePartsOf(const DiskSet& disks, const std::string& id) {
  disks.NoteRemoved(id);  // a rebuild the mount's daemon runs over the set drops the file
  for (uint32_t d = 0; d < disks.size(); ++d) {
    ::unlink(disks.PartPath(d, id).c_str());
    ::unlink(disks.PartPath(d, UnitSums::FileName(id)).c_str());
    ::unlink(disks.PartPath(d, RowJournal::FileName(id)).c_str());
    for (uint32_t l = 0; l < disks.size(); ++l) ::unlink(disks.PartPath(d, StaleRecordName(id, l)).c_str());
  }
}

Status ReadFromParts(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts, uint64_t off,
                     uint64_t len, char* buf) {
  for (const StripeExtent& e : map.Split(off, len)) {
    auto n = ReadFull(parts[e.disk].get(), buf + (e.file_offset - off), e.length, e.disk_offset,
                      "read part on disk " + std::to_string(e.disk) + " (" + disks.path(e.disk) + ")");
    if (!n.ok()) return n.error();
    if (*n < e.length) std::memset(buf + (e.file_offset - off) + *n, 0, e.length - *n);
  }
  return Status::Ok();
}

Status WriteToParts(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts, uint64_t off,
                    uint64_t len, const char* buf) {
  for (const StripeExtent& e : map.Split(off, len)) {
    if (!parts[e.disk].valid()) continue;
    GRAPHFS_RETURN_IF_ERROR(WriteAll(parts[e.disk].get(), buf + (e.file_offset - off), e.length, e.disk_offset,
                                     "write part on disk " + std::to_string(e.disk) + " (" + disks.path(e.disk) + ")"));
  }
  return Status::Ok();
}

}  // namespace graphfs
