"""The fully connected classifier of the batch-size experiment (Ba et al. 2016, Sec. 6.7).

The paper trains a 784-1000-1000-10 network on permutation-invariant MNIST with BatchNorm or with
LayerNorm; notebook 01 (claim M5) trains a narrower one on the 8 x 8 digits. Each hidden layer is

    a = W h_prev            (summed inputs; no bias here, the normalizer's own b replaces it)
    h = relu(norm(a))       (norm = g * (a - mu) / sigma + b, then the nonlinearity, as in Sec. 3)

and the output layer gives the logits, normalized or not (`norm_logits`): the paper does not apply
LayerNorm to the last layer, while its BatchNorm baseline normalizes every layer.
"""

from torch import nn

from lnpaper.norms import BatchNorm, LayerNorm

NORMS = {"batchnorm": BatchNorm, "layernorm": LayerNorm, "none": None}


class MLP(nn.Module):
    """sizes = (inputs, hidden..., classes); norm in NORMS; returns logits (N, classes).

    Introduced in notebook 01. With a normalizer a linear layer has no bias of its own: for
    BatchNorm it would be subtracted again with the mean, and the paper writes a = W x with the
    bias b acting after normalization. Without one (norm="none", or an un-normalized output layer)
    the linear layers keep their bias.
    """

    def __init__(self, sizes=(64, 128, 128, 10), norm: str = "layernorm", norm_logits=False):
        super().__init__()
        sizes = tuple(sizes)
        if len(sizes) < 2 or not all(isinstance(s, int) and s > 0 for s in sizes):
            raise ValueError(f"sizes must be at least two positive ints, got {sizes!r}")
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {tuple(NORMS)}, got {norm!r}")
        if norm_logits and norm == "none":
            raise ValueError("norm_logits=True needs a normalizer, got norm='none'")
        self.sizes, self.norm, self.norm_logits = sizes, norm, bool(norm_logits)
        make_norm = NORMS[norm]
        layers = []
        for k, (width_in, width_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            is_output = k == len(sizes) - 2
            normalized = make_norm is not None and (not is_output or self.norm_logits)
            layers.append(nn.Linear(width_in, width_out, bias=not normalized))
            if normalized:
                layers.append(make_norm(width_out))
            if not is_output:
                layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        if x.ndim != 2 or x.shape[1] != self.sizes[0]:
            raise ValueError(
                f"MLP{self.sizes} expects input (N, {self.sizes[0]}), got shape {tuple(x.shape)}"
            )
        return self.layers(x)

    def extra_repr(self) -> str:
        return f"sizes={self.sizes}, norm={self.norm!r}, norm_logits={self.norm_logits}"
