"""Chapter 02's variants: each LayerNorm of the wild with the eps of the code it comes from, and notebook
02's variants_vs_scale running each with that eps.

The eps is read back from a variant's output, not from its signature: on a row whose spread is near
eps, the output's size says where eps sits and how large it is."""

import pytest
import torch

from lnpaper.chapters.ch02_transpose import runs as transpose
from lnpaper.chapters.ch02_transpose import variants

SPREAD = 1e-5  # a row this small makes an eps of 1e-6 a tenth of the divisor


def centered_row(width: int = 64, seed: int = 0) -> torch.Tensor:
    row = SPREAD * torch.randn(3, width, generator=torch.Generator().manual_seed(seed))
    row = row.double()
    return row - row.mean(dim=-1, keepdim=True)


def divisor(variant, x: torch.Tensor, **kwargs) -> torch.Tensor:
    """The number each row was divided by: every variant returns (a - mu) / divisor."""
    return x.norm(dim=-1) / variant(x, **kwargs).norm(dim=-1)


def biased_std(x):
    return x.pow(2).mean(dim=-1).sqrt()


def unbiased_var(x):
    return x.pow(2).sum(dim=-1) / (x.shape[-1] - 1)


def test_the_authors_torch_module_adds_1e_5_to_the_biased_std():
    x = centered_row()
    eps = divisor(variants.eps_outside_sqrt, x) - biased_std(x)
    torch.testing.assert_close(eps, torch.full_like(eps, 1e-5), rtol=1e-9, atol=0)


def test_the_annotated_transformer_adds_1e_6_to_the_unbiased_std():
    x = centered_row()
    eps = divisor(variants.unbiased_std_eps_outside, x) - unbiased_var(x).sqrt()
    torch.testing.assert_close(eps, torch.full_like(eps, 1e-6), rtol=1e-9, atol=0)


def test_x_var_slip_adds_nn_layernorms_1e_5_inside_the_sqrt():
    x = centered_row()
    eps = divisor(variants.unbiased_var_eps_inside, x).pow(2) - unbiased_var(x)
    torch.testing.assert_close(eps, torch.full_like(eps, 1e-5), rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", list(transpose.VARIANTS))
def test_variants_vs_scale_runs_each_variant_with_its_default_eps(name):
    variant, eps = transpose.VARIANTS[name]
    x = centered_row()
    assert torch.equal(variant(x, eps=eps), variant(x))


def test_variants_vs_scale_says_which_eps_it_used(no_store):
    result = transpose.variants_vs_scale(stds=(1e-4, 1.0), rows=8)
    assert result.eps == {name: eps for name, (_, eps) in transpose.VARIANTS.items()}
    assert result.reference_eps == 1e-5
    # At std 1e-4 the Annotated Transformer's eps of 1e-6 is 1% of its divisor, against 10% for
    # 1e-5: its curve sits above the Torch module's there, although it divides by the larger std.
    annotated = result.ratios["unbiased std, eps outside (Annotated Transformer)"]
    torch_module = result.ratios["eps outside the sqrt"]
    assert annotated[0] > torch_module[0]
