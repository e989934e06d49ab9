#!/usr/bin/env python3
"""How far PyTorch's own float32 runs of a static-int8 model land from each other, in output quanta,
beside how far etwebgpu lands from the export's golden: the evidence for the tolerance of deep int8
goldens (docs/PERFORMANCE.md "Quantized models").

The golden of a quantized export is the float32 eager output of the fake-quantized graph. Each
dequantize -> conv -> quantize rounds a float32 sum; where that sum sits within float32 error of a
rounding tie, another summation order (another thread count, another device) gives the next integer,
and the difference propagates through the later layers. This prints, for each run, the largest
difference from the golden in output quanta and the share of outputs within one quantum.

usage: q8_golden_noise.py SPEC.py EXPORT_CASE_DIR OURS_OUTPUT_0.npy  (on the GPU machine)"""
import importlib.util
import json
import sys

import numpy as np
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
spec_path, case, ours_path = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("spec", spec_path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
torch.manual_seed(0)  # as export_pte.py does before spec.model()
m = mod.model()
x = torch.from_numpy(np.load(f"{case}/input_0.npy"))
golden = np.load(f"{case}/expected_0.npy").astype(np.float64)
# The output is dequantized: every value is (q - zp) * scale, so the smallest gap between distinct
# values is one quantum (a classifier's logits take enough distinct values for this to hold).
u = np.unique(golden)
quantum = float(np.min(np.diff(u)))


def quanta(got, ref=None):
    ref = golden if ref is None else ref
    d = np.abs(np.asarray(got, dtype=np.float64).reshape(golden.shape) - ref) / quantum
    return {"max_quanta": round(float(d.max()), 2), "within_1": round(float(np.mean(d <= 1.01)), 4),
            "exact": round(float(np.mean(d < 0.01)), 4)}


res = {"case": case, "quantum": quantum}
# The model is rebuilt from the spec (same seed as the export); "rebuilt_cpu" says whether it is the
# exported one (0 quanta). The PyTorch-against-PyTorch rows compare the rebuilt model with itself.
with torch.no_grad():
    cpu = m(x).numpy().astype(np.float64).reshape(golden.shape)
    res["rebuilt_cpu_vs_golden"] = quanta(cpu)
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    res["torch_cpu_1_thread_vs_cpu"] = quanta(m(x).numpy(), cpu)
    torch.set_num_threads(n)
    if torch.cuda.is_available():
        try:
            res["torch_cuda_fp32_vs_cpu"] = quanta(m.to("cuda")(x.cuda()).cpu().numpy(), cpu)
        except Exception as e:  # a constant the GraphModule keeps as a plain attribute stays on the CPU
            res["torch_cuda_fp32_vs_cpu"] = {"error": str(e)[:200]}
res["etwebgpu_vs_golden"] = quanta(np.load(ours_path))
print(json.dumps(res))
