"""The generated language of notebook 06: seeded, follows its rule, and its entropy floor is right."""

import math

import pytest
import torch

from lnpaper.data.synthetic_language import SyntheticLanguage


def test_same_seed_same_language_and_samples():
    a, b = SyntheticLanguage(seed=3), SyntheticLanguage(seed=3)
    assert torch.equal(a.transition, b.transition)
    assert torch.equal(a.sample(5, 12, seed=1), b.sample(5, 12, seed=1))
    assert not torch.equal(a.sample(5, 12, seed=1), a.sample(5, 12, seed=2))
    assert not torch.equal(a.transition, SyntheticLanguage(seed=4).transition)


def test_each_context_allows_exactly_branching_next_tokens():
    language = SyntheticLanguage(vocab_size=10, branching=3)
    rows = language.transition.reshape(-1, 10)
    torch.testing.assert_close(rows.sum(dim=1), torch.ones(100, dtype=torch.float64))
    assert ((rows > 0).sum(dim=1) == 3).all()


def test_samples_only_use_allowed_transitions():
    language = SyntheticLanguage(vocab_size=12, branching=2)
    x = language.sample(200, 20, seed=0)
    assert x.dtype == torch.int64 and x.shape == (200, 20)
    probs = language.transition[x[:, :-2], x[:, 1:-1], x[:, 2:]]
    assert (probs > 0).all()


def test_pair_distribution_is_stationary():
    language = SyntheticLanguage()
    pi = language.pair_distribution
    torch.testing.assert_close(torch.einsum("ab,abc->bc", pi, language.transition), pi)
    assert abs(pi.sum().item() - 1) < 1e-12


def test_entropy_levels_are_ordered_and_match_samples():
    language = SyntheticLanguage(vocab_size=16, branching=3)
    levels = language.levels()
    assert levels.uniform == pytest.approx(math.log(16))
    assert levels.uniform >= levels.unigram > levels.bigram > levels.rate > 0
    assert levels.rate <= math.log(3)
    # The rule's own negative log-likelihood on samples estimates the entropy rate.
    x = language.sample(4000, 40, seed=0)
    nll = -language.transition[x[:, :-2], x[:, 1:-1], x[:, 2:]].log().mean().item()
    assert abs(nll - levels.rate) < 0.01


def test_entropy_floor_is_the_true_models_loss_over_all_targets():
    language = SyntheticLanguage(vocab_size=8, branching=2)
    length = 6
    x = language.sample(40000, length, seed=0)
    pi = language.pair_distribution
    first = pi[x[:, 0], x[:, 1]] / pi.sum(dim=1)[x[:, 0]]  # P(x_1 | x_0)
    rest = language.transition[x[:, :-2], x[:, 1:-1], x[:, 2:]]
    nll = -(first.log().sum() + rest.log().sum()) / (x.shape[0] * (length - 1))
    assert abs(nll.item() - language.entropy_floor(length)) < 0.01
    assert language.entropy_floor(length) > language.levels().rate


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"vocab_size": 1}, "vocab_size"),
        ({"vocab_size": 5, "branching": 6}, "branching"),
        ({"branching": 0}, "branching"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SyntheticLanguage(**kwargs)


def test_bad_sample_sizes_are_refused():
    language = SyntheticLanguage()
    with pytest.raises(ValueError, match="length"):
        language.sample(3, 1, seed=0)
    with pytest.raises(ValueError, match="n must"):
        language.sample(0, 5, seed=0)
    with pytest.raises(ValueError, match="length"):
        language.entropy_floor(1)
