"""A small generated language for the Transformer experiments of notebook 06: no download, seeded.

The language is a second-order Markov chain over `vocab_size` tokens with sparse, skewed transitions:
every context (the two previous tokens a, b) allows only `branching` next tokens, with probabilities
drawn once from a Dirichlet(1) distribution. So a model has three things to learn, each visible as a
step down in its loss:

1. the unigram frequencies (loss falls from ln V to the marginal entropy H(x_t));
2. which tokens follow the previous token (a bigram model: H(x_t | x_{t-1}));
3. which follow the previous *two*: the rule itself. This needs attention to the token before the
   previous one, so a model without working attention stalls at the bigram level.

Because the rule is known, the best possible loss is known too: the *entropy floor*. A sequence
starts from the stationary distribution of the pair chain, so every position t >= 2 has the same
conditional entropy, the entropy rate H(x_t | x_{t-2}, x_{t-1}); position 1 has H(x_1 | x_0). A
next-token loss averaged over positions 1..T-1 cannot go below the average of those
(`SyntheticLanguage.entropy_floor`). Every number is in nats, like a cross-entropy loss.
"""

import math
from dataclasses import dataclass

import torch

from lnpaper.arguments import check_int, check_positive_int


@dataclass(frozen=True)
class EntropyLevels:
    """What each level of knowledge buys, in nats per token (stationary chain)."""

    uniform: float  # ln V: a model that knows nothing
    unigram: float  # H(x_t): token frequencies only
    bigram: float  # H(x_t | x_{t-1}): the previous token only
    rate: float  # H(x_t | x_{t-2}, x_{t-1}): the rule (the entropy rate)


class SyntheticLanguage:
    """A seeded second-order Markov language; `sample(n, length, seed)` draws token sequences."""

    def __init__(self, vocab_size: int = 16, branching: int = 3, seed: int = 0):
        vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        branching = check_positive_int("branching", branching)
        if branching > vocab_size:
            raise ValueError(f"branching must be an int in 1..{vocab_size}, got {branching!r}")
        seed = check_int("seed", seed)
        self.vocab_size, self.branching, self.seed = vocab_size, branching, seed
        generator = torch.Generator().manual_seed(seed)
        v = vocab_size
        # transition[a, b, c] = P(x_t = c | x_{t-2} = a, x_{t-1} = b): `branching` nonzeros per row.
        transition = torch.zeros(v, v, v, dtype=torch.float64)
        for a in range(v):
            for b in range(v):
                allowed = torch.randperm(v, generator=generator)[:branching]
                weights = -torch.log(
                    torch.rand(branching, generator=generator, dtype=torch.float64)
                )
                transition[a, b, allowed] = weights / weights.sum()  # Dirichlet(1, ..., 1)
        self.transition = transition
        self.pair_distribution = self._stationary_pairs()  # pi(a, b)

    def _stationary_pairs(self) -> torch.Tensor:
        """pi(a, b) of the chain on pairs: pi(b, c) = sum_a pi(a, b) P(c | a, b), by power iteration
        from the uniform distribution over pairs."""
        v = self.vocab_size
        pi = torch.full((v, v), 1.0 / v**2, dtype=torch.float64)
        for _ in range(5000):
            new = torch.einsum("ab,abc->bc", pi, self.transition)
            if (new - pi).abs().max() < 1e-15:
                break
            pi = new
        return pi / pi.sum()

    def levels(self) -> EntropyLevels:
        """The loss of a model that knows nothing, the unigrams, the bigrams, and the full rule."""
        pi = self.pair_distribution
        p_next = torch.einsum("ab,abc->abc", pi, self.transition)  # joint of (a, b, c)
        unigram = pi.sum(dim=0)  # marginal of b
        bigram_joint = p_next.sum(dim=0)  # joint of (b, c)
        return EntropyLevels(
            uniform=math.log(self.vocab_size),
            unigram=_entropy(unigram),
            bigram=_entropy(bigram_joint) - _entropy(unigram),  # H(b, c) - H(b)
            rate=_entropy(p_next) - _entropy(pi),  # H(a, b, c) - H(a, b)
        )

    def entropy_floor(self, length: int) -> float:
        """The lowest possible next-token loss averaged over targets x_1..x_{length-1}."""
        if check_int("length", length) < 2:
            raise ValueError(f"length must be >= 2 to have a next token, got {length}")
        pi = self.pair_distribution
        first = _entropy(pi) - _entropy(pi.sum(dim=1))  # H(x_1 | x_0) = H(x_0, x_1) - H(x_0)
        return (first + (length - 2) * self.levels().rate) / (length - 1)

    def sample(self, n: int, length: int, seed: int) -> torch.Tensor:
        """n sequences of `length` tokens (int64, shape n x length); the first pair from pi."""
        n = check_positive_int("n", n)
        length = check_int("length", length, minimum=2)
        seed = check_int("seed", seed)
        v = self.vocab_size
        generator = torch.Generator().manual_seed(seed)
        tokens = torch.empty(n, length, dtype=torch.int64)
        pairs = torch.multinomial(self.pair_distribution.flatten(), n, True, generator=generator)
        tokens[:, 0], tokens[:, 1] = pairs // v, pairs % v
        for t in range(2, length):
            probs = self.transition[tokens[:, t - 2], tokens[:, t - 1]]
            tokens[:, t] = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        return tokens


def _entropy(p: torch.Tensor) -> float:
    p = p.flatten()
    p = p[p > 0]
    return float(-(p * p.log()).sum())
