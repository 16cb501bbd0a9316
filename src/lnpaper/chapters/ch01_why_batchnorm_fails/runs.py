"""Experiments of notebook 01, why BatchNorm fails for sequence models: claims M1-M5.

M1-M3 measure BatchNorm's three problems on the summed inputs and the MLP of the digits task; M4
follows the statistics of an LSTM's gate pre-activations over time (Cooijmans et al. 2016); M5 is the
batch-size experiment of Ba et al. 2016, Sec. 6.6, scaled down to the 8 x 8 digits.
"""

import copy
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.models.mlp import MLP, SeedBatchedMLP
from lnpaper.models.recurrent import LSTMCell, SequenceClassifier, unroll
from lnpaper.norms import BatchNorm, LayerNorm, RecurrentBatchNorm
from lnpaper.train import epoch_batches, make_optimizer, train, train_population


def first_layer_inputs(width: int, seed: int) -> torch.Tensor:
    """Summed inputs a = W x of a freshly initialized 64 -> width layer over the training digits."""
    torch.manual_seed(seed)
    layer = nn.Linear(digits.PIXELS, width, bias=False)
    x, _ = digits.load("train")
    with torch.no_grad():
        return layer(x)


# ---- M1: batch dependence ----------------------------------------------------------------------


@dataclass
class BatchDependenceResult:
    width: int  # units of the layer whose summed inputs are normalized
    example: int  # index of the fixed example in the training split
    batches: list  # [[indices of batch A], [indices of batch B]], the fixed example first in both
    batchnorm_outputs: list  # [batch A, batch B]: the example's BatchNorm output, first 6 units
    layernorm_outputs: list  # the same for LayerNorm
    batchnorm_difference: float  # max |output in A - output in B| over all units
    layernorm_difference: float
    batch_sizes: list
    mean_spread: list  # per batch size: sd over batches of the batch mean / population sd
    variance_spread: list  # sd over batches of the batch variance / population variance
    variance_ratio: list  # mean over batches of batch variance / population variance (biased)
    output_spread: list  # sd over batches of the fixed example's BatchNorm output (None at 1)


@experiment
def batch_dependence(
    *,
    width: int = 64,
    batch_sizes=(1, 2, 4, 8, 16, 32, 64, 128, 256),
    draws: int = 200,
    example: int = 0,
    seed: int = 0,
) -> BatchDependenceResult:
    """M1: one example's BatchNorm output depends on its batch-mates; how noisy the statistics are.

    Training-mode BatchNorm normalizes unit i of example n by the batch's mu_i and sigma_i, so the
    same example lands on different outputs in different batches. For each batch size, `draws`
    random batches give the spread of the batch mean and variance (relative to the statistics of
    the whole training split) and of the fixed example's output when it is one of the batch.
    """
    a = first_layer_inputs(width, seed)
    generator = torch.Generator().manual_seed(seed)
    others = torch.cat([torch.arange(example), torch.arange(example + 1, len(a))])

    def batch_with_example(size: int) -> torch.Tensor:
        mates = others[torch.randperm(len(others), generator=generator)[: size - 1]]
        return torch.cat([torch.tensor([example]), mates])

    batches = [batch_with_example(8), batch_with_example(8)]
    batchnorm, layernorm = BatchNorm(width), LayerNorm(width)
    with torch.no_grad():
        bn_out = [batchnorm(a[index])[0] for index in batches]
        ln_out = [layernorm(a[index])[0] for index in batches]

    population_var = a.var(0, correction=0)
    mean_spread, variance_spread, variance_ratio, output_spread = [], [], [], []
    for size in batch_sizes:
        # Statistics of random batches; outputs of the fixed example in random batches around it.
        index = torch.stack(
            [torch.randperm(len(a), generator=generator)[:size] for _ in range(draws)]
        )
        means = a[index].mean(1)  # (draws, width)
        variances = a[index].var(1, correction=0)  # what training-mode BatchNorm divides by
        mean_spread.append((means.std(0) / population_var.sqrt()).mean().item())
        variance_spread.append((variances.std(0) / population_var).mean().item())
        variance_ratio.append((variances.mean(0) / population_var).mean().item())
        if size < 2:  # training-mode BatchNorm refuses a batch of one (M2)
            output_spread.append(None)
            continue
        with torch.no_grad():
            outputs = torch.stack([batchnorm(a[batch_with_example(size)])[0] for _ in range(draws)])
        output_spread.append(outputs.std(0).mean().item())
    return BatchDependenceResult(
        width=width,
        example=example,
        batches=[index.tolist() for index in batches],
        batchnorm_outputs=[out[:6].tolist() for out in bn_out],
        layernorm_outputs=[out[:6].tolist() for out in ln_out],
        batchnorm_difference=(bn_out[0] - bn_out[1]).abs().max().item(),
        layernorm_difference=(ln_out[0] - ln_out[1]).abs().max().item(),
        batch_sizes=list(batch_sizes),
        mean_spread=mean_spread,
        variance_spread=variance_spread,
        variance_ratio=variance_ratio,
        output_spread=output_spread,
    )


# ---- M2: a batch of one ------------------------------------------------------------------------


@dataclass
class BatchOfOneResult:
    width: int
    by_formula: list  # training-mode BatchNorm written out on a batch of one: first 6 units
    by_formula_max_abs: float  # max |output - beta| over all units (beta = 0 at init)
    torch_error: str  # what torch.nn.BatchNorm1d says in training mode
    lnpaper_error: str  # what lnpaper.BatchNorm says
    layernorm_alone: list  # LayerNorm of the example alone: first 6 units
    layernorm_alone_std: float  # its spread over units (about 1: it carries the example)
    layernorm_in_batch_difference: float  # max |LN alone - LN of the same example in a batch of 64|


@experiment
def batch_of_one(*, width: int = 64, example: int = 0, seed: int = 0) -> BatchOfOneResult:
    """M2: with one example, BatchNorm's batch mean is the example and its variance 0, so
    g * (a - mu) / sqrt(0 + eps) + b = b for every input; LayerNorm needs no batch at all."""
    a = first_layer_inputs(width, seed)
    one = a[example : example + 1]
    gain, beta = torch.ones(width), torch.zeros(width)  # BatchNorm's parameters at init
    mu = one.mean(0)  # the example itself
    var = one.var(0, correction=0)  # exactly 0
    by_formula = gain * (one - mu) / torch.sqrt(var + 1e-5) + beta
    errors = []
    for module in (nn.BatchNorm1d(width), BatchNorm(width)):
        try:
            module(one)
            errors.append("no error")
        except ValueError as error:
            errors.append(str(error))
    layernorm = LayerNorm(width)
    with torch.no_grad():
        alone = layernorm(one)[0]
        in_batch = layernorm(a[example : example + 64])[0]
    return BatchOfOneResult(
        width=width,
        by_formula=by_formula[0, :6].tolist(),
        by_formula_max_abs=(by_formula - beta).abs().max().item(),
        torch_error=errors[0],
        lnpaper_error=errors[1],
        layernorm_alone=alone[:6].tolist(),
        layernorm_alone_std=alone.std(correction=0).item(),
        layernorm_in_batch_difference=(alone - in_batch).abs().max().item(),
    )


# ---- M3: training vs inference -----------------------------------------------------------------

M5_SIZES = (64, 256, 256, 10)  # the paper's 784-1000-1000-10, narrowed for 8 x 8 inputs


def nll_and_accuracy(model, x, y) -> dict:
    logits = model(x)
    return {
        "nll": F.cross_entropy(logits, y).item(),
        "accuracy": (logits.argmax(1) == y).float().mean().item(),
    }


def classification_loss(x, y):
    """loss_fn for `lnpaper.train.train`: cross-entropy of the minibatch whose indices are given."""

    def loss(model, index):
        return F.cross_entropy(model(x[index]), y[index])

    return loss


@dataclass
class TrainVsInferenceResult:
    batch_size: int
    probe_size: int  # test images the two modes are compared on
    eval_steps: list  # training steps at which the modes were compared
    logit_gap: dict  # norm -> [mean |logits(train mode) - logits(eval mode)| per eval step]
    changed_predictions: dict  # norm -> [test images whose predicted class differs, per step]
    running_error: list  # BatchNorm, first layer: |running mean - true mean| / sd, per step


@experiment
def train_vs_inference(
    *,
    sizes=M5_SIZES,
    batch_size: int = 32,
    steps: int = 150,
    eval_every: int = 5,
    lr: float = 1e-3,
    probe_size: int = 128,
    seed: int = 0,
) -> TrainVsInferenceResult:
    """M3: the same test batch through the same network in training mode and in eval mode.

    Training-mode BatchNorm normalizes with the batch's statistics, eval mode with the running
    averages; the gap is measured while an MLP trains, and with it how far the first layer's
    running mean is from the true mean of its summed inputs over the training split. A copy of the
    model runs the training-mode pass, so the measurement does not move the running averages.
    """
    x, y = digits.load("train")
    probe = digits.load("test")[0][:probe_size]

    def compare(model) -> dict:  # called by `train` in eval mode, without gradients
        eval_logits = model(probe)
        train_logits = copy.deepcopy(model).train()(probe)
        measured = {
            "logit_gap": (train_logits - eval_logits).abs().mean(),
            "changed": (train_logits.argmax(1) != eval_logits.argmax(1)).sum(),
        }
        first_linear, first_norm = model.layers[0], model.layers[1]
        if isinstance(first_norm, BatchNorm):
            summed = first_linear(x)
            error = (first_norm.running_mean - summed.mean(0)).abs() / summed.std(0)
            measured["running_error"] = error.mean()
        return measured

    logit_gap, changed, running_error = {}, {}, []
    for norm in ("batchnorm", "layernorm"):
        torch.manual_seed(seed)
        history = train(
            MLP(sizes, norm=norm),
            classification_loss(x, y),
            epoch_batches(len(x), batch_size, seed),
            steps=steps,
            lr=lr,
            log_every=steps,
            evaluate=compare,
            eval_every=eval_every,
        )
        logit_gap[norm] = history.eval_curve("logit_gap")
        changed[norm] = [int(count) for count in history.eval_curve("changed")]
        if norm == "batchnorm":
            running_error = history.eval_curve("running_error")
    return TrainVsInferenceResult(
        batch_size=batch_size,
        probe_size=probe_size,
        eval_steps=history.eval_steps,
        logit_gap=logit_gap,
        changed_predictions=changed,
        running_error=running_error,
    )


# ---- M4: statistics of a recurrent net over time -----------------------------------------------


def earlier_digit_loss(x, y, delay: int):
    """The stream task: at every step t >= delay, name the digit shown at step t - delay."""

    def loss(model, index):
        logits = model(x[index])
        return F.cross_entropy(logits[:, delay:].flatten(0, 1), y[index][:, :-delay].flatten())

    return loss


def normalization_error(normalized: torch.Tensor) -> tuple[list, list]:
    """Per step, how far (N, T, C) outputs are from standardized: mean over units of |batch mean|
    and of |batch sd - 1|. Perfect per-step statistics give 0 and 0."""
    offset = normalized.mean(0).abs().mean(-1)
    scale = (normalized.std(0, correction=0) - 1).abs().mean(-1)
    return offset.tolist(), scale.tolist()


@dataclass
class LSTMStatisticsResult:
    hidden: int
    train_length: int  # T_max: the length of every training sequence
    test_length: int
    train_steps: int
    delay: int  # the task: name the digit shown `delay` steps earlier
    accuracy_per_step: list  # the trained LSTM on test streams, steps delay..test_length - 1
    units: list  # gate units whose statistics are drawn
    unit_means: list  # [unit][t]: batch mean of the gate pre-activation a_t
    unit_vars: list  # [unit][t]: batch variance
    transient: dict  # term -> [per step: mean over units of |mu_t - mu_steady| / sd_steady]
    variance_ratio: dict  # term -> [per step: mean over units of var_t / var_steady]
    steady_from: int  # steps from here to the end define the steady state
    offset: dict  # scheme -> [per step: mean over units of |batch mean of normalized a_t|]
    scale: dict  # scheme -> [per step: mean over units of |batch sd of normalized a_t - 1|]
    short_max_steps: int  # T_max of the "trained on too short sequences" scheme


@experiment
def lstm_statistics(
    *,
    hidden: int = 32,
    train_length: int = 12,
    test_length: int = 48,
    delay: int = 3,
    train_steps: int = 300,
    batch_size: int = 32,
    lr: float = 1e-2,
    estimate_batches: int = 50,
    short_max_steps: int = 2,
    seed: int = 0,
) -> LSTMStatisticsResult:
    """M4: per-time-step statistics of an LSTM's gate pre-activations, and what recurrent BatchNorm
    makes of them (Cooijmans et al. 2016, Sec. 3-4).

    The input is a stream of independent random digits (the same distribution at every step), and
    the LSTM is trained briefly to name the digit shown `delay` steps earlier, so any change of its
    statistics over time comes from its own recurrence. Then three ways to normalize a_t at
    inference, all with statistics estimated on training-length sequences and applied to 4x longer
    test sequences: RecurrentBatchNorm (per-step statistics, T_max rule), one BatchNorm whose
    statistics average over every step, and RecurrentBatchNorm estimated on sequences cut inside
    the transient.
    """
    torch.manual_seed(seed)
    model = SequenceClassifier(LSTMCell(digits.PIXELS, hidden), digits.CLASSES, every_step=True)
    x, y = digits.digit_stream("train", count=4096, length=train_length, seed=seed)
    train(
        model,
        earlier_digit_loss(x, y, delay),
        epoch_batches(len(x), batch_size, seed),
        steps=train_steps,
        lr=lr,
        log_every=train_steps,
    )
    test_x, test_y = digits.digit_stream("test", count=1024, length=test_length, seed=seed + 1)
    model.eval()
    with torch.no_grad():
        hiddens, terms = unroll(model.cell, test_x, keep=("W_x x_t", "W_h h_t-1"))
        input_terms, recurrent_terms = terms["W_x x_t"], terms["W_h h_t-1"]
        predictions = model.readout(hiddens).argmax(-1)
    accuracy = (predictions[:, delay:] == test_y[:, :-delay]).float().mean(0)
    gates = input_terms + recurrent_terms  # a_t, (N, T, 4H)

    steady_from = test_length // 2
    transient, variance_ratio = {}, {}
    for term, values in (("a_t", gates), ("W_x x_t", input_terms), ("W_h h_t-1", recurrent_terms)):
        mean, var = values.mean(0), values.var(0, correction=0)  # (T, 4H)
        steady_mean, steady_var = mean[steady_from:].mean(0), var[steady_from:].mean(0)
        transient[term] = ((mean - steady_mean).abs() / steady_var.sqrt()).mean(-1).tolist()
        variance_ratio[term] = (var / steady_var).mean(-1).tolist()
    units = [k * hidden + j for k in range(4) for j in range(2)]  # two units of each gate
    unit_means = gates.mean(0)[:, units].T.tolist()
    unit_vars = gates.var(0, correction=0)[:, units].T.tolist()

    per_step = RecurrentBatchNorm(4 * hidden, train_length, gain_init=1.0, bias=False)
    short = RecurrentBatchNorm(4 * hidden, short_max_steps, gain_init=1.0, bias=False)
    averaged = BatchNorm(4 * hidden)  # one set of statistics for every step
    estimate_x, _ = digits.digit_stream(
        "train", count=64 * estimate_batches, length=train_length, seed=seed + 2
    )
    with torch.no_grad():
        for batch in estimate_x.split(64):
            a = unroll(model.cell, batch, keep=("a_t",))[1]["a_t"]
            for t in range(train_length):
                per_step(a[:, t], t)
                if t < short_max_steps:
                    short(a[:, t], t)
            averaged(a.flatten(0, 1))
        schemes = {
            "per step, T_max rule": per_step.eval(),
            "averaged over steps": averaged.eval(),
            f"per step, T_max = {short_max_steps}": short.eval(),
        }
        offset, scale = {}, {}
        for name, norm in schemes.items():
            if isinstance(norm, RecurrentBatchNorm):
                normalized = torch.stack([norm(gates[:, t], t) for t in range(test_length)], 1)
            else:
                normalized = norm(gates.flatten(0, 1)).unflatten(0, gates.shape[:2])
            offset[name], scale[name] = normalization_error(normalized)
    return LSTMStatisticsResult(
        hidden=hidden,
        train_length=train_length,
        test_length=test_length,
        train_steps=train_steps,
        delay=delay,
        accuracy_per_step=accuracy.tolist(),
        units=units,
        unit_means=unit_means,
        unit_vars=unit_vars,
        transient=transient,
        variance_ratio=variance_ratio,
        steady_from=steady_from,
        offset=offset,
        scale=scale,
        short_max_steps=short_max_steps,
    )


# ---- M5: batch size ----------------------------------------------------------------------------

M5_MODELS = {  # name -> (norm, norm_logits)
    "layernorm": ("layernorm", False),  # the paper: LN on the hidden layers, not the logits
    # BatchNorm in LN's places, as torch does it: the batch's biased variance in training, the
    # running (unbiased) estimate at inference, a gap of sqrt(4/3) = 1.15x in scale at batch 4
    "batchnorm": ("batchnorm", False),
    # the same places, the unbiased batch variance in training too: no built-in gap
    "unbiased batchnorm": ("unbiased batchnorm", False),
    # the paper's baseline (Sec. 6.6): the unbiased variance, and every layer normalized, the
    # logits too. Its gain (1 at init) caps the logits' scale, so its test NLL says more about
    # that cap than about the batch size; its accuracy is comparable.
    "paper's batchnorm": ("unbiased batchnorm", True),
    "none": ("none", False),  # no normalizer: what batch size does to the plain network
}
M5_BATCHNORMS = ("batchnorm", "unbiased batchnorm", "paper's batchnorm")
POPULATION = "population "  # prefix of the curves of BatchNorm with exact population statistics


@dataclass
class BatchSizeRuns:
    steps: int  # optimizer steps for `epochs` epochs
    curves: list  # per seed: {"nll": [...], "accuracy": [...], ...}, before and after every epoch
    final: dict  # {key: [per seed]}, after the last epoch


def seed_batched_scores(network, x, y, statistics=None) -> dict:
    """Per seed, test NLL and accuracy of a SeedBatchedMLP on (x, y), every seed the same x."""
    logits = network(x.expand(len(network.seeds), -1, -1), statistics)  # (S, N, classes)
    nll = F.cross_entropy(
        logits.transpose(1, 2), y.expand(len(network.seeds), -1), reduction="none"
    )
    accuracy = (logits.argmax(-1) == y).float()
    return {"nll": nll.mean(1).tolist(), "accuracy": accuracy.mean(1).tolist()}


def train_seeds(network, x, y, batch_size, steps, lr, evaluate=None, eval_every=0) -> list:
    """Train a SeedBatchedMLP on classification: what `lnpaper.train.train` does for one seed,
    for every seed at once. Seed s sees its batches in epoch_batches(n, batch_size, s) order; the
    loss is the sum over seeds of each seed's mean cross-entropy, so seed s's gradient is its own
    run's, and Adam, elementwise, is S independent Adams. `evaluate(network)` runs in eval mode
    without gradients before the first step and every `eval_every` steps. Returns the per-step
    training losses, (steps, S)."""
    orders = [epoch_batches(len(x), batch_size, seed) for seed in network.seeds]
    # fused: one kernel per step over all the stacked weights, the same elementwise Adam
    optimizer = make_optimizer("adam", network.parameters(), lr, fused=True)

    def run_eval(step: int) -> None:
        network.eval()
        with torch.no_grad():
            evaluate(network)
        network.train()

    def step_losses(step: int):
        index = torch.stack([order(step) for order in orders])  # (S, batch): seed s's batch
        logits = network(x[index])
        per_seed = F.cross_entropy(logits.transpose(1, 2), y[index], reduction="none").mean(1)
        return per_seed, per_seed.sum()

    network.train()
    runs = train_population(
        len(network.seeds), list(network.parameters()), step_losses, optimizer, steps=steps,
        evaluate=None if evaluate is None else run_eval, eval_every=eval_every, eval_last=False,
        keep_losses=True,
    )  # fmt: skip
    return torch.stack(runs.losses)


@experiment
def batch_size_runs(
    *, model: str, batch_size: int, sizes=M5_SIZES, epochs: int = 12, lr: float = 1e-3, seeds=(0,)
) -> BatchSizeRuns:
    """One cell of M5: `model` trained at one batch size, every seed at once (its own record
    entry, so that the cells are computed side by side).

    The seeds train as one SeedBatchedMLP: seed s starts from MLP(...) after manual_seed(s) and
    sees the examples in epoch_batches(n, batch_size, s) order, exactly as its own run would
    (tests/test_mlp.py checks the two agree), with Adam over the stacked weights. After every
    epoch, in eval mode: test NLL and accuracy, and for BatchNorm a second evaluation of the same
    nets with each layer's exact mean and variance over the whole training set in place of the
    running averages ("population ..."): no extra training."""
    return _train_cell(model, batch_size, sizes, epochs, lr, seeds, flush_subnormals=False)


@experiment
def online_runs(
    *, model: str, sizes=M5_SIZES, epochs: int = 12, lr: float = 1e-3, seeds=(0,)
) -> BatchSizeRuns:
    """M2b, one model: batch_size_runs at batch 1, with floats below 1.2e-38 rounded to zero while
    training (where the CPU can). At batch 1 a ReLU unit the one example leaves off gets an exact
    zero gradient, and Adam's moments then decay geometrically into subnormal floats: a tenth of
    the plain net's after 3,000 steps, which made its steps 2.4x slower here. They enter the
    update only as m / (sqrt(v) + 1e-8), where they move nothing."""
    return _train_cell(model, 1, sizes, epochs, lr, seeds, flush_subnormals=True)


@dataclass
class TrainingCurves:
    steps: int
    eval_every: int  # optimizer steps between evaluations
    # per seed, one value per evaluation (after every `eval_every` steps): "train loss" (the mean
    # cross-entropy of the minibatches since the last evaluation, as the optimizer saw it),
    # "train nll" (the whole training set), "test nll", "test accuracy"; BatchNorm evaluated
    # with each layer's exact training-set statistics
    curves: list


@experiment
def training_curves(
    *, model: str, batch_size: int, steps: int, eval_every: int, sizes=M5_SIZES,
    lr: float = 1e-3, seeds=(0,),
) -> TrainingCurves:  # fmt: skip
    """M5's MLP trained as `batch_size_runs` trains it, for a number of steps rather than epochs,
    keeping what Figure 6 of Ba et al. plots: the training loss, beside the test error. BatchNorm
    is evaluated with exact statistics, so no running average is still warming up."""
    if model not in M5_MODELS:
        raise ValueError(f"model must be one of {tuple(M5_MODELS)}, got {model!r}")
    if eval_every < 1 or steps % eval_every:
        raise ValueError(f"eval_every must divide steps ({steps}), got {eval_every!r}")
    x, y = digits.load("train")
    test_x, test_y = digits.load("test")
    norm, norm_logits = M5_MODELS[model]
    network = SeedBatchedMLP(sizes, norm=norm, seeds=seeds, norm_logits=norm_logits)
    evals = []

    def evaluate(network) -> None:
        exact = None
        if model in M5_BATCHNORMS:
            exact = network.population_statistics(x.expand(len(network.seeds), -1, -1))
        train_scores = seed_batched_scores(network, x, y, exact)
        test_scores = seed_batched_scores(network, test_x, test_y, exact)
        evals.append((train_scores["nll"], test_scores["nll"], test_scores["accuracy"]))

    losses = train_seeds(network, x, y, batch_size, steps, lr, evaluate, eval_every)
    windows = losses.reshape(steps // eval_every, eval_every, -1).mean(1)  # (evaluations, S)
    evals = evals[1:]  # the evaluation before the first step has no training loss beside it
    curves = [
        {
            "train loss": windows[:, s].tolist(),
            "train nll": [e[0][s] for e in evals],
            "test nll": [e[1][s] for e in evals],
            "test accuracy": [e[2][s] for e in evals],
        }
        for s in range(len(network.seeds))
    ]
    return TrainingCurves(steps=steps, eval_every=eval_every, curves=curves)


def _train_cell(model, batch_size, sizes, epochs, lr, seeds, *, flush_subnormals):
    """The body of batch_size_runs and online_runs."""
    if model not in M5_MODELS:
        raise ValueError(f"model must be one of {tuple(M5_MODELS)}, got {model!r}")
    x, y = digits.load("train")
    test_x, test_y = digits.load("test")
    norm, norm_logits = M5_MODELS[model]
    network = SeedBatchedMLP(sizes, norm=norm, seeds=seeds, norm_logits=norm_logits)
    per_epoch = len(x) // batch_size
    evals = []

    def evaluate(network) -> None:
        scores = seed_batched_scores(network, test_x, test_y)
        if model in M5_BATCHNORMS:
            exact = network.population_statistics(x.expand(len(network.seeds), -1, -1))
            population = seed_batched_scores(network, test_x, test_y, exact)
            scores.update({POPULATION + key: value for key, value in population.items()})
        evals.append(scores)

    torch.set_flush_denormal(flush_subnormals)
    try:
        train_seeds(network, x, y, batch_size, epochs * per_epoch, lr, evaluate, per_epoch)
    finally:
        torch.set_flush_denormal(False)
    curves = [
        {key: [scores[key][s] for scores in evals] for key in evals[0]}
        for s in range(len(network.seeds))
    ]
    final = {key: [run[key][-1] for run in curves] for key in evals[0]}
    return BatchSizeRuns(steps=epochs * per_epoch, curves=curves, final=final)
