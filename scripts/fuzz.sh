#!/usr/bin/env bash
# Fuzzes fw::Controller (tests/fuzz/fuzz_controller.cpp) with libFuzzer under
# AddressSanitizer + UndefinedBehaviorSanitizer. Outside CI; needs clang and
# Debian's libclang-rt-14-dev (libFuzzer's runtime).
#   scripts/fuzz.sh [SECONDS [libFuzzer options...]]  fuzz (default 600 s)
#   scripts/fuzz.sh merge                             minimise the work corpus
#                                                     into tests/fuzz/corpus
# Work files live in build-fuzz/: the binary, corpus/ (seeded from
# tests/fuzz/corpus) and artifacts/ (crash-*, timeout-*, leak-* inputs).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${FUZZ_BUILD:-build-fuzz}
mkdir -p "$out/corpus" "$out/artifacts" "$out/obj" "$out/include"
ln -sfn "$PWD" "$out/include/nvmesim"  # the sources include "nvmesim/firmware/..."

# Build: firmware sources + harness, one object each (rebuilt when newer).
flags=(-std=c++17 -g -O1 -I"$out/include" -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
objs=()
for src in firmware/*/*.cpp tests/fuzz/fuzz_controller.cpp; do
  obj="$out/obj/$(echo "${src%.cpp}" | tr / _).o"
  if [[ ! -f $obj || $src -nt $obj || -n $(find firmware -name '*.h' -newer "$obj") ]]; then
    clang++ "${flags[@]}" -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done
clang++ "${flags[@]}" "${objs[@]}" -o "$out/fuzz_controller"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [[ ${1:-} == merge ]]; then
  # libFuzzer's -merge=1 keeps every input that adds a feature (over a
  # thousand); the committed corpus keeps at most $max inputs, chosen greedily
  # for new coverage edges (feature / 8) from the merge's control file.
  max=${FUZZ_CORPUS_MAX:-50}
  tmp=$(mktemp -d)
  mkdir "$tmp/out"
  "$out/fuzz_controller" -merge=1 -merge_control_file="$tmp/control" "$tmp/out" \
    tests/fuzz/corpus "$out/corpus" "$out/artifacts" > "$tmp/merge.log" 2>&1
  python3 - "$tmp/control" "$max" > "$tmp/keep" <<'PY'
import os, sys
lines = open(sys.argv[1]).read().split("\n")
n = int(lines[0]); files = lines[2:2 + n]
edges = {}
for l in lines[2 + n:]:
    p = l.split()
    if p and p[0] == "FT": edges[int(p[1])] = {int(x) // 8 for x in p[2:]}
seen, keep = set(), []
while len(keep) < int(sys.argv[2]):
    best = max(edges, key=lambda i: (len(edges[i] - seen), -os.path.getsize(files[i])))
    if not edges[best] - seen: break
    keep.append(files[best]); seen |= edges.pop(best)
print("\n".join(keep))
PY
  mkdir "$tmp/keepdir"
  xargs -a "$tmp/keep" cp -t "$tmp/keepdir"
  rm -f tests/fuzz/corpus/*
  for f in "$tmp"/keepdir/*; do cp "$f" "tests/fuzz/corpus/$(sha1sum < "$f" | cut -c1-40)"; done
  rm -rf "$tmp"
  echo "tests/fuzz/corpus: $(ls tests/fuzz/corpus | wc -l) files, $(cat tests/fuzz/corpus/* | wc -c) bytes"
  exit 0
fi

seconds=${1:-600}
shift || true
cp -n tests/fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
# -timeout: a hang (an input running > 5 s) is a finding, like a crash.
exec "$out/fuzz_controller" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/artifacts/" "$@" "$out/corpus"
