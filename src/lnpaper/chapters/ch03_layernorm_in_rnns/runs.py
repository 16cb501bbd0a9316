"""Experiments of notebook 03, LayerNorm in recurrent networks: the recorded runs behind claims
R1-R4, R3b, R3d-R3f, R4b and R4c, and behind notebook 04's M4b-M4e, R3c, R3g and R6 (the studies
that gather them, and the summaries, are in each notebook's `analysis`; the runs longer than
training are in `runs_lengths`).

- `lnlstm_anatomy` (R1): the LN-LSTM of the supplement's Eq. 20-22 against its written-out formula,
  what its statistics span, and what it does not keep (against the BN-LSTM).
- `rnn_dynamics` (R2): a tanh RNN and its LN version from the same weights at several scales.
- `sequence_training` (R3, R3b, R4, R4b; at T = 64 M4b-M4e, R3c, R3g, R6): one recurrent cell
  trained on the digits over seeds and one learning-rate grid, all seeds and rates trained as one
  batched model (`SeedBatchedClassifier`); `analysis.recurrent_training` and its kin gather one run
  per cell.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.models.recurrent import (
    BatchNormLSTMCell,
    LayerNormLSTMCell,
    LayerNormTanhRNNCell,
    LSTMCell,
    SequenceClassifier,
    TanhRNNCell,
    make_cell,
    unroll,
)
from lnpaper.models.seed_batched_classifier import SeedBatchedClassifier
from lnpaper.train import PerRunAdam, epoch_batches, train_population

F64 = torch.float64


def mean_tanh_slope(scale: float, points: int = 80) -> float:
    """E[1 - tanh^2(s z)] for z ~ N(0, 1): the average slope of tanh on inputs of standard deviation
    s, by Gauss-Hermite quadrature (exact to ~1e-10 here). 0.990 at s = 0.1, 0.606 at s = 1: why
    Cooijmans et al. start BatchNorm's gains at 0.1 (notebook 03)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(points)  # weight exp(-z^2 / 2)
    slope = 1 - np.tanh(scale * nodes) ** 2
    return float(weights @ slope / np.sqrt(2 * np.pi))


# ---- R1: the LN-LSTM, equation by equation -----------------------------------------------------


def layer_norm_by_groups(a, gain, bias, groups: int, eps: float = 1e-5):
    """g * (a - mu) / sqrt(sigma^2 + eps) + b with mu, sigma^2 over each of `groups` equal blocks
    of the last axis: groups = 1 is Eq. 20's LayerNorm over the stacked 4H vector, groups = 4 one
    LayerNorm per gate (what the paper does not do)."""
    blocks = a.unflatten(-1, (groups, -1))
    mu = blocks.mean(-1, keepdim=True)
    var = (blocks - mu).pow(2).mean(-1, keepdim=True)
    return ((blocks - mu) / torch.sqrt(var + eps)).flatten(-2) * gain + bias


def lnlstm_by_hand(cell: LayerNormLSTMCell, x, groups: int = 1):
    """Eq. 20-22 written out with the cell's parameters: hidden states (N, T, H)."""
    h = c = x.new_zeros(x.shape[0], cell.hidden_size)
    ln_hh, ln_ih, ln_c = cell.norm_hh, cell.norm_ih, cell.norm_c
    hiddens = []
    for t in range(x.shape[1]):
        gates = (
            layer_norm_by_groups(h @ cell.weight_hh.T, ln_hh.weight, ln_hh.bias, groups)
            + layer_norm_by_groups(x[:, t] @ cell.weight_ih.T, ln_ih.weight, ln_ih.bias, groups)
            + cell.bias
        )
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(layer_norm_by_groups(c, ln_c.weight, ln_c.bias, 1))
        hiddens.append(h)
    return torch.stack(hiddens, dim=1)


def _randomize_affine(cell: nn.Module, generator) -> None:
    """Gains and biases away from 1 and 0, so that a formula check sees them."""
    with torch.no_grad():
        for name, p in cell.named_parameters():
            if name.startswith("norm") or name == "bias":
                p.add_(0.3 * torch.randn(p.shape, generator=generator, dtype=p.dtype))


def _largest_change(a, b) -> float:
    return (a - b).abs().max().item()


@dataclass
class AnatomyResult:
    inputs: int
    hidden: int
    length: int  # of the test sequences (digits read row by row)
    batch: int
    lstm_parity: float  # max |lnpaper.LSTMCell - torch.nn.LSTMCell| over a sequence, float64
    by_hand_difference: float  # max |LN-LSTM - Eq. 20-22 written out, statistics over 4H|
    per_gate_difference: float  # max |LN-LSTM - the same with one LayerNorm per gate|
    stacked_mean: float  # LN(W_x x) with g = 1, b = 0: max over examples |mean over the 4H units|
    stacked_var_error: float  # max over examples |variance over the 4H units - 1|
    per_gate_mean: float  # max over examples and gates |mean over that gate's H units|
    scale: float  # W_h and W_x multiplied by this
    layernorm_scale_change: float  # max |h_t change|, LN-LSTM with eps = 1e-12
    layernorm_scale_change_eps: float  # the same with the default eps = 1e-5
    lstm_scale_change: float  # the plain LSTM with the same weights
    layernorm_batch_change: float  # example 0's h_t in two batches with different batch-mates
    batchnorm_batch_change: float  # the same for the BN-LSTM in training mode
    layernorm_mode_change: float  # training mode vs eval mode, whole batch
    batchnorm_mode_change: float
    layernorm_stored: int  # numbers kept besides the parameters (buffers)
    batchnorm_stored: int
    max_steps: int  # the BN-LSTM's T_max
    layernorm_longer: float  # LN-LSTM on sequences 4x longer: max |h| (finite, no statistics)
    batchnorm_longer_error: str  # what the BN-LSTM says when trained on them


@experiment
def lnlstm_anatomy(
    *, hidden: int = 16, batch: int = 8, scale: float = 10.0, seed: int = 0
) -> AnatomyResult:
    """R1 (Ba et al. 2016, supplement Eq. 20-22) measured on the digits read row by row, float64.

    The LN-LSTM must equal its equations written out with one LayerNorm over the stacked 4H vector,
    and differ from one LayerNorm per gate; multiplying W_h and W_x by `scale` must leave it
    unchanged (exactly when eps is negligible); it must not depend on the batch, the mode or the
    sequence length, and store nothing but parameters. The BN-LSTM is measured alongside.
    """
    generator = torch.Generator().manual_seed(seed)
    x = digits.load("test", form="rows")[0][:batch].to(F64)
    length = x.shape[1]

    torch.manual_seed(seed)
    ours = LSTMCell(digits.SIDE, hidden).double()
    theirs = nn.LSTMCell(digits.SIDE, hidden).double()
    theirs.load_state_dict(ours.state_dict())
    h = c = torch.zeros(batch, hidden, dtype=F64)
    with torch.no_grad():
        hidden_ours, _ = unroll(ours, x)
        parity = 0.0
        for t in range(length):
            h, c = theirs(x[:, t], (h, c))
            parity = max(parity, _largest_change(hidden_ours[:, t], h))

    def layernorm_lstm(eps: float) -> LayerNormLSTMCell:
        torch.manual_seed(seed)
        cell = LayerNormLSTMCell(digits.SIDE, hidden, eps=eps).double()
        _randomize_affine(cell, torch.Generator().manual_seed(seed))
        return cell

    cell = layernorm_lstm(1e-5)
    with torch.no_grad():
        hidden_cell, terms = unroll(cell, x, keep=("W_x x_t",))
        by_hand = lnlstm_by_hand(cell, x, groups=1)
        per_gate = lnlstm_by_hand(cell, x, groups=4)
        unit_gain = layer_norm_by_groups(terms["W_x x_t"], 1.0, 0.0, groups=1)  # g = 1, b = 0
        gate_means = unit_gain.unflatten(-1, (4, hidden)).mean(-1)

        def scale_change(model) -> float:
            before, _ = unroll(model, x)
            model.weight_hh.mul_(scale)
            model.weight_ih.mul_(scale)
            after, _ = unroll(model, x)
            return _largest_change(before, after)

        lstm = LSTMCell(digits.SIDE, hidden).double()
        lstm.load_state_dict(ours.state_dict())
        lstm.bias_ih.zero_()  # the LN-LSTM's bias acts after normalizing: compare W's alone
        lstm.bias_hh.zero_()
        lstm_change = scale_change(lstm)
        exact_change = scale_change(layernorm_lstm(1e-12))
        eps_change = scale_change(layernorm_lstm(1e-5))

        torch.manual_seed(seed)
        batchnorm = BatchNormLSTMCell(digits.SIDE, hidden, max_steps=length).double()
        _randomize_affine(batchnorm, generator)
        models = {"ln": cell, "bn": batchnorm}
        # Example 0 in two batches with different batch-mates (BatchNorm refuses a batch of one).
        mates = digits.load("test", form="rows")[0][batch : 2 * batch - 1].to(F64)
        other_batch = torch.cat([x[:1], mates])
        batch_change = {
            name: _largest_change(unroll(m, x)[0][0], unroll(m, other_batch)[0][0])
            for name, m in models.items()
        }
        train_mode = {name: unroll(m, x)[0] for name, m in models.items()}
        mode_change = {
            name: _largest_change(train_mode[name], unroll(m.eval(), x)[0])
            for name, m in models.items()
        }
        for m in models.values():
            m.train()
        longer = torch.cat([x] * 4, dim=1)
        layernorm_longer = unroll(cell, longer)[0].abs().max().item()
        try:
            unroll(batchnorm, longer)
            longer_error = "no error"
        except ValueError as error:
            longer_error = str(error)

    def stored(model) -> int:
        return sum(b.numel() for b in model.buffers())

    return AnatomyResult(
        inputs=digits.SIDE,
        hidden=hidden,
        length=length,
        batch=batch,
        lstm_parity=parity,
        by_hand_difference=_largest_change(hidden_cell, by_hand),
        per_gate_difference=_largest_change(hidden_cell, per_gate),
        stacked_mean=unit_gain.mean(-1).abs().max().item(),
        stacked_var_error=(unit_gain.var(-1, correction=0) - 1).abs().max().item(),
        per_gate_mean=gate_means.abs().max().item(),
        scale=scale,
        layernorm_scale_change=exact_change,
        layernorm_scale_change_eps=eps_change,
        lstm_scale_change=lstm_change,
        layernorm_batch_change=batch_change["ln"],
        batchnorm_batch_change=batch_change["bn"],
        layernorm_mode_change=mode_change["ln"],
        batchnorm_mode_change=mode_change["bn"],
        layernorm_stored=stored(cell),
        batchnorm_stored=stored(batchnorm),
        max_steps=length,
        layernorm_longer=layernorm_longer,
        batchnorm_longer_error=longer_error,
    )


# ---- R2: the dynamics of a tanh RNN, with and without LayerNorm ---------------------------------


@dataclass
class DynamicsResult:
    hidden: int
    steps: int
    input_steps: int  # steps 0..input_steps-1 read a digit's rows; the rest read zeros
    examples: int
    scales: list  # W_h and W_x multiplied by each
    summed_rms: dict  # net -> scale -> per step: RMS over units of a_t, mean over examples
    hidden_rms: dict  # net -> scale -> per step: RMS over units of h_t, mean over examples
    sensitivity: dict  # net -> scale -> per step: ||(dh_t / dx_0) v||, geometric mean
    layernorm_difference: list  # per step: max over scales, examples, units of |h_t(s) - h_t(1)|


@experiment
def rnn_dynamics(
    *,
    hidden: int = 64,
    steps: int = 300,
    input_steps: int = 8,
    examples: int = 32,
    scales=(0.5, 1.0, 2.0, 4.0),
    seed: int = 0,
) -> DynamicsResult:
    """R2 (Ba et al. 2016, Sec. 3.1): a tanh RNN and the LN RNN with the same weights, multiplied by
    each of `scales`, read a digit row by row and then run free for the remaining steps (float64).

    W_h has entries N(0, 1/H), so its eigenvalues fill the unit disc and scale s puts the spectral
    radius near s; W_x has entries N(0, 1/8). Without LayerNorm the scale decides whether the
    summed inputs shrink geometrically or grow until tanh saturates; with it the hidden states are
    the same at every scale. `sensitivity` follows a unit perturbation v of the first input row
    through the net (a Jacobian-vector product): how much step t still depends on step 0, the
    quantity whose vanishing or explosion makes long-range learning hard.
    """
    return _dynamics(hidden, steps, input_steps, examples, scales, seed, gain=1.0)


@experiment
def rnn_dynamics_gain(*, gain: float = 1.0, seed: int = 0) -> DynamicsResult:
    """R2's runs for one draw of the weights (`seed`) with the LN RNN's gain g set to `gain` at
    every unit (the paper initializes it to 1): whether the growth of a perturbation per step is
    LayerNorm's or the gain's. Every other argument is rnn_dynamics' default."""
    return _dynamics(64, 300, 8, 32, (0.5, 1.0, 2.0, 4.0), seed, gain=gain)


def _dynamics(hidden, steps, input_steps, examples, scales, seed, gain) -> DynamicsResult:
    """rnn_dynamics' body, with the LN RNN's gain `gain`."""
    x = digits.load("test", form="rows")[0][:examples].to(F64)
    inputs = torch.cat(
        [x[:, :input_steps], x.new_zeros(examples, steps - input_steps, x.shape[2])], 1
    )
    generator = torch.Generator().manual_seed(seed)
    w_hh = torch.randn(hidden, hidden, generator=generator, dtype=F64) / hidden**0.5
    w_ih = torch.randn(hidden, digits.SIDE, generator=generator, dtype=F64) / digits.SIDE**0.5
    direction = torch.randn(examples, digits.SIDE, generator=generator, dtype=F64)
    direction = direction / direction.norm(dim=1, keepdim=True)

    summed, hidden_rms, sensitivity, trajectories = {}, {}, {}, {}
    for net, cell_type in (("tanh RNN", TanhRNNCell), ("LN tanh RNN", LayerNormTanhRNNCell)):
        options = {"gain_init": gain} if cell_type is LayerNormTanhRNNCell else {}
        cell = cell_type(digits.SIDE, hidden, **options).double()
        summed[net], hidden_rms[net], sensitivity[net] = {}, {}, {}
        for s in scales:
            with torch.no_grad():
                cell.weight_hh.copy_(s * w_hh)
                cell.weight_ih.copy_(s * w_ih)
                if net == "tanh RNN":
                    cell.bias.zero_()  # the LN RNN's b is 0 at init too

            def run(first_row, cell=cell):
                return unroll(
                    cell, torch.cat([first_row[:, None], inputs[:, 1:]], 1), keep=("a_t",)
                )

            # torch's forward-mode AD scripts its decompositions on first use and warns that
            # torch.jit.script is deprecated: noise from inside torch, not about this code
            with torch.no_grad(), warnings.catch_warnings():
                warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated")
                (h, terms), (tangent, _) = torch.func.jvp(run, (inputs[:, 0],), (direction,))
            key = float(s)
            summed[net][key] = terms["a_t"].pow(2).mean(-1).sqrt().mean(0).tolist()
            hidden_rms[net][key] = h.pow(2).mean(-1).sqrt().mean(0).tolist()
            sensitivity[net][key] = tangent.norm(dim=-1).log().mean(0).exp().tolist()
            if net == "LN tanh RNN":
                trajectories[key] = h
    reference = trajectories.get(1.0, trajectories[key])
    difference = torch.stack(
        [(h - reference).abs().amax(dim=(0, 2)) for h in trajectories.values()]
    )
    return DynamicsResult(
        hidden=hidden,
        steps=steps,
        input_steps=input_steps,
        examples=examples,
        scales=[float(s) for s in scales],
        summed_rms=summed,
        hidden_rms=hidden_rms,
        sensitivity=sensitivity,
        layernorm_difference=difference.amax(0).tolist(),
    )


# ---- R3, R3b, R4, R4b, M4: training on the digits, one learning-rate grid for every model -------

LR_GRID = (3e-3, 1e-2, 3e-2)  # Adam's learning rates: the same three for every model and task


def blank_tail(x: torch.Tensor, steps: int) -> torch.Tensor:
    """Sequences (N, T, F) followed by `steps` blank (zero) steps: a test longer than training
    whose extra steps carry no information, as the blank border of an image read pixel by pixel."""
    return torch.cat([x, x.new_zeros(x.shape[0], steps, x.shape[2])], dim=1)


@dataclass
class SequenceTrainingResult:
    cell: str
    gain_init: float | None  # None: the cell's default (LayerNorm 1.0, BatchNorm 0.1)
    form: str  # "rows" (T = 8 rows of 8 pixels) or "pixels" (T = 64 single pixels)
    orders: list  # the tasks trained side by side: False reading order, True permuted
    hidden: int
    lrs: list  # the learning-rate grid; every list below is indexed [order][lr][seed]...
    batch_size: int
    seeds: list
    eval_steps: list
    val_loss: list  # [order][lr][seed][eval step], validation NLL in eval mode
    val_accuracy: list
    test_loss: list  # [order][lr][seed][eval step], test NLL at the same steps
    test_accuracy: list
    extra_steps: int  # blank steps appended for the longer test (0: none)
    longer_test_loss: list  # [order][lr][seed] after the last step, test + extra_steps blanks
    longer_test_accuracy: list
    statistics_steps: int | None  # BN-LSTM only: a T_max cut inside the sequence (None: none)
    cut_test_loss: list  # [order][lr][seed] after the last step, statistics of steps >= cut
    cut_test_accuracy: list  # taken from step cut - 1
    # BN-LSTM only, [order][lr][seed] after the last step, every step's statistics averaged over
    # the T_max steps (one estimate shared over time)
    averaged_test_loss: list = field(default_factory=list)
    averaged_test_accuracy: list = field(default_factory=list)


def _average_over_time(model: SeedBatchedClassifier) -> None:
    """Every step's population statistics replaced by their average over the T_max trained steps:
    the mean of the running means and the mean of the running variances, per unit (what one
    BatchNorm shared over time estimates)."""
    for name in ("norm_hh", "norm_ih", "norm_c"):
        for statistic in ("running_mean", "running_var"):
            buffer = model.p(f"cell.{name}.{statistic}")
            buffer.copy_(buffer.mean(0, keepdim=True).expand_as(buffer))


def evaluate_per_model(model, x, y) -> tuple[torch.Tensor, torch.Tensor]:
    """Per model: NLL and accuracy of the batched `model`, model k reading x[k] (N, T, F)."""
    logits = model(x)
    nll = F.cross_entropy(logits.flatten(0, 1), y.repeat(model.seeds), reduction="none")
    right = logits.argmax(-1) == y
    return nll.view(model.seeds, -1).mean(1), right.float().mean(1)


@experiment
def sequence_training(
    *,
    cell: str = "lstm",
    gain_init: float | None = None,
    form: str = "rows",
    orders=(False,),
    hidden: int = 64,
    steps: int = 400,
    batch_size: int = 64,
    lrs=LR_GRID,
    seeds=(0, 1, 2),
    eval_every: int = 20,
    extra_steps: int = 0,
    statistics_steps: int | None = None,
) -> SequenceTrainingResult:
    """One recurrent classifier of the 8 x 8 digits, read as T = 8 rows of 8 pixels (form "rows")
    or as T = 64 single pixels (form "pixels", sequential MNIST's task at 8 x 8), in each pixel
    order of `orders` (True: permuted, one fixed random order), trained with Adam at every
    learning rate of `lrs` from every seed.

    All len(orders) x len(lrs) x len(seeds) runs are one `SeedBatchedClassifier`: seed s starts
    from the weights `make_cell` draws after torch.manual_seed(s) (the same W_x, W_h for every
    cell) and sees the minibatches of epoch_batches(..., seed=s), whatever its order and rate.
    Validation and test every `eval_every` steps, in eval mode (a BN-LSTM then uses its running
    statistics). After the last step: the test sequences followed by `extra_steps` blank steps,
    and for the BN-LSTM with `statistics_steps` = k the test with the statistics of every step
    >= k taken from step k - 1 (the T_max rule with a shorter T_max); and, last, for the BN-LSTM
    the test with every step's statistics replaced by their average over the T_max steps (what
    one BatchNorm shared over time would estimate)."""
    if statistics_steps is not None and cell != "bn-lstm":
        raise ValueError(f"statistics_steps is for the BN-LSTM only, got cell {cell!r}")
    orders = [bool(o) for o in orders]
    seeds = [int(s) for s in seeds]
    lrs = [float(lr) for lr in lrs]
    if not orders or not seeds or not lrs:
        raise ValueError(f"need at least one order, rate and seed, got {orders}, {lrs}, {seeds}")
    splits = {}
    for split in ("train", "val", "test"):
        data = [digits.load(split, form=form, permuted=o) for o in orders]
        splits[split] = torch.stack([x for x, _ in data]), data[0][1]  # (orders, N, T, F), (N,)
    x, y = splits["train"]
    length, features = x.shape[2:]
    runs = [(o, lr, seed) for o in range(len(orders)) for lr in lrs for seed in seeds]
    models = []
    for _, _, seed in runs:
        torch.manual_seed(seed)
        recurrent = make_cell(cell, features, hidden, max_steps=length, gain_init=gain_init)
        models.append(SequenceClassifier(recurrent, digits.CLASSES))
    model = SeedBatchedClassifier(models)
    optimizer = PerRunAdam(model.parameters(), [lr for _, lr, _ in runs])
    order_of = torch.tensor([o for o, _, _ in runs])
    batches = [epoch_batches(x.shape[1], batch_size, seed) for _, _, seed in runs]
    curves = {"val_loss": [], "val_accuracy": [], "test_loss": [], "test_accuracy": []}
    eval_steps = []

    def each_model(data):  # (orders, N, T, F) -> (models, N, T, F), a view
        return data[order_of]

    def evaluate(step: int) -> None:
        model.eval()
        with torch.no_grad():
            for split in ("val", "test"):
                nll, accuracy = evaluate_per_model(
                    model, each_model(splits[split][0]), splits[split][1]
                )
                curves[f"{split}_loss"].append(nll)
                curves[f"{split}_accuracy"].append(accuracy)
        eval_steps.append(step)
        model.train()

    def step_losses(step: int):
        index = torch.stack([batch(step) for batch in batches])  # (models, batch_size)
        logits = model(x[order_of[:, None], index])
        # the sum of the per-model mean losses: each model gets its own gradient
        loss = F.cross_entropy(logits.flatten(0, 1), y[index].flatten(), reduction="sum")
        return None, loss / batch_size

    train_population(
        len(runs), optimizer.params, step_losses, optimizer, steps=steps, evaluate=evaluate,
        eval_every=eval_every,
    )  # fmt: skip
    model.eval()
    test_x, test_y = splits["test"]
    longer = cut = None
    with torch.no_grad():
        if extra_steps:
            longer = evaluate_per_model(model, each_model(blank_tail(test_x.flatten(0, 1), extra_steps)
                                                 .unflatten(0, test_x.shape[:2])), test_y)  # fmt: skip
        if statistics_steps is not None:
            model.statistics_steps = statistics_steps
            cut = evaluate_per_model(model, each_model(test_x), test_y)
            model.statistics_steps = None
        averaged = None
        if cell == "bn-lstm":  # last: it overwrites the per-step estimates
            _average_over_time(model)
            averaged = evaluate_per_model(model, each_model(test_x), test_y)

    def nested(values: torch.Tensor) -> list:  # (models, ...) -> [order][lr][seed]...
        return values.view(len(orders), len(lrs), len(seeds), *values.shape[1:]).tolist()

    return SequenceTrainingResult(
        cell=cell,
        gain_init=gain_init,
        form=form,
        orders=orders,
        hidden=hidden,
        lrs=lrs,
        batch_size=batch_size,
        seeds=seeds,
        eval_steps=eval_steps,
        **{name: nested(torch.stack(values, dim=1)) for name, values in curves.items()},
        extra_steps=extra_steps,
        longer_test_loss=[] if longer is None else nested(longer[0]),
        longer_test_accuracy=[] if longer is None else nested(longer[1]),
        statistics_steps=statistics_steps,
        cut_test_loss=[] if cut is None else nested(cut[0]),
        cut_test_accuracy=[] if cut is None else nested(cut[1]),
        averaged_test_loss=[] if averaged is None else nested(averaged[0]),
        averaged_test_accuracy=[] if averaged is None else nested(averaged[1]),
    )


# label -> (cell, gain_init); None: each paper's own gain (LayerNorm 1.0, BatchNorm 0.1)
RECURRENT_MODELS = {
    "LSTM": ("lstm", None),
    "LN-LSTM": ("ln-lstm", None),
    "LN-LSTM, gain 0.1": ("ln-lstm", 0.1),
    "LN-LSTM, raw input": ("ln-lstm-raw-input", None),  # a control: no LN on W_x x_t
    "BN-LSTM": ("bn-lstm", None),
    "BN-LSTM, gain 1.0": ("bn-lstm", 1.0),
    "LN-GRU": ("ln-gru", None),
    "GRU": ("gru", None),
}
