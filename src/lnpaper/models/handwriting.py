"""Graves' (2013) handwriting prediction network, the model of the companion's miniature of Ba et
al. 2016, Sec. 6.5 (notebook 03, on the generated pen strokes of `lnpaper.data.strokes`).

The network reads a line of pen offsets x_t = (dx, dy, e), e = 1 where the pen lifts, and at every
step predicts the next offset as a mixture of M bivariate Gaussians for (dx, dy) and a Bernoulli for
e (Graves 2013, Sec. 4, Eq. 15-23). Its LSTM layers are stacked with skip connections: every
layer reads the input as well as the layer below, and the output reads every layer:

    h^1_t = LSTM_1(x_t),    h^l_t = LSTM_l([x_t, h^(l-1)_t]),    y_t = W [h^1_t, ..., h^L_t] + b

and y_t is split into the end-of-stroke logit and, per component j, a mixture logit, two means,
two log scales and a correlation's pre-tanh value. The loss is the negative log likelihood of the
next offset, in nats per predicted point. The paper's network is Graves' conditional one (a
window on the text being written); this is the unconditional one, because the claim's mechanism
(long sequences, small batches) needs no text and a window's alignment would dominate a short run.

Each sigma is exp(.) plus a floor (`SIGMA_FLOOR`, in the data's unit-sd coordinates) so that a
component cannot collapse onto one point and send the likelihood to infinity; both arms have it.

The model is a population: S copies (one per seed), every weight with a leading seed axis, the
layers stepped as `SeedBatchedCells`; one network is S = 1. Cells: "lstm" and "ln-lstm" (Eq. 20-22).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import check_choice, check_positive_int
from lnpaper.models.recurrent import make_cell
from lnpaper.models.seed_batched_classifier import SeedBatchedCells, SeedStack, batched_linear

HANDWRITING_CELLS = ("lstm", "ln-lstm")
INPUTS = 3  # dx, dy, end of stroke
SIGMA_FLOOR = 1e-3
RHO_LIMIT = 1 - 1e-5  # |rho| below it, so that 1 - rho^2 stays positive in float32
LOG_TWO_PI = math.log(2 * math.pi)


class StrokePredictor(nn.Module):
    """S handwriting prediction networks, one per entry of `seeds`: seed s's weights are those drawn
    after torch.manual_seed(s) (the caller's random state is left as it was); `layers` LSTM layers
    of `hidden` units with skip connections, and `mixtures` Gaussian components."""

    def __init__(
        self,
        cell: str = "lstm",
        *,
        seeds=(0,),
        hidden: int = 32,
        layers: int = 2,
        mixtures: int = 8,
    ):
        super().__init__()
        self.cell = check_choice("cell", cell, HANDWRITING_CELLS)
        self.hidden = check_positive_int("hidden", hidden)
        self.layers = check_positive_int("layers", layers)
        self.mixtures = check_positive_int("mixtures", mixtures)
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ValueError("StrokePredictor needs at least one seed")
        per_layer = [[] for _ in range(layers)]
        heads = []
        with torch.random.fork_rng():
            for seed in seeds:
                torch.manual_seed(seed)
                for index, cells in enumerate(per_layer):
                    cells.append(make_cell(cell, INPUTS + (index > 0) * hidden, hidden))
                heads.append(nn.Linear(layers * hidden, 1 + 6 * mixtures))
        self.seeds = len(seeds)
        self.stack = nn.ModuleList(SeedBatchedCells(cells) for cells in per_layer)
        self.head = SeedStack(heads)

    def _check(self, offsets) -> None:
        if offsets.ndim != 4 or offsets.shape[0] != self.seeds or offsets.shape[3] != INPUTS:
            raise ValueError(
                f"offsets must be (seeds={self.seeds}, N, T + 1, {INPUTS}), got shape "
                f"{tuple(offsets.shape)}"
            )
        if offsets.shape[2] < 2:
            raise ValueError("offsets need at least 2 steps (read one, predict one), got 1")
        if not torch.isfinite(offsets).all():
            raise ValueError("offsets must be finite")

    def outputs(self, x, reset_every: int | None = None, summed_inputs: list | None = None):
        """y_t for every step of x (S, N, T, 3): (S, N, T, 1 + 6M). With `reset_every` = k the
        layers' states go back to zero before every k-th step (the check that what a line's
        earlier points say matters). `summed_inputs`, a list, receives each step's (S, L)
        root mean square of every layer's summed inputs W_h h_(t-1) + W_x x_t before any norm."""
        states = [cells.initial_state(x.shape[1], x) for cells in self.stack]
        tops = []
        for t, x_t in enumerate(x.unbind(2)):
            if reset_every is not None and t > 0 and t % reset_every == 0:
                states = [cells.initial_state(x.shape[1], x) for cells in self.stack]
            below, outputs, sizes = None, [], []
            for index, cells in enumerate(self.stack):
                inputs = x_t if below is None else torch.cat([x_t, below], dim=-1)
                if summed_inputs is not None:
                    summed = batched_linear(states[index][0], cells.p("weight_hh"))
                    summed = summed + batched_linear(inputs, cells.p("weight_ih"))
                    sizes.append(summed.pow(2).mean((1, 2)).sqrt())
                states[index] = cells.step(inputs, states[index], t)
                below = states[index][0]
                outputs.append(below)
            if summed_inputs is not None:
                summed_inputs.append(torch.stack(sizes, dim=1))
            tops.append(torch.cat(outputs, dim=-1))
        every = torch.stack(tops, dim=2)  # (S, N, T, L H)
        y = batched_linear(every.flatten(1, 2), self.head.p("weight"), self.head.p("bias"))
        return y.view(*every.shape[:3], -1)

    def mixture(self, y) -> dict:
        """The mixture's parameters from y (..., 1 + 6M): Graves' Eq. 18-22, with the sigma
        floor and |rho| < 1."""
        m = self.mixtures
        eos, logits, mu_x, mu_y, log_sx, log_sy, rho = y.split([1] + [m] * 6, dim=-1)
        return {
            "eos_logit": eos.squeeze(-1),
            "log_pi": torch.log_softmax(logits, dim=-1),
            "mu": (mu_x, mu_y),
            "sigma": (log_sx.exp() + SIGMA_FLOOR, log_sy.exp() + SIGMA_FLOOR),
            "rho": torch.tanh(rho) * RHO_LIMIT,
        }

    def point_nll(self, offsets, reset_every: int | None = None) -> torch.Tensor:
        """-log p(x_(t+1) | x_0..x_t) in nats for every predicted point: (S, N, T) from offsets
        (S, N, T + 1, 3) (read steps 0..T-1, predict 1..T)."""
        self._check(offsets)
        if reset_every is not None:
            reset_every = check_positive_int("reset_every", reset_every)
        params = self.mixture(self.outputs(offsets[:, :, :-1], reset_every))
        target = offsets[:, :, 1:]
        dx, dy, lift = (v[..., None] for v in target.unbind(-1))
        (mu_x, mu_y), (s_x, s_y), rho = params["mu"], params["sigma"], params["rho"]
        z_x, z_y = (dx - mu_x) / s_x, (dy - mu_y) / s_y
        one_minus = 1 - rho**2
        log_density = (
            -LOG_TWO_PI
            - torch.log(s_x)
            - torch.log(s_y)
            - 0.5 * torch.log(one_minus)
            - (z_x**2 + z_y**2 - 2 * rho * z_x * z_y) / (2 * one_minus)
        )  # log N(dx, dy | component j), Graves' Eq. 24-25
        pen = F.binary_cross_entropy_with_logits(
            params["eos_logit"], lift.squeeze(-1), reduction="none"
        )
        return pen - torch.logsumexp(params["log_pi"] + log_density, dim=-1)

    def forward(self, offsets) -> torch.Tensor:
        """Each seed's mean NLL per predicted point, (S,): offsets (S, N, T + 1, 3)."""
        return self.point_nll(offsets).mean((1, 2))

    @torch.no_grad()
    def summed_input_rms(self, offsets) -> torch.Tensor:
        """(S, L, T): the root mean square, over a batch's rows and units, of each layer's summed
        inputs at each step (before any norm), in eval mode: whether their scale drifts along a
        line, the instability Ba et al.'s Sec. 3.1 names for long sequences."""
        self._check(offsets)
        training = self.training
        self.eval()
        sizes = []
        self.outputs(offsets[:, :, :-1], summed_inputs=sizes)
        self.train(training)
        return torch.stack(sizes, dim=2)
