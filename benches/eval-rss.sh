#!/usr/bin/env bash
# `make bench`: peak memory of `doomloop eval` on one large JSON Lines file
# and on a folder of four of them (issue 20: eval streams a file at a time
# and, within a file, a run at a time, so the folder's peak should follow
# the largest run, not the folder). Each file: 250,000 small runs (~13 MB).
# Needs target/release/doomloop (`cargo build --release -p doom-loop-cli --bin doomloop`)
# and GNU time (/usr/bin/time).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${DOOMLOOP:-$ROOT/target/release/doomloop}"
RUNS="${RSS_RUNS:-250000}"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
python3 -c "import sys; open(sys.argv[1],'w').write('{\"rounds\":[{\"calls\":[{\"toolName\":\"t\",\"args\":{}}]}]}\n' * int(sys.argv[2]))" "$T/one.jsonl" "$RUNS"
mkdir "$T/four"
for i in 1 2 3 4; do ln "$T/one.jsonl" "$T/four/part$i.jsonl"; done
peak() {
  /usr/bin/time -f '%M %e' "$BIN" eval "$1" > /dev/null 2> "$T/time" || true
  tail -n 1 "$T/time"
}
read -r one one_s < <(peak "$T/one.jsonl")
read -r four four_s < <(peak "$T/four")
size=$(( $(stat -c %s "$T/one.jsonl") / 1024 / 1024 ))
printf 'eval peak RSS (issue 20)     1 file of %s MB: %s KB (%ss); 4 files: %s KB (%ss); ratio %s\n' \
  "$size" "$one" "$one_s" "$four" "$four_s" "$(python3 -c "print(f'{$four/$one:.2f}')")"
