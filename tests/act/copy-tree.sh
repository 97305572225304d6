#!/usr/bin/env bash
# Copies a working tree as a checkout would have it (tracked and new files, nothing git ignores: no
# .venv, no node_modules) into DEST and makes DEST a git repository with that tree as its one
# commit on `main`. Used by ci-job.sh and tests/test_release.py.
#
# usage: copy-tree.sh SRC DEST
set -euo pipefail
src=$1
dest=$2
mkdir -p "$dest"
git -C "$src" ls-files -z --cached --others --exclude-standard \
    | (cd "$src" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$dest" -xf -
git -C "$dest" init -q -b main
git -C "$dest" add -A
git -C "$dest" -c user.name=ci -c user.email=ci@example.invalid commit -q -m "working tree"
