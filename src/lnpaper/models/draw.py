"""DRAW without attention (Gregor et al. 2015), the model of the companion's miniature of Ba et al.
2016, Sec. 6.4 (notebook 03, on the fixed binarization `lnpaper.data.digits.binarized`).

DRAW is a variational autoencoder that draws an image in T glimpses. An encoder LSTM reads the
image and the error of the canvas so far, a Gaussian posterior gives a latent z_t, and a decoder
LSTM turns z_t into an update of the canvas (Gregor et al., Eq. 3-8, with read and write
without attention):

    x^_t = x - sigmoid(c_(t-1))                       the error image
    h^enc_t = LSTM_enc([x, x^_t, h^dec_(t-1)])          read: the image and its error
    mu_t, log sigma_t = W_mu h^enc_t + b_mu, W_s h^enc_t + b_s
    z_t = mu_t + sigma_t * eps_t,  eps_t ~ N(0, I)     the reparameterization trick
    h^dec_t = LSTM_dec(z_t)
    c_t = c_(t-1) + W_w h^dec_t + b_w                   write: a linear map to the 64 pixels

from c_0 = 0 and zero states. The loss is the negative evidence lower bound in nats per image,

    -ELBO = -log Bernoulli(x | sigmoid(c_T)) + sum_t KL(N(mu_t, sigma_t^2) || N(0, I)),

an upper bound on -log p(x): the quantity of the paper's Fig. 4. Both LSTMs are of one kind,
"lstm" or "ln-c-lstm", the LSTM with LayerNorm on c_t alone (supplement Eq. 29-31), the cell Ba
et al. put in DRAW.

The model is a population: S copies (one per seed), every weight with a leading seed axis, the
cells stepped as `SeedBatchedCells`; one model is S = 1. The noise eps is an argument, drawn by
`glimpse_noise` for each seed from its own generator, so a seed sees the same noise whether it
trains alone or in a population.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import check_choice, check_floating, check_int, check_positive_int
from lnpaper.data.digits import PIXELS
from lnpaper.models.recurrent import make_cell
from lnpaper.models.seed_batched_classifier import SeedBatchedCells, SeedStack, batched_linear

DRAW_CELLS = ("lstm", "ln-c-lstm")
NOISE_STREAMS = {"train": 0, "eval": 1}


def glimpse_noise(seeds, stream: str, index: int, shape) -> torch.Tensor:
    """eps for S models, (S, *shape) of N(0, 1): seed s's slice comes from a torch generator seeded
    by numpy's SeedSequence((stream's number, s, index)), so it depends on the seed, the stream
    ("train": index = the update; "eval": index = the noise sample) and the index alone, never on
    which other seeds share the population."""
    check_choice("stream", stream, NOISE_STREAMS)
    index = check_int("index", index, minimum=0)
    slices = []
    for seed in seeds:
        entropy = (NOISE_STREAMS[stream], check_int("seed", seed, minimum=0), index)
        state = int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> 1)
        slices.append(torch.randn(*shape, generator=torch.Generator().manual_seed(state)))
    return torch.stack(slices)


class DRAW(nn.Module):
    """S DRAW models without attention, one per entry of `seeds`: seed s's weights are those drawn
    after torch.manual_seed(s) (the caller's random state is left as it was); encoder and decoder
    cells of kind `cell` with `hidden` units, `latent` dimensions of z per glimpse, `glimpses`
    steps."""

    def __init__(
        self,
        cell: str = "lstm",
        *,
        seeds=(0,),
        hidden: int = 64,
        latent: int = 8,
        glimpses: int = 32,
    ):
        super().__init__()
        self.cell = check_choice("cell", cell, DRAW_CELLS)
        self.hidden = check_positive_int("hidden", hidden)
        self.latent = check_positive_int("latent", latent)
        self.glimpses = check_positive_int("glimpses", glimpses)
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ValueError("DRAW needs at least one seed")
        encoders, decoders, posteriors, writes = [], [], [], []
        with torch.random.fork_rng():
            for seed in seeds:
                torch.manual_seed(seed)
                encoders.append(make_cell(cell, 2 * PIXELS + hidden, hidden))
                decoders.append(make_cell(cell, latent, hidden))
                posteriors.append(nn.Linear(hidden, 2 * latent))  # [W_mu; W_s]
                writes.append(nn.Linear(hidden, PIXELS))  # W_w
        self.seeds = len(seeds)
        self.encoder = SeedBatchedCells(encoders)
        self.decoder = SeedBatchedCells(decoders)
        self.posterior = SeedStack(posteriors)
        self.write = SeedStack(writes)

    def _check(self, images, noise) -> None:
        check_floating(images, "DRAW")
        if images.ndim != 3 or images.shape[0] != self.seeds or images.shape[2] != PIXELS:
            raise ValueError(
                f"images must be (seeds={self.seeds}, N, {PIXELS}), got shape {tuple(images.shape)}"
            )
        other = images[(images != 0) & (images != 1)]
        if other.numel():  # a grey level, or nan
            raise ValueError(
                f"images must be binary (0 or 1), the Bernoulli's outcomes; got {other[0].item()}"
            )
        expected = (*images.shape[:2], self.glimpses, self.latent)
        if tuple(noise.shape) != expected:
            raise ValueError(f"noise must be {expected}, got shape {tuple(noise.shape)}")

    def bound_terms(self, images, noise, cells: dict | None = None):
        """The two terms of -ELBO for every image of images (S, N, 64), with noise (S, N, T, latent):
        the reconstruction -log p(x | c_T), (S, N), and each glimpse's KL, (S, N, T), in nats.
        `cells`, a dict, receives for "encoder" and "decoder" a list of cell states (S, N, H): c_1
        first, c_T last."""
        self._check(images, noise)
        count = images.shape[1]
        canvas = torch.zeros_like(images)
        encoder = self.encoder.initial_state(count, images)
        decoder = self.decoder.initial_state(count, images)
        kl = []
        for t in range(self.glimpses):
            error = images - torch.sigmoid(canvas)  # x^_t
            read = torch.cat([images, error, decoder[0]], dim=-1)
            encoder = self.encoder.step(read, encoder, t)
            posterior = batched_linear(
                encoder[0], self.posterior.p("weight"), self.posterior.p("bias")
            )
            mu, log_sigma = posterior.chunk(2, dim=-1)
            z = mu + log_sigma.exp() * noise[:, :, t]  # the reparameterization trick
            # KL(N(mu, sigma^2) || N(0, 1)) = (mu^2 + sigma^2 - 1 - log sigma^2) / 2 per dimension
            kl.append(0.5 * (mu**2 + (2 * log_sigma).exp() - 1 - 2 * log_sigma).sum(-1))
            decoder = self.decoder.step(z, decoder, t)
            canvas = canvas + batched_linear(
                decoder[0], self.write.p("weight"), self.write.p("bias")
            )
            if cells is not None and t in (0, self.glimpses - 1):
                for name, state in (("encoder", encoder), ("decoder", decoder)):
                    cells.setdefault(name, []).append(state[1])
        reconstruction = F.binary_cross_entropy_with_logits(canvas, images, reduction="none")
        return reconstruction.sum(-1), torch.stack(kl, dim=-1)

    def forward(self, images, noise) -> torch.Tensor:
        """Each seed's -ELBO in nats per image, (S,): images (S, N, 64), noise (S, N, T, latent)."""
        reconstruction, kl = self.bound_terms(images, noise)
        return (reconstruction + kl.sum(-1)).mean(1)
