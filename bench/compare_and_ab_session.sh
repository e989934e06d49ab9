#!/usr/bin/env bash
# One command on the GPU machine for a session's first run (carry devbin/, .gl/, .devshare/ as for
# compare_session.sh; devbin/etwebgpu built from this tree, devbin/etwebgpu_prev from the tree the
# changes are measured against): the repository's new fixture specs exported in the background
# (FIXTURES, names in tests/fixtures/specs), bench/compare_session.sh over the 23 models, then on
# its exports bench/route_ab.sh (AB_MODELS under AB_ROUTES, each route set twice, alternating) and
# both binaries on PREV_MODELS (alternating, 30 timed runs each), and the GPU plans of PLAN_MODELS.
# BASELINE (an earlier models.json) passes to compare_session.sh. Everything comes back in
# $OUT/all.tar; summaries on stdout. Ends within TOTAL_S (530) + 40 s.
# Stop 52's: AB_MODELS="shufflenet_v2_x1_0 mobilenet_v2 mobilenet_v3_large mobilenet_v3_small"
# AB_ROUTES="default <route>=<choice>" PREV_MODELS="shufflenet_v2_x1_0 convnext_tiny"
# (devbin/etwebgpu_prev: stop 50's binary, c40717a) FIXTURES=shufflenet_tiny.
set -uo pipefail
S=$(date +%s)
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
X=$OUT/x
mkdir -p $X /tmp/fx
for n in ${FIXTURES:-}; do
  ( OMP_NUM_THREADS=1 timeout 200 python3 .devshare/exporter/export_pte.py tests/fixtures/specs/$n.py /tmp/fx/_$n --name $n \
      --no-ref64 > $X/fixture_$n.log 2>&1; echo "fixture $n rc=$?" ) &
done
BUDGET_S=$(( ${TOTAL_S:-530} - 140 )) EXPORT_S=150 EXPORT_JOBS=15 ITERS=${ITERS:-10} \
  bash bench/compare_session.sh > $X/summary.txt 2>&1
wait
[ -n "${FIXTURES:-}" ] && tar -C /tmp -czf $X/fixtures.tgz fx
sed -n '/^== /,$p' $X/summary.txt | grep -v "^  " | head -60
export LD_LIBRARY_PATH=$PWD/devbin
pte() { ls /tmp/models/$1/*/*.pte 2>/dev/null | head -1; }
ms=$(for m in ${AB_MODELS:-}; do pte $m; done)
if [ -n "$ms" ] && [ -n "${AB_ROUTES:-}" ]; then
  echo "[$(( $(date +%s) - S )) s] route A/B"
  timeout 120 bash bench/route_ab.sh --iters 20 $ms -- ${AB_ROUTES} ${AB_ROUTES} > $X/route_ab.txt 2>&1
  grep -E "^==|^wall|^GPU" $X/route_ab.txt
fi
if [ -x devbin/etwebgpu_prev ]; then
  echo "[$(( $(date +%s) - S )) s] devbin/etwebgpu_prev against devbin/etwebgpu"
  for m in ${PREV_MODELS:-}; do
    p=$(pte $m); [ -z "$p" ] && continue
    for b in etwebgpu_prev etwebgpu etwebgpu_prev etwebgpu; do
      echo "== $m $b $(timeout 20 ./devbin/$b bench $p --iters 30 2>&1 | grep -E '^wall per run|^GPU total' | tr '\n' ' ')"
    done
  done
fi
for m in ${PLAN_MODELS:-}; do
  p=$(pte $m); [ -n "$p" ] && timeout 20 ./devbin/etwebgpu inspect --gpu-plan $p > $X/$m.plan.txt 2>&1
done
mv $OUT/compare.tgz $X/ 2>/dev/null
tar -C $OUT -cf $OUT/all.tar x && rm -rf $X
echo "[total $(( $(date +%s) - S )) s]"
