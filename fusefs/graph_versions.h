// Graph versions through the mount (issue 19; admin/graph_update.h makes them): a kept version
// `NAME@N/`'s graph is read-only, and a graph file shared between versions by a hard link cannot
// be written through either name — one write would change both versions. graphfs-update is how
// a graph changes. Jobs may still run on a kept version: the files they keep beside the graph
// (state, results: any name that is not a grid file) can be created and written there.
// Refused with EROFS and a log line:
//  - a grid file's name (meta, offsets, column, row, block-I-J) or .graphfs made in a kept version
//    (create, mknod, mkdir, symlink, link, rename onto it);
//  - opening a graph file of a kept version, or a shared graph file of a versioned graph, for
//    writing or with O_TRUNC, and truncating one.
//  - the same for an extent map (a version's `column` and `row`: its bytes are other files') and
//    for the files under GRAPH/.graphfs/pieces/ that maps read.
// Removing a kept version (unlink, rmdir) stays allowed: that is how an admin reclaims it.
#pragma once

#include "fusefs/inode_table.h"

namespace graphfs {

// `dir` is a kept version: named NAME@N, and a graph (it has `meta`).
bool IsKeptVersionDir(const Inode& dir);
// `name` would be one of the graph's own entries (a grid file or .graphfs) in the kept version
// `dir`: it cannot be made there.
bool IsKeptVersionGraphEntry(const Inode& dir, const char* name);
// The regular file `inode` must not change: it is a graph file (meta, offsets, column, row,
// block-i-j) of a kept version, or one with more than one link in a versioned graph (one with
// `.graphfs/version`), an extent map, or a piece maps read.
bool IsFrozenVersionFile(const Inode& inode);
// The same for the entry `name` of `dir` (create with O_CREAT on an existing name); false if
// there is none.
bool IsFrozenVersionEntry(const Inode& dir, const char* name);

}  // namespace graphfs
