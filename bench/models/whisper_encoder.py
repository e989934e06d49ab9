"""A Whisper-style audio encoder at whisper-tiny's size: conv stem (conv1d 80->384 k3, GELU,
conv1d 384->384 k3 stride 2, GELU), sinusoidal positions, 4 pre-LayerNorm transformer layers
(384 wide, 6 heads, MLP 1536, GELU), final LayerNorm. Input: one 30 s log-mel window, 1x80x3000
frames -> 1500 positions. Random weights (seeded by the caller).

Written out rather than taken from transformers so the export does not depend on its version;
attention is the explicit q @ k^T, softmax, @ v of Whisper's "eager" implementation (see
vit_tiny.py for why not F.scaled_dot_product_attention).
"""
import math

import torch
from torch import nn

D, HEADS, LAYERS, MLP, MELS, POSITIONS = 384, 6, 4, 1536, 80, 1500


def sinusoids(length, channels):
    inc = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([t.sin(), t.cos()], dim=1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(D, D), nn.Linear(D, D, bias=False), nn.Linear(D, D)
        self.out = nn.Linear(D, D)

    def forward(self, x):
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, HEADS, D // HEADS).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        w = torch.softmax((q @ k.transpose(-1, -2)) * (D // HEADS) ** -0.5, dim=-1)
        return self.out((w @ v).transpose(1, 2).reshape(b, t, D))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(D), Attention()
        self.ln2, self.mlp = nn.LayerNorm(D), nn.Sequential(nn.Linear(D, MLP), nn.GELU(), nn.Linear(MLP, D))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class WhisperEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(MELS, D, 3, padding=1)
        self.conv2 = nn.Conv1d(D, D, 3, stride=2, padding=1)
        self.register_buffer("pos", sinusoids(POSITIONS, D))
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.ln_post = nn.LayerNorm(D)

    def forward(self, mel):
        x = nn.functional.gelu(self.conv1(mel))
        x = nn.functional.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.ln_post(x)


def model():
    return WhisperEncoder().eval()


def inputs():
    return (torch.randn(1, MELS, 2 * POSITIONS),)
