"""The Consensus page's analysis: one entry point, :func:`consensus_analysis`, and its result,
:class:`ConsensusAnalysis`.

The result holds what every tab of the page shares (the rankings side by side, their agreement,
the exact Kemeny-Young solver's facts, the strategies refused for pooling, the combinations a
test can be about) and computes, one combination at a time, what a single tab shows: the
critical-difference diagram's Nemenyi test and its tie conventions, the comparison with a control,
rank intervals, pairwise Wilcoxon tests, the Bayesian signed-rank test and Elo ratings. Those
computations are also module functions of ``(scores, combination, mode, ...)`` (the methods
call them), so a caller that caches by plain values (the page) needs no result object for them.

A test reads the scores of one combination, or of every combination pooled (each (dataset,
combination) a voter), with the metric kept so that a lower-is-better score is oriented
(:func:`tested_scores`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from encbench import stats, vocab
from encbench.metrics import greater_is_better
from encbench.views import consensus
from encbench.views.consensus import (
    KEMENY_STRATEGY, POOLED, ConsensusView, TieConventions, agreement_long, assemble, cd_subtitle,
    combinations_of, consensus_ranks, kemeny_ranks, nemenyi_table, refused_for_pooling, subset_for,
    tie_conventions, voters_text,
)
from encbench.views.labels import combination_label

#: posterior draws of the Bayesian signed-rank test
BAYES_DRAWS = 50_000
#: the columns a test reads (the metric orients a lower-is-better score)
TEST_COLUMNS = ("scoring", "dataset", "encoder", "cv_score")


def tested_scores(scores: pd.DataFrame, combination: str, mode: str) -> pd.DataFrame:
    """The rows a test of ``combination`` reads (:func:`~encbench.views.consensus.subset_for`),
    only the columns it needs, the metric kept so that a lower-is-better score is oriented."""
    subset = subset_for(scores, combination, mode)
    return subset[[c for c in TEST_COLUMNS if c in subset.columns]]


def n_text(n: int, mode: str) -> str:
    """A test's N named for what it counts: datasets, or pooled voters."""
    return f"{n} voters ((dataset, combination) pairs)" if mode == POOLED else f"{n} datasets"


# --------------------------------------------------------------------------- critical difference

def block_design(scores: pd.DataFrame, combination: str, mode: str, design: str) -> stats.BlockDesign:
    """The incomplete-block design ``design`` (:data:`encbench.stats.BLOCK_DESIGNS`) applied to
    the tested scores of ``combination``."""
    return stats.block_design(tested_scores(scores, combination, mode), design)


def nemenyi(scores: pd.DataFrame, combination: str, mode: str, design: str, alpha: float) -> stats.NemenyiResult:
    """Friedman and Nemenyi on the design's scores (the critical-difference diagram)."""
    return stats.nemenyi(block_design(scores, combination, mode, design).scores, alpha=alpha)


@dataclass(frozen=True)
class CriticalDifference:
    """The critical-difference diagram of one combination: its test, blocks, caption and table.

    Attributes
    ----------
    result : encbench.stats.NemenyiResult
    design : encbench.stats.BlockDesign
    subtitle : list of str
        What the diagram shows and assumes (test, alpha, N, k, Friedman, blocks).
    ties : encbench.views.consensus.TieConventions
        Where the diagram's order (Friedman mean ranks) and R-M's (dense) differ.
    table : pandas.DataFrame
        One row per encoder: mean rank, significance counts, and R-M's dense mean rank.
    """

    result: stats.NemenyiResult
    design: stats.BlockDesign
    subtitle: list[str]
    ties: TieConventions
    table: pd.DataFrame


def critical_difference(scores: pd.DataFrame, combination: str, mode: str, design: str,
                        alpha: float) -> CriticalDifference:
    """:class:`CriticalDifference` of ``combination`` under ``design`` at ``alpha``.

    Raises
    ------
    ValueError
        As :func:`encbench.stats.nemenyi` (fewer than two encoders or no dataset).
    """
    blocks = block_design(scores, combination, mode, design)
    result = stats.nemenyi(blocks.scores, alpha=alpha)
    ties = tie_conventions(blocks.scores)
    table = nemenyi_table(result).merge(ties.means[["encoder", "dense_mean_rank"]], on="encoder", how="left")
    return CriticalDifference(result, blocks, cd_subtitle(result, blocks), ties, table)


def control_test(scores: pd.DataFrame, combination: str, mode: str, design: str, alpha: float,
                 control: str) -> stats.ControlResult:
    """Every encoder against ``control`` (Bonferroni-Dunn and Holm on Friedman mean ranks)."""
    return stats.control_test(block_design(scores, combination, mode, design).scores, control, alpha=alpha)


def control_subtitle(result: stats.ControlResult, design: stats.BlockDesign) -> list[str]:
    """What the diagram against a control shows and assumes, for its caption (and so its exports)."""
    holm = result.differing("holm")
    lines = [f"Bonferroni-Dunn against {result.control}, alpha = {result.alpha:g}, N = "
             f"{voters_text(result.n_datasets, design.scores['dataset'])}, "
             f"k = {result.n_encoders} encoders, CD = {result.critical_difference:.2f} "
             f"(q = {result.q_alpha:.3f})",
             f"Holm finds {len(holm)} of {result.n_encoders - 1} different from {result.control}"
             + (f": {', '.join(holm[:12])}{', ...' if len(holm) > 12 else ''}" if holm else ""),
             f"Blocks: {design.description}"]
    if design.design == "all" and not design.complete:
        lines[-1] += " - encoders are ranked on different subsets; the test assumes complete blocks"
    return lines


# --------------------------------------------------------------------------- pairwise, Bayes, Elo, intervals

def pairwise(scores: pd.DataFrame, combination: str, mode: str, encoders: Sequence[str],
             alpha: float) -> pd.DataFrame:
    """Wilcoxon signed-rank tests of every pair of ``encoders``, Holm-corrected, with effect sizes."""
    return stats.wilcoxon_pairs(tested_scores(scores, combination, mode), encoders=list(encoders),
                                alpha=alpha).table


def against_control(scores: pd.DataFrame, combination: str, mode: str, control: str, others: Sequence[str],
                    alpha: float) -> pd.DataFrame:
    """Wilcoxon tests of ``control`` against each of ``others``, Holm-corrected over them."""
    return stats.wilcoxon_pairs(tested_scores(scores, combination, mode), pairs=[(control, e) for e in others],
                                alpha=alpha).table


def bayes(scores: pd.DataFrame, combination: str, mode: str, encoder_a: str, encoder_b: str,
          rope: float) -> stats.BayesianResult:
    """Bayesian signed-rank test of ``encoder_a`` against ``encoder_b`` with a ROPE (seed 0)."""
    return stats.bayesian_signed_rank(tested_scores(scores, combination, mode), encoder_a, encoder_b,
                                      rope=rope, n_samples=BAYES_DRAWS, seed=0)


def bayes_caption(result: stats.BayesianResult, combination: str, drawn: int) -> list[str]:
    """What the simplex of ``drawn`` posterior draws shows and assumes (its caption and exports).

    N is named for pooled voters when ``combination`` is :data:`POOLED` (the one target of a
    pooled analysis)."""
    return [f"Bayesian signed-rank test (Benavoli et al. 2017), {combination}: "
            f"N = {n_text(result.n_datasets, combination)} both encoders have, ROPE = +-{result.rope:g} (score units)",
            f"Assumes independent datasets; Dirichlet-process prior of strength {result.prior:g} at difference 0; "
            f"{result.samples.shape[0]:,} posterior draws (seed 0), {drawn:,} drawn"]


def elo(scores: pd.DataFrame, combination: str, mode: str, reference: str, B: int) -> stats.EloResult:
    """Win rates and Elo ratings calibrated to ``reference`` = 1000, ``B`` bootstrap resamples (seed 0)."""
    return stats.elo(tested_scores(scores, combination, mode), reference=reference, B=B, seed=0)


def elo_caption(result: stats.EloResult, combination: str) -> list[str]:
    """What the Elo chart and the win-rate matrix show and assume, for their captions and exports
    (N named as in :func:`bayes_caption`)."""
    return [f"{combination}: each of N = {n_text(result.n_datasets, combination)} is a match between every "
            f"pair of encoders both have (ties count half)",
            f"Bradley-Terry maximum likelihood, prior of {result.prior_ties:g} all-tie dataset; "
            f"{result.reference} = 1000; {result.level:.0%} bootstrap over datasets ({result.B} resamples, seed 0)"]


def intervals(scores: pd.DataFrame, combination: str, mode: str, strategy: str, B: int,
              params: Mapping[str, object] | None = None) -> pd.DataFrame:
    """Bootstrap rank intervals of ``strategy`` (``B`` resamples of the voters, seed 0); of
    ``params`` only the strategy's own are used."""
    use = stats.params_for(strategy, dict(params or {}))
    return stats.rank_intervals(subset_for(scores, combination, mode), strategy, B=B, seed=0, **use)


def interval_strategies(strategies: Sequence[str]) -> tuple[list[str], list[str]]:
    """The strategies rank intervals are offered for (R-M when none), and those left out as too
    slow: a bootstrap needs one consensus per resample, and an expensive strategy
    (:attr:`encbench.vocab.Strategy.expensive`) solves one ranking at a time."""
    left_out = vocab.expensive_strategies(strategies)
    return [s for s in strategies if s not in left_out] or ["R-M"], left_out


# --------------------------------------------------------------------------- the result object

@dataclass(frozen=True)
class ConsensusAnalysis:
    """What the Consensus page shows for one selection of scores, strategies and mode.

    Attributes
    ----------
    scores : pandas.DataFrame
        The rows selected (one task and split; any models, tunings and metrics).
    mode : str
        The mode used: ``per-combination``, or ``pooled`` when asked for and there are several
        combinations.
    strategies : tuple of str
        The strategies ranked: those asked for, less those refused for pooling.
    params : dict
        Their parameters, checked (:func:`encbench.stats.params_for`).
    alpha : float
        Significance level of the critical-difference diagram and the pairwise tests.
    refused, refused_why : tuple of str, str
        Strategies left out because they average raw scores over pooled metrics of different
        scales, and the message saying so (empty when none).
    rankings : encbench.views.consensus.ConsensusView or None
        The rankings side by side and their agreement; None when every strategy was refused.
    kemeny : pandas.DataFrame or None
        The exact Kemeny-Young solves' facts (objective, agreement, time), when
        :data:`~encbench.views.consensus.KEMENY_STRATEGY` is among the strategies.
    """

    scores: pd.DataFrame
    mode: str
    strategies: tuple[str, ...]
    params: dict = field(default_factory=dict)
    alpha: float = vocab.ALPHA.default  # type: ignore[assignment]
    refused: tuple[str, ...] = ()
    refused_why: str = ""
    rankings: ConsensusView | None = None
    kemeny: pd.DataFrame | None = None

    @property
    def combinations(self) -> list[tuple[str, ...]]:
        """The (model, tuning, scoring) combinations selected, in vocabulary order."""
        return combinations_of(self.scores)

    @property
    def targets(self) -> list[str]:
        """What a single test can be about: each combination's label, or the pooled voters."""
        return [POOLED] if self.mode == POOLED else [combination_label(*c) for c in self.combinations]

    @property
    def lower_is_better(self) -> bool:
        """Whether a selected metric is lower-is-better (the tests read its scores negated)."""
        return not all(greater_is_better(m) for m in self.scores["scoring"].astype(str).unique())

    @property
    def summary(self) -> str:
        """One line naming the best encoders (markdown, ``"Best by ..."``)."""
        return consensus.best_summary(self._rankings(), self.params)

    @property
    def agreement(self) -> pd.DataFrame:
        """The rankings' pairwise agreement: ``ranking_a, ranking_b, spearman, jaccard``."""
        return agreement_long(self._rankings())

    def _rankings(self) -> ConsensusView:
        if self.rankings is None:
            raise ValueError(f"no consensus rankings: every strategy was refused ({self.refused_why})")
        return self.rankings

    def encoders(self, combination: str) -> list[str]:
        """The encoders with scores in ``combination``, in the order of the rankings."""
        scored = set(subset_for(self.scores, combination, self.mode)["encoder"].astype(str))
        return [e for e in self._rankings().wide["encoder"].astype(str) if e in scored]

    def critical_difference(self, combination: str, design: str = "all") -> CriticalDifference:
        return critical_difference(self.scores, combination, self.mode, design, self.alpha)

    def control(self, combination: str, control: str, design: str = "all") -> stats.ControlResult:
        return control_test(self.scores, combination, self.mode, design, self.alpha, control)

    def intervals(self, combination: str, strategy: str, B: int = 200) -> pd.DataFrame:
        return intervals(self.scores, combination, self.mode, strategy, B, self.params)

    def pairwise(self, combination: str, encoders: Sequence[str]) -> pd.DataFrame:
        return pairwise(self.scores, combination, self.mode, encoders, self.alpha)

    def against_control(self, combination: str, control: str, others: Sequence[str]) -> pd.DataFrame:
        return against_control(self.scores, combination, self.mode, control, others, self.alpha)

    def bayes(self, combination: str, encoder_a: str, encoder_b: str, rope: float = 0.01) -> stats.BayesianResult:
        return bayes(self.scores, combination, self.mode, encoder_a, encoder_b, rope)

    def elo(self, combination: str, reference: str = "OH", B: int = 200) -> stats.EloResult:
        return elo(self.scores, combination, self.mode, reference, B)


def used_mode(scores: pd.DataFrame, mode: str) -> str:
    """The mode a selection is computed in: ``pooled`` only when asked for and there are several
    combinations to pool."""
    return mode if len(combinations_of(scores)) > 1 else "per-combination"


def consensus_analysis(scores: pd.DataFrame, strategies: Sequence[str], *, mode: str = "per-combination",
                       params: Mapping[str, object] | None = None, alpha: float | None = None,
                       ranks: pd.DataFrame | None = None,
                       kemeny: pd.DataFrame | None = None) -> ConsensusAnalysis:
    """The Consensus page's analysis of ``scores``: its one entry point.

    Parameters
    ----------
    scores : pandas.DataFrame
        Rows of one task and split with ``model, tuning, scoring, dataset, encoder, cv_score``.
    strategies : sequence of str
        Strategy names (:data:`encbench.vocab.STRATEGY_REGISTRY`), in display order.
    mode : {"per-combination", "pooled"}
        How several combinations are aggregated (:data:`encbench.views.consensus.MODES`).
    params : mapping, optional
        Strategy parameters (``theta``, ``alpha``, ...): those of the strategies ranked are kept.
    alpha : float, optional
        Level of the critical-difference diagram and the pairwise tests; default ``params``'
        ``alpha``, else the registry's.
    ranks, kemeny : pandas.DataFrame, optional
        The long ranks of the strategies but Kemeny-Young
        (:func:`~encbench.views.consensus.consensus_ranks`) and the output of
        :func:`~encbench.views.consensus.kemeny_ranks`, for a caller that caches them; computed
        here when None.

    Returns
    -------
    ConsensusAnalysis

    Raises
    ------
    ValueError
        An unknown strategy or mode, a bad parameter, or a strategy undefined for a metric
        (Q-Th on RMSE).

    Examples
    --------
    >>> result = consensus_analysis(scores, ["R-M", "Q-M"])   # doctest: +SKIP
    >>> result.rankings.wide, result.critical_difference(result.targets[0]).table  # doctest: +SKIP
    """
    values = dict(params or {})
    alpha = vocab.ALPHA.validate(alpha if alpha is not None else values.get("alpha", vocab.ALPHA.default))
    mode = used_mode(scores, mode)
    refused, why = refused_for_pooling(scores, strategies, mode)
    kept = [s for s in strategies if s not in refused]
    checked = stats.params_for(kept, values) if kept else {}
    rankings, facts = None, None
    if kept:
        if ranks is None:
            ranks = consensus_ranks(scores, kept, mode=mode, params=checked)
        if KEMENY_STRATEGY in kept:
            solved = kemeny if kemeny is not None else kemeny_ranks(scores, mode=mode)
            ranks, facts = pd.concat([ranks, solved[0]], ignore_index=True), solved[1]
        rankings = assemble(ranks, kept, checked)
    return ConsensusAnalysis(scores=scores, mode=mode, strategies=tuple(kept), params=checked, alpha=alpha,
                             refused=tuple(refused), refused_why=why, rankings=rankings, kemeny=facts)
