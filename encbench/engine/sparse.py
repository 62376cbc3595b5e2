"""When a task encodes to a sparse matrix: the one sparse policy that the protocol (which encodes)
and the memory budget (which estimates) both read (docs/ARCHITECTURE.md, Protocol).
"""
from __future__ import annotations

from encbench.models import MODEL_REGISTRY, SPARSE_ENCODERS, sparse_models

__all__ = ["SPARSE_ABOVE_BYTES", "SPARSE_ENCODERS", "SPARSE_MODELS", "sparse_takers", "uses_sparse"]

#: ``{encoder: models}`` whose predictions and probabilities are bit-identical on the encoder's
#: sparse (CSR) output and on its dense output, from the model registry's ``sparse_identical``
#: (measured by ``benchmarks/bench_wide.py identity``: tic-tac-toe, credit-g, kr-vs-kp, nursery,
#: adult and a synthetic set with 300 levels, 5 outer folds, the no-tuning configuration and the
#: values model and full tuning visit). A task encodes sparse only when every one of its models
#: is listed (its folds are encoded once for all of them). Bin is identical with DT and LGBM too
#: but left dense: it has log2(levels) + 1 columns (16 for 20,000 levels), nothing to save.
SPARSE_MODELS = sparse_models()
#: Above this many bytes of dense encoding (float64, one copy, every row of the dataset:
#: :func:`encbench.engine.budget.dense_bytes`, an upper bound of every training fold's) a task of
#: a :data:`SPARSE_ENCODERS` encoder whose models all take sparse input
#: (:attr:`encbench.models.ModelSpec.takes_sparse`) encodes sparse even where the scores are not
#: bit-identical to dense (LogReg, SVM, kNN: docs/user-guide.md, "Memory and sparse encodings",
#: says how far they move). Below it, data stays dense and scores as the study's code does. The
#: decision is per (dataset, encoder, models), so every fold of an experiment gets the same
#: representation.
SPARSE_ABOVE_BYTES = 256_000_000


def uses_sparse(encoder: str, models, custom: str | None = None, *, dense_bytes: int = 0) -> bool:
    """Whether a task of ``encoder`` with ``models`` encodes to a sparse matrix.

    Sparse at any size where every model's scores are unchanged (:data:`SPARSE_MODELS`), and
    where the dense encoding would take more than :data:`SPARSE_ABOVE_BYTES` (``dense_bytes``)
    for a :data:`SPARSE_ENCODERS` encoder whose models all take sparse input. A custom encoder
    (``custom``) always stays dense.
    """
    models = set(models)
    if custom is not None or not models:
        return False
    if models <= SPARSE_MODELS.get(encoder, frozenset()):
        return True
    return (encoder in SPARSE_ENCODERS and dense_bytes > SPARSE_ABOVE_BYTES
            and all(getattr(MODEL_REGISTRY.get(m), "takes_sparse", False) for m in models))


def sparse_takers(encoder: str, models, *, dense_bytes: int = 0) -> tuple[str, ...]:
    """The models of ``models`` that would each, alone, get ``encoder``'s output sparse at
    ``dense_bytes`` (see :func:`uses_sparse`), in the given order."""
    return tuple(m for m in models if uses_sparse(encoder, (m,), dense_bytes=dense_bytes))
