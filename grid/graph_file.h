// A graph file's bytes, read the same whether the file is an ordinary file or an *extent map*.
//
// Graph versions (graphfs-update, issue 19) share unchanged bytes between versions: an edge
// added to one block shifts every later offset of `column` and `row`, so a new version's
// `column` cannot be the old file with a few bytes rewritten. It is written as an extent map
// instead: a small file that lists, in file order, (piece, offset, length) extents over other
// files of the graph directory — the old version's `column` (kept alive by a hard link under
// `.graphfs/pieces/`) for the runs of unchanged blocks, the new block files for the rebuilt
// ones. A map is recognised by the extended attribute `user.graphfs.extents` (its value is the
// format version); its content is the map in text:
//
//   graphfs extent map 1
//   size BYTES                  the file's logical size (the extents' lengths add up to it)
//   pieces K                    then K lines: a piece's name, relative to the map's directory:
//                               a block file (block-I-J) or .graphfs/pieces/NAME
//   extents M                   then M lines: PIECE_INDEX OFFSET LENGTH, in file order
//
// Pieces are never maps themselves. They are plain files, or — in a striped graph — stubs whose
// bytes live elsewhere (graphfs-stripe's files on the disk set): grid/ does not know how to read
// those; a `StubFiles` given by whoever does (volume/) reads them. Everything is checked when a
// map is read: a damaged map, a missing piece or an extent past its piece's end is an Error
// naming the file.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace graphfs::grid {

inline constexpr const char* kExtentMapXattr = "user.graphfs.extents";
inline constexpr const char* kExtentMapVersion = "1";
inline constexpr const char* kPiecesDir = ".graphfs/pieces";
// A map is never larger (P = 65536 blocks would still fit comfortably below this).
inline constexpr uint64_t kMaxExtentMapBytes = 64ull << 20;

// Files whose bytes are kept elsewhere (graphfs-stripe's stubs): grid/ reads graph files with
// POSIX calls and knows nothing of disk sets, so the layer that does (volume/) says which files
// are stubs and reads them. Without one, a stub reads as what it is (a small text file).
class StubReader {
 public:
  virtual ~StubReader() = default;
  virtual uint64_t size() const = 0;
  // Exactly `length` bytes at `offset` (inside the file); thread-safe.
  virtual Status ReadExact(char* buf, uint64_t length, uint64_t offset) const = 0;
};
class StubFiles {
 public:
  virtual ~StubFiles() = default;
  // The logical size of the file open as `fd` (`path` names it in errors) when it is a stub,
  // else nullopt (an ordinary file).
  virtual Result<std::optional<uint64_t>> StubSize(int fd, const std::string& path) const = 0;
  // A reader of the stub open as `fd` (a descriptor of its own; the reader may keep it).
  virtual Result<std::shared_ptr<const StubReader>> OpenStub(UniqueFd fd, const std::string& path) const = 0;
};
// Who reads stubs is always passed down (GraphFile::Open, GraphFileSize, GridLayout::Open,
// chunkindex's BuildOptions::stubs): null means a directory without striped files.

struct MapExtent {
  uint32_t piece = 0;
  uint64_t offset = 0;  // in the piece
  uint64_t length = 0;
};

class ExtentMap {
 public:
  const std::vector<std::string>& pieces() const { return pieces_; }
  const std::vector<MapExtent>& extents() const { return extents_; }
  uint64_t size() const { return size_; }

  // Appends [offset, offset + length) of `piece` at the end of the file; merged with the last
  // extent when it continues it.
  void Append(const std::string& piece, uint64_t offset, uint64_t length);
  // Appends the bytes [offset, offset + length) of the file `from` describes (its pieces, not
  // `from` itself: maps never point at maps). Fails if the range is not inside `from`.
  Status AppendRange(const ExtentMap& from, uint64_t offset, uint64_t length);

  std::string Encode() const;
  // `where` names the map in errors.
  static Result<ExtentMap> Decode(std::string_view text, const std::string& where);

  // Whether `name` may be a piece: a block file, or a plain name under .graphfs/pieces/.
  static bool ValidPieceName(const std::string& name);

 private:
  uint32_t PieceIndex(const std::string& name);

  std::vector<std::string> pieces_;
  std::vector<MapExtent> extents_;
  uint64_t size_ = 0;
};

// Whether the file at `path` is an extent map; errors are
// those of reading its attribute (ENOENT and such).
Result<bool> IsExtentMap(const std::string& path);
// The map at `path`, or nullopt for an ordinary file.
Result<std::optional<ExtentMap>> ReadExtentMap(const std::string& path);
// The size a graph file reads as: an extent map's (its pieces are not opened), a stub's (by
// `stubs`), else the file's. Anything but a regular file is refused as by OpenRegularFile.
Result<uint64_t> GraphFileSize(const std::string& path, const StubFiles* stubs = nullptr);
// Writes `map` as the file `path` (created; must not exist), marked as a map, durable.
Status WriteExtentMap(const std::string& path, const ExtentMap& map);

// An open graph file: an ordinary file, a stub (read by `stubs`), or an extent map with its
// pieces open (each an ordinary file or a stub). Reads are thread-safe.
class GraphFile {
 public:
  static Result<GraphFile> Open(const std::string& path, const StubFiles* stubs = nullptr);

  uint64_t size() const { return size_; }
  bool mapped() const { return map_.has_value(); }
  const std::optional<ExtentMap>& map() const { return map_; }
  // The stat of the file itself (a map's stub: its mtime says when the map was written).
  const struct stat& st() const { return st_; }
  const std::string& path() const { return path_; }

  // Exactly `length` bytes at `offset` (inside the file) into `buf`.
  Status ReadExact(char* buf, uint64_t length, uint64_t offset) const;
  // Up to `length` bytes at `offset`: short at the end of the file, empty past it.
  Result<uint64_t> Read(char* buf, uint64_t length, uint64_t offset) const;

  // Where [offset, offset + length) lies (clipped to the file): the pieces' ranges in file
  // order — a plain file's descriptor, or a stub's reader (fd -1). An ordinary file gives
  // itself. For replies spliced from files.
  struct Piece {
    int fd;
    uint64_t offset;
    uint64_t length;
    const StubReader* stub = nullptr;
  };
  std::vector<Piece> Pieces(uint64_t offset, uint64_t length) const;

  // The distinct files behind the bytes (for a map: its pieces), with their stats.
  const std::vector<struct stat>& piece_stats() const { return piece_st_; }

 private:
  std::string path_;
  struct stat st_ {};
  uint64_t size_ = 0;
  std::optional<ExtentMap> map_;
  std::vector<UniqueFd> fds_;               // the file itself, or one per piece
  std::vector<std::shared_ptr<const StubReader>> stubs_;  // per piece: set for a stub
  std::vector<uint64_t> piece_size_;        // per piece: the bytes it reads as
  std::vector<struct stat> piece_st_;
  std::vector<uint64_t> starts_;            // a map's extents' file offsets, plus the end
};

}  // namespace graphfs::grid
