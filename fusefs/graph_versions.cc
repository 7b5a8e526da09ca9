#include "fusefs/graph_versions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <string>

#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

bool NamedLikeAVersion(const std::string& name) {
  const size_t at = name.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 == name.size()) return false;
  for (size_t i = at + 1; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool KeptVersionPath(const std::string& dir) {
  return NamedLikeAVersion(BaseName(dir)) && Exists(dir + "/meta");
}

// GRAPH/.graphfs/pieces: the old versions' files that extent maps read (volume/internal/mapped_piece.h).
bool InPiecesDir(const std::string& dir) {
  const std::string suffix = std::string("/") + volume::PiecesDir();
  return dir.size() > suffix.size() && dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool IsKeptVersionDir(const Inode& dir) {
  if (dir.kind != Inode::Kind::kBacked) return false;
  const std::string path = BackingPath(dir);
  return !path.empty() && KeptVersionPath(path);
}

bool IsKeptVersionGraphEntry(const Inode& dir, const char* name) {
  return (volume::IsGraphFileName(name) || std::string(name) == ".graphfs") && IsKeptVersionDir(dir);
}

bool IsFrozenVersionEntry(const Inode& dir, const char* name) {
  if (dir.kind != Inode::Kind::kBacked) return false;
  struct stat st;
  if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return false;
  const std::string path = BackingPath(dir);
  if (path.empty()) return false;
  if (InPiecesDir(path)) return true;
  if (!volume::IsGraphFileName(name)) return false;
  return KeptVersionPath(path) || (st.st_nlink > 1 && Exists(path + "/.graphfs/version"));
}

bool IsFrozenVersionFile(const Inode& inode) {
  if (inode.kind != Inode::Kind::kBacked) return false;
  if (inode.mapped) return true;  // its bytes are other files'
  struct stat st;
  if (::fstat(inode.fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const std::string path = BackingPath(inode);
  if (path.empty()) return false;
  const std::string dir = DirName(path);
  if (InPiecesDir(dir)) return true;
  if (!volume::IsGraphFileName(BaseName(path))) return false;
  return KeptVersionPath(dir) || (st.st_nlink > 1 && Exists(dir + "/.graphfs/version"));
}

}  // namespace graphfs
