#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and
# runs a separate project that uses find_package(Brasa CONFIG REQUIRED).
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
# The installed launcher runs the consumer as two workers, output prefixed.
out="$("$work/prefix/bin/brasarun" --quiet --nproc-per-node 2 "$work/build/consumer")"
grep -q '^\[rank 1\] ' <<<"$out" || { echo "installed brasarun did not prefix rank 1's output: $out"; exit 1; }
