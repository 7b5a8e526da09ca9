#!/usr/bin/env bash
# The libraries' layer table (../shared/DESIGN.md, "Architecture"), checked on what the sources
# include (`#include "DIR/..."`; tests/ may include anything):
# - each library includes only itself and the libraries the table puts below it: cache/,
#   chunkindex/ and striping/ know nothing of each other; compress/ and grid/ sit at the bottom
#   beside common/, which includes nothing else; nothing includes admin/ or engines/ but
#   themselves (and tests); engines/, a client, includes nothing of graphfs but grid/ and common/;
# - volume/, admin/ and engines/ include only the public headers of the libraries below the volume,
#   as each library's README names them (the volume's own public headers: check_layering.sh);
# - fusefs/ is the only library that includes libfuse's headers, striping/ the only one with an
#   io_uring (liburing), as the table says of them.
# check_layering.sh checks on what the compiler reads that fusefs/ and the volume's public headers
# reach nothing below the volume, and that fusefs/ and admin/ include only the volume's public
# headers.
#   check_library_table.sh SOURCE_DIR
set -euo pipefail
ROOT="${1:?usage: check_library_table.sh SOURCE_DIR}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
. "$HERE/sources.sh"  # sources DIR

# What each library may include: itself and what is below it in the table.
declare -A may=(
  [common]="common"
  [compress]="compress common"
  [grid]="grid common"
  [cache]="cache compress grid common"
  [chunkindex]="chunkindex compress grid common"
  [striping]="striping compress grid common"
  [volume]="volume cache chunkindex striping compress grid common"
  [admin]="admin volume cache chunkindex striping compress grid common"
  [fusefs]="fusefs volume common"
  [engines]="engines grid common"
)
libraries="${!may[*]}"

failed=0
fail() { echo "$*"; failed=1; }

# The public headers of the libraries below the volume, read from their READMEs (written there
# once, not again here): where a README has a "Public headers:" sentence (up to its first full
# stop outside parentheses), the headers it names are public and every other one is internal;
# where it marks headers in its file table instead (a row that starts with the header and says
# "not a public header"), those are internal. grid/ and common/ have no internal headers.
declare -A public=() internal=()
for lib in cache chunkindex striping compress; do
  readme="$lib/README.md"
  [ -f "$readme" ] || { fail "no $readme"; continue; }
  sentence=$(tr '\n' ' ' <"$readme" | awk '{
    i = index($0, "Public headers:"); if (i == 0) exit
    s = substr($0, i + 15); depth = 0
    for (k = 1; k <= length(s); k++) {
      c = substr(s, k, 1)
      if (c == "(") depth++
      else if (c == ")") depth--
      else if (c == "." && depth == 0 && substr(s, k + 1, 1) == " ") { print substr(s, 1, k); exit }
    }
    print s }')
  public[$lib]=$(grep -oE '`[a-z0-9_]+\.h`' <<<"$sentence" | tr -d '`' | sort -u | tr '\n' ' ' || true)
  internal[$lib]=$(grep -E '^\| `[a-z0-9_]+\.h(/\.cc)?`.*not a public header' "$readme" |
                   sed -E 's/^\| `([a-z0-9_]+\.h).*/\1/' | sort -u | tr '\n' ' ' || true)
  [ -n "${public[$lib]// /}${internal[$lib]// /}" ] ||
    fail "$readme names no public headers (\"Public headers: ...\") and marks none \"not a public header\""
done

# FILE:dir/name.h for every project header the files include.
includes() { grep -oE '#include "[a-z0-9_]+/[a-z0-9_/]+\.(h|hpp)"' "$@" /dev/null |
             sed 's/:#include "/:/; s/"$//'; }

# Every header a README names exists: a README that names a header no longer there is out of date.
for lib in "${!public[@]}" "${!internal[@]}"; do
  for h in ${public[$lib]:-} ${internal[$lib]:-}; do
    [ -f "$lib/$h" ] || fail "$lib/README.md names $lib/$h, which does not exist"
  done
done

# 1. What each library includes: only the libraries the table allows it.
for lib in $libraries; do
  [ -d "$lib" ] || { fail "no folder $lib/"; continue; }
  allowed="^(${may[$lib]// /|})/"
  while IFS=: read -r file header; do
    top="${header%%/*}"
    # Only the project's libraries are judged (tests/ and the like are not includable).
    case " $libraries " in *" $top "*) ;; *) continue ;; esac
    [[ "$header" =~ $allowed ]] || fail "$file includes $header: $lib/ may include only ${may[$lib]}"
  done < <(includes $(sources "$lib"))
done

# Nothing anywhere (a folder not in the table too) includes the top of the table — the daemon's
# front end, the admin tools, the engines — but itself and tests/.
for top in fusefs admin engines; do
  up=$(grep -lE "#include \"$top/" $(sources .) /dev/null | grep -vE "^(\./)?($top|tests|build[^/]*)/" || true)
  [ -z "$up" ] || fail "nothing but $top/ and tests/ may include $top/, but these do:" $up
done

# 2. volume/, admin/ and engines/ include only the public headers of the libraries below the volume.
for client in volume admin engines; do
  while IFS=: read -r file header; do
    lib="${header%%/*}"
    name="${header#*/}"
    # Word matches in the shell, not `printf | grep -q`: under pipefail, grep -q leaving at its
    # first match could kill printf with SIGPIPE, and the pipeline then "failed" — the check
    # failed now and then in CI's full runs and passed alone.
    if [ -n "${public[$lib]:-}" ] && [[ " ${public[$lib]} " != *" $name "* ]]; then
      fail "$file includes $header, which is not one of $lib/'s public headers (${lib}/README.md)"
    fi
    if [ -n "${internal[$lib]:-}" ] && [[ " ${internal[$lib]} " == *" $name "* ]]; then
      fail "$file includes $header, an internal header of $lib/ (${lib}/README.md)"
    fi
  done < <(includes $(sources "$client"))
done

# 3. libfuse only in fusefs/, liburing only in striping/.
for lib in $libraries; do
  if [ "$lib" != fusefs ]; then
    fuse=$(grep -lE '#include <fuse(3/|_|\.h)' $(sources "$lib") || true)
    [ -z "$fuse" ] || fail "only fusefs/ knows FUSE, but these include libfuse's headers:" $fuse
  fi
  if [ "$lib" != striping ]; then
    uring=$(grep -lE '#include <liburing' $(sources "$lib") || true)
    [ -z "$uring" ] || fail "only striping/ issues I/O to the disks (io_uring), but these include liburing:" $uring
  fi
done

[ "$failed" = 0 ] && echo "layer table: every library includes only itself and the libraries below it;" \
  "volume, admin and engines include only the public headers of the libraries below the volume;" \
  "libfuse only in fusefs, liburing only in striping"
exit "$failed"
