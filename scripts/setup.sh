#!/usr/bin/env bash
# Installs whatever is missing for etwebgpu on Debian 12. Idempotent: a second run does nothing.
# Sources: Debian packages (bookworm + bookworm-backports for Mesa 25 lavapipe) and npm (Dawn).
# --web: also what the WebAssembly build and its browser tests need (and only then): Debian's
# emscripten and chromium, and playwright-core from npm into tests/web/node_modules.
# --python: what the Python package needs (scripts/build_python.sh, tests/python): Debian's
# pybind11, NumPy, pytest and scikit-build-core (bookworm-backports), for /usr/bin/python3.
# --test: what the tests and benchmarks add to the build (GoogleTest, Google Benchmark) and the
# sanitizer, ThreadSanitizer and fuzz stages need (clang and its runtimes); the demo needs none.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
want_web=0
want_python=0
want_test=0
for a in "$@"; do
  case "$a" in
    --web) want_web=1 ;;
    --python) want_python=1 ;;
    --test) want_test=1 ;;
    *) echo "usage: scripts/setup.sh [--test] [--web] [--python]" >&2; exit 2 ;;
  esac
done
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

need_pkgs=()
base_pkgs=(build-essential cmake ninja-build pkg-config git flatbuffers-compiler libflatbuffers-dev libcli11-dev
           nlohmann-json3-dev libfmt-dev nodejs npm python3 ca-certificates libsentencepiece-dev libpcre2-dev)
[ "$want_test" = 1 ] && base_pkgs+=(libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev)
for p in "${base_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
# npm may come from outside Debian (e.g. a preinstalled Node.js); keep that one.
if command -v npm >/dev/null 2>&1; then
  need_pkgs=("${need_pkgs[@]/npm}"); need_pkgs=("${need_pkgs[@]/nodejs}")
fi
mapfile -t need_pkgs < <(printf '%s\n' "${need_pkgs[@]}" | grep -v '^$' || true)

# Mesa >= 25 lavapipe: Debian 12's own Mesa 22 is rejected by this Dawn.
mesa_ok() {
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  [ -n "$v" ] && dpkg --compare-versions "$v" ge 25
}
bpo=/etc/apt/sources.list.d/etwebgpu-bookworm-backports.list
updated=0
if ! mesa_ok && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee "$bpo" >/dev/null
fi
if [ ${#need_pkgs[@]} -gt 0 ] || ! mesa_ok; then
  $SUDO apt-get update -qq; updated=1
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "setup: installing ${need_pkgs[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
fi
if ! mesa_ok; then
  echo "setup: installing Mesa lavapipe from bookworm-backports"
  $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libvulkan1
fi
mesa_ok || { echo "setup: Mesa >= 25 lavapipe could not be installed" >&2; exit 1; }

# Dawn, from npm, sha256-checked (tarball and library).
DAWN_DIR="$here/third_party_bin/dawn"
TGZ_SHA=8badfecdad4e726ac12be4f29771f4cbd7ce7683b4418316a547c5bda94fb798
SO_SHA=3190c3777f2c07fcf6a0640833cbf5d0cde859dc53aed6d9083946d093198788
if ! echo "$SO_SHA  $DAWN_DIR/libwebgpu_wrapper.so" | sha256sum -c --quiet - >/dev/null 2>&1; then
  echo "setup: fetching Dawn (npm bun-webgpu-linux-x64@0.1.7)"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent bun-webgpu-linux-x64@0.1.7 >/dev/null)
  echo "$TGZ_SHA  $tmp/bun-webgpu-linux-x64-0.1.7.tgz" | sha256sum -c --quiet - \
    || { echo "setup: Dawn tarball sha256 mismatch" >&2; exit 1; }
  tar -xzf "$tmp/bun-webgpu-linux-x64-0.1.7.tgz" -C "$tmp" package/libwebgpu_wrapper.so
  echo "$SO_SHA  $tmp/package/libwebgpu_wrapper.so" | sha256sum -c --quiet - \
    || { echo "setup: libwebgpu_wrapper.so sha256 mismatch" >&2; exit 1; }
  mkdir -p "$DAWN_DIR"; mv "$tmp/package/libwebgpu_wrapper.so" "$DAWN_DIR/"
fi

# --web: emscripten + chromium (Debian) and the browser tests' npm packages (package-lock.json).
if [ "$want_web" = 1 ]; then
  web_pkgs=()
  for p in emscripten chromium; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || web_pkgs+=("$p")
  done
  if [ ${#web_pkgs[@]} -gt 0 ]; then
    [ "$updated" = 1 ] || $SUDO apt-get update -qq
    echo "setup: installing ${web_pkgs[*]}"
    $SUDO apt-get install -y -qq --no-install-recommends "${web_pkgs[@]}"
  fi
  want_pw=$(node -p "require('$here/tests/web/package.json').dependencies['playwright-core']")
  have_pw=$(node -p "require('$here/tests/web/node_modules/playwright-core/package.json').version" 2>/dev/null || true)
  if [ "$want_pw" != "$have_pw" ]; then
    echo "setup: installing playwright-core $want_pw into tests/web/node_modules"
    (cd "$here/tests/web" && npm ci --no-audit --no-fund --silent)
  fi
  echo "setup: web ok (emscripten $(dpkg-query -W -f='${Version}' emscripten), chromium $(dpkg-query -W -f='${Version}' chromium), playwright-core $want_pw)"
fi

# --python: Debian's packages only (PyPI is not used); scikit-build-core is in bookworm-backports.
if [ "$want_python" = 1 ]; then
  py_pkgs=()
  for p in python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pytest python3-pip python3-venv \
           python3-scikit-build-core; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || py_pkgs+=("$p")
  done
  if [ ${#py_pkgs[@]} -gt 0 ]; then
    grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/ \
      || echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee "$bpo" >/dev/null
    [ "$updated" = 1 ] || $SUDO apt-get update -qq
    echo "setup: installing ${py_pkgs[*]}"
    $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports "${py_pkgs[@]}"
  fi
  echo "setup: python ok ($(/usr/bin/python3 -c 'import numpy, pybind11, pytest, scikit_build_core as s; print("numpy", numpy.__version__, "pybind11", pybind11.__version__, "scikit-build-core", s.__version__)'))"
fi
echo "setup: ok (Dawn at $DAWN_DIR)"
