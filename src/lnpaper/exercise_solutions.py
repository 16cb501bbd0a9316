"""One solution to each exercise of `lnpaper.exercises`: look here after trying."""

import numpy as np
import torch


def layer_norm(x, gain, bias, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean  # subtract first: E[x^2] - E[x]^2 loses every digit at a large offset
    variance = (centered**2).mean(axis=-1, keepdims=True)
    return gain * centered / np.sqrt(variance + eps) + bias


def layer_norm_backward(dy, x, gain, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    inv_std = 1 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * inv_std
    dx_hat = dy * gain
    # the gradient through x_hat, with its mean and its component along x_hat removed
    dx = inv_std * (dx_hat - dx_hat.mean(-1, keepdims=True)
                    - x_hat * (dx_hat * x_hat).mean(-1, keepdims=True))  # fmt: skip
    return dx, (dy * x_hat).sum(axis=0), dy.sum(axis=0)


def rms_norm(x, gain, eps=1e-5):
    return gain * x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)


def lnlstm_step(x, h, c, cell):
    gates = (cell.norm_hh(h @ cell.weight_hh.T) + cell.norm_ih(x @ cell.weight_ih.T)
             + cell.bias)  # fmt: skip
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell.norm_c(c)), c


def pre_ln_block(x, block):
    x = x + block.attn(block.attn_in_norm(x))
    return x + block.ffn(block.ffn_in_norm(x))
