#!/usr/bin/env bash
# The libraries' layering, checked on what the compiler reads: every header a front-end source
# file includes, directly or not (g++ -MM). fusefs/ sees the volume's public headers and
# common/ only — nothing of cache/, chunkindex/, striping/, compress/ or grid/ — and the
# volume's public headers bring nothing of them either.
#   check_layering.sh SOURCE_DIR
set -euo pipefail
ROOT="${1:?usage: check_layering.sh SOURCE_DIR}"
cd "$ROOT"
flags=(-std=c++20 -I. $(pkg-config --cflags fuse3))
lower='^(cache|chunkindex|striping|compress|grid)/'
public=(volume/volume.h volume/graph_jobs.h volume/mapped_file.h volume/striped_stub.h
        volume/read_ahead.h volume/volume_options.h volume/memory_budget.h volume/version_reclaim.h)
failed=0
check() {  # check FILE: the headers it reads, one per line, none of a lower library
  local deps
  deps=$(g++ "${flags[@]}" -MM -x c++ "$1" | tr ' \\' '\n\n' | grep -E "$lower" || true)
  if [ -n "$deps" ]; then
    echo "$1 reads headers below the volume:" $deps
    failed=1
  fi
}
for f in fusefs/*.cc fusefs/*.h; do check "$f"; done
for f in "${public[@]}"; do check "$f"; done
# The volume's own public headers are all the front end includes of volume/.
outside=$(grep -ho '#include "volume/[a-z_]*\.h"' fusefs/*.cc fusefs/*.h | sed 's/#include "\(.*\)"/\1/' | sort -u |
          grep -vxF "$(printf '%s\n' "${public[@]}")" || true)
if [ -n "$outside" ]; then
  echo "fusefs includes volume headers that are not public:" $outside
  failed=1
fi
[ "$failed" = 0 ] && echo "layering: fusefs and the volume's public headers read nothing below the volume"
exit "$failed"
