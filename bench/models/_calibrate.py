"""BatchNorm statistics for randomly initialised networks.

Fresh BatchNorm layers have mean 0 / variance 1, so a deep random network's activations grow or
vanish layer by layer and its outputs say little about numerical agreement. A few train-mode
passes over random images set each layer's running statistics to the cumulative average of what it
actually sees (momentum None), as a trained network's would be.
"""
import torch


def calibrate_batchnorm(m, shape, passes=2):
    bns = [x for x in m.modules() if isinstance(x, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    m.train()
    with torch.no_grad():
        for _ in range(passes):
            m(torch.randn(*shape))
    return m.eval()
