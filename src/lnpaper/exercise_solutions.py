"""One solution to each exercise of `lnpaper.exercises`: look here after trying. Each takes float64
torch tensors (and lnpaper's modules), as the checks pass them."""

import torch


def layer_norm(x, gain, bias, eps=1e-5):
    mean = torch.mean(x, dim=-1, keepdim=True)
    centered = x - mean  # subtract first: E[x^2] - E[x]^2 loses every digit at a large offset
    variance = torch.mean(centered**2, dim=-1, keepdim=True)  # over H, not H - 1
    return gain * centered / torch.sqrt(variance + eps) + bias


def layer_norm_backward(dy, x, gain, eps=1e-5):
    centered = x - torch.mean(x, dim=-1, keepdim=True)
    inv_std = 1 / torch.sqrt(torch.mean(centered**2, dim=-1, keepdim=True) + eps)
    x_hat = centered * inv_std
    dx_hat = dy * gain
    # the gradient through x_hat, with its mean and its component along x_hat removed
    dx = inv_std * (dx_hat - dx_hat.mean(dim=-1, keepdim=True)
                    - x_hat * (dx_hat * x_hat).mean(dim=-1, keepdim=True))  # fmt: skip
    return dx, (dy * x_hat).sum(dim=0), dy.sum(dim=0)


def rms_norm(x, gain, eps=1e-5):
    return gain * x / torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True) + eps)


def lnlstm_step(x, h, c, cell):
    gates = (cell.norm_hh(h @ cell.weight_hh.T) + cell.norm_ih(x @ cell.weight_ih.T)
             + cell.bias)  # fmt: skip
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell.norm_c(c)), c


def pre_ln_block(x, block):
    x = x + block.attn(block.attn_in_norm(x))
    return x + block.ffn(block.ffn_in_norm(x))
