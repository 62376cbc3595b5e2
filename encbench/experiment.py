"""What identifies one experiment, and the helpers every layer writes over it.

An experiment is one dataset and one encoder evaluated under one *setting*: a value of each
factor of :data:`encbench.vocab.FACTORS` (model, tuning, scoring), the factors consensus
rankings are computed per, one outer evaluation split (:data:`encbench.vocab.SPLITS`) and one
task type (:data:`encbench.vocab.TASKS`: binary, multiclass, regression), which are never
pooled. :data:`EXPERIMENT_KEY` lists those columns; a result row adds its
``fold`` (:data:`RESULT_KEY`). The store's primary key, the score view's grouping, one score
per experiment, the comparison with the published scores and the engine's resume all read
them from here.

Adding a factor to the experiment means adding it to :data:`encbench.vocab.FACTORS` when
rankings are computed per value of it, else to :data:`SETTING_EXTRAS`, giving it a default in
:data:`DEFAULTS` for rows written before it existed, plus a migration adding the column to
``results`` and its primary key.

Examples
--------
>>> EXPERIMENT_KEY
('dataset', 'encoder', 'model', 'tuning', 'scoring', 'split', 'task')
>>> setting_label({"model": "LogReg", "tuning": "no", "scoring": "AUC"})
'LogReg / no / AUC'
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from encbench import vocab
from encbench.vocab import FACTORS

#: Evaluation split of a row that does not say: the published protocol's stratified folds.
DEFAULT_SPLIT = "cv"
#: Task type of a row that does not say: the published study's binary classification.
DEFAULT_TASK = "binary"
#: Key columns besides :data:`FACTORS` that belong to a setting but are never pooled over:
#: a view shows one value of each (the split: cv or time; the task: binary, multiclass or
#: regression).
SETTING_EXTRAS: tuple[str, ...] = ("split", "task")
#: The columns of one setting: the ranking factors, then the never-pooled ones.
SETTING: tuple[str, ...] = (*FACTORS, *SETTING_EXTRAS)
#: The columns that identify one experiment.
EXPERIMENT_KEY: tuple[str, ...] = ("dataset", "encoder", *SETTING)
#: The key of one result row: an experiment and one outer fold (the store's primary key,
#: after the run id).
RESULT_KEY: tuple[str, ...] = (*EXPERIMENT_KEY, "fold")
#: The value a key column has in a frame that lacks it (rows from before the column existed,
#: or hand-built frames of one setting).
DEFAULTS: Mapping[str, str] = {"split": DEFAULT_SPLIT, "task": DEFAULT_TASK}


def key_columns(frame: pd.DataFrame, key: Sequence[str] = EXPERIMENT_KEY) -> list[str]:
    """The columns of ``key`` that ``frame`` has, in key order.

    A column with a default (:data:`DEFAULTS`) may be absent; any other is required.

    Raises
    ------
    ValueError
        If ``frame`` lacks a key column without a default.
    """
    missing = [c for c in key if c not in frame.columns and c not in DEFAULTS]
    if missing:
        raise ValueError(f"score rows lack the experiment key columns {missing!r}: got columns "
                         f"{list(frame.columns)!r}")
    return [c for c in key if c in frame.columns]


def with_key(frame: pd.DataFrame, key: Sequence[str] = EXPERIMENT_KEY) -> pd.DataFrame:
    """``frame`` with every column of ``key``: an absent column, or a missing value of a column
    with a default (:data:`DEFAULTS`), gets the default.

    Raises
    ------
    ValueError
        If ``frame`` lacks a key column without a default.
    """
    key_columns(frame, key)
    filled = {c: frame[c].fillna(DEFAULTS[c]) if c in frame.columns else DEFAULTS[c]
              for c in key if c in DEFAULTS and (c not in frame.columns or frame[c].isna().any())}
    return frame.assign(**filled) if filled else frame


def setting_label(setting: Mapping[str, object] | Sequence[object]) -> str:
    """How a setting of the ranking factors is named in tables and charts: ``"LogReg / no / AUC"``.

    ``setting`` maps each factor of :data:`FACTORS` to its value, or lists the values in that order.
    """
    values = ([setting[f] for f in FACTORS] if isinstance(setting, Mapping) else list(setting))
    if len(values) != len(FACTORS):
        raise ValueError(f"a setting has one value per factor {FACTORS!r}: got {setting!r}")
    return " / ".join(map(str, values))


def natural_key(label: object) -> tuple:
    """Sort key of a dataset key: numeric ones (OpenML ids) in numeric order, then the others."""
    text = str(label)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def encoder_key(encoder: object) -> tuple[int, str]:
    """Sort key of an encoder: its place in :data:`encbench.vocab.ENCODERS`, others after by name."""
    text = str(encoder)
    order = vocab.ENCODERS
    return (order.index(text), "") if text in order else (len(order), text)


def _column_key(column: str):
    if column == "dataset":
        return natural_key
    if column == "encoder":
        return encoder_key
    return lambda value: vocab.order_key(column, value)


def sort_experiments(frame: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` sorted by ``by`` (default: the key columns it has, dataset first, then the
    setting, then the encoder), each column in its display order: datasets naturally, factor
    values and encoders in vocabulary order. The index is reset.
    """
    if by is None:
        present = key_columns(frame)
        by = ["dataset", *(c for c in SETTING if c in present), "encoder"]
    if frame.empty:
        return frame.reset_index(drop=True)
    keys = {f"_sort_{c}": frame[c].map(_column_key(c)) for c in by}
    out = frame.assign(**keys).sort_values(list(keys), kind="stable")
    return out.drop(columns=list(keys)).reset_index(drop=True)


def settings_of(frame: pd.DataFrame, factors: Sequence[str] = FACTORS) -> list[tuple[str, ...]]:
    """The distinct values of ``factors`` present in ``frame``, as text, in vocabulary order."""
    combos = frame[list(factors)].drop_duplicates().astype(str)
    rows = [tuple(r) for r in combos.itertuples(index=False, name=None)]
    return sorted(rows, key=lambda r: tuple(vocab.order_key(f, v) for f, v in zip(factors, r)))


def group_settings(frame: pd.DataFrame, factors: Sequence[str] = FACTORS) -> Iterable[tuple[dict, pd.DataFrame]]:
    """``(setting, rows)`` for each setting of ``factors`` in ``frame``, in vocabulary order;
    ``setting`` maps each factor to its value."""
    groups = dict(iter(frame.groupby(list(factors), observed=True, sort=False)))
    ordered_keys = sorted(groups, key=lambda k: tuple(vocab.order_key(f, v) for f, v in zip(factors, k)))
    for values in ordered_keys:
        yield dict(zip(factors, values)), groups[values]
