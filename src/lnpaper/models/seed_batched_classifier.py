"""Many seeds of one recurrent cell as one cell (`SeedBatchedCells`), and of one recurrent
classifier as one model (`SeedBatchedClassifier`).

A CPU spends most of a small recurrent net's step on the overhead of launching tiny operations.
Training S seeds one after another pays it S times; stacking the S copies of every weight along
a leading seed axis pays it once, with torch.bmm doing S independent products. The seeds never
mix: the loss is the sum of the S per-seed losses, so each copy gets its own gradient, and Adam
is elementwise, so each copy takes the step it would take alone.

The step of each cell of `lnpaper.models.recurrent` is written here again over the seed axis
(notebook 03's training runs; the attentive reader of `lnpaper.models.reader` steps its encoders
with it); tests/test_recurrent.py holds each seed to its own model run alone, and
tests/test_twins.py fails when `make_cell` builds a cell, or a cell takes an argument, that this
step does not compute.
"""

import copy

import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import check_floating
from lnpaper.models.recurrent import (
    BatchNormLSTMCell,
    CellStateLayerNormLSTMCell,
    GRUCell,
    LayerNormGRUCell,
    LayerNormLSTMCell,
    LayerNormTanhRNNCell,
    LSTMCell,
    RawInputLayerNormLSTMCell,
    TanhRNNCell,
)
from lnpaper.norms import LayerNorm

# The arguments a cell's constructor may take, each honoured by `step`: the sizes from the stacked
# tensors, gain_init through the stacked gains, eps and max_steps read from the cell's norms.
CELL_ARGUMENTS = ("inputs", "hidden", "gain_init", "eps", "max_steps")


def batched_linear(x, weight, bias=None):
    """x (S, N, in) @ W^T for each of S weights (S, out, in), + b (S, out)."""
    if bias is None:
        return torch.bmm(x, weight.transpose(1, 2))
    return torch.baddbmm(bias[:, None], x, weight.transpose(1, 2))


def _batched_layer_norm(a, gain, bias, eps: float):
    """g * (a - mu) / sqrt(sigma^2 + eps) + b over the last axis; g, b (S, D) per seed.

    torch's fused kernel normalizes (the same function as `lnpaper.LayerNorm`, which composes it
    from centered squares: they agree to float32 roundoff; the fused one launches one operation
    instead of six, which is what a recurrent step's cost is made of here)."""
    return torch.addcmul(bias[:, None], F.layer_norm(a, a.shape[-1:], eps=eps), gain[:, None])


class SeedStack(nn.Module):
    """The parameters and buffers of S copies of one module, one per seed, stacked on a leading
    seed axis and named as in the module with "." replaced by "__". A buffer of per-step
    statistics (T_max, C) is kept as (T_max, S * C), the layout one fused F.batch_norm reads."""

    def __init__(self, modules: list):
        super().__init__()
        self._template = (modules[0],)  # a tuple: not a submodule, its parameters not ours
        self.seeds = len(modules)
        states = [m.state_dict() for m in modules]
        for name, _ in modules[0].named_parameters():
            stacked = torch.stack([s[name] for s in states]).clone()
            self.register_parameter(name.replace(".", "__"), nn.Parameter(stacked))
        for name, _ in modules[0].named_buffers():
            stacked = torch.stack([s[name] for s in states]).transpose(0, 1)
            self.register_buffer(name.replace(".", "__"), stacked.flatten(1).contiguous())

    def p(self, name: str) -> torch.Tensor:
        """A parameter or buffer by its per-seed name, e.g. p("norm_c.weight")."""
        return getattr(self, name.replace(".", "__"))

    def named_stacked(self):
        """(per-seed name, tensor with the seed axis first) for every parameter and buffer."""
        for name, _ in self._template[0].named_parameters():
            yield name, self.p(name).detach()
        for name, buffer in self._template[0].named_buffers():
            yield name, self.p(name).view(buffer.shape[0], self.seeds, -1).transpose(0, 1)


class SeedBatchedCells(SeedStack):
    """S recurrent cells of one kind (`lnpaper.models.recurrent.make_cell`), one per seed, stepped
    as one: `step(x, state, t)` with x (S, N, inputs) and a state of (S, N, H) tensors.

    Made from the S per-seed cells, so every seed starts from exactly the weights it has alone.
    Setting `statistics_steps` = k makes a BN-LSTM in eval mode use the statistics of step k - 1
    for every step >= k, as if T_max were k (notebook 04's T_max inside the transient). `rows`,
    (S, N) bool, makes a BN-LSTM in training take its statistics over the rows marked True alone
    (rows of a padded batch that hold text); the others are normalized by them too.
    """

    KINDS = {
        LSTMCell: "lstm",
        LayerNormLSTMCell: "ln-lstm",
        RawInputLayerNormLSTMCell: "ln-lstm-raw-input",
        CellStateLayerNormLSTMCell: "ln-c-lstm",
        BatchNormLSTMCell: "bn-lstm",
        LayerNormGRUCell: "ln-gru",
        GRUCell: "gru",
        TanhRNNCell: "rnn",
        LayerNormTanhRNNCell: "ln-rnn",
    }

    def __init__(self, cells: list):
        if not cells:
            raise ValueError("SeedBatchedCells needs at least one cell (one per seed)")
        kinds = {type(cell) for cell in cells}
        if len(kinds) != 1 or next(iter(kinds)) not in self.KINDS:
            names = sorted(k.__name__ for k in kinds)
            raise ValueError(
                f"seed-batched cells must be of one cell type among "
                f"{sorted(k.__name__ for k in self.KINDS)}, got {names}"
            )
        super().__init__(cells)
        cell = cells[0]
        self.kind = self.KINDS[type(cell)]
        self.hidden_size = cell.hidden_size
        self.input_size = cell.input_size
        self.statistics_steps = None  # BN-LSTM at inference: a T_max below max_steps, if set
        if self.kind == "bn-lstm":
            self.max_steps = cell.norm_c.max_steps
            self.momentum = cell.norm_c.momentum
            self.bn_eps = cell.norm_c.eps
        if self.kind in ("ln-lstm", "ln-lstm-raw-input", "ln-c-lstm", "ln-gru", "ln-rnn"):
            eps = {m.eps for m in cell.modules() if isinstance(m, LayerNorm)}
            if len(eps) != 1:  # step reads one eps for all of a cell's norms
                raise ValueError(f"SeedBatchedCells needs one eps per cell, got {eps}")
            (self.ln_eps,) = eps

    def per_seed(self, s: int) -> nn.Module:
        """Seed s as an ordinary cell (a copy)."""
        cell = copy.deepcopy(self._template[0])
        cell.load_state_dict({name: value[s] for name, value in self.named_stacked()})
        return cell.train(self.training)

    def initial_state(self, count: int, like: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """h_0 = 0 (and c_0 = 0), (S, count, H) each, in like's dtype."""
        zeros = like.new_zeros(self.seeds, count, self.hidden_size)
        one_state = ("gru", "ln-gru", "rnn", "ln-rnn")  # h alone; an LSTM carries (h, c)
        return (zeros,) if self.kind in one_state else (zeros, zeros.clone())

    def _layer_norm(self, a, name):
        return _batched_layer_norm(a, self.p(name + ".weight"), self.p(name + ".bias"), self.ln_eps)

    def _batch_norm(self, a, name, step: int, rows=None, frozen=None):
        """RecurrentBatchNorm of step `step` for each seed: statistics over the N axis of (S, N, C).

        The S seeds' C units sit side by side as S * C channels of one fused F.batch_norm (batch
        statistics of step t, running estimates of row t moved toward the batch mean and unbiased
        variance by `momentum`; at inference row min(t, T_max - 1)): the same rule, one kernel.
        In training, `rows` (S, N) bool limits each seed's statistics to the rows marked
        (`_batch_norm_over`), and the seeds marked in `frozen` (S,) bool keep their running
        estimates as they were: a step past the end of their own batch, which a population
        padded to its longest batch still computes."""
        if self.training and step >= self.max_steps:
            raise ValueError(
                f"BN-LSTM got step {step} in training mode, but max_steps = {self.max_steps}"
            )
        limit = self.statistics_steps or self.max_steps
        t = min(step, limit - 1)  # beyond T_max: the statistics of T_max - 1
        seeds, count, units = a.shape
        bias = getattr(self, name.replace(".", "__") + "__bias", None)
        estimates = [self.p(name + ".running_mean")[t], self.p(name + ".running_var")[t]]
        moved = estimates  # (S * C,) rows of (T_max, S * C) buffers, moved in place
        if self.training and frozen is not None:  # moved on copies, kept where frozen
            moved = [estimate.clone() for estimate in estimates]
        if rows is not None and self.training:
            y = self._batch_norm_over(a, rows, moved, name, bias)
        else:
            y = F.batch_norm(
                a.transpose(0, 1).reshape(count, seeds * units),
                *moved,
                weight=self.p(name + ".weight").flatten(),
                bias=None if bias is None else bias.flatten(),
                training=self.training,
                momentum=self.momentum,
                eps=self.bn_eps,
            )
            y = y.view(count, seeds, units).transpose(0, 1)
        if moved is not estimates:
            kept = frozen.repeat_interleave(units)  # (S * C,): the frozen seeds' channels
            for estimate, copy in zip(estimates, moved, strict=True):
                estimate.copy_(torch.where(kept, estimate, copy))
        return y

    def _batch_norm_over(self, a, rows, estimates, name, bias):
        """BatchNorm in training with each seed's statistics over its `rows` alone (S, N): the
        batch mean and biased variance normalize, the unbiased variance moves `estimates` (the
        running mean and variance, (S * C,) each). A seed with fewer than two such rows at this
        step (the longest passage alone) takes its statistics over every row, as plain BatchNorm
        does: one row has no variance."""
        weights = rows.to(a.dtype)[..., None]  # (S, N, 1)
        too_few = weights.sum(1, keepdim=True) < 2
        weights = torch.where(too_few, torch.ones_like(weights), weights)
        counted = weights.sum(1)  # (S, 1)
        mean = (a * weights).sum(1) / counted  # (S, C)
        squares = ((a - mean[:, None]) ** 2 * weights).sum(1)
        with torch.no_grad():
            running_mean, running_var = estimates
            running_mean.lerp_(mean.flatten(), self.momentum)
            running_var.lerp_((squares / (counted - 1)).flatten(), self.momentum)
        y = (a - mean[:, None]) / torch.sqrt(squares[:, None] / counted[:, None] + self.bn_eps)
        y = y * self.p(name + ".weight")[:, None]
        return y if bias is None else y + bias[:, None]

    def step(self, x, state, t: int, rows=None, frozen=None):
        """One step of all S cells: x (S, N, inputs), state a tuple of (S, N, H); `rows` and
        `frozen` as in `_batch_norm`, for a BN-LSTM."""
        H = self.hidden_size
        if self.kind in ("rnn", "ln-rnn"):  # Ba et al. Sec. 3.1
            (h,) = state
            a = batched_linear(h, self.p("weight_hh")) + batched_linear(x, self.p("weight_ih"))
            if self.kind == "rnn":
                return (torch.tanh(a + self.p("bias")[:, None]),)
            return (torch.tanh(self._layer_norm(a, "norm")),)
        if self.kind == "gru":
            (h,) = state
            inputs = batched_linear(x, self.p("weight_ih"), self.p("bias_ih"))
            recurrent = batched_linear(h, self.p("weight_hh"), self.p("bias_hh"))
            z, r = (inputs[..., : 2 * H] + recurrent[..., : 2 * H]).chunk(2, dim=-1)  # (23)
            candidate = torch.tanh(
                inputs[..., 2 * H :] + torch.sigmoid(r) * recurrent[..., 2 * H :]
            )  # (24)
            return ((1 - torch.sigmoid(z)) * h + torch.sigmoid(z) * candidate,)  # (25)
        if self.kind == "ln-gru":
            (h,) = state
            inputs = batched_linear(x, self.p("weight_ih"))  # [W_x x_t; W x_t]
            recurrent = batched_linear(h, self.p("weight_hh"))  # [W_h h; U h]
            gates = self._layer_norm(recurrent[..., : 2 * H], "norm_gates_hh")
            gates = gates + self._layer_norm(inputs[..., : 2 * H], "norm_gates_ih")  # (26)
            z, r = gates.chunk(2, dim=-1)
            candidate = torch.tanh(
                self._layer_norm(inputs[..., 2 * H :], "norm_candidate_ih")
                + torch.sigmoid(r) * self._layer_norm(recurrent[..., 2 * H :], "norm_candidate_hh")
            )  # (27)
            return ((1 - torch.sigmoid(z)) * h + torch.sigmoid(z) * candidate,)  # (28)
        h, c = state
        if self.kind in ("lstm", "ln-c-lstm"):  # Eq. 29: the plain LSTM's gates
            gates = batched_linear(x, self.p("weight_ih"), self.p("bias_ih"))
            gates = gates + batched_linear(h, self.p("weight_hh"), self.p("bias_hh"))
        else:
            recurrent = batched_linear(h, self.p("weight_hh"))  # W_h h_{t-1}
            inputs = batched_linear(x, self.p("weight_ih"))  # W_x x_t
            if self.kind == "ln-lstm":  # Eq. 20
                gates = self._layer_norm(recurrent, "norm_hh") + self._layer_norm(inputs, "norm_ih")
            elif self.kind == "ln-lstm-raw-input":  # Eq. 20 without LN on W_x x_t
                gates = self._layer_norm(recurrent, "norm_hh") + inputs
            else:
                gates = self._batch_norm(recurrent, "norm_hh", t, rows, frozen) + self._batch_norm(
                    inputs, "norm_ih", t, rows, frozen
                )
            gates = gates + self.p("bias")[:, None]
        squashed = torch.sigmoid(gates)  # one launch for the three sigmoid gates (g's is unused)
        i, f, _, o = squashed.chunk(4, dim=-1)
        c = f * c + i * torch.tanh(gates[..., 2 * H : 3 * H])
        return o * torch.tanh(self.cell_output(c, t, rows, frozen)), c

    def cell_output(self, c, t: int, rows=None, frozen=None):
        """An LSTM's c_t as its output squashes it, h_t = o * tanh(.): c_t itself, LN(c_t)
        (Eq. 22 and 31) or the BN-LSTM's BN_t(c_t)."""
        if self.kind == "lstm":
            return c
        if self.kind in ("ln-lstm", "ln-lstm-raw-input", "ln-c-lstm"):
            return self._layer_norm(c, "norm_c")  # Eq. 22 and 31
        return self._batch_norm(c, "norm_c", t, rows, frozen)


class SeedBatchedClassifier(nn.Module):
    """S `SequenceClassifier`s of one kind of cell, one per seed, run as one model: its cells as
    one `SeedBatchedCells` (`.cell`) and its readouts stacked (`.readout`).

    Made from the S per-seed models (`SeedBatchedClassifier(models)`), so every seed starts from
    exactly the weights it has alone. Input x is (S, N, T, inputs): each seed reads its own
    minibatch; the output is the last step's logits (S, N, classes), or every step's (S, N, T,
    classes) for models built with `every_step=True`. Every cell of `CELLS` is supported: "lstm",
    "ln-lstm", "ln-lstm-raw-input", "ln-c-lstm", "bn-lstm", "gru", "ln-gru", "rnn", "ln-rnn".
    `per_seed(s)` gives seed s back as an ordinary model (tests compare the two), and
    `statistics_steps` is the cells' (`SeedBatchedCells`).
    """

    def __init__(self, models: list):
        super().__init__()
        if not models:
            raise ValueError("SeedBatchedClassifier needs at least one model (one per seed)")
        if len({m.every_step for m in models}) != 1:
            raise ValueError("SeedBatchedClassifier's models read out alike: every_step all equal")
        self.cell = SeedBatchedCells([m.cell for m in models])
        self.readout = SeedStack([m.readout for m in models])
        self.every_step = models[0].every_step
        self._template = (models[0],)
        self.kind = self.cell.kind
        self.seeds = len(models)
        self.input_size = self.cell.input_size

    @property
    def statistics_steps(self) -> int | None:
        return self.cell.statistics_steps

    @statistics_steps.setter
    def statistics_steps(self, steps: int | None) -> None:
        self.cell.statistics_steps = steps

    def p(self, name: str) -> torch.Tensor:
        """A parameter or buffer by its per-seed name, e.g. p("cell.norm_c.weight")."""
        part, rest = name.split(".", 1)
        return getattr(self, part).p(rest)

    def stacked(self) -> dict:
        """Every parameter and buffer by its per-seed name, seed axis first: (S, ...)."""
        return {
            f"{part}.{name}": value
            for part in ("cell", "readout")
            for name, value in getattr(self, part).named_stacked()
        }

    def per_seed(self, s: int) -> nn.Module:
        """Seed s as an ordinary SequenceClassifier (a copy)."""
        model = copy.deepcopy(self._template[0])
        model.load_state_dict({name: value[s] for name, value in self.stacked().items()})
        return model.train(self.training)

    def step(self, x, state, t: int):
        """One step of all S cells: x (S, N, inputs), state a tuple of (S, N, H)."""
        return self.cell.step(x, state, t)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_floating(x, "SeedBatchedClassifier")
        if x.ndim != 4 or x.shape[0] != self.seeds or x.shape[3] != self.input_size:
            raise ValueError(
                f"SeedBatchedClassifier expects (seeds={self.seeds}, N, T, {self.input_size}), "
                f"got shape {tuple(x.shape)}"
            )
        state = self.cell.initial_state(x.shape[1], x)
        hidden = []
        for t in range(x.shape[2]):
            state = self.cell.step(x[:, :, t], state, t)
            if self.every_step:
                hidden.append(state[0])
        weight, bias = self.p("readout.weight"), self.p("readout.bias")
        if not self.every_step:
            return batched_linear(state[0], weight, bias)
        every = torch.stack(hidden, dim=2)  # (S, N, T, H)
        logits = batched_linear(every.flatten(1, 2), weight, bias)
        return logits.unflatten(1, every.shape[1:3])
