#!/usr/bin/env bash
# One command on the GPU machine (carry devbin/, .gl/, .devshare/ with exporter/): export the
# repository's fixture specs (tests/fixtures/specs), ExecuTorch WebGPU's own op tests
# (upstream_optests, 14 shards) and the int8 benchmark models, then run them with the current
# binary. Results: $OUT/quant.tgz.
set -uo pipefail
START=$(date +%s)
say() { echo "[$(($(date +%s) - START)) s] $*"; }
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
export OMP_NUM_THREADS=2
EX=$PWD/.devshare/exporter R=$OUT/quant
mkdir -p $R /tmp/opt
bash tests/fixtures/export_fixtures.sh "$EX" $R/fixtures > $R/fixtures.log 2>&1 &
for s in $(seq 0 13); do (cd $EX/upstream_optests && timeout 420 python3 gen.py /tmp/opt $s 14 > /tmp/opt/log_$s.txt 2>&1) & done
for m in q8_resnet18 q8_mobilenet_v2; do
  timeout 420 python3 $EX/export_pte.py bench/models/$m.py $R/bench_$m --name $m --no-ref64 > $R/bench_$m.log 2>&1 &
done
wait
say "exports done"
(cd $EX/upstream_optests && python3 gen.py --merge /tmp/opt) > $R/optests_merge.txt 2>&1
rm -rf /tmp/opt/_raw*; mv /tmp/opt $R/optests
for t in fixtures optests bench_q8_resnet18 bench_q8_mobilenet_v2; do
  timeout 100 ./devbin/etwebgpu conformance $R/$t > $R/conf_$t.txt 2>&1
  say "$t: $(tail -1 $R/conf_$t.txt)"
done
tar -C $OUT -czf - quant | split -b 15M - $OUT/quant.tgz. && rm -rf $R
ls -la $OUT
say done
