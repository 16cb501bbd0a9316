"""Many seeds of one recurrent classifier as one model: `SeedBatchedClassifier`.

A CPU spends most of a small recurrent net's step on the overhead of launching tiny operations.
Training S seeds one after another pays it S times; stacking the S copies of every weight along
a leading seed axis pays it once, with torch.bmm doing S independent products. The seeds never
mix: the loss is the sum of the S per-seed losses, so each copy gets its own gradient, and Adam
is elementwise, so each copy takes the step it would take alone.

The step of each cell of `lnpaper.models.recurrent` is written here again over the seed axis
(notebook 03's training runs); tests/test_recurrent.py holds each seed to its own model run alone,
and tests/test_twins.py fails when `make_cell` builds a cell, or a cell takes an argument, that
this step does not compute.
"""

import copy

import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import check_floating
from lnpaper.models.recurrent import (
    BatchNormLSTMCell,
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


def _batched_linear(x, weight, bias=None):
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


class SeedBatchedClassifier(nn.Module):
    """S `SequenceClassifier`s of one kind of cell, one per seed, run as one model.

    Made from the S per-seed models (`SeedBatchedClassifier(models)`), so every seed starts from
    exactly the weights it has alone; parameters and BatchNorm buffers become (S, ...) tensors,
    named as in the per-seed model with "." replaced by "__". Input x is (S, N, T, inputs): each
    seed reads its own minibatch; the output is the last step's logits (S, N, classes), or every
    step's (S, N, T, classes) for models built with `every_step=True`. Every cell of `CELLS` is
    supported: "lstm", "ln-lstm", "ln-lstm-raw-input", "bn-lstm", "gru", "ln-gru", "rnn",
    "ln-rnn".
    `per_seed(s)` gives seed s back as an ordinary model (tests compare the two). Setting
    `statistics_steps` = k makes a BN-LSTM in eval mode use the statistics of step k - 1 for
    every step >= k, as if T_max were k (notebook 04's T_max inside the transient).
    """

    KINDS = {
        LSTMCell: "lstm",
        LayerNormLSTMCell: "ln-lstm",
        RawInputLayerNormLSTMCell: "ln-lstm-raw-input",
        BatchNormLSTMCell: "bn-lstm",
        LayerNormGRUCell: "ln-gru",
        GRUCell: "gru",
        TanhRNNCell: "rnn",
        LayerNormTanhRNNCell: "ln-rnn",
    }

    def __init__(self, models: list):
        super().__init__()
        if not models:
            raise ValueError("SeedBatchedClassifier needs at least one model (one per seed)")
        kinds = {type(m.cell) for m in models}
        if len(kinds) != 1 or next(iter(kinds)) not in self.KINDS:
            names = sorted(k.__name__ for k in kinds)
            raise ValueError(
                f"SeedBatchedClassifier stacks models of one cell type among "
                f"{sorted(k.__name__ for k in self.KINDS)}, got {names}"
            )
        if len({m.every_step for m in models}) != 1:
            raise ValueError("SeedBatchedClassifier's models read out alike: every_step all equal")
        self.every_step = models[0].every_step
        self._template = (models[0],)  # a tuple: not a submodule, its parameters not ours
        cell = models[0].cell
        self.kind = self.KINDS[type(cell)]
        self.seeds = len(models)
        self.hidden_size = cell.hidden_size
        self.input_size = cell.input_size
        states = [m.state_dict() for m in models]
        for name, _ in models[0].named_parameters():
            stacked = torch.stack([s[name] for s in states]).clone()
            self.register_parameter(name.replace(".", "__"), nn.Parameter(stacked))
        for name, _ in models[0].named_buffers():  # (S, T_max, C) kept as (T_max, S * C)
            stacked = torch.stack([s[name] for s in states]).transpose(0, 1)
            self.register_buffer(name.replace(".", "__"), stacked.flatten(1).contiguous())
        self.statistics_steps = None  # BN-LSTM at inference: a T_max below max_steps, if set
        if self.kind == "bn-lstm":
            self.max_steps = cell.norm_c.max_steps
            self.momentum = cell.norm_c.momentum
            self.bn_eps = cell.norm_c.eps
        if self.kind in ("ln-lstm", "ln-lstm-raw-input", "ln-gru", "ln-rnn"):
            eps = {m.eps for m in cell.modules() if isinstance(m, LayerNorm)}
            if len(eps) != 1:  # step reads one eps for all of a cell's norms
                raise ValueError(f"SeedBatchedClassifier needs one eps per cell, got {eps}")
            (self.ln_eps,) = eps

    def p(self, name: str) -> torch.Tensor:
        """A parameter or buffer by its per-seed name, e.g. p("cell.norm_c.weight")."""
        return getattr(self, name.replace(".", "__"))

    def stacked(self) -> dict:
        """Every parameter and buffer by its per-seed name, seed axis first: (S, ...)."""
        return dict(self._named_stacked())

    def per_seed(self, s: int) -> nn.Module:
        """Seed s as an ordinary SequenceClassifier (a copy)."""
        model = copy.deepcopy(self._template[0])
        model.load_state_dict({name: value[s] for name, value in self._named_stacked()})
        return model.train(self.training)

    def _named_stacked(self):
        for name, _ in self._template[0].named_parameters():
            yield name, self.p(name).detach()
        for name, buffer in self._template[0].named_buffers():
            yield name, self.p(name).view(buffer.shape[0], self.seeds, -1).transpose(0, 1)

    def _layer_norm(self, a, name):
        return _batched_layer_norm(a, self.p(name + ".weight"), self.p(name + ".bias"), self.ln_eps)

    def _batch_norm(self, a, name, step: int):
        """RecurrentBatchNorm of step `step` for each seed: statistics over the N axis of (S, N, C).

        The S seeds' C units sit side by side as S * C channels of one fused F.batch_norm (batch
        statistics of step t, running estimates of row t moved toward the batch mean and unbiased
        variance by `momentum`; at inference row min(t, T_max - 1)): the same rule, one kernel."""
        if self.training and step >= self.max_steps:
            raise ValueError(
                f"BN-LSTM got step {step} in training mode, but max_steps = {self.max_steps}"
            )
        limit = self.statistics_steps or self.max_steps
        t = min(step, limit - 1)  # beyond T_max: the statistics of T_max - 1
        seeds, count, units = a.shape
        bias = getattr(self, name.replace(".", "__") + "__bias", None)
        y = F.batch_norm(
            a.transpose(0, 1).reshape(count, seeds * units),
            self.p(name + ".running_mean")[t],  # (S * C,) rows of (T_max, S * C) buffers
            self.p(name + ".running_var")[t],
            weight=self.p(name + ".weight").flatten(),
            bias=None if bias is None else bias.flatten(),
            training=self.training,
            momentum=self.momentum,
            eps=self.bn_eps,
        )
        return y.view(count, seeds, units).transpose(0, 1)

    def step(self, x, state, t: int):
        """One step of all S cells: x (S, N, inputs), state a tuple of (S, N, H)."""
        H = self.hidden_size
        if self.kind in ("rnn", "ln-rnn"):  # Ba et al. Sec. 3.1
            (h,) = state
            a = _batched_linear(h, self.p("cell.weight_hh")) + _batched_linear(
                x, self.p("cell.weight_ih")
            )  # a_t
            if self.kind == "rnn":
                return (torch.tanh(a + self.p("cell.bias")[:, None]),)
            return (torch.tanh(self._layer_norm(a, "cell.norm")),)
        if self.kind == "gru":
            (h,) = state
            inputs = _batched_linear(x, self.p("cell.weight_ih"), self.p("cell.bias_ih"))
            recurrent = _batched_linear(h, self.p("cell.weight_hh"), self.p("cell.bias_hh"))
            z, r = (inputs[..., : 2 * H] + recurrent[..., : 2 * H]).chunk(2, dim=-1)  # (23)
            candidate = torch.tanh(
                inputs[..., 2 * H :] + torch.sigmoid(r) * recurrent[..., 2 * H :]
            )  # (24)
            return ((1 - torch.sigmoid(z)) * h + torch.sigmoid(z) * candidate,)  # (25)
        if self.kind == "ln-gru":
            (h,) = state
            inputs = _batched_linear(x, self.p("cell.weight_ih"))  # [W_x x_t; W x_t]
            recurrent = _batched_linear(h, self.p("cell.weight_hh"))  # [W_h h; U h]
            gates = self._layer_norm(recurrent[..., : 2 * H], "cell.norm_gates_hh")
            gates = gates + self._layer_norm(inputs[..., : 2 * H], "cell.norm_gates_ih")  # (26)
            z, r = gates.chunk(2, dim=-1)
            candidate = torch.tanh(
                self._layer_norm(inputs[..., 2 * H :], "cell.norm_candidate_ih")
                + torch.sigmoid(r)
                * self._layer_norm(recurrent[..., 2 * H :], "cell.norm_candidate_hh")
            )  # (27)
            return ((1 - torch.sigmoid(z)) * h + torch.sigmoid(z) * candidate,)  # (28)
        h, c = state
        if self.kind == "lstm":
            gates = _batched_linear(x, self.p("cell.weight_ih"), self.p("cell.bias_ih"))
            gates = gates + _batched_linear(h, self.p("cell.weight_hh"), self.p("cell.bias_hh"))
        else:
            recurrent = _batched_linear(h, self.p("cell.weight_hh"))  # W_h h_{t-1}
            inputs = _batched_linear(x, self.p("cell.weight_ih"))  # W_x x_t
            if self.kind == "ln-lstm":  # Eq. 20
                gates = self._layer_norm(recurrent, "cell.norm_hh") + self._layer_norm(
                    inputs, "cell.norm_ih"
                )
            elif self.kind == "ln-lstm-raw-input":  # Eq. 20 without LN on W_x x_t
                gates = self._layer_norm(recurrent, "cell.norm_hh") + inputs
            else:
                gates = self._batch_norm(recurrent, "cell.norm_hh", t) + self._batch_norm(
                    inputs, "cell.norm_ih", t
                )
            gates = gates + self.p("cell.bias")[:, None]
        squashed = torch.sigmoid(gates)  # one launch for the three sigmoid gates (g's is unused)
        i, f, _, o = squashed.chunk(4, dim=-1)
        c = f * c + i * torch.tanh(gates[..., 2 * H : 3 * H])
        if self.kind == "lstm":
            out = c
        elif self.kind in ("ln-lstm", "ln-lstm-raw-input"):
            out = self._layer_norm(c, "cell.norm_c")  # Eq. 22
        else:
            out = self._batch_norm(c, "cell.norm_c", t)
        return o * torch.tanh(out), c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_floating(x, "SeedBatchedClassifier")
        if x.ndim != 4 or x.shape[0] != self.seeds or x.shape[3] != self.input_size:
            raise ValueError(
                f"SeedBatchedClassifier expects (seeds={self.seeds}, N, T, {self.input_size}), "
                f"got shape {tuple(x.shape)}"
            )
        zeros = x.new_zeros(self.seeds, x.shape[1], self.hidden_size)
        one_state = ("gru", "ln-gru", "rnn", "ln-rnn")  # h alone; an LSTM carries (h, c)
        state = (zeros,) if self.kind in one_state else (zeros, zeros.clone())
        hidden = []
        for t in range(x.shape[2]):
            state = self.step(x[:, :, t], state, t)
            if self.every_step:
                hidden.append(state[0])
        if not self.every_step:
            return _batched_linear(state[0], self.p("readout.weight"), self.p("readout.bias"))
        every = torch.stack(hidden, dim=2)  # (S, N, T, H)
        logits = _batched_linear(
            every.flatten(1, 2), self.p("readout.weight"), self.p("readout.bias")
        )
        return logits.unflatten(1, every.shape[1:3])
