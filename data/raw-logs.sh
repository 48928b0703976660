#!/usr/bin/env bash
# The raw logs of the recorded data sets, packed so that the checkout stays small enough to
# travel to the GPU machine (its tracked files and .gpu/ share 64 MiB: ../shared/NOTES.md §1).
#
#   bash data/raw-logs.sh unpack     every data/**/raw-logs.tar.xz back into its folder
#   bash data/raw-logs.sh pack       every log over 20,000 bytes into its folder's archive
#
# A log here is a run's console output (`*.log`) or its list of throwaway commits
# (`commits*.txt`): what a reader checks how a data set was made by, and nothing a test or the
# bot reads, except the files data/raw-logs.keep names, which stay as they are. Packing moves
# each such file into `raw-logs.tar.xz` beside it (under its own name, the archive rebuilt with
# what it held before) and removes it; unpacking puts every file back where the READMEs name it
# and leaves the archive. Nothing in a log is changed either way (tar keeps the bytes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
limit=20000
keep=data/raw-logs.keep
archive=raw-logs.tar.xz

unpack() {
  find data -name "$archive" -print0 | while IFS= read -r -d '' packed; do
    tar -xJf "$packed" -C "$(dirname "$packed")"
  done
}

pack() {
  declare -A kept=()
  while IFS= read -r line; do
    [[ -z "$line" || "$line" == \#* ]] || kept[$line]=1
  done < "$keep"
  declare -A by_dir=()
  while IFS= read -r -d '' path; do
    [[ -z "${kept[$path]:-}" ]] || continue
    (( $(stat -c %s "$path") > limit )) || continue
    by_dir[$(dirname "$path")]+="$(basename "$path")"$'\n'
  done < <(find data \( -name '*.log' -o -name 'commits*.txt' \) -type f -print0)
  for dir in "${!by_dir[@]}"; do
    mapfile -t names < <(printf '%s' "${by_dir[$dir]}")
    if [[ -f "$dir/$archive" ]]; then
      mapfile -t -O "${#names[@]}" names < <(tar -tJf "$dir/$archive")
      tar -xJf "$dir/$archive" -C "$dir"
    fi
    mapfile -t names < <(printf '%s\n' "${names[@]}" | sort -u)
    tar -cJf "$dir/$archive.tmp" -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner \
      --mtime=@0 -- "${names[@]}"
    mv -- "$dir/$archive.tmp" "$dir/$archive"
    (cd "$dir" && rm -f -- "${names[@]}")
    echo "packed ${#names[@]} log(s) into $dir/$archive"
  done
}

case "${1:-}" in
  pack) pack ;;
  unpack) unpack ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
