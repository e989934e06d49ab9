#!/usr/bin/env bash
# One command on the GPU machine (carry devbin/, .gl/, .devshare/ with exporter/ and peer/): the
# figures of docs/PERFORMANCE.md "Quantized models" and "ExecuTorch's LLM recipe", side by side.
#   1. exports in parallel: ResNet-18 / MobileNetV2 at 224 in fp32 and static int8; ExecuTorch's
#      Llama recipe (bench/llm/llama_recipe_spec.py) at Llama-3.2-1B shape with a 4096-position
#      cache: q4 with the long-context steps (1000-token chunks to position 4000, then decode at
#      4000 and 4001), 8da4w and fp32 with the benchmark steps (a 1000-token chunk, decode at 1000
#      and 1001); and, as the part "fixtures", the repository's fixtures
#      (tests/fixtures/export_fixtures.sh, brought back as fixtures.tgz);
#   2. the CNNs timed by etwebgpu, the upstream runner, PyTorch eager and a CUDA graph, and the
#      int8 goldens' own noise (bench/q8_golden_noise.py);
#   3. `etwebgpu generate --json` on the three recipe exports (512-token prompt, 128 new tokens),
#      a profiled decode step of each (`etwebgpu bench -i`, with a Chrome trace), and PyTorch eager / CUDA-graph replay
#      of the fp32 module (bench/llm/torch_decode.py, 512-token chunks);
# PARTS (default "cnn fixtures recipe torch"; "noise": the int8 golden noise without the CNN
# timings) picks the parts; RECIPE_QUANTS (default "q4 8da4w fp32") the recipe exports and
# RECIPE_LONG which of them takes the long-context steps (default q4; "none": all the benchmark
# steps); EXPORT_THREADS the CPU threads of each 1B export (default 4). Whatever finished by
# SESSION_DEADLINE_S (default 560) comes back in $OUT/session.tgz. GEN_TWICE=1 runs each
# `generate` a second time in a new process (pipelines from the disk cache). BASE_BINS="LABEL=PATH
# ..." (other builds of the CLI, e.g. the tree before a change) runs every `generate` with each
# too, alternating with ours ROUNDS times (default 2), side by side; GEN_SAMPLE (generate's sampling
# options) once more each with them; GEN_TOKENS the new tokens (default 128); BASE_CONF=0 skips
# the bases' conformance runs; PROFILE_BASES=1 profiles their decode step too (PROFILE_WARMUP runs
# first, default 3: more let a GPU whose clocks fell between processes reach them again); LONG_PROMPT=N
# runs every `generate` once more with an N-token prompt (gen_*_recipe_Q_pN.json). The part "plain" exports the static one-token Llamas
# (tests/fixtures/specs/llama_{q4,8da4w}_kv_decode.py) at 1B shape and runs `generate` on them
# (128-token prompt, 64 new tokens): issue 29's 8da4w against 4-bit comparison. Every `generate`'s
# start and end go to gen_times.txt, and the GPU's clocks and state to gpu_state.csv. GEMV_AB=OLD_MB
# (another build of etwebgpu_microbench; "none": no A/B) times the 1B decode GEMVs of both builds
# (bench/gemv_ab.sh), the per-dispatch floor and `bench/route_sweep.sh $GEMV_SWEEP` (default q4)
# while the CPU exports run (gemv_ab.txt, route_sweep_q4.txt; at most 270 s, before any etwebgpu
# timing).
set -uo pipefail
START=$(date +%s)
say() { echo "[$(($(date +%s) - START)) s] $*" | tee -a $R/log.txt; }
R=$OUT/session W=/tmp/w
mkdir -p $R $W
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
EX=$PWD/.devshare/exporter BIN=./devbin/etwebgpu PARTS=" ${PARTS:-cnn fixtures recipe torch} "
part() { [[ "$PARTS" == *" $1 "* ]]; }
export PYTHONPATH=$EX/python${PYTHONPATH:+:$PYTHONPATH}  # executorch and torchao for the PyTorch-side scripts

work() {
  $BIN info > $R/info.txt 2>&1
  rm -f $W/sweep.done
  [ -n "${GEMV_AB:-}" ] || touch $W/sweep.done
  [ -n "${GEMV_AB:-}" ] && ( timeout 270 bash -c "[ $GEMV_AB = none ] || bash bench/gemv_ab.sh $GEMV_AB ./devbin/etwebgpu_microbench 1 > $R/gemv_ab.txt 2>&1
      ./devbin/etwebgpu_microbench --case dispatch_chain_64 --case dispatch_chain_256 --iters 10 >> $R/gemv_ab.txt 2>&1
      bash bench/route_sweep.sh --iters 10 ${GEMV_SWEEP:-q4} > $R/route_sweep_q4.txt 2>&1"; say "gemv sweep done"; touch $W/sweep.done ) &
  QUANTS=${RECIPE_QUANTS:-q4 8da4w fp32} LONG=${RECIPE_LONG:-q4}
  part recipe || QUANTS=""
  for q in q4 8da4w fp32; do [[ " $QUANTS " == *" $q "* ]] || touch $W/r_$q.rc; done
  for q in $QUANTS; do
    steps=bench; [ $q = "$LONG" ] && steps=long
    ( LLAMA_SIZE=1b LLAMA_CONTEXT=4096 RECIPE_STEPS=$steps RECIPE_QUANT=$q OMP_NUM_THREADS=${EXPORT_THREADS:-4} timeout 400 python3 $EX/export_pte.py bench/llm/llama_recipe_spec.py \
        $W/r_$q --name recipe_$q --no-ref64 > $R/export_recipe_$q.log 2>&1; echo $? > $W/r_$q.rc ) &
  done
  part plain && for q in q4 8da4w; do
    ( LLAMA_SIZE=1b OMP_NUM_THREADS=${EXPORT_THREADS:-4} timeout 400 python3 $EX/export_pte.py tests/fixtures/specs/llama_${q}_kv_decode.py \
        $W/p_$q --name plain_$q --no-ref64 > $R/export_plain_$q.log 2>&1; echo $? > $W/p_$q.rc ) &
  done
  part fixtures && ( OMP_NUM_THREADS=1 timeout 300 bash tests/fixtures/export_fixtures.sh $EX $W/fixtures > $R/fixtures_export.log 2>&1
    timeout 60 $BIN conformance $W/fixtures > $R/conf_fixtures.txt 2>&1
    tar -C $W -czf $R/fixtures.tgz fixtures; say "fixtures: $(tail -1 $R/conf_fixtures.txt)" ) &
  pids=""
  cnns="resnet18 mobilenet_v2 q8_resnet18 q8_mobilenet_v2"
  part cnn || cnns="q8_resnet18 q8_mobilenet_v2"  # the part "noise" alone: the int8 models
  (part cnn || part noise) && for s in $cnns; do
    case $s in q8_*) tol=--no-ref64 ;; *) tol="--atol rel" ;; esac
    ( OMP_NUM_THREADS=1 timeout 300 python3 $EX/export_pte.py bench/models/$s.py $W/cnn/$s --name $s $tol \
        > $R/export_$s.log 2>&1; say "exported $s rc=$?" ) &
    pids="$pids $!"
  done
  wait $pids
  part cnn && timeout 150 python3 bench/compare_models.py $W/cnn/*/ --bin $BIN --peer .devshare/peer/et_webgpu_runner \
    --specs bench/models --iters 20 --json $R/cnn.json --md $R/cnn.md --profile-dir $R/profiles > $R/cnn.txt 2> $R/cnn.err
  say "cnn compare rc=$?"
  (part cnn || part noise) && for s in q8_resnet18 q8_mobilenet_v2; do
    c=$W/cnn/$s/$s
    $BIN run $c/model.pte -i $c/input_0.npy -o $W/ours_$s > /dev/null 2>&1
    OMP_NUM_THREADS=8 timeout 120 python3 bench/q8_golden_noise.py bench/models/$s.py $c $W/ours_$s/output_0.npy \
      >> $R/q8_noise.jsonl 2>> $R/q8_noise.err
    $BIN bench $c/model.pte --iters 20 --json > $R/bench_$s.json 2>&1
    say "noise $s: $(tail -1 $R/q8_noise.jsonl)"
  done
  # One GPU user at a time: the CNN comparison above, PyTorch's LLM here, then etwebgpu's below.
  part torch && { timeout 200 python3 bench/llm/torch_decode.py bench/llm/llama_1b_spec.py --prompt 512 --new 128 --chunk 512 \
      > $R/torch_llm.json 2> $R/torch_llm.err; say "torch llm: $(cat $R/torch_llm.json)"; }
  prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(512)))")
  # `generate --json` with ours (gen_NAME.json) and, with BASE_BINS, alternately with each base
  # build (gen_LABEL_NAME.json), then all again (gen_NAME_R.json, gen_LABEL_NAME_R.json, round R).
  # One `generate` into $R/OUT.json / .err, its start and end in gen_times.txt (beside the GPU's
  # clocks, power and state in gpu_state.csv: what a slow process ran at).
  gen() {
    local out=$1; shift
    echo "$(date +%s.%N) start $out" >> $R/gen_times.txt
    timeout 120 "$@" --json --quiet > $R/$out.json 2> $R/$out.err
    echo "$(date +%s.%N) end $out" >> $R/gen_times.txt
  }
  gen_pair() {
    gen gen_$1 $BIN generate $2 --prompt-tokens "$3" --max-new-tokens $4
    # GEN_SAMPLE="--temperature T --top-k K --top-p P": once sampled too, with ours and each base.
    [ -n "${GEN_SAMPLE:-}" ] && for b in "ours=$BIN" ${BASE_BINS:-}; do
      gen gen_sample_${b%%=*}_$1 ${b#*=} generate $2 --prompt-tokens "$3" --max-new-tokens $4 $GEN_SAMPLE --seed 1
    done
    [ -n "${BASE_BINS:-}" ] || return 0
    for round in $(seq 1 ${ROUNDS:-2}); do
      sfx=""; [ $round -gt 1 ] && sfx=_$round
      [ $round -gt 1 ] && gen gen_$1$sfx $BIN generate $2 --prompt-tokens "$3" --max-new-tokens $4
      for b in $BASE_BINS; do
        gen gen_${b%%=*}_$1$sfx ${b#*=} generate $2 --prompt-tokens "$3" --max-new-tokens $4
      done
    done
  }
  python3 -c "import numpy as np; np.save('$W/p512_tok.npy', np.random.default_rng(1).integers(0, 128256, (1, 512))); np.save('$W/p512_pos.npy', np.zeros(1, np.int64))"
  while [ ! -f $W/sweep.done ]; do sleep 2; done  # the sweep done before etwebgpu's timings: the GPU theirs alone
  for q in q4 8da4w fp32; do
    while [ ! -f $W/r_$q.rc ]; do sleep 2; done
    say "recipe $q export rc=$(cat $W/r_$q.rc)"
    c=$W/r_$q/recipe_$q
    [ -f $c/model.pte ] || continue
    ls -la $c/model.pte >> $R/export_recipe_$q.log
    gen_pair recipe_$q $c/model.pte "$prompt" ${GEN_TOKENS:-128}
    # LONG_PROMPT=N: once more with an N-token prompt (fed in chunks up to the export's bound).
    [ -n "${LONG_PROMPT:-}" ] && gen_pair recipe_${q}_p$LONG_PROMPT $c/model.pte \
      "$(python3 -c "import random; random.seed(3); print(','.join(str(random.randrange(128256)) for _ in range($LONG_PROMPT)))")" \
      ${GEN_TOKENS:-128}
    # GEN_TWICE=1: again in a new process, its pipelines in the disk cache (is the first run compile?)
    [ "${GEN_TWICE:-0}" = 1 ] && timeout 120 $BIN generate $c/model.pte --prompt-tokens "$prompt" --max-new-tokens 128 --json --quiet \
      > $R/gen2_recipe_$q.json 2> $R/gen2_recipe_$q.err
    timeout 60 $BIN conformance $W/r_$q > $R/conf_recipe_$q.txt 2>&1
    [ "${BASE_CONF:-1}" = 1 ] && for b in ${BASE_BINS:-}; do timeout 60 ${b#*=} conformance $W/r_$q > $R/conf_${b%%=*}_recipe_$q.txt 2>&1; done
    last=$(ls $c/step*_input_0.npy | sort -V | tail -1); last=${last%_input_0.npy}  # a single-token step
    timeout 60 $BIN bench $c/model.pte -i ${last}_input_0.npy ${last}_input_1.npy --warmup ${PROFILE_WARMUP:-3} --iters 20 --quiet --trace $R/decode_trace_$q.json \
      > $R/decode_profile_$q.txt 2>&1
    # PROFILE_BASES=1: the same profiled step with each base build.
    [ "${PROFILE_BASES:-0}" = 1 ] && for b in ${BASE_BINS:-}; do
      timeout 60 ${b#*=} bench $c/model.pte -i ${last}_input_0.npy ${last}_input_1.npy --warmup ${PROFILE_WARMUP:-3} --iters 20 --quiet > $R/decode_profile_${b%%=*}_$q.txt 2>&1
    done
    timeout 60 $BIN bench $c/model.pte -i $W/p512_tok.npy $W/p512_pos.npy --iters 5 --quiet > $R/prefill512_profile_$q.txt 2>&1
    # The same chunk's first runs in a fresh process (no warm-up): what `generate`'s one prefill pays.
    timeout 60 $BIN bench $c/model.pte -i $W/p512_tok.npy $W/p512_pos.npy --warmup 0 --iters 3 --quiet > $R/prefill512_first_$q.txt 2>&1
    say "recipe $q: $(tail -1 $R/conf_recipe_$q.txt) $(head -c 400 $R/gen_recipe_$q.json)"
    [ $q = fp32 ] || rm -rf $W/r_$q
  done
  if part plain; then
    prompt128=$(python3 -c "import random; random.seed(2); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
    for q in q4 8da4w; do
      while [ ! -f $W/p_$q.rc ]; do sleep 2; done
      say "plain $q export rc=$(cat $W/p_$q.rc)"
      c=$W/p_$q/plain_$q
      [ -f $c/model.pte ] || continue
      gen_pair plain_$q $c/model.pte "$prompt128" 64
      timeout 60 $BIN conformance $W/p_$q > $R/conf_plain_$q.txt 2>&1
      timeout 60 $BIN bench $c/model.pte -i $c/step1_input_0.npy $c/step1_input_1.npy --iters 20 --quiet > $R/decode_profile_plain_$q.txt 2>&1
      say "plain $q: $(tail -1 $R/conf_plain_$q.txt) $(head -c 300 $R/gen_plain_$q.json)"
      rm -rf $W/p_$q
    done
  fi
  wait
  say "all done"
}

# The GPU's clocks, power and performance state twice a second (the slow-process state of stops
# 46 and 47: kernels 2.3x slower in some processes).
SMI=""
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,pstate,utilization.gpu --format=csv \
    -lms 500 > $R/gpu_state.csv 2>&1 &
  SMI=$!
fi
work &
while kill -0 $! 2> /dev/null && [ $(($(date +%s) - START)) -lt ${SESSION_DEADLINE_S:-560} ]; do sleep 2; done
[ -n "$SMI" ] && kill $SMI 2> /dev/null
say "packing"
tar -C $OUT -czf $OUT/session.tgz session && rm -rf $R
