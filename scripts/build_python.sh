#!/usr/bin/env bash
# build_python.sh [--lib-from DIR]: builds the Python package into build-python/ (the extension,
# its .py files and Dawn in build-python/etwebgpu/), for Debian's /usr/bin/python3:
#   PYTHONPATH=build-python /usr/bin/python3 -c "import etwebgpu"
# --lib-from DIR links DIR/libetwebgpu.a of an existing build (scripts/build.sh DIR) instead of
# building the library again.
set -euo pipefail
cd "$(dirname "$0")/.."
lib_args=()
case "${1:-}" in
  --lib-from) lib_args=(-DETWEBGPU_LIB_BUILD_DIR="$(cd "$2" && pwd)") ;;
  "") ;;
  *) echo "usage: scripts/build_python.sh [--lib-from BUILD_DIR]" >&2; exit 2 ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S python -B build-python -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPython_EXECUTABLE=/usr/bin/python3 "${lib_args[@]}" >/dev/null
cmake --build build-python -j"$jobs"
echo "build_python: ok (PYTHONPATH=build-python /usr/bin/python3 -c 'import etwebgpu')"
