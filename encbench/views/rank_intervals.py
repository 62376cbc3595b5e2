"""Consensus page, Rank intervals: how large a bootstrap is, and the function a worker runs.

:func:`encbench.stats.rank_intervals` ranks every encoder on every voter (a dataset, or a
(dataset, combination) when pooled) once per resample, so its work grows as
``B x voters x encoders`` (:func:`bootstrap_cells`). Up to :data:`IN_PAGE_CELLS` the page computes
it on the server, where it is cached; beyond, the page hands :func:`rank_intervals_job` to an
:class:`encbench.jobs.ProcessJob`, so that a large B stalls neither the page nor other visitors.
"""
from __future__ import annotations

import pandas as pd

from encbench import stats

#: the most cells (``B x voters x encoders``) computed in the page. Elo, the slowest strategy,
#: ranks about 2 to 3 million cells a second on one core (the others 5 to 12 million), so the page
#: waits about half a second at most. The default B = 200 on one
#: published combination (50 datasets, 32 encoders: 320,000 cells) stays in the page; B = 2000
#: there (3.2 million) goes to a worker process, as does B = 200 over the five models pooled
#: (220 voters: 1.4 million).
IN_PAGE_CELLS = 1_000_000

#: the columns :func:`encbench.stats.rank_intervals` reads (the metric orients its scores)
COLUMNS = ("scoring", "dataset", "encoder", "cv_score")


def bootstrap_cells(scores: pd.DataFrame, B: int) -> int:
    """``B x voters x encoders``: the ranks a bootstrap of ``B`` resamples of ``scores`` computes."""
    return int(B) * int(scores["dataset"].nunique()) * int(scores["encoder"].nunique())


def in_worker(cells: int) -> bool:
    """Whether a bootstrap of ``cells`` (:func:`bootstrap_cells`) runs in a worker process."""
    return cells > IN_PAGE_CELLS


def job_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``scores`` a worker needs (fewer bytes to pickle; the intervals are the same)."""
    return scores[[c for c in COLUMNS if c in scores.columns]].reset_index(drop=True)


def rank_intervals_job(scores: pd.DataFrame, strategy: str, B: int, params: tuple = (), *,
                       progress, should_stop) -> pd.DataFrame | None:
    """:func:`encbench.stats.rank_intervals` as a :class:`encbench.jobs.ProcessJob` runs it.

    ``params`` is the page's ``((name, value), ...)`` of every chosen strategy's parameters; the
    ones ``strategy`` uses are passed on, with seed 0 as in the page. The bootstrap reports no
    progress and does not poll ``should_stop`` once it runs, and a cancelled one has nothing
    worth keeping: start the job with ``cancel_grace=0`` so that a cancel ends its worker at
    once. A job cancelled before it starts returns None.
    """
    if should_stop():
        return None
    use = stats.params_for(strategy, dict(params))
    result = stats.rank_intervals(scores, strategy, B=int(B), seed=0, **use)
    progress(1, 1)
    return result
