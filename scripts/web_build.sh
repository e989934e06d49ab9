#!/usr/bin/env bash
# web_build.sh [OUT_DIR]: builds the WebAssembly runtime with Debian's emscripten (3.1.6) into
# OUT_DIR (default build-web): etwebgpu_web.js (an ES module, for pages and Web Workers) +
# etwebgpu_web.wasm plus the pages from web/; the two also go to web/ for its npm package.
# WebGPU is reached through src/gpu/web/surface_webgpu.js (a --js-library over navigator.gpu);
# the asynchronous WebGPU steps suspend the wasm through ASYNCIFY. dawn_surface.cpp, src/text/
# and the CLI are not part of this build; the conformance runner (tools/conformance/) is. Incremental: a generated build.ninja recompiles what changed.
#   ETWEBGPU_WEB_OPT=-O2 (default) | -O1 | -O0 ...   optimisation level
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-build-web}
case "$out" in /*) ;; *) out="$here/$out" ;; esac
opt=${ETWEBGPU_WEB_OPT:--O2}
jobs=${ETWEBGPU_WEB_JOBS:-2}
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # Debian's emcc needs it for its JS tools

for tool in em++ flatc cmake ninja; do
  command -v "$tool" >/dev/null || { echo "web_build: '$tool' not found; run: bash scripts/setup.sh --web" >&2; exit 1; }
done
mkdir -p "$out/generated" "$out/sysinc" "$out/obj"

# Header-only third-party code from Debian's /usr/include (only these folders: the rest of
# /usr/include is glibc's and must not shadow emscripten's libc).
for d in flatbuffers fmt nlohmann; do
  [ -e "/usr/include/$d" ] || { echo "web_build: /usr/include/$d missing (libflatbuffers-dev, libfmt-dev, nlohmann-json3-dev)" >&2; exit 1; }
  ln -sfn "/usr/include/$d" "$out/sysinc/$d"
done

# Generated sources: the same steps the native CMake build runs.
gen="$out/generated"
stamp_newer() { # stamp_newer OUT IN...: true when OUT is missing or older than any IN
  local o=$1; shift
  [ -e "$o" ] || return 0
  for i in "$@"; do [ "$i" -nt "$o" ] && return 0; done
  return 1
}
if stamp_newer "$gen/program_generated.h" "$here"/schema/*.fbs; then
  flatc --cpp --scoped-enums -o "$gen" "$here/schema/program.fbs" "$here/schema/vkgraph.fbs"
fi
mapfile -t wgsl < <(find "$here/src" -name '*.wgsl' | sort)
if stamp_newer "$gen/embedded_shaders.cpp" "${wgsl[@]}" "$here/cmake/EmbedWgsl.cmake"; then
  cmake -DOUT="$gen/embedded_shaders.cpp" -DSRC_ROOT="$here/src" -DONLY_OPS= -P "$here/cmake/EmbedWgsl.cmake"
  touch "$gen/embedded_shaders.cpp"
fi

# Sources: the library (without the Dawn surface), the embedded shaders, the conformance runner
# and the wasm entry.
mapfile -t srcs < <(find "$here/src" -name '*.cpp' ! -path '*/gpu/dawn_surface.cpp' ! -path '*/text/*' | sort)
srcs+=("$gen/embedded_shaders.cpp" "$here/tools/conformance/conformance.cpp" "$here/web/etwebgpu_web.cpp")

cxxflags="-std=c++20 $opt -g0 -fexceptions -DFMT_HEADER_ONLY -DETWEBGPU_WEB=1 -Wall -Wextra -Wno-unused-parameter \
 -I$here/include -I$here/src -I$here -I$gen -isystem $out/sysinc"
async_imports="ewgpu_init,ewgpu_buffer_create,ewgpu_buffer_read,ewgpu_pipelines_create,ewgpu_bind_group_create,ewgpu_submit,ewgpu_submit_async,ewgpu_submit_wait"
exports="_malloc,_free"
exports+=",$(grep -o 'EMSCRIPTEN_KEEPALIVE [^(]*(' "$here/web/etwebgpu_web.cpp" | sed -E 's/.* \**([a-z_0-9]+)\($/_\1/' | paste -sd,)"
ldflags="$opt -fexceptions -sENVIRONMENT=web,worker -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createEtwebgpu \
 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB -sTOTAL_STACK=5MB -sASYNCIFY=1 -sASYNCIFY_STACK_SIZE=1048576 \
 -sASYNCIFY_IMPORTS=[$async_imports] -sEXPORTED_FUNCTIONS=[$exports] \
 -sEXPORTED_RUNTIME_METHODS=[ccall,cwrap,UTF8ToString,stringToUTF8,lengthBytesUTF8,HEAPU8] \
 --js-library $here/src/gpu/web/surface_webgpu.js"

# build.ninja (rewritten each run: the source list follows the tree).
nj="$out/build.ninja.tmp"
{
  echo "ninja_required_version = 1.5"
  echo "cxxflags = $cxxflags"
  echo "ldflags = $ldflags"
  echo "rule cxx"
  echo "  command = em++ \$cxxflags -MD -MF \$out.d -c \$in -o \$out"
  echo "  depfile = \$out.d"
  echo "  deps = gcc"
  echo "  description = em++ \$in"
  echo "rule link"
  echo "  command = em++ \$ldflags \$in -o \$out"
  echo "  description = link \$out"
  objs=()
  for s in "${srcs[@]}"; do
    rel=${s#"$here/"}; rel=${rel#"${out#"$here/"}/"}
    o="$out/obj/${rel//\//_}.o"
    objs+=("$o")
    echo "build $o: cxx $s | $gen/program_generated.h $gen/vkgraph_generated.h"
  done
  echo "build $out/etwebgpu_web.js | $out/etwebgpu_web.wasm: link ${objs[*]} | $here/src/gpu/web/surface_webgpu.js"
  echo "default $out/etwebgpu_web.js"
} > "$nj"
if ! cmp -s "$nj" "$out/build.ninja"; then mv "$nj" "$out/build.ninja"; else rm -f "$nj"; fi
ninja -C "$out" -j"$jobs"

# The pages (our own HTML: emcc's .html output path is not used).
for f in "$here"/web/*.html "$here"/web/*.js "$here"/web/*.css; do
  case "$(basename "$f")" in etwebgpu_web.js) continue ;; esac  # the copy below, not a page
  if [ -e "$f" ]; then cp "$f" "$out/"; fi
done
# The npm package (web/package.json: `npm install ./web`) ships the runtime beside etwebgpu.js.
for f in etwebgpu_web.js etwebgpu_web.wasm; do
  cmp -s "$out/$f" "$here/web/$f" || cp "$out/$f" "$here/web/$f"
done
echo "web_build: ok ($out/etwebgpu_web.js, $out/etwebgpu_web.wasm)"
