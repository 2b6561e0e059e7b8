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
mkdir -p "$out/corpus" "$out/artifacts" "$out/obj"

# Build: firmware sources + harness, one object each (rebuilt when newer).
flags=(-std=c++17 -g -O1 -I. -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
objs=()
for src in firmware/*.cpp tests/fuzz/fuzz_controller.cpp; do
  obj="$out/obj/$(basename "${src%.cpp}").o"
  if [[ ! -f $obj || $src -nt $obj || -n $(find firmware -name '*.h' -newer "$obj") ]]; then
    clang++ "${flags[@]}" -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done
clang++ "${flags[@]}" "${objs[@]}" -o "$out/fuzz_controller"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [[ ${1:-} == merge ]]; then
  # Keep only inputs that add coverage: committed corpus + work corpus.
  fresh=$(mktemp -d)
  "$out/fuzz_controller" -merge=1 "$fresh" tests/fuzz/corpus "$out/corpus" "$out/artifacts"
  rm -f tests/fuzz/corpus/*
  cp "$fresh"/* tests/fuzz/corpus/
  rm -rf "$fresh"
  echo "tests/fuzz/corpus: $(ls tests/fuzz/corpus | wc -l) files, $(du -sk tests/fuzz/corpus | cut -f1) KiB"
  exit 0
fi

seconds=${1:-600}
shift || true
cp -n tests/fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
# -timeout: a hang (an input running > 5 s) is a finding, like a crash.
exec "$out/fuzz_controller" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/artifacts/" "$@" "$out/corpus"
