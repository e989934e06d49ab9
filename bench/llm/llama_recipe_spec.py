"""ExecuTorch's own Llama export recipe, as `export_llama --vulkan -kv --use_sdpa_with_kv_cache`
(with enable_dynamic_shape) builds it: the KV cache replaced by CustomKVCache (llama::update_cache)
and attention by SDPACustom (llama::custom_sdpa), the sequence length a dynamic dimension so one
program serves prefill chunks and single-token decode, and the linear layers quantized by torchao.

The llama:: ops' schemas live in a C++ library the exporter kit lacks, so they are defined here
(verbatim from ../shared/spec/LLM_CUSTOM_OPS.md) with CPU reference implementations for the eager
goldens, before ExecuTorch's custom_ops.py adds their Meta kernels.

Environment: LLAMA_SIZE=1b for the Llama-3.2-1B shape (default: a small model for fixtures);
RECIPE_QUANT=q4 (default; IntxWeightOnlyConfig(int4, PerGroup(32))), 8da4w or fp32: every linear
layer, the output head included, as export_llama quantizes; the embedding stays float32.
LLAMA_CONTEXT=N sets the KV cache's length (max_context_len), LLAMA_VOCAB=N the vocabulary.
Steps: a 7-token prefill chunk at position 0, a 3-token chunk at 7, then single tokens at 10, 11;
with RECIPE_STEPS=long (the long-context check, LLAMA_CONTEXT=4096): four 1000-token chunks fill
positions 0..3999, then single tokens decode at 4000 and 4001; with RECIPE_STEPS=bench (the 1B
benchmark): a 1000-token chunk, then single tokens at 1000 and 1001. At the 1B shape ExecuTorch
1.2's TagMemoryMetaPass recursed past Python's limit on the symbolic texture extents with a 7- or
128-token example and a 1024 or 2048 cache; a 1000-token example with a 4096 cache exports, so
the 1B exports use that."""
import os

import torch
from torch.library import Library

SMALL = dict(dim=128, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=512, hidden_dim=256,
             max_seq_len=32, max_context_len=32, max_batch_size=1)
ONE_B = dict(dim=2048, n_layers=16, n_heads=32, n_kv_heads=8, hidden_dim=8192, vocab_size=128256,
             max_seq_len=1024, max_context_len=1024, max_batch_size=1, rope_freq_base=500000.0)
ARGS = dict(ONE_B if os.environ.get("LLAMA_SIZE") == "1b" else SMALL)
if os.environ.get("LLAMA_CONTEXT"):
    ARGS["max_context_len"] = int(os.environ["LLAMA_CONTEXT"])
if os.environ.get("LLAMA_VOCAB"):
    ARGS["vocab_size"] = int(os.environ["LLAMA_VOCAB"])
QUANT = os.environ.get("RECIPE_QUANT", "q4")
STEPS = os.environ.get("RECIPE_STEPS", "")


def _define_llama_ops():
    try:
        torch.ops.llama.custom_sdpa.default
        return
    except (AttributeError, RuntimeError):
        pass
    lib = Library("llama", "DEF")
    for s in [
        "sdpa_with_kv_cache(Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None) -> Tensor",
        "sdpa_with_kv_cache.out(Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None, *, Tensor(c!) out) -> Tensor(c!)",
        "custom_sdpa(Tensor query, Tensor key, Tensor value, SymInt start_pos, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None) -> Tensor",
        "custom_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt start_pos, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None, *, Tensor(a!) out) -> Tensor(a!)",
        "update_cache(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor",
        "update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *, Tensor(b!) out) -> Tensor(b!)",
        "update_cache_with_indices(Tensor value, Tensor(a!) cache, SymInt start_pos, Tensor indices) -> Tensor",
        "update_cache_with_indices.out(Tensor value, Tensor(a!) cache, SymInt start_pos, Tensor indices, *, Tensor(b!) out) -> Tensor(b!)",
        # Only so that custom_ops.py can register its Meta kernels; never called here.
        "fast_hadamard_transform(Tensor mat) -> Tensor",
        "custom_quantized_sdpa(Tensor query, Tensor key, Tensor value, SymInt start_pos, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None, Tensor? q_zero_point=None, Tensor? q_scale=None, Tensor? k_zero_point=None, Tensor? k_scale=None, Tensor? v_zero_point=None, Tensor? v_scale=None) -> Tensor",
    ]:
        lib.define(s)

    def custom_sdpa(q, kc, vc, start_pos, attn_mask=None, drpout_p=0.0, is_causal=False, scale=None):
        # q [B, S, H, D]; caches [B, S_max, H_kv, D]; query row i sits at position start_pos + i.
        b, s, h, d = q.shape
        n = start_pos + s
        k, v = kc[:, :n], vc[:, :n]
        rep = h // k.shape[2]
        qt = q.transpose(1, 2)
        kt = k.transpose(1, 2).repeat_interleave(rep, dim=1)
        vt = v.transpose(1, 2).repeat_interleave(rep, dim=1)
        sc = scale if scale is not None else 1.0 / (d ** 0.5)
        att = (qt @ kt.transpose(-1, -2)) * sc
        if attn_mask is not None:
            att = att + attn_mask[..., :n]
        elif is_causal:
            i = torch.arange(s).unsqueeze(1) + start_pos
            j = torch.arange(n).unsqueeze(0)
            att = att.masked_fill(j > i, float("-inf"))
        return (torch.softmax(att, dim=-1) @ vt).transpose(1, 2).contiguous()

    def update_cache(value, cache, start_pos):
        cache[:, start_pos:start_pos + value.shape[1]] = value
        return torch.zeros((1,), dtype=value.dtype)

    def sdpa_with_kv_cache(q, k, v, kc, vc, start_pos, seq_len, attn_mask=None, drpout_p=0.0, is_causal=False, scale=None):
        update_cache(k, kc, start_pos)
        update_cache(v, vc, start_pos)
        return custom_sdpa(q, kc, vc, start_pos, attn_mask, drpout_p, is_causal, scale)

    lib.impl("custom_sdpa", custom_sdpa, "CompositeExplicitAutograd")
    lib.impl("update_cache", update_cache, "CompositeExplicitAutograd")
    lib.impl("sdpa_with_kv_cache", sdpa_with_kv_cache, "CompositeExplicitAutograd")
    _define_llama_ops.lib = lib  # keep the registrations alive


_define_llama_ops()

from executorch.examples.models.llama.llama_transformer import construct_transformer  # noqa: E402
from executorch.examples.models.llama.model_args import ModelArgs  # noqa: E402
from executorch.examples.models.llama.source_transformation.custom_kv_cache import (  # noqa: E402
    replace_kv_cache_with_custom_kv_cache,
)
from executorch.examples.models.llama.source_transformation.sdpa import replace_sdpa_with_custom_op  # noqa: E402
from executorch.examples.models.llama.attention import AttentionMHA  # noqa: E402
from executorch.examples.models.llama.rope import Rope  # noqa: E402


# The recipe's Rope.get_freqs narrows the tables at input_pos[-1].item(); with torch 2.11 the Vulkan
# preprocess passes re-trace that slice without the export's range checks and fail to decide
# "start + seq_len > max_context_len" (GuardOnDataDependentSymNode). Gathering the same rows by
# index computes the same values without a data-dependent slice.
def _get_freqs(self, input_pos, seq_len):
    pos = input_pos[-1] + torch.arange(seq_len)
    return self.freqs_cos[pos], self.freqs_sin[pos]


Rope.get_freqs = _get_freqs

from executorch.examples.models.llama.source_transformation.custom_kv_cache import CustomKVCache  # noqa: E402
from executorch.examples.models.llama.source_transformation.sdpa import SDPACustom  # noqa: E402

# CustomKVCache.update returns its caches transposed to [B, H, S, D] and SDPACustom transposes them
# back: ExecuTorch 1.2's Vulkan sdpa pattern then finds custom_sdpa reading a permute, not the cache
# update_cache wrote, and fails (patterns/sdpa.py: "assert match.update_key_cache_node is not None").
# The caches go to custom_sdpa as they are ([B, S_max, H_kv, D], the op's layout) instead.
_update = CustomKVCache.update


def _update_untransposed(self, input_pos, k_val, v_val, indices=None):
    _update(self, input_pos, k_val, v_val, indices)
    return self.k_cache, self.v_cache


def _sdpa_custom_forward(self, input_pos, q, k, v, bsz, seqlen, mask):
    out = torch.ops.llama.custom_sdpa(q.transpose(1, 2), k, v, input_pos[0].item(), None, 0, True)
    return out.view(bsz, seqlen, self.dim)


CustomKVCache.update = _update_untransposed
SDPACustom.forward = _sdpa_custom_forward


class Recipe(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.m = construct_transformer(ModelArgs(**ARGS, use_kv_cache=True, enable_dynamic_shape=True,
                                                 use_sdpa_with_kv_cache_op=True))
        with torch.no_grad():
            for p in self.m.parameters():
                p.normal_(0, 0.02)
        if QUANT in ("q4", "8da4w"):
            from torchao.quantization.granularity import PerGroup
            from torchao.quantization.quant_api import (Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig,
                                                        quantize_)
            from torchao.utils import unwrap_tensor_subclass
            cfg = (IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)) if QUANT == "q4" else
                   Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32)))
            quantize_(self.m, cfg)  # every linear, the output head too (export_llama's -qmode); not the embedding
            unwrap_tensor_subclass(self.m)
        replace_kv_cache_with_custom_kv_cache(self.m)
        replace_sdpa_with_custom_op(self.m)
        # The attention's dynamic-shape branch narrows its causal mask at start_pos (the same
        # data-dependent slice as the RoPE tables); SDPACustom attends causally without that mask,
        # so the static branch (an unused mask row) is taken instead.
        for mod in self.m.modules():
            if isinstance(mod, AttentionMHA):
                mod.enable_dynamic_shape = False

    def forward(self, tokens, input_pos):
        out = self.m(tokens, {"input_pos": input_pos})
        return out[0] if isinstance(out, tuple) else out


def model():
    return Recipe()


_g = torch.Generator().manual_seed(3)


def _chunk(pos, n):
    return (torch.randint(0, ARGS["vocab_size"], (1, n), generator=_g), torch.tensor([pos]))


def inputs():
    return _chunk(0, 1000) if STEPS == "long" else _chunk(0, 1000) if STEPS == "bench" else _chunk(0, 7)


def steps():
    if STEPS == "bench":
        return [_chunk(1000, 1), _chunk(1001, 1)]
    if STEPS == "long":
        return [_chunk(1000, 1000), _chunk(2000, 1000), _chunk(3000, 1000), _chunk(4000, 1), _chunk(4001, 1)]
    return [_chunk(7, 3), _chunk(10, 1), _chunk(11, 1)]


def dynamic_shapes():
    return ({1: torch.export.Dim("token_dim", max=ARGS["max_seq_len"] - 1)}, None)
