# Threads: a run releases the GIL (separate models run concurrently), one model shared between
# threads is serialised (every run still correct). Memory: 100 load/run/delete cycles return
# host and device memory (on lavapipe device memory is host memory, so RSS sees both).
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import etwebgpu
from conftest import case_dir, load_npys, manifest_cases


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run_threads(fn, n):
    errors = []

    def body(i):
        try:
            fn(i)
        except BaseException as e:  # reported by the test thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_separate_models_run_concurrently_from_threads(add_bcast):
    path, inputs, expected, _ = add_bcast
    models = [etwebgpu.load(path) for _ in range(4)]

    def work(i):
        for _ in range(10):
            np.testing.assert_allclose(models[i].run(inputs)[0], expected[0], rtol=1e-3, atol=1e-4)

    run_threads(work, len(models))


def test_one_model_shared_by_threads_is_serialised_not_refused(add_bcast):
    path, inputs, expected, _ = add_bcast
    m = etwebgpu.load(path)

    def work(i):
        for _ in range(10):
            np.testing.assert_allclose(m.run(inputs)[0], expected[0], rtol=1e-3, atol=1e-4)

    run_threads(work, 4)


# Thread A holds the model (a generation paused in its token callback); thread B calls run() on
# it and must wait for its turn; the main thread then needs the GIL to carry on. A run holding
# the GIL while it waits would deadlock all three, so the scenario runs in a child process with a
# time limit.
GIL_SCENARIO = """
import sys, threading, time
import numpy as np
import etwebgpu
m = etwebgpu.load(sys.argv[1])
inputs = [np.load(f) for f in sys.argv[2:]]
paused, resume = threading.Event(), threading.Event()
opts = etwebgpu._etwebgpu.GenerateOptions()
opts.max_new_tokens = 2

def on_token(token):
    paused.set()
    resume.wait()
    return False

a = threading.Thread(target=lambda: m._impl.generate([1], opts, on_token))
a.start()
paused.wait()
b = threading.Thread(target=lambda: m.run(inputs))
b.start()
time.sleep(0.3)  # b is inside run(), waiting for the model
print("main thread ran while run() waited:", b.is_alive())
resume.set()
a.join()
b.join()
"""


def test_a_waiting_run_releases_the_gil():
    d = case_dir("llama_kv_cache_decode_steps")
    files = [str(d / i["file"]) for i in manifest_cases()["llama_kv_cache_decode_steps"]["inputs"]]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        r = subprocess.run([sys.executable, "-c", GIL_SCENARIO, str(d / "model.pte")] + files, env=env,
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("deadlock: run() held the GIL while it waited for the model")
    assert r.returncode == 0, r.stderr
    assert "main thread ran while run() waited: True" in r.stdout, r.stdout


def test_100_load_run_delete_cycles_return_memory():
    # The fixture with the most device memory. Besides the 50 MB bound, growth must stay well
    # under what keeping the models would cost (measured on 20 kept models), so a leak of whole
    # models fails even though these fixtures are small.
    d = case_dir("conv2d_patch_embed")
    data = (d / "model.pte").read_bytes()
    inputs = load_npys(d, manifest_cases()["conv2d_patch_embed"]["inputs"])

    def cycle():
        m = etwebgpu.load(data)
        m.run(inputs)
        return m

    for _ in range(5):  # pipelines, caches and allocator pools settle first
        cycle()
    gc.collect()
    before = rss_bytes()
    for _ in range(100):
        cycle()
    gc.collect()
    growth = rss_bytes() - before
    before_kept = rss_bytes()
    kept = [cycle() for _ in range(20)]
    per_model = (rss_bytes() - before_kept) / len(kept)
    print(f"RSS growth over 100 load/run/delete cycles: {growth / 2**20:.2f} MiB "
          f"(a kept model costs {per_model / 2**10:.0f} KiB, {kept[0].gpu_bytes / 2**10:.0f} KiB of it on the GPU)")
    assert growth < 50 * 2**20, f"RSS grew {growth / 2**20:.1f} MiB over 100 cycles"
    assert growth < 25 * per_model, f"RSS grew {growth / 2**10:.0f} KiB: a quarter of 100 kept models or more"
