"""Recurrent cells, plain and normalized, and one loop that runs any of them over a sequence.

Introduced in notebook 03 (LayerNorm in recurrent networks); notebook 01's M4 experiment reads the
plain LSTM's summed inputs through the same loop. A recurrent layer applies the same weights at
every step to its summed inputs

    a_t = W_h h_{t-1} + W_x x_t,

so whatever normalizes a_t must work at every step. LayerNorm takes its statistics over the units
of a_t at step t alone (Ba et al. 2016, Sec. 3.1): nothing is stored across steps, and a test
sequence may be of any length. BatchNorm needs statistics per step (Cooijmans et al. 2016, and
`lnpaper.RecurrentBatchNorm`).

Every cell maps one step, `cell(x_t, state, step) -> (state, terms)`: `state` is a tuple ((h, c) for
an LSTM, (h,) otherwise), `terms` names the summed inputs computed on the way so an experiment can
read them without a second copy of the cell. `unroll` runs a cell over a batch of sequences.

- `LSTMCell`: torch.nn.LSTMCell written out, same parameters (tests/test_recurrent.py checks it)
- `LayerNormLSTMCell`: Ba et al. 2016, supplement Eq. 20-22
- `CellStateLayerNormLSTMCell`: LayerNorm on c_t alone, DRAW's cell (supplement Eq. 29-31)
- `BatchNormLSTMCell`: Cooijmans et al. 2016, Sec. 3
- `GRUCell`, `LayerNormGRUCell`: Ba et al. 2016, supplement Eq. 23-25 and 26-28
- `TanhRNNCell`, `LayerNormTanhRNNCell`: the vanilla RNN and its LN version (Sec. 3.1)
- `lnpaper.models.seed_batched_classifier.SeedBatchedClassifier`: many seeds (or learning rates)
  of one classifier as one batched model, the same numbers as the per-seed models, at a fraction of
  the cost (notebook 03's training runs)

LSTM gates are stacked in PyTorch's order [i; f; g; o] (the supplement writes [f; i; o; g]). The
order is only a naming: LayerNorm's statistics over the whole stacked vector do not depend on it.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import (
    check_choice,
    check_flag,
    check_floating,
    check_gain_init,
    check_positive_int,
)
from lnpaper.norms import LayerNorm, RecurrentBatchNorm


def _uniform(*shape, bound: float) -> nn.Parameter:
    """U(-bound, bound), drawn in the order parameters are created (torch's RNN init)."""
    return nn.Parameter(torch.empty(shape).uniform_(-bound, bound))


def _layer_norm(width: int, gain_init: float, eps: float) -> LayerNorm:
    norm = LayerNorm(width, eps=eps)
    with torch.no_grad():
        norm.weight.fill_(gain_init)
    return norm


class RecurrentCell(nn.Module):
    """What every cell shares: its sizes, the zero initial state and the check of one step's input.

    Weights start as torch's recurrent layers start them, U(-1/sqrt(H), 1/sqrt(H)), created input
    weights first, then recurrent ones: with one seed, every cell draws the same W_x and W_h.
    """

    state_count = 1  # how many tensors of shape (N, hidden) the state holds

    def __init__(self, inputs: int, hidden: int):
        super().__init__()
        self.input_size = check_positive_int("inputs", inputs)
        self.hidden_size = check_positive_int("hidden", hidden)
        self.init_bound = 1 / math.sqrt(hidden)

    def initial_state(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """h_0 = 0 (and c_0 = 0) for a batch shaped like x (N, T, inputs)."""
        zeros = x.new_zeros(x.shape[0], self.hidden_size)
        return tuple(zeros.clone() for _ in range(self.state_count))

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class LSTMCell(RecurrentCell):
    """The LSTM of torch.nn.LSTMCell, with its parameters (weight_ih, weight_hh, bias_ih, bias_hh):

        [i; f; g; o] = (W_x x_t + b_x) + (W_h h_{t-1} + b_h)
        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
        h_t = sigmoid(o) * tanh(c_t)

    `load_state_dict` of an nn.LSTMCell gives the same function. Terms: "W_x x_t" and "W_h h_t-1"
    (each with its bias, as torch keeps two), "a_t" their sum.
    """

    state_count = 2

    def __init__(self, inputs: int, hidden: int):
        super().__init__(inputs, hidden)
        bound = self.init_bound
        self.weight_ih = _uniform(4 * hidden, inputs, bound=bound)  # W_x
        self.weight_hh = _uniform(4 * hidden, hidden, bound=bound)  # W_h
        self.bias_ih = _uniform(4 * hidden, bound=bound)  # b_x
        self.bias_hh = _uniform(4 * hidden, bound=bound)  # b_h

    def forward(self, x, state, step: int = 0):
        h, c = state
        input_term = F.linear(x, self.weight_ih, self.bias_ih)  # W_x x_t + b_x
        recurrent_term = F.linear(h, self.weight_hh, self.bias_hh)  # W_h h_{t-1} + b_h
        gates = input_term + recurrent_term
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return (h, c), {"W_x x_t": input_term, "W_h h_t-1": recurrent_term, "a_t": gates}


class LayerNormLSTMCell(RecurrentCell):
    """The LN-LSTM of Ba et al. 2016, supplement Eq. 20-22:

        [f; i; o; g] = LN(W_h h_{t-1}; g1, b1) + LN(W_x x_t; g2, b2) + b      (20)
        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)                      (21)
        h_t = sigmoid(o) * tanh(LN(c_t; g3, b3))                               (22)

    The first two LayerNorms each take one mean and one variance over the whole stacked 4H vector,
    not one per gate, and each term is normalized on its own, so the input cannot drown out the
    recurrence (or the reverse). The cell recurrence (21) is left alone: c_t is normalized only on
    its way into the output tanh. Statistics come from step t alone, so `step` is ignored.
    Gains start at `gain_init` (1.0, as in the paper), biases at 0; the weights carry no bias of
    their own (b1, b2 and b act after normalizing).
    """

    state_count = 2

    def __init__(self, inputs: int, hidden: int, gain_init: float = 1.0, eps: float = 1e-5):
        super().__init__(inputs, hidden)
        gain_init = check_gain_init(gain_init)
        self.weight_ih = _uniform(4 * hidden, inputs, bound=self.init_bound)  # W_x
        self.weight_hh = _uniform(4 * hidden, hidden, bound=self.init_bound)  # W_h
        self.bias = nn.Parameter(torch.zeros(4 * hidden))  # b
        self.norm_hh = _layer_norm(4 * hidden, gain_init, eps)  # g1, b1: over all 4H units
        self.norm_ih = _layer_norm(4 * hidden, gain_init, eps)  # g2, b2
        self.norm_c = _layer_norm(hidden, gain_init, eps)  # g3, b3

    def forward(self, x, state, step: int = 0):
        h, c = state
        recurrent_term = F.linear(h, self.weight_hh)  # W_h h_{t-1}
        input_term = F.linear(x, self.weight_ih)  # W_x x_t
        # (20); the lines stay within 88 columns, as notebook 03 prints this method
        gates = self.norm_hh(recurrent_term) + self.norm_ih(input_term) + self.bias
        i, f, g, o = gates.chunk(4, dim=1)
        # (21), not normalized
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(self.norm_c(c))  # (22)
        terms = {"W_x x_t": input_term, "W_h h_t-1": recurrent_term, "a_t": gates}
        return (h, c), terms


class CellStateLayerNormLSTMCell(LSTMCell):
    """The LSTM of Ba et al.'s DRAW experiment (Sec. 6.4), supplement Eq. 29-31: LayerNorm on the
    cell state alone, on its way into the output tanh,

        [f; i; o; g] = W_h h_{t-1} + W_x x_t + b                (29)
        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)        (30)
        h_t = sigmoid(o) * tanh(LN(c_t; g, b))                   (31)

    The gates are the plain LSTM's, unnormalized (the authors' Torch `LSTM_LN.lua` is this cell).
    It is `LSTMCell` plus one LayerNorm, so from one seed it draws the plain LSTM's weights and
    biases (b is torch's two biases summed): the two arms of the DRAW miniature start alike but for
    LN. Its gain starts at `gain_init`, its bias at 0. Introduced for notebook 03's DRAW miniature
    (`lnpaper.models.draw`).
    """

    def __init__(self, inputs: int, hidden: int, gain_init: float = 1.0, eps: float = 1e-5):
        super().__init__(inputs, hidden)
        self.norm_c = _layer_norm(hidden, check_gain_init(gain_init), eps)  # g, b

    def forward(self, x, state, step: int = 0):
        h, c = state
        input_term = F.linear(x, self.weight_ih, self.bias_ih)  # W_x x_t + b_x
        recurrent_term = F.linear(h, self.weight_hh, self.bias_hh)  # W_h h_{t-1} + b_h
        gates = input_term + recurrent_term  # (29), b = b_x + b_h
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)  # (30)
        h = torch.sigmoid(o) * torch.tanh(self.norm_c(c))  # (31)
        return (h, c), {"W_x x_t": input_term, "W_h h_t-1": recurrent_term, "a_t": gates}


class RawInputLayerNormLSTMCell(LayerNormLSTMCell):
    """A control for the LN-LSTM, not a model of the paper: Eq. 20 with the input term left
    unnormalized,

        [f; i; o; g] = LN(W_h h_{t-1}; g1, b1) + W_x x_t + b

    and (21)-(22) as in the LN-LSTM. With one pixel per step (notebook 04's T = 64), W_x x_t is a
    column of W_x times the pixel, and LN over its 4H units divides the pixel's value back out: it
    keeps whether a pixel is inked, not how dark it is. Here the pixel reaches the gates as in the
    plain LSTM. From one seed it draws the LN-LSTM's W_x and W_h (the LayerNorm it leaves out draws
    nothing)."""

    def __init__(self, inputs: int, hidden: int, gain_init: float = 1.0, eps: float = 1e-5):
        super().__init__(inputs, hidden, gain_init=gain_init, eps=eps)
        del self.norm_ih

    def forward(self, x, state, step: int = 0):
        h, c = state
        recurrent_term = F.linear(h, self.weight_hh)
        input_term = F.linear(x, self.weight_ih)
        # (20), with W_x x_t as it is
        gates = self.norm_hh(recurrent_term) + input_term + self.bias
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(self.norm_c(c))
        terms = {"W_x x_t": input_term, "W_h h_t-1": recurrent_term, "a_t": gates}
        return (h, c), terms


class BatchNormLSTMCell(RecurrentCell):
    """The BN-LSTM of Cooijmans et al. 2016, Sec. 3, with statistics per time step:

        [i; f; g; o] = BN_t(W_h h_{t-1}; g_h, 0) + BN_t(W_x x_t; g_x, 0) + b
        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
        h_t = sigmoid(o) * tanh(BN_t(c_t; g_c, b_c))

    BN_t is `lnpaper.RecurrentBatchNorm`: batch statistics of step t in training, the stored ones of
    step min(t, T_max - 1) at inference (T_max = `max_steps`). Gains start at 0.1 (theirs: gains of
    1 saturate the gates), biases at 0; no BatchNorm in the cell update. The two gate terms have no
    bias of their own (their sum has b), as in the paper.
    """

    state_count = 2

    def __init__(self, inputs: int, hidden: int, max_steps: int, gain_init: float = 0.1):
        super().__init__(inputs, hidden)
        gain_init = check_gain_init(gain_init)
        self.weight_ih = _uniform(4 * hidden, inputs, bound=self.init_bound)  # W_x
        self.weight_hh = _uniform(4 * hidden, hidden, bound=self.init_bound)  # W_h
        self.bias = nn.Parameter(torch.zeros(4 * hidden))  # b
        self.norm_hh = RecurrentBatchNorm(4 * hidden, max_steps, gain_init=gain_init, bias=False)
        self.norm_ih = RecurrentBatchNorm(4 * hidden, max_steps, gain_init=gain_init, bias=False)
        self.norm_c = RecurrentBatchNorm(hidden, max_steps, gain_init=gain_init)

    def forward(self, x, state, step: int = 0):
        h, c = state
        recurrent_term = F.linear(h, self.weight_hh)  # W_h h_{t-1}
        input_term = F.linear(x, self.weight_ih)  # W_x x_t
        gates = self.norm_hh(recurrent_term, step) + self.norm_ih(input_term, step) + self.bias
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(self.norm_c(c, step))
        return (h, c), {"W_x x_t": input_term, "W_h h_t-1": recurrent_term, "a_t": gates}


class GRUCell(RecurrentCell):
    """The GRU of Ba et al. 2016, supplement Eq. 23-25 (bias terms added, as in torch):

        [z; r] = W_h h_{t-1} + W_x x_t                                  (23)
        h~_t = tanh(W x_t + sigmoid(r) * (U h_{t-1}))                    (24)
        h_t = (1 - sigmoid(z)) * h_{t-1} + sigmoid(z) * h~_t             (25)

    Rows of weight_ih are [W_x (z, r); W], of weight_hh [W_h (z, r); U]. torch.nn.GRUCell computes
    the same function with z renamed: its z is this 1 - sigmoid(z), i.e. its z rows are minus these.
    """

    def __init__(self, inputs: int, hidden: int):
        super().__init__(inputs, hidden)
        bound = self.init_bound
        self.weight_ih = _uniform(3 * hidden, inputs, bound=bound)  # [W_x; W]
        self.weight_hh = _uniform(3 * hidden, hidden, bound=bound)  # [W_h; U]
        self.bias_ih = _uniform(3 * hidden, bound=bound)
        self.bias_hh = _uniform(3 * hidden, bound=bound)

    def forward(self, x, state, step: int = 0):
        (h,) = state
        H = self.hidden_size
        input_term = F.linear(x, self.weight_ih, self.bias_ih)
        recurrent_term = F.linear(h, self.weight_hh, self.bias_hh)
        z, r = (input_term[:, : 2 * H] + recurrent_term[:, : 2 * H]).chunk(2, dim=1)  # (23)
        candidate = torch.tanh(
            input_term[:, 2 * H :] + torch.sigmoid(r) * recurrent_term[:, 2 * H :]
        )
        h = (1 - torch.sigmoid(z)) * h + torch.sigmoid(z) * candidate  # (25)
        return (h,), {"W_x x_t": input_term, "W_h h_t-1": recurrent_term}


class LayerNormGRUCell(RecurrentCell):
    """The LN-GRU of Ba et al. 2016, supplement Eq. 26-28:

        [z; r] = LN(W_h h_{t-1}; g1, b1) + LN(W_x x_t; g2, b2)             (26)
        h~_t = tanh(LN(W x_t; g3, b3) + sigmoid(r) * LN(U h_{t-1}; g4, b4))  (27)
        h_t = (1 - sigmoid(z)) * h_{t-1} + sigmoid(z) * h~_t                 (28)

    Four LayerNorms, each over its own term: the two gate terms over their stacked 2H units, W x and
    U h over H. The LNs' biases are the only biases.
    """

    def __init__(self, inputs: int, hidden: int, gain_init: float = 1.0, eps: float = 1e-5):
        super().__init__(inputs, hidden)
        gain_init = check_gain_init(gain_init)
        self.weight_ih = _uniform(3 * hidden, inputs, bound=self.init_bound)  # [W_x; W]
        self.weight_hh = _uniform(3 * hidden, hidden, bound=self.init_bound)  # [W_h; U]
        self.norm_gates_hh = _layer_norm(2 * hidden, gain_init, eps)  # g1, b1
        self.norm_gates_ih = _layer_norm(2 * hidden, gain_init, eps)  # g2, b2
        self.norm_candidate_ih = _layer_norm(hidden, gain_init, eps)  # g3, b3
        self.norm_candidate_hh = _layer_norm(hidden, gain_init, eps)  # g4, b4

    def forward(self, x, state, step: int = 0):
        (h,) = state
        H = self.hidden_size
        input_term = F.linear(x, self.weight_ih)  # [W_x x_t; W x_t]
        recurrent_term = F.linear(h, self.weight_hh)  # [W_h h_{t-1}; U h_{t-1}]
        gates = self.norm_gates_hh(recurrent_term[:, : 2 * H]) + self.norm_gates_ih(
            input_term[:, : 2 * H]
        )  # (26)
        z, r = gates.chunk(2, dim=1)
        candidate = torch.tanh(
            self.norm_candidate_ih(input_term[:, 2 * H :])
            + torch.sigmoid(r) * self.norm_candidate_hh(recurrent_term[:, 2 * H :])
        )  # (27)
        h = (1 - torch.sigmoid(z)) * h + torch.sigmoid(z) * candidate  # (28)
        return (h,), {"W_x x_t": input_term, "W_h h_t-1": recurrent_term}


class TanhRNNCell(RecurrentCell):
    """The vanilla RNN of Ba et al. 2016, Sec. 3.1:  a_t = W_h h_{t-1} + W_x x_t,  h_t = tanh(a_t + b).

    torch.nn.RNNCell with its two biases summed into b."""

    def __init__(self, inputs: int, hidden: int):
        super().__init__(inputs, hidden)
        self.weight_ih = _uniform(hidden, inputs, bound=self.init_bound)  # W_x
        self.weight_hh = _uniform(hidden, hidden, bound=self.init_bound)  # W_h
        self.bias = _uniform(hidden, bound=self.init_bound)  # b

    def forward(self, x, state, step: int = 0):
        (h,) = state
        a = F.linear(h, self.weight_hh) + F.linear(x, self.weight_ih)  # a_t
        return (torch.tanh(a + self.bias),), {"a_t": a}


class LayerNormTanhRNNCell(RecurrentCell):
    """The LN RNN of Ba et al. 2016, Sec. 3.1:

        a_t = W_h h_{t-1} + W_x x_t
        h_t = tanh(g / sigma_t * (a_t - mu_t) + b),   mu_t, sigma_t over the H units of a_t

    Multiplying W_h and W_x by any s > 0 multiplies a_t by s and leaves h_t unchanged (up to eps):
    the scale of the summed inputs cannot grow or shrink from step to step (R2).
    """

    def __init__(self, inputs: int, hidden: int, gain_init: float = 1.0, eps: float = 1e-5):
        super().__init__(inputs, hidden)
        self.weight_ih = _uniform(hidden, inputs, bound=self.init_bound)  # W_x
        self.weight_hh = _uniform(hidden, hidden, bound=self.init_bound)  # W_h
        self.norm = _layer_norm(hidden, check_gain_init(gain_init), eps)  # g, b

    def forward(self, x, state, step: int = 0):
        (h,) = state
        a = F.linear(h, self.weight_hh) + F.linear(x, self.weight_ih)  # a_t
        return (torch.tanh(self.norm(a)),), {"a_t": a}


def unroll(cell: RecurrentCell, x: torch.Tensor, keep=(), state=None):
    """Run `cell` over x (N, T, inputs) from h_0 = 0 (or `state`).

    Returns the hidden states h_1..h_T as (N, T, hidden) and, for each name in `keep`, that term of
    every step stacked to (N, T, .). Step t (0-based) is passed to the cell: BatchNorm needs it.
    """
    check_floating(x, "unroll")
    if x.ndim != 3 or x.shape[2] != cell.input_size or x.shape[1] < 1:
        raise ValueError(
            f"{type(cell).__name__} expects sequences (N, T, {cell.input_size}) with T >= 1, "
            f"got shape {tuple(x.shape)}"
        )
    state = cell.initial_state(x) if state is None else state
    hiddens, kept = [], {name: [] for name in keep}
    for t in range(x.shape[1]):
        state, terms = cell(x[:, t], state, t)
        hiddens.append(state[0])
        for name in keep:
            if name not in terms:
                raise ValueError(f"{type(cell).__name__} has no term {name!r}: {sorted(terms)}")
            kept[name].append(terms[name])
    return torch.stack(hiddens, dim=1), {n: torch.stack(v, dim=1) for n, v in kept.items()}


class SequenceClassifier(nn.Module):
    """A recurrent cell over (N, T, inputs) and a linear readout: logits of the last step (N, classes),
    or of every step (N, T, classes) with `every_step=True` (notebook 01's stream task)."""

    def __init__(self, cell: RecurrentCell, classes: int, every_step: bool = False):
        super().__init__()
        if not isinstance(cell, RecurrentCell):
            raise ValueError(f"cell must be a RecurrentCell (make_cell), got {type(cell).__name__}")
        self.cell = cell
        self.readout = nn.Linear(cell.hidden_size, check_positive_int("classes", classes))
        self.every_step = check_flag("every_step", every_step)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden, _ = unroll(self.cell, x)
        return self.readout(hidden if self.every_step else hidden[:, -1])


CELLS = (
    "lstm",
    "ln-lstm",
    "ln-lstm-raw-input",
    "ln-c-lstm",
    "bn-lstm",
    "gru",
    "ln-gru",
    "rnn",
    "ln-rnn",
)


def make_cell(
    kind: str, inputs: int, hidden: int, *, max_steps: int | None = None, gain_init=None
) -> RecurrentCell:
    """One cell by name (CELLS). `max_steps` (T_max, the longest training length) is needed by
    "bn-lstm", whose per-step statistics it sizes; the other cells keep no per-step state, so for
    them it changes nothing, but it is still checked (a positive int), so that one call with the
    training length builds any cell (as the experiments of notebook 03 do). `gain_init` (normalized
    cells only) defaults to each paper's choice: 1.0 for LayerNorm, 0.1 for BatchNorm."""
    check_choice("cell", kind, CELLS)
    if gain_init is not None and kind in ("lstm", "gru", "rnn"):
        raise ValueError(f"cell {kind!r} has no normalizer, so no gain_init (got {gain_init!r})")
    if max_steps is not None:  # the training length, checked for every cell (see the docstring)
        max_steps = check_positive_int("max_steps", max_steps)
    if kind == "bn-lstm":
        if max_steps is None:
            raise ValueError("cell 'bn-lstm' needs max_steps (T_max, the longest training length)")
        gain = 0.1 if gain_init is None else gain_init
        return BatchNormLSTMCell(inputs, hidden, max_steps, gain_init=gain)
    normalized = {
        "ln-lstm": LayerNormLSTMCell,
        "ln-lstm-raw-input": RawInputLayerNormLSTMCell,
        "ln-c-lstm": CellStateLayerNormLSTMCell,
        "ln-gru": LayerNormGRUCell,
        "ln-rnn": LayerNormTanhRNNCell,
    }
    if kind in normalized:
        return normalized[kind](inputs, hidden, gain_init=1.0 if gain_init is None else gain_init)
    return {"lstm": LSTMCell, "gru": GRUCell, "rnn": TanhRNNCell}[kind](inputs, hidden)
