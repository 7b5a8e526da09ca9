# Sourced by the layering checks (run from the source root): sources DIR prints the C++ sources
# of DIR (its subfolders too), one per line. In a git checkout the files git knows (tracked, or
# new and not ignored), so that what a build, a test or a CI runner leaves in the tree is not
# judged as source; elsewhere (an unpacked release) every file.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  sources() { git ls-files --cached --others --exclude-standard -- "$1" |
              grep -E '\.(cc|h|hpp)$' | while read -r f; do [ -f "$f" ] && echo "$f"; done; }
else
  sources() { find "$1" \( -name '*.cc' -o -name '*.h' -o -name '*.hpp' \) -print; }
fi
