#!/usr/bin/env bash
# build.sh DIR [cmake args...]: configure (once) and build into DIR.
# ETWEBGPU_BUILD_TARGET=NAME builds only that target (scripts/demo.sh: the CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}; shift || true
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$jobs" ${ETWEBGPU_BUILD_TARGET:+--target "$ETWEBGPU_BUILD_TARGET"}
