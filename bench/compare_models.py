#!/usr/bin/env python3
"""Whole models, batch 1, one command: etwebgpu / the upstream ExecuTorch WebGPU runner / PyTorch
eager CUDA / PyTorch replaying a CUDA graph, on the same exported `.pte` files.

usage: python3 bench/compare_models.py ROOT [ROOT ...] [--bin devbin/etwebgpu]
           [--peer .devshare/peer/et_webgpu_runner] [--specs bench/models] [--iters 20] [--warmup 3]
           [--case NAME ...] [--no-torch] [--no-peer] [--json r.json] [--md r.md] [--profile-dir DIR]
       python3 bench/compare_models.py --from-json r.json [--md r.md]    (print the tables again)
       ... [--baseline earlier.json]   (also our GPU time against an earlier run's, per model)

Each ROOT is a conformance tree (manifest.json + one folder per case), as written by
`../shared/exporter/export_pte.py`. Every figure is the median wall time of one batch-1 inference
as a user sees it: inputs from host memory to the device, the run, outputs read back to host.
- ours: `etwebgpu bench MODEL --json`, wall_ms_median (upload + run + read back, random inputs of
  the case's shapes); its output is checked on the case's inputs with `etwebgpu run -e`.
- upstream: `et_webgpu_runner MODEL --in ... --exp ...`, median_ms (set_input of every input +
  execute: upload, dispatch, wait, read back; its first run reported apart), checked by the runner.
- torch eager: the module rebuilt from bench/models/NAME.py (seeded as the exporter seeds it),
  fp32 on CUDA with TF32 off; host->device copy of the inputs, forward, `.cpu()` of the outputs.
- torch CUDA graph: the same forward captured once; a run copies the inputs into the captured
  buffers, replays, and copies the outputs back.
Every runtime's outputs are compared with the case's golden (float64 eager) with its atol/rtol.
ratio = their ms / our ms: above 1 we are faster. Cases without a spec (the public fixtures) get
ours and upstream only. Torch runs after every subprocess, so its CUDA context is idle during ours.
"""
import argparse, glob, importlib.util, json, math, os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIMES = [("ours", "etwebgpu"), ("peer", "upstream"), ("eager", "torch eager"), ("graph", "torch CUDA graph")]
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def load_cases(roots, only):
    cases = []
    for root in roots:
        man = json.load(open(os.path.join(root, "manifest.json")))
        for name, c in man["cases"].items():
            if only and name not in only:
                continue
            d = os.path.join(root, name)
            cases.append({"name": name, "dir": d, "atol": c["atol"], "rtol": c["rtol"],
                          "inputs": [os.path.join(d, i["file"]) for i in c["inputs"]],
                          "expected": [os.path.join(d, o["file"]) for o in c["outputs"]],
                          "fully_delegated": c["fully_delegated"], "non_delegated_ops": c["non_delegated_ops"]})
    missing = set(only) - {c["name"] for c in cases}
    if missing:
        sys.exit(f"compare_models: no case named {', '.join(sorted(missing))} under {', '.join(roots)}")
    return cases


def run(cmd, timeout, env=None):
    """(returncode or 'timeout', stdout, stderr) of one subprocess."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out, ""
    except OSError as e:
        return "oserror", "", str(e)


def tail(*texts, n=3):
    lines = [l for t in texts for l in (t or "").strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])[:400]


def json_line(text):
    for line in reversed((text or "").splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None


def check(outs, case):
    """Worst element of |got - exp| > atol + rtol |exp| over every output, in float64."""
    import numpy as np
    r = {"max_err": 0.0, "max_ref": 0.0, "ok": True}
    if len(outs) != len(case["expected"]):
        return {"ok": False, "why": f"{len(outs)} outputs, {len(case['expected'])} expected"}
    for got, path in zip(outs, case["expected"]):
        exp = np.load(path)
        if got.shape != exp.shape:
            return {"ok": False, "why": f"shape {list(got.shape)}, expected {list(exp.shape)}"}
        g, e = got.astype(np.float64), exp.astype(np.float64)
        err = np.abs(g - e)
        r["ok"] &= bool(np.all(err <= case["atol"] + case["rtol"] * np.abs(e)))
        if err.size:
            r["max_err"] = max(r["max_err"], float(np.nan_to_num(err, nan=np.inf).max()))
            r["max_ref"] = max(r["max_ref"], float(np.abs(e).max()))
    return r


def measure_ours(case, a, prof_dir):
    import numpy as np
    pte = os.path.join(case["dir"], "model.pte")
    out = tempfile.mkdtemp(prefix="etw_out_")
    cmd = [a.bin, "run", pte, "-o", out, "--atol", str(case["atol"]), "--rtol", str(case["rtol"])]
    for i in case["inputs"]:
        cmd += ["-i", i]
    for e in case["expected"]:
        cmd += ["-e", e]
    rc, so, se = run(cmd, a.timeout)
    files = sorted(glob.glob(os.path.join(out, "output_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))
    r = {"status": "pass" if rc == 0 else "wrong" if files and rc == 1 else "error"}
    if files:
        r.update({k: v for k, v in check([np.load(f) for f in files], case).items() if k != "ok"})
    shutil.rmtree(out, ignore_errors=True)
    if rc != 0:
        r["message"] = f"run rc={rc}: " + tail(so, se)
    if r["status"] == "error":
        return r
    rc, so, se = run([a.bin, "bench", pte, "--json", "--iters", str(a.iters), "--warmup", str(a.warmup)], a.timeout)
    j = json_line(so)
    if rc != 0 or j is None or j.get("wall_ms_median") is None:
        return {**r, "status": "error", "message": f"bench rc={rc}: " + tail(so, se)}
    r.update(ms=j["wall_ms_median"], gpu_ms=j.get("gpu_ms"), dispatches=j.get("dispatches"), gpu_bytes=j.get("gpu_bytes"))
    if prof_dir:
        # The per-op / per-kernel GPU profile, for finding where a model's time goes.
        rc, so, se = run([a.bin, "bench", pte, "--iters", "5", "--warmup", "1"], a.timeout)
        open(os.path.join(prof_dir, case["name"] + ".txt"), "w").write(so + se)
    return r


def measure_peer(case, a):
    cmd = [a.peer, os.path.join(case["dir"], "model.pte")]
    for i in case["inputs"]:
        cmd += ["--in", i]
    for e in case["expected"]:
        cmd += ["--exp", e]
    cmd += ["--atol", str(case["atol"]), "--rtol", str(case["rtol"]), "--iters", str(a.iters)]
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    rc, so, se = run(cmd, a.timeout, env)
    j = json_line(so)
    if j is None:
        return {"status": "error", "message": f"rc={rc}: " + tail(so, se)}
    r = {"status": j.get("status", "error"), "ms": j.get("median_ms"), "first_ms": j.get("first_ms"),
         "load_ms": j.get("load_ms"), "adapter": j.get("adapter"), "detail": j.get("detail")}
    if r["status"] != "pass":
        r["message"] = tail(j.get("detail") or j.get("message") or "", se)
    return r


def flat(o):
    if isinstance(o, (list, tuple)):
        return [y for x in o for y in flat(x)]
    return [o]


def median_wall(fn, warmup, iters, sync):
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def measure_torch(case, spec_path, a):
    """Eager and CUDA-graph latency of the module rebuilt from its spec, on the case's own inputs."""
    import numpy as np
    import torch
    sp = importlib.util.spec_from_file_location("spec_" + case["name"], spec_path)
    spec = importlib.util.module_from_spec(sp)
    sp.loader.exec_module(spec)
    torch.manual_seed(0)  # as export_pte.py seeds it before model(): the same weights
    model = spec.model().eval().requires_grad_(False).to(a.device)
    host = [torch.from_numpy(np.load(p)) for p in case["inputs"]]
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    res = {}
    with torch.no_grad():
        def eager():
            return [o.cpu() for o in flat(model(*[x.to(a.device) for x in host]))]
        outs = eager()
        res["eager"] = {"ms": median_wall(eager, a.warmup, a.iters, sync), **check([o.numpy() for o in outs], case)}
        if a.device != "cuda":
            res["graph"] = {"status": "error", "message": "CUDA graphs need --device cuda"}
            return with_status(res)
        try:
            static = [x.to(a.device) for x in host]
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):  # warm up off the capture stream, as the CUDA-graph docs do
                for _ in range(3):
                    model(*static)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_out = flat(model(*static))

            def replay():
                for dst, src in zip(static, host):
                    dst.copy_(src)
                g.replay()
                return [o.cpu() for o in static_out]
            outs = replay()
            res["graph"] = {"ms": median_wall(replay, a.warmup, a.iters, sync), **check([o.numpy() for o in outs], case)}
        except Exception as e:  # a module that cannot be captured is a result, not a crash
            res["graph"] = {"status": "error", "message": f"{type(e).__name__}: {e}"[:400]}
    return with_status(res)


def with_status(res):
    """check()'s ok becomes status pass / wrong."""
    for r in res.values():
        if "ok" in r:
            ok = r.pop("ok")
            r["status"] = "pass" if ok else "wrong"
            if not ok:
                r["message"] = r.pop("why", "differs from the golden beyond atol/rtol")
    return res


def torch_env(a):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    torch.set_float32_matmul_precision("highest")
    env = {"torch": torch.__version__, "device": a.device, "tf32": False, "cudnn_benchmark": a.cudnn_benchmark}
    if a.device == "cuda":
        env.update(gpu=torch.cuda.get_device_name(0), cudnn=torch.backends.cudnn.version())
    return env


# ---- tables ----

def fmt_ms(r):
    if not r or r.get("ms") is None:
        return "-"
    return f"{r['ms']:.3f}" + ("" if r.get("status") == "pass" else "!")


def ratio(c, k):
    """their ms / our ms when both ran and both match the golden."""
    o, t = c["results"].get("ours") or {}, c["results"].get(k) or {}
    if o.get("status") == "pass" and t.get("status") == "pass" and o.get("ms") and t.get("ms"):
        return t["ms"] / o["ms"]
    return None


def geomean(xs):
    xs = [x for x in xs if x]
    return (math.exp(sum(math.log(x) for x in xs) / len(xs)), len(xs)) if xs else (None, 0)


def status_note(r):
    if not r:
        return "not run"
    s = r.get("status", "?")
    if "max_err" in r:
        s += f" (max|err| {r['max_err']:.1e}, max|ref| {r['max_ref']:.1e})"
    if r.get("message"):
        s += ": " + r["message"][:160]
    return s


def print_case(c):
    o = c["results"].get("ours") or {}
    head = f"== {c['name']}"
    if o.get("dispatches") is not None:
        gpu = f", GPU {o['gpu_ms']:.3f} ms" if o.get("gpu_ms") is not None else ""
        head += f"  ({o['dispatches']} dispatches{gpu}, gpu_bytes {o.get('gpu_bytes') or 0:,})"
    if not c["fully_delegated"]:
        head += f"  [not fully delegated: {', '.join(c['non_delegated_ops'])}]"
    print(head)
    print(f"   {'runtime':18} {'ms':>9} {'their/our':>10}  check")
    for k, label in RUNTIMES:
        r = c["results"].get(k)
        if k != "ours" and r is None:
            continue
        x = ratio(c, k) if k != "ours" else None
        print(f"   {label:18} {fmt_ms(r):>9} {(f'{x:.2f}x' if x else '-'):>10}  {status_note(r)}")


def gpu_ms(c):
    return ((c.get("results") or {}).get("ours") or {}).get("gpu_ms")


def summary_rows(cases, base=None):
    """`base`: an earlier run's cases by name, for our GPU time (the sum of per-dispatch timestamps,
    steadier across machines than wall time) against theirs: now / then."""
    rows, changes = [], []
    for c in cases:
        r = c["results"]
        g = gpu_ms(c)
        row = ([c["name"], fmt_ms(r.get("ours")), f"{g:.3f}" if g else "-", fmt_ms(r.get("peer")), fmt_ms(r.get("eager")),
                fmt_ms(r.get("graph"))]
               + [(f"{x:.2f}" if x else "-") for x in (ratio(c, "peer"), ratio(c, "eager"), ratio(c, "graph"))]
               + [str((r.get("ours") or {}).get("dispatches", "-"))])
        if base is not None:
            g0 = gpu_ms(base.get(c["name"], {}))
            changes.append(g / g0 if g and g0 else None)
            row.append(f"{changes[-1]:.2f}" if changes[-1] else "-")
        rows.append(row)
    gm = [geomean([ratio(c, k) for c in cases]) for k in ("peer", "eager", "graph")]
    last = ["geometric mean", "", "", "", "", ""] + [(f"{g:.2f} ({n})" if g else "-") for g, n in gm] + [""]
    if base is not None:
        g, n = geomean(changes)
        last.append(f"{g:.2f} ({n})" if g else "-")
    rows.append(last)
    return rows


HEADER = ["model", "ours ms", "ours GPU ms", "upstream ms", "eager ms", "graph ms", "upstream/ours", "eager/ours",
          "graph/ours", "dispatches"]


def header(base):
    return HEADER + (["GPU now/then"] if base is not None else [])


def print_tables(res, base=None):
    cases = res["cases"]
    print()
    for c in cases:
        print_case(c)
    rows = summary_rows(cases, base)
    hd = header(base)
    w = [max(len(hd[i]), *(len(r[i]) for r in rows)) for i in range(len(hd))]
    print("\nsummary (ms: median wall per batch-1 inference incl. upload and read back; '!' = output off the golden;"
          "\n ratios = their ms / our ms over cases where both match the golden, above 1 = we are faster;"
          "\n ours GPU ms: the sum of our dispatches' timestamps" + ("; GPU now/then: against --baseline)" if base is not None else ")"))
    print("  ".join(h.rjust(w[i]) if i else h.ljust(w[i]) for i, h in enumerate(hd)))
    for r in rows:
        print("  ".join(x.rjust(w[i]) if i else x.ljust(w[i]) for i, x in enumerate(r)))
    if res.get("env"):
        print("torch:", json.dumps(res["env"]))


def write_md(res, path, base=None):
    rows = summary_rows(res["cases"], base)
    hd = header(base)
    with open(path, "w") as f:
        f.write("| " + " | ".join(hd) + " |\n|" + "---|" + "---:|" * (len(hd) - 1) + "\n")
        for r in rows:
            f.write("| " + " | ".join(r) + " |\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("roots", nargs="*", help="conformance trees (manifest.json + case folders)")
    ap.add_argument("--bin", default="devbin/etwebgpu", help="the etwebgpu CLI")
    ap.add_argument("--peer", default=".devshare/peer/et_webgpu_runner", help="the upstream runner")
    ap.add_argument("--specs", default=os.path.join(HERE, "models"), help="folder of SPEC.py files named like the cases")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per subprocess")
    ap.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--device", default="cuda", help="torch device (cpu only to try the script without a GPU)")
    ap.add_argument("--cudnn-benchmark", action="store_true", help="torch.backends.cudnn.benchmark (default off, PyTorch's default)")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--md", help="write the summary as a Markdown table here")
    ap.add_argument("--profile-dir", help="save `etwebgpu bench` per-op profiles here, one file per case")
    ap.add_argument("--from-json", help="print the tables of an earlier --json instead of measuring")
    ap.add_argument("--baseline", help="an earlier run's --json: our GPU time per model against it")
    a = ap.parse_args()
    base = {c["name"]: c for c in json.load(open(a.baseline))["cases"]} if a.baseline else None

    if a.from_json:
        res = json.load(open(a.from_json))
    else:
        if not a.roots:
            ap.error("give at least one ROOT (or --from-json)")
        cases = load_cases(a.roots, a.case)
        if a.profile_dir:
            os.makedirs(a.profile_dir, exist_ok=True)
        for c in cases:
            spec = os.path.join(a.specs, c["name"] + ".py")
            c["spec"] = spec if os.path.exists(spec) else None
            c["results"] = {}
        res = {"iters": a.iters, "warmup": a.warmup, "cases": cases}

        def save():  # after every case, so a run cut short by a timeout keeps what it measured
            if a.json:
                json.dump(res, open(a.json + ".tmp", "w"), indent=1)
                os.replace(a.json + ".tmp", a.json)
        for c in cases:
            c["results"]["ours"] = measure_ours(c, a, a.profile_dir)
            if not a.no_peer:
                c["results"]["peer"] = measure_peer(c, a)
            log(f"{c['name']}: ours {fmt_ms(c['results']['ours'])} ms ({c['results']['ours']['status']})"
                + ("" if a.no_peer else f", upstream {fmt_ms(c['results']['peer'])} ms ({c['results']['peer']['status']})"))
            save()
        with_spec = [c for c in cases if c["spec"]]
        if not a.no_torch and with_spec:
            try:
                res["env"] = torch_env(a)
                log(f"torch {res['env']['torch']} on {res['env'].get('gpu', a.device)}")
            except Exception as e:  # no torch or no GPU: ours and upstream still stand
                res["env"] = {"error": f"{type(e).__name__}: {e}"[:400]}
                log("torch unusable: " + res["env"]["error"])
                with_spec = []
            for c in with_spec:
                try:
                    c["results"].update(measure_torch(c, c["spec"], a))
                except Exception as e:
                    msg = f"{type(e).__name__}: {e}"[:400]
                    c["results"].update(eager={"status": "error", "message": msg}, graph={"status": "error", "message": msg})
                r = c["results"]
                log(f"{c['name']}: torch eager {fmt_ms(r['eager'])} ms ({r['eager']['status']}), "
                    f"CUDA graph {fmt_ms(r['graph'])} ms ({r['graph']['status']})")
                save()
    print_tables(res, base)
    if a.md:
        write_md(res, a.md, base)


if __name__ == "__main__":
    main()
