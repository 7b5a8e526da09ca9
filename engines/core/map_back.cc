#include "engines/core/map_back.h"

#include <cstring>
#include <vector>

#include "engines/core/reorder.h"
#include "engines/core/replace_file.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

size_t ValueSize(ResultType type) { return type == ResultType::kFloat64 ? 8 : 4; }

const char* TypeName(ResultType type) {
  switch (type) {
    case ResultType::kInt32:
      return "int32";
    case ResultType::kFloat32:
      return "float32";
    case ResultType::kFloat64:
      return "float64";
  }
  return "?";
}

}  // namespace

Result<ResultType> ParseResultType(const std::string& name) {
  if (name == "int32") return ResultType::kInt32;
  if (name == "float32") return ResultType::kFloat32;
  if (name == "float64") return ResultType::kFloat64;
  return Error(EINVAL, "unknown result type '" + name + "' (int32, float32, float64)");
}

Result<uint64_t> MapBack(const MapBackOptions& options) {
  if (options.labels && options.type != ResultType::kInt32) {
    return Error(EINVAL, "labels are vertex ids: they need --type int32, not " + std::string(TypeName(options.type)));
  }
  auto perm = ReadPermutationFile(options.permutation);
  if (!perm.ok()) return perm.error();
  const uint64_t vertices = perm->vertices();
  const size_t width = ValueSize(options.type);
  // Checked before reading, so a wrong file (an edge list, say) is not loaded whole.
  auto size = grid::RegularFileSize(options.input);
  if (!size.ok()) return size.error();
  if (*size != vertices * width) {
    return Error(EINVAL, options.input + ": " + std::to_string(*size) + " bytes, but a result of " +
                             std::to_string(vertices) + " " + TypeName(options.type) + " values (the vertices of " +
                             options.permutation + ") has " + std::to_string(vertices * width));
  }
  auto in = grid::ReadRegularFile(options.input, *size);
  if (!in.ok()) return in.error();
  if (in->size() != *size) return Error(EIO, options.input + ": changed while being read");

  std::vector<char> out(in->size());
  for (uint64_t old = 0; old < vertices; ++old) {
    const uint64_t now = static_cast<uint64_t>(perm->new_of_old[old]);
    std::memcpy(out.data() + old * width, in->data() + now * width, width);
    if (!options.labels) continue;
    int32_t label;
    std::memcpy(&label, out.data() + old * width, 4);
    if (label < 0) continue;
    if (static_cast<uint64_t>(label) >= vertices) {
      return Error(EINVAL, options.input + ": entry " + std::to_string(now) + " is " + std::to_string(label) +
                               ", not a vertex id in [0, " + std::to_string(vertices) + ") (--labels)");
    }
    std::memcpy(out.data() + old * width, &perm->old_of_new[static_cast<size_t>(label)], 4);
  }
  auto file = FileReplacement::Create(options.output);
  if (!file.ok()) return file.error();
  GRAPHFS_RETURN_IF_ERROR(grid::WriteAll(file->fd(), out.data(), out.size(), file->partial_path()));
  GRAPHFS_RETURN_IF_ERROR(file->Commit());
  return vertices;
}

Result<int32_t> MapVertex(const std::string& permutation, int64_t old_id) {
  auto perm = ReadPermutationFile(permutation);
  if (!perm.ok()) return perm.error();
  if (old_id < 0 || static_cast<uint64_t>(old_id) >= perm->vertices()) {
    return Error(EINVAL, "vertex " + std::to_string(old_id) + " is out of range: " + permutation + " has " +
                             std::to_string(perm->vertices()) + " vertices");
  }
  return perm->new_of_old[static_cast<size_t>(old_id)];
}

}  // namespace graphfs::engine
