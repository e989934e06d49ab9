# Threads: a run releases the GIL (separate models run concurrently), one model shared between
# threads is serialised (every run still correct). Memory: 100 load/run/delete cycles return
# host and device memory (on lavapipe device memory is host memory, so RSS sees both).
import gc
import os
import threading

import numpy as np

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


def test_run_releases_the_gil(add_bcast):
    # The main thread counts while a worker thread is inside run(). Were the GIL held for the
    # run, the main thread could only count in the instants around the call (a few ticks per
    # run); with it released it counts throughout.
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    m.run(inputs)
    in_run = False
    done = threading.Event()
    runs = 20

    def worker():
        nonlocal in_run
        for _ in range(runs):
            in_run = True
            m.run(inputs)
            in_run = False
        done.set()

    ticks_in_run = 0
    t = threading.Thread(target=worker)
    t.start()
    while not done.is_set():
        if in_run:
            ticks_in_run += 1
    t.join()
    assert ticks_in_run > 100 * runs, f"main thread ran {ticks_in_run} times during {runs} runs"


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
