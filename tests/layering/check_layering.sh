#!/usr/bin/env bash
# The libraries' layering (../shared/DESIGN.md, "Architecture"), checked:
# - on what the compiler reads, every header a front-end source file includes, directly or not
#   (g++ -MM): fusefs/ sees the volume's public headers and common/ only — nothing of cache/,
#   chunkindex/, striping/, compress/ or grid/ — and the volume's public headers bring nothing of
#   them either, nor name one of their types by a declaration of their own;
# - on what the sources name: fusefs/ and admin/ include no volume header outside the public set
#   (admin joins the libraries below the volume itself, through their public headers).
# The volume's public headers are the headers in volume/ itself; its internal headers live in
# volume/internal/ (volume/README.md). The rest of the layer table — which library may include which, the
# public headers of the libraries below the volume, engines/ as a client — is checked by
# check_library_table.sh.
#   check_layering.sh SOURCE_DIR
set -euo pipefail
ROOT="${1:?usage: check_layering.sh SOURCE_DIR}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
. "$HERE/sources.sh"  # sources DIR
flags=(-std=c++20 -I. $(pkg-config --cflags fuse3))
lower='^(cache|chunkindex|striping|compress|grid)/'
public=(volume/*.h)  # volume/internal/*.h are not public
failed=0
check() {  # check FILE: the headers it reads, one per line, none of a lower library
  local deps
  deps=$(g++ "${flags[@]}" -MM -x c++ "$1" | tr ' \\' '\n\n' | grep -E "$lower" || true)
  if [ -n "$deps" ]; then
    echo "$1 reads headers below the volume:" $deps
    failed=1
  fi
}
for f in $(sources fusefs); do check "$f"; done
for f in "${public[@]}"; do check "$f"; done
# Nor do they name a lower library's type by a declaration of their own: outside comments they open
# no namespace but graphfs::volume (striping's types live in graphfs itself) and qualify nothing with
# cache::, chunkindex::, grid:: or compress:: (an opaque type of the volume's stands in for a pin, a
# manifest, a map).
for f in "${public[@]}"; do
  named=$(sed 's#//.*##' "$f" | grep -nE '^ *namespace +graphfs *(\{|::(cache|chunkindex|grid|compress|striping)\b)|\b(cache|chunkindex|grid|compress)::' || true)
  if [ -n "$named" ]; then
    echo "$f names types of a library below the volume:" $named
    failed=1
  fi
done
# The headers of the project FILES... include, one per line ("dir/name.h").
included() { grep -ho '#include "[a-z0-9_/]*\.h[p]*"' "$@" | sed 's/#include "\(.*\)"/\1/' | sort -u; }
# The volume's own public headers are all the front end and the admin tools include of volume/.
for dir in fusefs admin; do
  outside=$(included $(sources "$dir") | grep '^volume/' |
            grep -vxF "$(printf '%s\n' "${public[@]}")" || true)
  if [ -n "$outside" ]; then
    echo "$dir includes volume headers that are not public:" $outside
    failed=1
  fi
done
[ "$failed" = 0 ] && echo "layering: fusefs and the volume's public headers read nothing below the volume" \
  "and name none of its types; fusefs and admin include only the volume's public headers"
exit "$failed"
