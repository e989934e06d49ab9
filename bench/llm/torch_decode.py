#!/usr/bin/env python3
"""PyTorch side of the LLM decode benchmark: the module of a spec file (bench/llm/llama_1b_spec.py)
on CUDA fp32 (TF32 off), greedy decode after a prompt, eager and replaying a CUDA graph of one
decode step. Prints one JSON line. Timed: the whole loop including the argmax and the host sync
per token (what a generate loop needs), like `etwebgpu generate`.

With --chunk N, prefill is also timed in chunks of N tokens per call (input_pos = the chunk's
positions), eager and replaying a CUDA graph of one chunk: what a dynamic-length export feeds.

usage: torch_decode.py SPEC.py --prompt 128 --new 64 [--chunk 512]"""
import argparse, importlib.util, json, time
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
ap = argparse.ArgumentParser()
ap.add_argument("spec")
ap.add_argument("--prompt", type=int, default=128)
ap.add_argument("--new", type=int, default=64)
ap.add_argument("--chunk", type=int, default=0)
a = ap.parse_args()
spec = importlib.util.spec_from_file_location("spec", a.spec)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
m = mod.model().cuda().eval()
vocab = mod.ARGS["vocab_size"]
g = torch.Generator().manual_seed(1)
prompt = torch.randint(0, vocab, (1, a.prompt), generator=g).cuda()
res = {"params": sum(p.numel() for p in m.parameters())}


def reset():
    for b in m.buffers():
        if b.dtype.is_floating_point and b.dim() == 4:  # KV caches
            b.zero_()


with torch.no_grad():
    # Prefill: one token per call, as the static-shape export takes it (input_pos [1]; feeding T > 1
    # tokens needs an export with enable_dynamic_shape).
    for rep in range(2):
        reset(); torch.cuda.synchronize(); t0 = time.perf_counter()
        for k in range(a.prompt):
            logits = m(prompt[:, k:k + 1], torch.tensor([k], device="cuda"))
        tok = logits.reshape(-1, vocab)[-1].argmax().item()
        t1 = time.perf_counter()
    res["eager_prefill_tok_s"] = a.prompt / (t1 - t0)
    # Eager decode, one token per call.
    pos = a.prompt
    for rep in range(2):
        t = torch.tensor([[tok]], device="cuda"); toks = []
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for k in range(a.new):
            logits = m(t, torch.tensor([pos + k], device="cuda"))
            nxt = logits.reshape(-1, vocab)[-1].argmax()
            toks.append(nxt.item()); t = nxt.view(1, 1)
        t1 = time.perf_counter()
    res["eager_decode_tok_s"] = a.new / (t1 - t0)
    # CUDA graph of one decode step (static input buffers).
    st_tok = torch.zeros((1, 1), dtype=torch.long, device="cuda")
    st_pos = torch.zeros((1,), dtype=torch.long, device="cuda")
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            out = m(st_tok, st_pos)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = m(st_tok, st_pos)
        st_next = out.reshape(-1, vocab)[-1].argmax()
    for rep in range(2):
        reset(); torch.cuda.synchronize(); t0 = time.perf_counter()
        for k in range(a.prompt):
            st_tok.copy_(prompt[:, k:k + 1]); st_pos.fill_(k); graph.replay()
        tok = st_next.item()
        t1 = time.perf_counter()
    res["cuda_graph_prefill_tok_s"] = a.prompt / (t1 - t0)
    for rep in range(2):
        st_tok.fill_(tok)
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for k in range(a.new):
            st_pos.fill_(pos + k)
            graph.replay()
            st_tok.copy_(st_next.view(1, 1)); st_next.item()
        t1 = time.perf_counter()
    res["cuda_graph_decode_tok_s"] = a.new / (t1 - t0)
    if a.chunk > 0:
        n = a.chunk
        for rep in range(2):
            reset(); torch.cuda.synchronize(); t0 = time.perf_counter()
            for k in range(0, a.prompt, n):
                logits = m(prompt[:, k:k + n], torch.arange(k, min(k + n, a.prompt), device="cuda"))
            logits.reshape(-1, vocab)[-1].argmax().item()
            t1 = time.perf_counter()
        res[f"eager_prefill_chunk{n}_tok_s"] = a.prompt / (t1 - t0)
        c_tok = prompt[:, :n].clone()
        c_pos = torch.arange(n, device="cuda")
        with torch.cuda.stream(s):
            for _ in range(2):
                m(c_tok, c_pos)
        torch.cuda.current_stream().wait_stream(s)
        cg = torch.cuda.CUDAGraph()
        with torch.cuda.graph(cg):
            c_out = m(c_tok, c_pos)
            c_next = c_out.reshape(-1, vocab)[-1].argmax()
        for rep in range(2):
            reset(); torch.cuda.synchronize(); t0 = time.perf_counter()
            for k in range(0, a.prompt - a.prompt % n, n):
                c_tok.copy_(prompt[:, k:k + n]); c_pos.copy_(torch.arange(k, k + n, device="cuda")); cg.replay()
            c_next.item()
            t1 = time.perf_counter()
        res[f"cuda_graph_prefill_chunk{n}_tok_s"] = (a.prompt - a.prompt % n) / (t1 - t0)
    wbytes = sum(p.numel() * 4 for p in m.parameters())
    res["weight_bytes"] = wbytes
print(json.dumps(res))
