#!/usr/bin/env bash
# Installs what is missing, builds the CLI (only: the tests and benchmarks are the test command's
# work), and runs the main job: the embedded example model on the WebGPU device, checked against
# its float64 CPU reference.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ETWEBGPU_BUILD_TARGET=etwebgpu_cli bash scripts/build.sh build -DETWEBGPU_BUILD_TESTS=OFF -DETWEBGPU_BUILD_BENCH=OFF
./build/etwebgpu info
./build/etwebgpu demo
