"""The attentive reader (Hermann et al. 2015), unidirectional, as Ba et al. 2016 ran it in Sec. 6.2
with LayerNorm inside its LSTMs only: the model of the companion's miniature of that experiment
(notebook 03, on the generated task of `lnpaper.data.cloze`).

A document LSTM reads the passage token by token, y_t its output at step t; a query LSTM reads
the query, u its last output. Attention scores every step of the passage against the query,

    m_t = tanh(W_ym y_t + W_um u),    s_t = softmax_t(w . m_t),    r = sum_t s_t y_t,
    g = tanh(W_rg r + W_ug u),

and the answer's logits are read from g, over the 12 entity names, restricted to the passage's
candidates. A batch is padded to its longest passage: the document LSTM steps on through the
padding (its input there is the padding token's embedding, fixed at zero), as a zero-padded batch
is computed, and the attention gives padded steps no weight. In a population each seed reads its
own batch, padded to the longest of all; a BN-LSTM's estimates move only within each seed's own
batch, so every seed trains as it would alone.

The model is a population: S copies (one per seed, or per seed and learning rate), every weight
with a leading seed axis, the encoders stepped as `SeedBatchedCells`. One reader is S = 1. Cells:
"lstm", "ln-lstm" (Eq. 20-22, gains 1.0 unless `gain_init`), "bn-lstm" (Cooijmans et al. 2016,
per-step statistics over every row of the padded batch, gains 0.1 unless `gain_init`), and "bag",
no LSTM at all (y_t is the token's embedding, u the sum of the query's): the control that says
whether the task needs reading in order. `text_statistics=True` makes a BN-LSTM take its training
statistics over the rows that hold text at each step, not the padding (the control for what
padding does to BatchNorm, Cooijmans et al. 2016 Sec. 5.4).
"""

import torch
from torch import nn

from lnpaper.arguments import check_choice, check_flag, check_positive_int
from lnpaper.data import cloze
from lnpaper.models.recurrent import make_cell
from lnpaper.models.seed_batched_classifier import SeedBatchedCells, SeedStack, batched_linear

READER_CELLS = ("lstm", "ln-lstm", "bn-lstm", "bag")
QUERY_LENGTH = 3


def _head(hidden: int) -> nn.Module:
    """One seed's embedding table (embeddings as wide as the LSTMs, so the bag of embeddings
    reads them where the LSTM's outputs would be) and attention and output weights, initialized
    as torch's nn.Embedding (N(0, 1), the padding row zero) and nn.Linear initialize them."""
    return nn.ModuleDict(
        {
            "embedding": nn.Embedding(cloze.VOCABULARY, hidden, padding_idx=cloze.PAD),
            "W_ym": nn.Linear(hidden, hidden, bias=False),
            "W_um": nn.Linear(hidden, hidden),
            "w": nn.Linear(hidden, 1, bias=False),
            "W_rg": nn.Linear(hidden, hidden, bias=False),
            "W_ug": nn.Linear(hidden, hidden),
            "out": nn.Linear(hidden, cloze.ENTITY_NAMES),
        }
    )


class AttentiveReader(nn.Module):
    """S attentive readers, one per entry of `seeds`: seed s's weights are those drawn after
    torch.manual_seed(s) (the caller's random state is left as it was). `max_steps` is T_max,
    the longest training passage, which a BN-LSTM's per-step statistics need; at inference a
    step beyond it uses the statistics of T_max - 1."""

    def __init__(
        self,
        cell: str = "lstm",
        *,
        seeds=(0,),
        hidden: int = 32,
        gain_init: float | None = None,
        max_steps: int | None = None,
        text_statistics: bool = False,
    ):
        super().__init__()
        self.cell = check_choice("cell", cell, READER_CELLS)
        hidden = check_positive_int("hidden", hidden)
        self.text_statistics = check_flag("text_statistics", text_statistics)
        if text_statistics and cell != "bn-lstm":
            raise ValueError(f"text_statistics is for the BN-LSTM only, got cell {cell!r}")
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ValueError("AttentiveReader needs at least one seed")
        if cell == "bag" and gain_init is not None:
            raise ValueError(f"cell 'bag' has no normalizer, so no gain_init (got {gain_init!r})")
        heads, documents, queries = [], [], []
        with torch.random.fork_rng():
            for seed in seeds:
                torch.manual_seed(seed)
                heads.append(_head(hidden))
                if cell != "bag":
                    for cells, steps in ((documents, max_steps), (queries, QUERY_LENGTH)):
                        cells.append(
                            make_cell(cell, hidden, hidden, max_steps=steps, gain_init=gain_init)
                        )
        self.seeds = len(seeds)
        self.hidden = hidden
        self.head = SeedStack(heads)
        if cell != "bag":
            self.document = SeedBatchedCells(documents)
            self.query = SeedBatchedCells(queries)
        keep = torch.ones(cloze.VOCABULARY, 1)
        keep[cloze.PAD] = 0  # the padding token's embedding stays zero: no gradient reaches it
        self.register_buffer("keep", keep)

    def _embed(self, tokens):
        """(S, N, T) token ids -> (S, N, T, E), each seed through its own table."""
        table = self.head.p("embedding.weight") * self.keep
        return table[torch.arange(self.seeds)[:, None, None], tokens]

    def _encode(self, cells: SeedBatchedCells, x, rows=None, live=None):
        """Every step's output (S, N, T, H) of the cells over x (S, N, T, E), from zero states.
        `rows` (S, N, T): the rows a BN-LSTM counts at each step (None: every row); `live` (S,
        T): the steps within each seed's own batch (a BN-LSTM's estimates move there only)."""
        state = cells.initial_state(x.shape[1], x)
        outputs = []
        # unbind, not x[:, :, t]: one gradient of x assembled at the end, not one zero-filled
        # copy of x per step
        for t, x_t in enumerate(x.unbind(2)):
            counted = None if rows is None else rows[..., t]
            frozen = None if live is None else ~live[:, t]
            state = cells.step(x_t, state, t, counted, frozen)
            outputs.append(state[0])
        return torch.stack(outputs, dim=2)

    @torch.no_grad()
    def output_slope(self, passages, lengths) -> torch.Tensor:
        """Per seed (S,), E[1 - tanh^2] of the document LSTM's output squashing, h_t = o *
        tanh(.), over the steps that hold text, in eval mode: near 1 where the squashing acts
        linearly (BatchNorm's gains of 0.1), about 0.6 where its input is standardized (gains of
        1): the check that two gain arms differ as intended."""
        if self.cell == "bag":
            raise ValueError("the bag of embeddings has no LSTM, so no output squashing")
        training = self.training
        self.eval()
        x = self._embed(passages)
        text = (torch.arange(x.shape[2]) < lengths[..., None]).to(x.dtype)  # (S, N, T)
        state = self.document.initial_state(x.shape[1], x)
        slope = x.new_zeros(self.seeds)
        for t, x_t in enumerate(x.unbind(2)):
            state = self.document.step(x_t, state, t)
            squashed = torch.tanh(self.document.cell_output(state[1], t))
            slope += ((1 - squashed**2).mean(-1) * text[..., t]).sum(1)
        self.train(training)
        return slope / text.sum((1, 2))

    def _linear(self, name, x):
        bias = name + ".bias"
        bias = self.head.p(bias) if hasattr(self.head, bias.replace(".", "__")) else None
        flat = batched_linear(x.flatten(1, -2), self.head.p(name + ".weight"), bias)
        return flat.view(*x.shape[:-1], flat.shape[-1])

    def _check_batch(self, passages, lengths, queries, candidates) -> None:
        """A batch's shapes and token ids as `forward` reads them, named when they are not."""
        if passages.ndim != 3 or passages.shape[0] != self.seeds:
            raise ValueError(
                f"passages must be (seeds={self.seeds}, N, T) token ids, got shape "
                f"{tuple(passages.shape)}"
            )
        seeds, count, steps = passages.shape
        expected = {
            "lengths": (seeds, count),
            "queries": (seeds, count, QUERY_LENGTH),
            "candidates": (seeds, count, cloze.ENTITY_NAMES),
        }
        given = (lengths, queries, candidates)
        for (name, shape), value in zip(expected.items(), given, strict=True):
            if tuple(value.shape) != shape:
                raise ValueError(f"{name} must be of shape {shape}, got {tuple(value.shape)}")
        if not (1 <= int(lengths.min()) and int(lengths.max()) <= steps):
            raise ValueError(f"lengths must lie in 1..{steps} (T), got {lengths.tolist()}")
        for name, tokens in (("passages", passages), ("queries", queries)):
            if int(tokens.min()) < 0 or int(tokens.max()) >= cloze.VOCABULARY:
                raise ValueError(f"{name} must hold token ids in 0..{cloze.VOCABULARY - 1}")

    def forward(self, passages, lengths, queries, candidates):
        """Logits (S, N, 12) over the entity names, -inf outside each example's candidates.
        passages (S, N, T) token ids padded after `lengths` (S, N); queries (S, N, 3); candidates
        (S, N, 12) bool."""
        self._check_batch(passages, lengths, queries, candidates)
        steps = torch.arange(passages.shape[-1])
        text = steps < lengths[..., None]  # (S, N, T): the steps that hold the passage
        passage, query = self._embed(passages), self._embed(queries)
        if self.cell == "bag":
            y, u = passage, query.sum(2)
        else:
            rows = text if self.text_statistics else None
            live = steps < lengths.max(dim=1).values[:, None]  # (S, T): each seed's own batch
            y = self._encode(self.document, passage, rows, live)
            u = self._encode(self.query, query)[:, :, -1]
        m = torch.tanh(self._linear("W_ym", y) + self._linear("W_um", u)[:, :, None])
        scores = self._linear("w", m).squeeze(-1).masked_fill(~text, float("-inf"))
        r = (torch.softmax(scores, dim=-1)[..., None] * y).sum(2)
        g = torch.tanh(self._linear("W_rg", r) + self._linear("W_ug", u))
        return self._linear("out", g).masked_fill(~candidates, float("-inf"))
