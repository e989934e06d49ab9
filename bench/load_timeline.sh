#!/usr/bin/env bash
# One command on the GPU machine (device tool; carry devbin/ with etwebgpu and etwebgpu_old, .gl/,
# .devshare/ with exporter/): the Llama-3.2-1B-shape fp32 export (~6 GB), exported if missing,
# loaded and run once by each binary with the load's progress bar timestamped (when read, upload
# and compile end), then `generate` timed as a user sees it (load, 128-token prompt, 64 tokens),
# with a cold and then a warm pipeline cache. docs/PERFORMANCE.md "Loading (issue 32)".
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
L=/tmp/llm/llama1b
[ -f $L/model.pte ] || timeout 300 python3 .devshare/exporter/export_pte.py bench/llm/llama_1b_spec.py /tmp/llm --name llama1b --no-ref64 > /tmp/export.log 2>&1
ls -la $L/model.pte || { tail -5 /tmp/export.log; exit 3; }
sync; cat $L/model.pte > /dev/null
which perf gdb || true
li="$(ls $L/input_*.npy | sort -V | tr '\n' ' ')"
for b in etwebgpu etwebgpu_old; do
  t0=$EPOCHREALTIME
  ETWEBGPU_PROGRESS_DELAY_S=0 ETWEBGPU_CACHE_DIR=${CACHE:-off} script -qfec "./devbin/$b run $L/model.pte -i $li" /dev/null | python3 -c '
import sys, time
t0 = time.time(); last = ""
for chunk in iter(lambda: sys.stdin.buffer.read1(4096), b""):
    for part in chunk.decode(errors="replace").replace("\r", "\n").split("\n"):
        p = part.replace("\x1b[K", "").strip()
        key = p.split(" [")[0]
        if p and (key != last or "100%" in p):
            last = key; print(f"{time.time() - t0:7.2f} {p[:90]}")
    sys.stdout.flush()
'
  echo "$b total $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s"
done

# The whole user path: generate with the load in its total, then with a warm pipeline cache.
prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
for c in /tmp/gencache /tmp/gencache; do
  t0=$EPOCHREALTIME
  ETWEBGPU_CACHE_DIR=$c __GL_SHADER_DISK_CACHE=0 ./devbin/etwebgpu generate $L/model.pte --prompt-tokens "$prompt" --max-new-tokens 64 --json | cut -c1-120
  echo "generate total (load + 128 prefill + 64 decode) $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s"
done
