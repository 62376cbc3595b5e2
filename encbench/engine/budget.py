"""Memory guard: estimate each task's memory before a run and refuse (or skip) what cannot fit.

Encoders whose output grows with the number of levels (OH and Sum: one column per level; Bin:
one per binary digit) turn a small file with a high-cardinality column into a dense matrix of
rows x levels float64 values: 20,000 levels on 30,000 rows took 9.15 GB with OH.
:func:`check_plan` estimates each (dataset, encoder) before anything runs or is written and
names the column, its number of levels, the estimate and the budget.

The estimate is deliberately simple: ``rows x output columns x 8 bytes x COPIES``, where the
output columns come from the encoder configuration (registry parameters) and the number of
levels of each categorical column, and ``COPIES`` = 2 accounts for the encoder's frame plus the
ColumnTransformer's stacked array (calibrated on that measurement: the estimate for it is
9.6 GB). The model's own working memory is not counted.

Every registry encoder's width is estimated (:func:`output_columns`, checked against the real
output on small data by tests/test_engine_budget.py): Helmert and BackDiff give L-1 contrast
columns per column (20,000 levels on 30,000 rows: 9.6 GB, which counting them as one column would miss),
Summary one per quantile, String, Gap and MH their components, Hash its components for all
columns together.

The estimate decides before the run; the run itself is bounded too: every task process has a hard
address-space limit (``RLIMIT_AS``, :func:`task_memory_limit`: the budget plus what the
interpreter and its libraries take, :data:`TASK_BASE_BYTES`), so a task whose real use outgrows
the estimate (the model's working memory is not counted) fails with "over the memory budget"
(:func:`over_budget_error`) instead of taking the machine.

A task that encodes to a CSR matrix (:func:`encbench.engine.sparse.uses_sparse`: OH and Sum
with DT and LGBM, whose scores are bit-identical on it, at any size; OH and Sum with any models
that take sparse input once the dense encoding of the dataset, :func:`dense_bytes`, exceeds
:data:`encbench.engine.sparse.SPARSE_ABOVE_BYTES`) costs its stored values, ``nnz x 12 bytes x
COPIES`` (a float64 value and an int32 column index each), not rows x columns: about one value
per row and categorical column (Sum: also the intercept, and L-1 for the rows of the level
that comes last in order of first appearance, whose contrast row is all -1).
"""
from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass

import numpy as np

from encbench.encoders import ALL_REGISTRY
from encbench.engine.sparse import sparse_takers, uses_sparse
from encbench.tasks import get_task

log = logging.getLogger(__name__)

#: bytes of one encoded cell (float64) ...
CELL_BYTES = 8
#: ... or of one stored value of a CSR matrix (float64 value + int32 column index) ...
SPARSE_CELL_BYTES = 12
#: ... times the dense copies a task holds at once (encoder output + stacked array).
COPIES = 2
#: default budget: this share of the machine's physical memory, split between concurrent tasks.
DEFAULT_SHARE = 0.5
#: environment variable overriding the default budget (same syntax as ``--memory-budget``).
BUDGET_ENV = "ENCBENCH_MEMORY_BUDGET"

#: address space a task process holds besides its task's data: the interpreter and the libraries
#: ``warm_up`` imports (VmSize 585 MiB), and what a first task adds (malloc arenas, BLAS and
#: OpenMP buffers, LightGBM): VmPeak 1.63-1.69 GiB over OH, String, Gap, MT and CVGLMM_5 with
#: LogReg, LGBM, SVM, kNN and DT under no, model and full tuning (tic-tac-toe); rounded up.
TASK_BASE_BYTES = 2 * 2**30
#: the words every error of a task stopped by its memory limit starts with
OVER_BUDGET = "over the memory budget"

_UNITS = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def physical_memory() -> int:
    """Bytes of physical memory of this machine (0 if unknown)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def parse_budget(value, *, concurrent: int = 1) -> int:
    """A per-task memory budget in bytes.

    Parameters
    ----------
    value : int, float, str or None
        Bytes (``8e9``), a size (``"4GB"``, ``"512 MiB"``), or a share of the machine's memory
        (``"50%"``), shared by the concurrent tasks. None: ``$ENCBENCH_MEMORY_BUDGET``, else
        :data:`DEFAULT_SHARE` of the machine's memory.
    concurrent : int
        Tasks running at the same time (local workers); a share is divided between them.
    """
    if value is None:
        value = os.environ.get(BUDGET_ENV) or f"{DEFAULT_SHARE:.0%}"
    concurrent = max(1, int(concurrent))
    if isinstance(value, bool):
        raise ValueError(f"memory budget must be bytes, a size like '4GB' or a share like '50%': got {value!r}")
    if isinstance(value, (int, float)):
        if not value > 0:
            raise ValueError(f"memory budget must be positive: got {value!r}")
        return int(value)
    text = str(value).strip().lower().replace(" ", "")
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(%|[kmgt]i?b|b)?", text)
    if not match:
        raise ValueError(f"memory budget must be bytes, a size like '4GB' or a share like '50%': got {value!r}")
    number, unit = float(match.group(1)), match.group(2) or ""
    if unit == "%":
        if not 0 < number <= 100:
            raise ValueError(f"memory budget share must be in (0, 100]%: got {value!r}")
        total = physical_memory()
        if not total:
            raise ValueError(f"cannot read this machine's memory size for a share budget: got {value!r}; give a size")
        return int(total * number / 100 / concurrent)
    if not number > 0:
        raise ValueError(f"memory budget must be positive: got {value!r}")
    return int(number * _UNITS[unit])


def size_text(n_bytes: float) -> str:
    """``'9.6 GB'``, ``'120 MB'``: decimal units as shown to users."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{int(n_bytes)} bytes"


#: encoders whose output width is fixed for all columns together (one column in total, or
#: ``n_components``), not per column
_TOTAL_WIDTH = ("Drop", "Hash")


def output_columns(encoder: str, levels: int, n_classes: int = 2) -> int:
    """Encoded columns one categorical column with ``levels`` levels becomes under ``encoder``.

    Read from the registry's configuration: OH one per level; Sum one per level (L-1 contrasts
    plus the intercept); Helmert and BackDiff L-1 contrasts; Bin the binary digits of the
    ordinal id; Summary one per quantile; MH, String and Gap ``n_components`` (String: at most);
    BlowUp one per fold (``n_splits``); Hash ``n_components`` for all columns together and Drop
    one in total (:func:`dense_bytes` counts them once); every other encoder one. An upper bound
    where the real width depends on the data (Bin, String, Sum's shared intercept).
    ``n_classes``: the target's classes; above two (a multiclass task) a supervised encoder
    encodes each class against the rest, so its width is multiplied by the classes.
    """
    spec = ALL_REGISTRY.get(encoder)
    if spec is None:  # a custom encoder: its width is unknown before it runs (counted as one)
        return 1
    levels = max(1, int(levels))
    if encoder in ("OH", "Sum"):
        width = levels
    elif encoder in ("Helmert", "BackDiff"):
        width = max(1, levels - 1)
    elif encoder == "Bin":
        width = math.ceil(math.log2(levels + 1)) + 1
    elif encoder.startswith("BU"):
        width = int(spec.params.get("n_splits", 1))
    elif "quantiles" in spec.params:
        width = len(spec.params["quantiles"])
    elif "n_components" in spec.params:
        width = int(spec.params["n_components"])
    else:
        width = 1
    return width * n_classes if spec.supervised and n_classes > 2 else width


def task_memory_limit(budget: int) -> int:
    """The hard address-space limit (``RLIMIT_AS``) of a task process whose tasks have ``budget``
    bytes: the budget plus :data:`TASK_BASE_BYTES` for the interpreter and its libraries."""
    return int(budget) + TASK_BASE_BYTES


#: what an allocation that failed under the limit raises or says (numpy's ``_ArrayMemoryError``
#: included; C++ libraries such as LightGBM say ``bad_alloc``)
_MEMORY_ERROR = re.compile(r"MemoryError|bad_alloc|Cannot allocate memory")


def is_memory_error(error: str | None) -> bool:
    """True for the error text of a task whose allocation failed."""
    return bool(error) and bool(_MEMORY_ERROR.search(error))


def over_budget_error(limit: int, error: str) -> str:
    """The error of a task that ran out of its process's memory limit ``limit`` (``error``: what
    it raised), saying so and what to do."""
    budget = limit - TASK_BASE_BYTES
    return (f"{OVER_BUDGET} of {size_text(budget)} per task: the task process may use "
            f"{size_text(limit)} of address space (the budget plus {size_text(TASK_BASE_BYTES)} for its "
            f"libraries) and an allocation failed ({error}); raise --memory-budget, run fewer "
            f"--workers, or leave the encoder out")


@dataclass(frozen=True)
class Oversize:
    """One (dataset, encoder) whose task would exceed the memory budget."""

    dataset: str
    spec: str
    encoder: str
    column: str
    levels: int
    rows: int
    estimate: int
    budget: int
    sparse: bool = False
    #: models that take this encoder's output sparse (when another model of the plan does not)
    sparse_models: tuple[str, ...] = ()
    sparse_estimate: int | None = None

    @property
    def reason(self) -> str:
        text = (f"encoder {self.encoder} on dataset {self.spec!r}: column {self.column!r} has "
                f"{self.levels:,} levels on {self.rows:,} rows, so one task would need about "
                f"{size_text(self.estimate)} ({'sparse' if self.sparse else 'dense'} output), "
                f"over the memory budget of {size_text(self.budget)} per task")
        if self.sparse_models and self.sparse_estimate is not None:
            text += (f"; with only the models {', '.join(self.sparse_models)} (--models) its "
                     f"output would be sparse, about {size_text(self.sparse_estimate)}")
        return text


def dense_bytes(encoder: str, n_rows: int, levels: dict[str, int], n_numerical: int,
                n_classes: int = 2) -> int:
    """Bytes of one dense float64 encoding of ``n_rows`` rows under ``encoder``.

    ``levels``: the number of levels of each categorical column; ``n_numerical``: the numerical
    columns (one output column each); ``n_classes``: the target's classes (see
    :func:`output_columns`). One copy, without :data:`COPIES`: the size the engine
    compares with :data:`encbench.engine.sparse.SPARSE_ABOVE_BYTES`.
    """
    widths = [output_columns(encoder, n, n_classes) for n in levels.values()]
    total = (max(widths, default=1) if encoder in _TOTAL_WIDTH else sum(widths)) + n_numerical
    return int(n_rows * total * CELL_BYTES)


def estimate_task_bytes(encoder: str, n_rows: int, levels: dict[str, int], n_numerical: int, *,
                        sparse: bool = False, last_counts: dict[str, int] | None = None,
                        n_classes: int = 2) -> tuple[int, str | None]:
    """(bytes, widest column) one task of ``encoder`` needs for the encoded data (estimate).

    ``sparse``: the task encodes to CSR (OH, Sum): count stored values instead of cells.
    ``last_counts``: per column, the rows of the level that comes last in order of first
    appearance (Sum stores L-1 values for each of them); unknown: one row. ``n_classes``: the
    target's classes (a multiclass task multiplies a supervised encoder's columns).
    """
    widths = {c: output_columns(encoder, n, n_classes) for c, n in levels.items()}
    widest = max(widths, key=widths.get) if widths else None
    if sparse:
        stored = n_rows * (len(levels) + n_numerical)
        if encoder == "Sum":
            stored += n_rows  # the intercept
            stored += sum(max(0, (last_counts or {}).get(c, 1)) * max(0, n - 2)
                          for c, n in levels.items())
        return int(stored * SPARSE_CELL_BYTES * COPIES), widest
    return dense_bytes(encoder, n_rows, levels, n_numerical, n_classes) * COPIES, widest


def _last_level_counts(X, columns) -> dict[str, int]:
    """Rows of the level that comes last in order of first appearance, per column."""
    import pandas as pd

    counts = {}
    for c in columns:
        codes, uniques = pd.factorize(X[c], use_na_sentinel=False)
        counts[c] = int((codes == len(uniques) - 1).sum()) if len(uniques) else 0
    return counts


def check_plan(grid_plan, budget: int) -> list[Oversize]:
    """Every (dataset, encoder) of a plan whose task estimate exceeds ``budget`` bytes."""
    found = []
    models = tuple(grid_plan.grid.models)
    for spec, ds in grid_plan.datasets.items():
        # a time split's time column orders the rows and is never encoded
        time_column = grid_plan.grid.time_column
        levels = {c: int(ds.X[c].nunique(dropna=True)) for c in ds.categorical if c != time_column}
        n_numerical = ds.n_features - ds.n_categorical - int(
            time_column in ds.X.columns and time_column not in ds.categorical)
        last_counts = None
        n_classes = len(np.unique(ds.y)) if get_task(ds.task).column_per_class else 2
        for encoder in grid_plan.grid.encoders:
            dense = dense_bytes(encoder, ds.n_rows, levels, n_numerical, n_classes)
            accepting = sparse_takers(encoder, models, dense_bytes=dense)
            if encoder == "Sum" and accepting and last_counts is None:
                last_counts = _last_level_counts(ds.X, levels)
            sparse = uses_sparse(encoder, models, dense_bytes=dense)
            estimate, widest = estimate_task_bytes(encoder, ds.n_rows, levels, n_numerical,
                                                   sparse=sparse, last_counts=last_counts,
                                                   n_classes=n_classes)
            if estimate > budget:
                hint = {}
                if accepting and not sparse:  # the plan's other models keep it dense
                    hint = {"sparse_models": accepting, "sparse_estimate": estimate_task_bytes(
                        encoder, ds.n_rows, levels, n_numerical, sparse=True,
                        last_counts=last_counts, n_classes=n_classes)[0]}
                found.append(Oversize(ds.key, spec, encoder, str(widest), levels.get(widest, 0),
                                      ds.n_rows, estimate, budget, sparse, **hint))
    for item in found:
        log.warning("memory guard: %s", item.reason)
    return found
