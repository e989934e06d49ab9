#!/usr/bin/env bash
# Runs on the GPU machine (see docs/PERFORMANCE.md): a prebuilt bin/ folder with the microbench,
# the CLI, libwebgpu_wrapper.so and libfmt, plus the Vulkan loader debs under .gl/.
set -euo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export LD_LIBRARY_PATH=$PWD/devbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
./devbin/etwebgpu info
python3 bench/compare_torch.py --bin ./devbin/etwebgpu_microbench "$@"
