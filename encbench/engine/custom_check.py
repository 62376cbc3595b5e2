"""The check of a custom encoder before a run: fit and transform on a sample, in a task process.

A run with custom encoders (:mod:`encbench.custom`: their specs and plugins) checks each one here
before any task starts (:func:`encbench.engine.grid.plan`): the encoder is built and run in a
bounded task process (:class:`encbench.engine.task_process.TaskProcess`), so an encoder that hangs,
eats the memory or ends its process fails its check with the reason and the caller goes on.
"""
from __future__ import annotations

import inspect
import logging
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from encbench.custom import CustomEncoder
from encbench.engine.budget import parse_budget, task_memory_limit
from encbench.engine.task_process import ChildFailed, TaskProcess

log = logging.getLogger(__name__)

#: rows of the sample the pre-run check fits and transforms.
CHECK_ROWS = 300


@dataclass(frozen=True)
class CheckReport:
    """Outcome of :func:`check_encoder` on one sample.

    Attributes
    ----------
    name : str
    problems : tuple of str
        Empty when the encoder passed.
    n_rows, n_columns_in, n_columns_out : int
        Sample size and the encoder's input/output widths (0 when it failed before).
    seconds : float
    """

    name: str
    problems: tuple[str, ...]
    n_rows: int
    n_columns_in: int
    n_columns_out: int
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.problems


def _as_matrix(output, what: str, n_rows: int) -> tuple[np.ndarray | None, list[str]]:
    """The output as a float matrix, and problems with it."""
    if hasattr(output, "toarray"):
        output = output.toarray()
    try:
        matrix = np.asarray(output.to_numpy() if hasattr(output, "to_numpy") else output, dtype=float)
    except (TypeError, ValueError) as exc:
        return None, [f"{what} returned values that are not numbers ({exc})"]
    if matrix.ndim == 1:
        matrix = matrix.reshape(-1, 1)
    if matrix.ndim != 2:
        return None, [f"{what} returned a {matrix.ndim}-D array; an encoder returns one row per input row"]
    problems = []
    if matrix.shape[0] != n_rows:
        problems.append(f"{what} returned {matrix.shape[0]} rows for {n_rows} input rows")
    if matrix.shape[1] == 0:
        problems.append(f"{what} returned no columns")
    bad = ~np.isfinite(matrix)
    if bad.any():
        problems.append(f"{what} returned {int(bad.sum())} NaN or infinite values (e.g. in output "
                        f"column {int(np.argwhere(bad)[0][1])}); encode missing and unseen levels as numbers")
    return matrix, problems


def check_encoder(spec: CustomEncoder, X: pd.DataFrame, y, *, n_rows: int = CHECK_ROWS,
                  seed: int = 0) -> CheckReport:
    """Fit and transform a custom encoder on a small sample, as the protocol will.

    The sample's categorical columns are imputed (most frequent, as the protocol does) and split
    into a training part and a test part holding one unseen level. Checked: it builds; ``fit``
    (through ``fit_transform``) and ``transform`` run; both return one row per input row, the same
    number of numeric columns, no NaN or infinity; ``transform`` takes no target; and ``transform``
    is a function of each row's values alone (rows permuted in give the same rows permuted out,
    equal rows give equal outputs): an encoder that returned training targets by position would
    leak the target into the test fold.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    X, y = _sample(X, y, n_rows, rng)
    return _check_sample(spec, X, y, rng, start=start)


def _sample(X: pd.DataFrame, y, n_rows: int, rng) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows the check uses: at most ``n_rows``, drawn with ``rng``, in their order."""
    y = np.asarray(y)
    if len(X) > n_rows:
        take = np.sort(rng.choice(len(X), n_rows, replace=False))
        X, y = X.iloc[take], y[take]
    return X.reset_index(drop=True), y


def _check_sample(spec: CustomEncoder, X: pd.DataFrame, y: np.ndarray, rng, *,
                  start: float | None = None) -> CheckReport:
    """:func:`check_encoder` on the sample (``rng`` continues from drawing it)."""
    start = time.perf_counter() if start is None else start
    X = X.apply(lambda c: c.fillna(c.mode().iloc[0]) if c.notna().any() else c.fillna("missing"))
    n = len(X)
    cut = max(2, (2 * n) // 3)
    X_train, y_train = X.iloc[:cut].reset_index(drop=True), y[:cut]
    X_test = X.iloc[cut:].reset_index(drop=True).copy()
    if len(X_test) and X_test.shape[1]:
        X_test.iloc[0, 0] = "__encbench_unseen_level__"

    def report(problems, width=0):
        return CheckReport(spec.name, tuple(problems), n, X.shape[1], width, time.perf_counter() - start)

    try:
        encoder = spec.build()
    except ValueError as exc:
        return report([str(exc)])
    transform = encoder.transform
    try:
        required = [p for p in inspect.signature(transform).parameters.values()
                    if p.name == "y" and p.default is inspect.Parameter.empty]
    except (TypeError, ValueError):
        required = []
    if required:
        return report(["transform requires the target y: an encoder must encode test rows without "
                       "their labels (that would leak the target)"])
    try:
        fitted = encoder.fit_transform(X_train, y_train) if hasattr(encoder, "fit_transform") \
            else encoder.fit(X_train, y_train).transform(X_train)
    except Exception as exc:  # noqa: BLE001 - user code: its error is the finding
        return report([f"fit on {len(X_train)} rows x {X.shape[1]} categorical columns raised "
                       f"{type(exc).__name__}: {exc}"])
    train_matrix, problems = _as_matrix(fitted, "fit_transform", len(X_train))
    if train_matrix is None:
        return report(problems)
    width = train_matrix.shape[1]
    try:
        test_matrix, more = _as_matrix(encoder.transform(X_test), "transform (with an unseen level)",
                                       len(X_test))
    except Exception as exc:  # noqa: BLE001 - user code: its error is the finding
        return report(problems + [f"transform of new rows (one holding an unseen level) raised "
                                  f"{type(exc).__name__}: {exc}"], width)
    problems += more
    if test_matrix is not None and test_matrix.shape[1] != width:
        problems.append(f"transform returned {test_matrix.shape[1]} columns but fit_transform {width}; "
                        f"both must give the same columns")
    if not problems:  # the row-wise checks need well-shaped outputs
        problems += _leakage_problems(encoder, X_train, rng)
    return report(problems, width)


def _leakage_problems(encoder, X_train: pd.DataFrame, rng) -> list[str]:
    """transform must be row-wise: permuted rows in -> same rows permuted out; equal rows equal."""
    try:
        base, _ = _as_matrix(encoder.transform(X_train), "transform", len(X_train))
        perm = rng.permutation(len(X_train))
        shuffled, _ = _as_matrix(encoder.transform(X_train.iloc[perm].reset_index(drop=True)),
                                 "transform", len(X_train))
        half = X_train.iloc[: max(1, len(X_train) // 4)]
        doubled, _ = _as_matrix(encoder.transform(pd.concat([half, half], ignore_index=True)),
                                "transform", 2 * len(half))
    except Exception as exc:  # noqa: BLE001 - user code: its error is the finding
        return [f"transform of the training rows in another order raised {type(exc).__name__}: {exc}"]
    if (base is None or shuffled is None or doubled is None or len(base) != len(X_train)
            or len(doubled) != 2 * len(half)):
        return []
    problems = []
    if base.shape != shuffled.shape or not np.allclose(base[perm], shuffled, equal_nan=True):
        problems.append("transform depends on the position of rows, not only on their values (rows given "
                        "in another order were encoded differently): it may return stored training "
                        "targets, which leaks the target")
    elif not np.allclose(doubled[: len(half)], doubled[len(half):], equal_nan=True):
        problems.append("transform encoded equal rows differently: it must be a function of a row's "
                        "values alone (no target, no position)")
    return problems


def check_in_process(spec: dict, X: pd.DataFrame, y: np.ndarray, rng_state: dict) -> CheckReport:
    """:func:`check_encoder`'s work on a drawn sample, as a task process runs it.

    ``rng_state`` is the state of the generator that drew the sample, so the result equals
    :func:`check_encoder` on the whole data.
    """
    rng = np.random.default_rng()
    rng.bit_generator.state = rng_state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _check_sample(CustomEncoder.from_dict(spec), X, y, rng)


def check_memory_limit(memory_budget=None) -> int:
    """The memory cap of the check process: the one a task process of the run gets
    (:func:`encbench.engine.budget.task_memory_limit` of the budget), so an encoder is never
    refused by its check for memory its tasks would have had, nor passed with more."""
    return task_memory_limit(parse_budget(memory_budget))


def _bounded_check(proc, spec: CustomEncoder, X: pd.DataFrame, y: np.ndarray, *, n_rows: int,
                   timeout: float, memory_limit: int) -> CheckReport:
    """:func:`check_encoder` in the task process ``proc``, within ``timeout`` seconds."""
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    X, y = _sample(X, y, n_rows, rng)
    try:
        return proc.call("encbench.engine.custom_check:check_in_process",
                         (spec.to_dict(), X, y, rng.bit_generator.state), timeout)
    except ChildFailed as exc:
        if exc.timed_out:
            problem = (f"the check (fit and transform on {len(X)} rows) did not finish within the run's "
                       f"timeout of {timeout:g} s and was stopped: does fit or transform hang?")
        elif exc.code is not None and exc.code > 0:
            problem = (f"the check {exc}: the encoder ended the process (sys.exit or os._exit) "
                       f"instead of raising an exception")
        else:
            problem = (f"the check {exc} (it may use at most {memory_limit / 2**30:.1f} GiB of memory, "
                       f"the run's memory budget per task)")
        quoted = exc.output.strip()[-300:]
        if quoted:
            problem += f"; its last output: {quoted!r}"
        return CheckReport(spec.name, (problem,), len(X), X.shape[1], 0, time.perf_counter() - start)
    except ValueError as exc:  # the check itself raised (e.g. the encoder's output cannot be sent)
        return CheckReport(spec.name, (f"the check raised {exc}",), len(X), X.shape[1], 0,
                           time.perf_counter() - start)


def check_on_datasets(customs, datasets, *, n_rows: int = CHECK_ROWS, timeout: float | None = None,
                      memory_limit: int | None = None) -> list[CheckReport]:
    """Check each custom encoder on the first dataset with categorical columns, in a task process.

    The encoders run in a child process (:class:`encbench.engine.task_process.TaskProcess`) whose
    address space is capped at ``memory_limit`` and which is killed, with everything it
    started, after ``timeout`` seconds: an encoder that hangs, eats the memory or ends its
    process fails its check with the reason, and the caller (a run, or the app's server) goes
    on. Nothing of the encoder is imported in the calling process.

    Parameters
    ----------
    timeout : float, optional
        Seconds the check of one encoder may take (a run's ``--timeout``); default 600.
    memory_limit : int, optional
        Bytes; default :func:`check_memory_limit`.

    Raises
    ------
    ValueError
        Listing every failed check, with the dataset it used.
    """
    customs = list(customs)
    if not customs:
        return []
    sample = next((ds for ds in datasets if len(ds.categorical)), None)
    if sample is None:
        raise ValueError("no dataset of the run has a categorical column to check the custom "
                         f"encoders on: got {[ds.key for ds in datasets]!r}")
    timeout = 600.0 if timeout is None else float(timeout)
    memory_limit = check_memory_limit() if memory_limit is None else int(memory_limit)
    X, y = sample.X[list(sample.categorical)], sample.y
    # the call is synchronous: the starting thread outlives the process, whichever it is
    proc = TaskProcess(die_with_parent=True, memory_limit=memory_limit)
    try:
        reports = [_bounded_check(proc, spec, X, y, n_rows=n_rows, timeout=timeout,
                                  memory_limit=memory_limit) for spec in customs]
    finally:
        proc.stop()
    failed = [r for r in reports if not r.ok]
    if failed:
        lines = [f"custom encoder {r.name!r} failed the check on {r.n_rows} rows of dataset "
                 f"{sample.name!r} ({sample.key}):" + "".join(f"\n  - {p}" for p in r.problems)
                 for r in failed]
        raise ValueError("\n".join(lines))
    for r in reports:
        log.info("custom encoder %s passed the check on %d rows of %s: %d columns in, %d out (%.2f s)",
                 r.name, r.n_rows, sample.name, r.n_columns_in, r.n_columns_out, r.seconds)
    return reports
