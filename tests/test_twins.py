"""The seed-batched twins of the recurrent classifier, the MLP and the CNN compute every option of
the model a reader sees, or refuse it by name: a cell kind, a constructor argument or a layer
added to the original fails here until its twin computes it. (The parity tests hold each seed to
its own model; the Transformer's guard is in tests/test_stacked_transformer.py.)"""

import inspect

import pytest
import torch
from torch import nn

from lnpaper.models import recurrent
from lnpaper.models.cnn import (
    MODEL_ARGUMENTS,
    NORM_LAYERS,
    NORMS,
    SeedBatchedCNN,
    SmallCNN,
    seed_batched_unsupported,
)
from lnpaper.models.mlp import MLP, SeedBatchedMLP
from lnpaper.models.recurrent import CELLS, LSTMCell, RecurrentCell, SequenceClassifier, make_cell
from lnpaper.models.seed_batched_classifier import (
    CELL_ARGUMENTS,
    SeedBatchedCells,
    SeedBatchedClassifier,
)


def _arguments(cls) -> set:
    return set(inspect.signature(cls).parameters)


def _cell_classes() -> set:
    found, pending = set(), [RecurrentCell]
    while pending:
        for subclass in pending.pop().__subclasses__():
            pending.append(subclass)
            if subclass.__module__ == recurrent.__name__:
                found.add(subclass)
    return found


def test_every_cell_of_the_library_is_one_the_seed_batched_step_computes():
    assert _cell_classes() == set(SeedBatchedCells.KINDS)
    for kind in CELLS:
        cell = make_cell(kind, 4, 3, max_steps=5)
        assert SeedBatchedCells.KINDS[type(cell)] == kind
    for cell_class in _cell_classes():
        assert _arguments(cell_class) <= set(CELL_ARGUMENTS), cell_class.__name__


def test_a_cell_the_seed_batched_step_does_not_know_is_refused_by_name():
    class ReadersCell(LSTMCell):  # a reader's own cell, its forward unknown to the twin
        pass

    with pytest.raises(ValueError, match="ReadersCell"):
        SeedBatchedClassifier([SequenceClassifier(ReadersCell(4, 3), 10)])
    model = SequenceClassifier(make_cell("ln-lstm", 4, 3), 10)
    model.cell.norm_c.eps = 1e-3  # one norm of the cell on its own eps: the step reads one
    with pytest.raises(ValueError, match="one eps per cell"):
        SeedBatchedClassifier([model])


def test_every_mlp_argument_is_passed_on_by_its_twin():
    assert _arguments(MLP) <= _arguments(SeedBatchedMLP)


def test_a_layer_the_mlp_twin_does_not_compute_is_refused(monkeypatch):
    from lnpaper.models import mlp

    monkeypatch.setitem(mlp.NORMS, "rmsnorm", nn.RMSNorm)  # as if MLP had gained a norm
    MLP((4, 6, 3), norm="rmsnorm")  # the model a reader sees builds it
    with pytest.raises(ValueError, match="layer 1 of MLP is a RMSNorm"):
        SeedBatchedMLP((4, 6, 3), norm="rmsnorm")


def test_every_cnn_argument_and_norm_is_one_its_twin_computes():
    assert _arguments(SmallCNN) == set(MODEL_ARGUMENTS)
    assert set(NORMS) == set(NORM_LAYERS)
    for norm in NORMS:
        assert seed_batched_unsupported(SmallCNN(norm)) is None
        SeedBatchedCNN([SmallCNN(norm), SmallCNN(norm)])


def test_a_cnn_layer_its_twin_does_not_compute_is_refused():
    model = SmallCNN("layernorm")
    model.features.insert(2, nn.Dropout(0.1))  # as if SmallCNN had gained a layer
    with pytest.raises(ValueError, match="Dropout"):
        SeedBatchedCNN([model])
    model = SmallCNN("batchnorm")
    model.norm = "groupnorm"
    assert "'groupnorm'" in seed_batched_unsupported(model)


def test_the_twins_still_compute_their_models():
    # the guards above refuse nothing the experiments build: one seed, same logits
    torch.manual_seed(0)
    cnn = SmallCNN("layernorm")
    x = torch.randn(5, 1, cnn.side, cnn.side)
    torch.testing.assert_close(SeedBatchedCNN([cnn])(x[None])[0], cnn(x))
    twin = SeedBatchedMLP((4, 6, 3), norm="layernorm", seeds=(0,))
    torch.manual_seed(0)
    alone = MLP((4, 6, 3), norm="layernorm")
    rows = torch.randn(5, 4)
    torch.testing.assert_close(twin(rows[None])[0], alone(rows))
