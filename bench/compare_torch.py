#!/usr/bin/env python3
"""Runs our microbenchmarks and PyTorch eager CUDA fp32 (TF32 off) on the same shapes in the same
command, checks both give the same numbers, and prints one table.

usage: python3 bench/compare_torch.py --bin build/etwebgpu_microbench [--iters 20] [--case NAME ...]
       [--processes one|per-case|both]

Kernel cases compare GPU time (our timestamp queries vs CUDA events around the torch op); whole
models (small_cnn) compare wall-clock latency of one batch-1 inference, as a user sees it.
ratio = torch time / our time: above 1 we are faster, 0.5 means half PyTorch's speed.
"""
import argparse, json, os, subprocess, sys, tempfile
import numpy as np
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"


def load(d, name):
    return torch.from_numpy(np.load(os.path.join(d, name))).to(dev)


def build(d, meta):
    op, p = meta["op"], meta.get("params") or {}
    x = load(d, "input_0.npy")
    if op == "add":
        y = load(d, "input_1.npy"); return lambda: x + y
    if op == "mm":
        y = load(d, "input_1.npy"); return lambda: x @ y
    if op == "linear":
        w = load(d, "weight.npy"); return lambda: F.linear(x, w)
    if op == "conv2d":
        w, b = load(d, "weight.npy"), load(d, "bias.npy")
        return lambda: F.conv2d(x, w, b, stride=p["stride"], padding=p["padding"], groups=p.get("groups", 1))
    if op == "dwpw":
        w, b, w2, b2 = (load(d, n + ".npy") for n in ("weight", "bias", "weight2", "bias2"))
        return lambda: F.conv2d(F.conv2d(x, w, b, stride=p["stride"], padding=1, groups=w.shape[0]), w2, b2)
    if op == "upsample_bilinear":
        s = (x.shape[2] * 4, x.shape[3] * 4)
        return lambda: F.interpolate(x, size=s, mode="bilinear", align_corners=False)
    if op == "softmax":
        return lambda: torch.softmax(x, -1)
    if op == "sdpa":
        k, v = load(d, "input_1.npy"), load(d, "input_2.npy")
        return lambda: F.scaled_dot_product_attention(x, k, v)
    if op == "decoder":
        model = NETS["decoder"]
        return lambda: model(x)
    if op == "net":
        model = NETS[os.path.basename(p["dir"])]
        return lambda: model(x)
    if op == "small_cnn":
        w = {n: load(d, n + ".npy") for n in ["w1", "b1", "w2", "b2", "wl", "bl"]}
        def f():
            y = F.relu(F.conv2d(x, w["w1"], w["b1"], padding=1))
            y = F.max_pool2d(y, 2)
            y = F.hardtanh(F.conv2d(y, w["w2"], w["b2"], padding=1))
            y = F.linear(y.mean((2, 3)), w["wl"], w["bl"])
            return torch.softmax(y, 1)
        return f
    raise ValueError(op)


NETS = {}


def fold_bn(conv, bn):
    s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    w = conv.weight * s.reshape(-1, 1, 1, 1)
    b = bn.bias - bn.running_mean * s + (conv.bias * s if conv.bias is not None else 0)
    return w.detach().float().cpu().numpy(), b.detach().float().cpu().numpy()


def export_mobilenet_v2(root):
    """torchvision MobileNetV2 (random init, eval) as a layer list with BN folded into the convs,
    the way ExecuTorch's Vulkan preprocessing fuses conv+BN(+ReLU6 -> conv_with_clamp)."""
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v2(weights=None).eval()
    # Non-trivial BN statistics so the folding is exercised.
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1); mod.running_var.uniform_(0.5, 1.5)
    d = os.path.join(root, "mobilenet_v2"); os.makedirs(d, exist_ok=True)
    layers, n = [], [0]

    def conv_bn(seq, inp, relu6):
        conv, bn = seq[0], seq[1]
        w, b = fold_bn(conv, bn)
        k = n[0]; n[0] += 1
        np.save(os.path.join(d, f"w{k}.npy"), w); np.save(os.path.join(d, f"b{k}.npy"), b)
        l = {"op": "conv", "in": inp, "out": f"t{k}", "w": f"w{k}.npy", "b": f"b{k}.npy",
             "stride": conv.stride[0], "pad": conv.padding[0], "groups": conv.groups}
        if relu6: l["clamp"] = [0.0, 6.0]
        layers.append(l)
        return f"t{k}"

    cur = "x"
    for f in m.features:
        if isinstance(f, torchvision.ops.misc.Conv2dNormActivation):
            cur = conv_bn(f, cur, True)
        else:  # InvertedResidual
            inp, mods = cur, list(f.conv)
            for mod in mods[:-2]:
                cur = conv_bn(mod, cur, True)
            cur = conv_bn(torch.nn.Sequential(mods[-2], mods[-1]), cur, False)
            if f.use_res_connect:
                layers.append({"op": "add", "a": cur, "b": inp, "out": cur + "r"}); cur = cur + "r"
    layers.append({"op": "mean_hw", "in": cur, "out": "pool"})
    lin = m.classifier[1]
    np.save(os.path.join(d, "wl.npy"), lin.weight.detach().numpy()); np.save(os.path.join(d, "bl.npy"), lin.bias.detach().numpy())
    layers.append({"op": "linear", "in": "pool", "out": "logits", "w": "wl.npy", "b": "bl.npy"})
    x = torch.randn(1, 3, 224, 224)
    np.save(os.path.join(d, "input_0.npy"), x.numpy())
    json.dump({"input": [1, 3, 224, 224], "layers": layers}, open(os.path.join(d, "net.json"), "w"))
    NETS["mobilenet_v2"] = m.to(dev)
    return d


class Decoder(torch.nn.Module):
    """The small decoder of src/models/decoder_model.h in plain PyTorch (prefill from position 0):
    Qwen3-style q/k RMSNorm, HF rotate-half RoPE, GQA causal attention, SwiGLU."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        g = torch.Generator().manual_seed(0)
        r = lambda *s, lo=-0.05, hi=0.05: torch.rand(*s, generator=g) * (hi - lo) + lo
        D, DM, F = c["head_dim"], c["dim"], c["ffn"]
        self.w = {"emb": r(c["vocab"], DM, lo=-1, hi=1), "final_norm": r(DM, lo=0.8, hi=1.2), "lm": r(c["vocab"], DM)}
        for l in range(c["layers"]):
            p = f"l{l}_"
            self.w.update({p + "attn_norm": r(DM, lo=0.8, hi=1.2), p + "q_norm": r(D, lo=0.8, hi=1.2),
                           p + "k_norm": r(D, lo=0.8, hi=1.2), p + "wq": r(c["heads"] * D, DM),
                           p + "wk": r(c["kv_heads"] * D, DM), p + "wv": r(c["kv_heads"] * D, DM),
                           p + "wo": r(DM, c["heads"] * D), p + "mlp_norm": r(DM, lo=0.8, hi=1.2),
                           p + "wg": r(F, DM), p + "wu": r(F, DM), p + "wd": r(DM, F)})
        inv = 10000.0 ** (-2.0 * (torch.arange(D) % (D // 2)).double() / D)
        ang = torch.arange(c["cache"]).double()[:, None] * inv[None, :]
        self.w["cos"], self.w["sin"] = ang.cos().float(), ang.sin().float()

    def save(self, d):
        for k, v in self.w.items(): np.save(os.path.join(d, k + ".npy"), v.numpy())
        json.dump(self.c, open(os.path.join(d, "config.json"), "w"))

    def to_dev(self):
        self.w = {k: v.to(dev) for k, v in self.w.items()}
        return self

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["eps"]) * w

    def rope(self, x, S):
        cos, sin = self.w["cos"][:S][None, :, None, :], self.w["sin"][:S][None, :, None, :]
        h = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., h:], x[..., :h]], -1) * sin

    def forward(self, tokens):
        c, w = self.c, self.w
        S, D, HQ, HKV = tokens.shape[1], c["head_dim"], c["heads"], c["kv_heads"]
        h = F.embedding(tokens.long(), w["emb"])
        for l in range(c["layers"]):
            p = f"l{l}_"
            x = self.rms(h, w[p + "attn_norm"])
            q = self.rms(F.linear(x, w[p + "wq"]).view(1, S, HQ, D), w[p + "q_norm"])
            k = self.rms(F.linear(x, w[p + "wk"]).view(1, S, HKV, D), w[p + "k_norm"])
            v = F.linear(x, w[p + "wv"]).view(1, S, HKV, D)
            q, k = self.rope(q, S), self.rope(k, S)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            h = h + F.linear(a.transpose(1, 2).reshape(1, S, HQ * D), w[p + "wo"])
            x2 = self.rms(h, w[p + "mlp_norm"])
            h = h + F.linear(F.silu(F.linear(x2, w[p + "wg"])) * F.linear(x2, w[p + "wu"]), w[p + "wd"])
        return F.linear(self.rms(h, w["final_norm"]), w["lm"])


def export_decoder(root):
    c = {"vocab": 4096, "dim": 512, "heads": 8, "kv_heads": 2, "head_dim": 64, "ffn": 1408, "cache": 256,
         "smax": 128, "layers": 4, "eps": 1e-5}
    d = os.path.join(root, "decoder"); os.makedirs(d, exist_ok=True)
    m = Decoder(c)
    m.save(d)
    tokens = torch.randint(0, c["vocab"], (1, 64), generator=torch.Generator().manual_seed(1), dtype=torch.int32)
    np.save(os.path.join(d, "input_0.npy"), tokens.numpy())
    NETS["decoder"] = m.to_dev()
    return d


def warm(fn, seconds=0.3):
    """Runs fn back to back for `seconds` first, as the microbench does before each case, so both
    sides are timed at the GPU's working clock (its driver lowers the clock after idle periods)."""
    import time
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn(); torch.cuda.synchronize()


def time_gpu(fn, iters):
    warm(fn)
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return float(np.median(ts))


def time_wall(fn, iters):
    import time
    warm(fn)
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts))


def peaks():
    n = 8192
    a = torch.randn(n, n, device=dev); b = torch.randn(n, n, device=dev)
    ms = time_gpu(lambda: a @ b, 5)
    flops = 2 * n ** 3 / (ms * 1e6)
    x = torch.empty(1 << 28, device=dev); y = torch.empty_like(x)
    ms = time_gpu(lambda: y.copy_(x), 10)
    bw = 2 * x.numel() * 4 / (ms * 1e6)
    return flops, bw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--processes", choices=["one", "per-case", "both"], default="one",
                    help="run every case in one microbench process (default), each in its own, or both and "
                         "compare their GPU times case by case (the long-lived-process check)")
    a = ap.parse_args()
    out = tempfile.mkdtemp(prefix="etw_bench_")
    cases = list(a.case)
    if not cases or "decoder" in cases:
        dec = export_decoder(tempfile.mkdtemp(prefix="etw_dec_"))
        cases = [c for c in cases if c != "decoder"] + ["decoder:" + dec]
    if not a.case or "mobilenet_v2" in a.case:
        nets = tempfile.mkdtemp(prefix="etw_nets_")
        mv2 = export_mobilenet_v2(nets)
        cases = [c for c in cases if c != "mobilenet_v2"]
        if not a.case:
            cases = [c for c in cases if c.startswith("decoder:")] + ["add", "gemm_1024", "gemm_2048", "gemm_4096", "linear_4096", "gemv_4096", "conv3x3_64", "conv_stem",
                     "upsample_bilinear_4x", "softmax_4096", "sdpa_1x8x1024x64", "sdpa_1x8x32x4096", "small_cnn"]
        cases.append("net:" + mv2)
    # One process for every case: the microbench keeps the GPU at its working clock before each
    # case (--warm-ms), so a case times the same after large ones as in a fresh process.
    def run_bench(case_list, out_dir):
        r = subprocess.run([a.bin, "--out", out_dir, "--iters", str(a.iters)] + sum([["--case", c] for c in case_list], []),
                           capture_output=True, text=True)
        print(r.stderr, end="", file=sys.stderr)
        return r.stdout.splitlines()
    if a.processes in ("one", "both"):
        print("\n".join(run_bench(cases, out)))
    if a.processes in ("per-case", "both"):
        per = out if a.processes == "per-case" else tempfile.mkdtemp(prefix="etw_bench_per_")
        for i, c in enumerate(cases):
            lines = run_bench([c], per)
            if a.processes == "per-case": print("\n".join(lines if i == 0 else lines[2:]))
    if a.processes == "both":
        # GPU time is what the GPU's clock state decides; wall time (upload + run + read back) is
        # shown beside it for information, it moves with the host from run to run.
        print(f"\nlong-lived process check: GPU ms of each case in one process against its own process")
        print(f"{'case':22} {'own process':>12} {'one process':>12} {'ratio':>7}  within 10%   wall ms own / one")
        worst = 1.0
        for name in sorted(os.listdir(out)):
            one = json.load(open(os.path.join(out, name, "meta.json")))
            own_path = os.path.join(per, name, "meta.json")
            if not os.path.exists(own_path): continue
            own = json.load(open(own_path))
            r = one["gpu_ms"] / own["gpu_ms"]
            worst = max(worst, r, 1 / r)
            print(f"{name:22} {own['gpu_ms']:12.4f} {one['gpu_ms']:12.4f} {r:7.3f}  {'yes' if abs(r - 1) <= 0.1 else 'NO ':11}"
                  f"  {own['wall_ms']:.3f} / {one['wall_ms']:.3f}")
        print(f"largest deviation: {100 * (worst - 1):.1f}%")
    peak_flops, peak_bw = peaks()
    print(f"\nmeasured device peak (PyTorch): fp32 GEMM {peak_flops:.0f} GFLOP/s (TF32 off), copy {peak_bw:.0f} GB/s")
    print(f"{'case':22} {'torch ms':>10} {'ours ms':>10} {'ratio':>7} {'ours GFLOP/s':>13} {'ours GB/s':>10} {'%peak':>6}  check")
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        meta = json.load(open(os.path.join(d, "meta.json")))
        fn = build(d, meta)
        whole = meta["op"] in ("small_cnn", "net", "decoder")
        with torch.no_grad():
            t = time_wall(fn, a.iters) if whole else time_gpu(fn, a.iters)
            ref = fn().float().cpu().numpy()
        ours_ms = meta["wall_ms"] if whole else meta["gpu_ms"]
        ours = np.load(os.path.join(d, "ours.npy")).astype(np.float32)
        scale = float(np.abs(ref).max()) or 1.0
        err = float(np.abs(ours - ref).max()) if ours.shape == ref.shape else float("inf")
        ok = err <= 2e-3 * scale
        gf = meta["flops"] / (ours_ms * 1e6) if meta["flops"] else 0
        gb = meta["bytes"] / (ours_ms * 1e6) if meta["bytes"] else 0
        pk = 100 * (gf / peak_flops if gf else gb / peak_bw if gb else 0)
        label = name + (" (wall)" if whole else "")
        print(f"{label:22} {t:10.4f} {ours_ms:10.4f} {t / ours_ms:7.2f} {gf:13.0f} {gb:10.0f} {pk:6.1f}  "
              f"{'same' if ok else 'DIFFERENT'} (max |err| {err:.2e}, max |ref| {scale:.2e})")


if __name__ == "__main__":
    main()
