"""ExecuTorch's Llama at Llama-3.2-1B shape (dim 2048, 16 layers, 32/8 heads, hidden 8192, vocab
128256, fp32, static KV cache of 1024), random weights from a fixed seed so the exported .pte and
the PyTorch module of bench/llm/torch_decode.py hold the same numbers. Exporter spec file."""
import torch
from executorch.examples.models.llama.llama_transformer import construct_transformer
from executorch.examples.models.llama.model_args import ModelArgs

ARGS = dict(dim=2048, n_layers=16, n_heads=32, n_kv_heads=8, hidden_dim=8192, vocab_size=128256,
            max_seq_len=1024, max_context_len=1024, max_batch_size=1, use_kv_cache=True,
            rope_freq_base=500000.0)


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.m = construct_transformer(ModelArgs(**ARGS))
        with torch.no_grad():
            for p in self.m.parameters():
                p.normal_(0, 0.02)

    def forward(self, tokens, input_pos):
        out = self.m(tokens, {"input_pos": input_pos})
        return out[0] if isinstance(out, tuple) else out


def model():
    return Decoder()


def inputs():
    return (torch.tensor([[1]]), torch.tensor([0]))
