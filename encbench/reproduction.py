"""Local scores beside the published ones: the one comparison every view and command uses.

A local score has a published counterpart when the published benchmark holds the same
experiment (:data:`encbench.experiment.EXPERIMENT_KEY`): the same dataset, encoder, model,
tuning, metric and split. The published scores are all ``cv`` (the study's stratified folds),
so a local ``time`` score has no counterpart. Several local runs of one experiment are
averaged. Each pair carries the published cell's reproducibility note
(:func:`encbench.store.published.reproducibility_notes`: why that published score is no
reference for a local one, or ``''``), and agrees when the scores differ by at most
:data:`TOLERANCE`.

Who reads it: the Results explorer's "Published vs local" table, the control encoders of a
placement (:func:`encbench.placement.control_agreement`), the scores ``encbench run`` prints
after a run, and the published consensus set beside a user's ranking
(:func:`encbench.views.run_result.compare_with_published`, which pairs across datasets).

Examples
--------
>>> import pandas as pd
>>> cell = dict(dataset="31", model="DT", tuning="no", scoring="AUC")
>>> local = pd.DataFrame([dict(cell, encoder="OH", cv_score=0.802, run_id="r1"),
...                       dict(cell, encoder="OH", cv_score=0.804, run_id="r2")])
>>> published = pd.DataFrame([dict(cell, encoder="OH", cv_score=0.80)])
>>> pairs = compare_to_published(local, published)
>>> round(float(pairs.cells["difference"].iloc[0]), 4), pairs.cells["local_runs"].iloc[0], pairs.share
(0.003, 'r1,r2', 1.0)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from encbench.experiment import EXPERIMENT_KEY, sort_experiments, with_key
from encbench.store.published import NOTE_SUMMARIES, reproducibility_notes

#: A local score agrees with its published counterpart when they differ by at most this.
TOLERANCE = 0.005
#: Below this share of agreeing cells, a comparison warns that the local protocol may not
#: reproduce the study on these data.
WARN_SHARE = 0.90

#: the columns of :attr:`Reproduction.cells` after the key
VALUE_COLUMNS = ("local", "published", "difference", "within", "note", "local_runs")


@dataclass(frozen=True)
class Reproduction:
    """Local scores paired with their published counterparts.

    Attributes
    ----------
    cells : pandas.DataFrame
        One row per local experiment: the key columns
        (:data:`~encbench.experiment.EXPERIMENT_KEY`), ``local`` (mean over local runs),
        ``published`` (NaN without a counterpart, when unmatched rows are kept), ``difference``
        (local - published), ``within`` (``|difference| <= tolerance``), ``note`` (the published
        cell's reproducibility note, ``''`` when it is a reference) and ``local_runs`` (the run
        ids, joined by commas). Sorted by dataset, setting and encoder in display order.
    tolerance : float
        The agreement tolerance.
    """

    cells: pd.DataFrame
    tolerance: float = TOLERANCE

    @property
    def matched(self) -> pd.DataFrame:
        """The cells with a published counterpart."""
        return self.cells[self.cells["published"].notna()]

    @property
    def n_cells(self) -> int:
        """Cells with a published counterpart."""
        return int(self.cells["published"].notna().sum())

    @property
    def n_within(self) -> int:
        """Of those, cells within the tolerance."""
        return int(self.matched["within"].sum())

    @property
    def share(self) -> float | None:
        """Share of the matched cells within the tolerance (None: no cell has a counterpart)."""
        return self.n_within / self.n_cells if self.n_cells else None

    def known(self) -> dict[str, int]:
        """Of the matched cells outside the tolerance, how many have a reproducibility note, per
        note (:data:`encbench.store.published.NOTE_SUMMARIES` wording -> count), most first."""
        off = self.matched[~self.matched["within"].astype(bool)]
        counts = off.loc[off["note"] != "", "note"].map(lambda n: NOTE_SUMMARIES.get(n, n)).value_counts()
        return {str(k): int(v) for k, v in counts.items()}

    def known_text(self) -> str:
        """``"3 of the 5 cells off are published cells known not to be reproducible: ..."``, or ``''``."""
        known = self.known()
        if not known:
            return ""
        off = self.n_cells - self.n_within
        return (f"{sum(known.values())} of the {off} cells off are published cells known not to be "
                f"reproducible: " + "; ".join(f"{n} {kind}" for kind, n in known.items()))

    def by(self, columns: Sequence[str]) -> pd.DataFrame:
        """Agreement per group of matched cells: ``*columns, cells, within, share``, groups in
        display order."""
        columns = list(columns)
        matched = self.matched
        out = (matched.assign(within=matched["within"].astype(bool))
               .groupby(columns, as_index=False, observed=True)
               .agg(cells=("within", "size"), within=("within", "sum")))
        out["share"] = out["within"] / out["cells"]
        return sort_experiments(out, by=columns)


def _one_per_experiment(frame: pd.DataFrame, key: list[str], value: str) -> pd.DataFrame:
    """``key + [value]`` (and ``local_runs``): the mean ``cv_score`` of each experiment."""
    grouped = frame.groupby(key, observed=True, sort=False)
    out = grouped["cv_score"].mean().rename(value).to_frame()
    if value == "local":
        if "run_id" in frame.columns:
            runs = grouped["run_id"].agg(lambda s: ",".join(sorted({str(r) for r in s})))
        else:
            runs = pd.Series("", index=out.index)
        out["local_runs"] = runs
    return out.reset_index()


def compare_to_published(local: pd.DataFrame, published: pd.DataFrame, *,
                         tolerance: float = TOLERANCE, keep_unmatched: bool = False,
                         across: Sequence[str] = ()) -> Reproduction:
    """Pair each local experiment with the published score of the same experiment.

    Parameters
    ----------
    local, published : pandas.DataFrame
        Score rows (:func:`encbench.store.queries.load_scores`) of local runs and of the
        published benchmark: the key columns and ``cv_score`` (``run_id`` optional; ``split``
        optional, default ``cv``). Rows of an origin other than the argument's are not
        filtered here: split a mixed frame with :func:`split_origins`.
    tolerance : float
        Cells within it agree.
    keep_unmatched : bool
        Keep local experiments without a published counterpart (``published`` NaN).
    across : sequence of str
        Key columns the pairing ignores: a local score is then paired with the published score
        of every value of them, the pair carrying the published value. ``("dataset",
        "split")`` sets a user's scores on one dataset beside the published scores of the same
        setting on every published dataset.

    Returns
    -------
    Reproduction

    Raises
    ------
    ValueError
        If a frame lacks a key column (other than ``split`` and the ``across`` columns of the
        local frame) or ``across`` names a column outside the key.
    """
    across = list(across)
    unknown = [c for c in across if c not in EXPERIMENT_KEY]
    if unknown:
        raise ValueError(f"across must name experiment key columns {EXPERIMENT_KEY!r}: got {unknown!r}")
    on = [c for c in EXPERIMENT_KEY if c not in across]
    mine = _one_per_experiment(with_key(local, on), on, "local")
    theirs = _one_per_experiment(with_key(published), list(EXPERIMENT_KEY), "published")
    cells = mine.merge(theirs, on=on, how="left" if keep_unmatched else "inner",
                       validate="one_to_many" if across else "one_to_one")
    cells["difference"] = cells["local"] - cells["published"]
    cells["within"] = (cells["difference"].abs() <= tolerance).to_numpy()
    matched = cells["published"].notna()
    cells["note"] = ""
    if matched.any():
        cells.loc[matched, "note"] = reproducibility_notes(cells[matched]).to_numpy()
    cells = cells[[*EXPERIMENT_KEY, *VALUE_COLUMNS]]
    return Reproduction(sort_experiments(cells), tolerance)


def split_origins(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(local, published)`` rows of a frame holding both origins (its ``origin`` column)."""
    return scores[scores["origin"] == "local"], scores[scores["origin"] == "published"]
