"""One call from a results database to a ranking, its tests and its critical-difference diagram.

For a notebook (docs/user-guide.md, "Python API")::

    from encbench import analysis
    scores = analysis.load_scores(task="binary", models="LogReg", tunings="no", scorings="AUC")
    result = analysis.analyse(scores)            # R-M, Friedman + Nemenyi, every encoder vs the best
    print(result)                                # a short report
    result.ranking                               # encoder, rank, mean_rank, n_datasets
    result.cd_diagram().save("cd.svg")           # an Altair chart

:func:`analyse` runs what the Consensus page runs, on the same library functions
(:mod:`encbench.stats`, :mod:`encbench.views.consensus`): the consensus of one strategy, the
Friedman test with Nemenyi's critical difference on a design for incomplete blocks
(:func:`encbench.stats.block_design`), and every encoder against a control (Holm). Several
settings (model x tuning x metric) in ``scores`` are pooled: each (dataset, setting) is a voter.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from encbench import stats, vocab
from encbench.experiment import settings_of
from encbench.store import Reader, queries
from encbench.views.consensus import cd_inputs, cd_subtitle, pooled_scores

__all__ = ["Analysis", "analyse", "load_scores"]


def _listed(values: str | Sequence[str] | None) -> list[str] | None:
    return [values] if isinstance(values, str) else (None if values is None else list(values))


def load_scores(db: str | Path | None = None, *, task: str = "binary",
                models: str | Sequence[str] | None = None, tunings: str | Sequence[str] | None = "no",
                scorings: str | Sequence[str] | None = None, origins: str | Sequence[str] | None = None,
                datasets: Sequence[str] | None = None, encoders: Sequence[str] | None = None,
                split: str = "cv", prefer: str | None = "published") -> pd.DataFrame:
    """One score per experiment of a results database, filtered.

    Parameters
    ----------
    db : path, optional
        The database file (default: ``ENCBENCH_DB``, else the checkout's or the user's); its
        read snapshot is opened read-only, so a running app or run is not disturbed.
    task : {'binary', 'multiclass', 'regression'}
        Tasks are never pooled: one at a time.
    models, tunings, scorings, origins, datasets, encoders : str or list, optional
        Keep these values only (None: all). ``tunings`` defaults to ``'no'``.
    split : {'cv', 'time'}
        The evaluation split (never pooled either).
    prefer : {'published', 'local'} or None
        Which score counts where an experiment has both a published and a local one
        (:func:`encbench.store.queries.one_score_per_experiment`).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, tuning, scoring, encoder, cv_score, ...`` (the ``scores`` view).
    """
    rows = queries.load_scores(Reader(db), tasks=[task], models=_listed(models), tunings=_listed(tunings),
                               scorings=_listed(scorings), origins=_listed(origins),
                               datasets=_listed(datasets), encoders=_listed(encoders), splits=[split])
    return queries.one_score_per_experiment(rows, prefer)


#: the designs ``design='auto'`` tries, in order
AUTO_DESIGNS = ("complete-datasets", "common-encoders", "impute")


def _design(frame: pd.DataFrame, design: str) -> stats.BlockDesign:
    """The block design of the tests: ``design``, or for ``'auto'`` the first of
    :data:`AUTO_DESIGNS` keeping 2 datasets and 2 encoders."""
    for name in AUTO_DESIGNS if design == "auto" else (design,):
        blocks = stats.block_design(frame, name)
        if blocks.scores["dataset"].nunique() >= 2 and blocks.scores["encoder"].nunique() >= 2:
            return blocks
    raise ValueError(f"the design {design!r} leaves fewer than 2 datasets or encoders to test "
                     f"({blocks.description}); choose another (encbench.stats.BLOCK_DESIGNS)")


@dataclass(frozen=True)
class Analysis:
    """The result of :func:`analyse`.

    Attributes
    ----------
    strategy : str
        The consensus strategy of ``ranking``.
    ranking : pandas.DataFrame
        ``encoder, rank`` (the strategy's consensus, 1 = best, ties share) ``, mean_rank``
        (Friedman mean rank over the design's datasets, NaN for an encoder it leaves out) and
        ``n_datasets`` (voters where the encoder has a score), by rank.
    design : encbench.stats.BlockDesign
        How incomplete blocks were handled for the tests.
    nemenyi : encbench.stats.NemenyiResult
        Friedman test and Nemenyi critical difference on the design's scores.
    control : encbench.stats.ControlResult
        Every encoder against the control (by default the best by mean rank), Bonferroni-Dunn
        and Holm.
    settings : list of tuple
        The (model, tuning, scoring) settings analysed (more than one: pooled voters).
    """

    strategy: str
    ranking: pd.DataFrame
    design: stats.BlockDesign
    nemenyi: stats.NemenyiResult
    control: stats.ControlResult
    settings: list[tuple[str, ...]]

    def cd_diagram(self, title: str = ""):
        """The critical-difference diagram (an Altair chart), its subtitle naming the test,
        alpha, N, k and the block design; ``chart.save("cd.svg")`` writes it."""
        from encbench import plots  # heavy: Altair, imported where a chart is drawn

        mean_ranks, cd, pairs = cd_inputs(self.nemenyi)
        return plots.cd_diagram(mean_ranks, cd, pairs, title=title or self._setting_text(),
                                subtitle=cd_subtitle(self.nemenyi, self.design),
                                control=self.control.control)

    def _setting_text(self) -> str:
        text = "; ".join(" / ".join(s) for s in self.settings[:3])
        return text + (f" and {len(self.settings) - 3} more settings" if len(self.settings) > 3 else "")

    def __str__(self) -> str:
        n = self.nemenyi
        top = self.ranking.head(5)
        same = self.control.table.loc[~self.control.table["significant_holm"], "encoder"].tolist()
        lines = [
            f"{self._setting_text()}: {len(self.ranking)} encoders, {n.n_datasets} voters in the tests "
            f"({self.design.description})",
            f"{self.strategy}: " + ", ".join(f"{r.rank}. {r.encoder}" for r in top.itertuples()),
            f"Friedman chi2 = {n.friedman_statistic:.1f}, p = {n.friedman_pvalue:.3g}; "
            f"Nemenyi CD = {n.critical_difference:.2f} at alpha = {n.alpha:g}",
            f"not different from {self.control.control} (Holm, alpha = {self.control.alpha:g}): "
            + (", ".join(same) if same else "none"),
        ]
        return "\n".join(lines)


def analyse(scores: pd.DataFrame, strategy: str = "R-M", *, alpha: float = vocab.ALPHA.default,
            design: str = "auto", control: str | None = None, **params) -> Analysis:
    """Rank encoders with ``strategy`` and test them, in one call.

    Parameters
    ----------
    scores : pandas.DataFrame
        Rows of one task with ``dataset, encoder, cv_score`` and the factor columns (as
        :func:`load_scores` returns). Several (model, tuning, scoring) settings are pooled:
        each (dataset, setting) is a voter, a lower-is-better metric oriented first.
    strategy : str
        Any of :data:`encbench.stats.STRATEGIES` (R-M, R-Md, R-B, R-W, Q-M, Q-Md, Q-RM, Q-Th,
        R-Nem, R-Kem, Q-Imp, Elo); ``params`` are its parameters (``theta=0.95`` ...).
    alpha : float
        Significance level of the Nemenyi test and the comparison with the control.
    design : str
        Incomplete blocks for the tests (:data:`encbench.stats.BLOCK_DESIGNS`). ``'auto'`` takes
        the first of ``complete-datasets`` (the datasets where every encoder has a score),
        ``common-encoders`` (the encoders with a score on every dataset) and ``impute`` that
        keeps at least 2 datasets and 2 encoders; :attr:`Analysis.design` names the one used.
    control : str, optional
        The encoder the others are tested against (default: the best by mean rank).

    Raises
    ------
    ValueError
        Scores of several tasks or splits, no scores, or an invalid strategy or parameter.
    """
    if scores is None or len(scores) == 0:
        raise ValueError("no scores to analyse: got an empty frame (check the filters of load_scores)")
    for column in ("task", "split"):
        if column in scores.columns and scores[column].nunique() > 1:
            raise ValueError(f"scores of several {column}s ({', '.join(map(str, scores[column].unique()))}) "
                             f"are never pooled: analyse one {column} at a time")
    settings = settings_of(scores) if "model" in scores.columns else []
    frame = pooled_scores(scores) if len(settings) > 1 else scores
    frame = frame[[c for c in ("dataset", "encoder", "cv_score", "scoring") if c in frame.columns]]
    consensus = stats.consensus(frame, strategy, **params)
    blocks = _design(frame, design)
    nemenyi = stats.nemenyi(blocks.scores, alpha=alpha)
    best = str(nemenyi.mean_ranks.index[0])
    tested = stats.control_test(blocks.scores, control=control or best, alpha=alpha)
    counts = frame.groupby("encoder")["dataset"].nunique()
    ranking = (consensus.rename("rank").rename_axis("encoder").reset_index()
               .assign(mean_rank=lambda t: t["encoder"].map(nemenyi.mean_ranks),
                       n_datasets=lambda t: t["encoder"].map(counts).astype(int))
               .sort_values(["rank", "mean_rank"], kind="stable").reset_index(drop=True))
    return Analysis(strategy=strategy, ranking=ranking, design=blocks, nemenyi=nemenyi, control=tested,
                    settings=[tuple(s) for s in settings])
