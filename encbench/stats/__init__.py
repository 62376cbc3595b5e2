"""Consensus rankings of encoders and the analyses around them (docs/ARCHITECTURE.md, Consensus rankings).

Pure library code (no streamlit). Every function takes a long scores DataFrame with columns
``dataset, encoder, cv_score`` (higher is better), plus factor columns where it groups, and returns
a Series, a DataFrame or a small frozen result object. Invalid input raises ``ValueError`` naming
the offending value.

Conventions: per dataset, encoders are dense-ranked by ``cv_score`` (1 = best, exactly equal
scores share a rank); an encoder without a result on a dataset is missing from that dataset's
ranking (never imputed, except by Q-Imp): rank aggregations skip it, quality aggregations use the
rows that exist. Every consensus is a dense rank (1 = best, ties share).

Consensus
---------
``consensus(scores, strategy="R-M", **params) -> pd.Series``
    One factor combination; index ``encoder``, int ``rank``. Strategies (:data:`STRATEGIES`):
    R-M, R-Md, R-B, R-W, Q-M, Q-Md, Q-RM, Q-Th (``theta=0.95``), R-Nem (``alpha=0.05``),
    R-Kem (exact Kemeny-Young, ``time_limit=None``), Q-Imp (imputation model, ``n_iter=10``),
    Elo (Bradley-Terry ratings of the pairwise wins over datasets, ties half).
``consensus_table(scores, strategies=HEURISTIC_STRATEGIES, by=("model", "tuning", "scoring"), **params)``
    All combinations at once (vectorised) -> long DataFrame ``*by, strategy, encoder, rank``.
``dataset_ranks(scores, by=()) -> pd.DataFrame``
    The per-dataset rankings: ``*by, dataset, encoder, cv_score, rank, average_rank``.
``strategy_parameters(strategy) -> tuple[str, ...]``
    Keyword parameters a strategy accepts.
``params_for(strategies, values) -> dict``
    The parameters ``strategies`` use, picked from ``values`` and validated.

Critical-difference diagrams
----------------------------
``nemenyi(scores, alpha=0.05) -> NemenyiResult``
    ``mean_ranks`` (Series, best first), ``critical_difference``, ``pvalues`` (encoder x
    encoder), ``significant_pairs`` (DataFrame ``better, worse, difference, pvalue``),
    ``better_counts`` (the R-Nem score), ``n_datasets``, ``n_encoders``, ``friedman_statistic``,
    ``friedman_pvalue``, ``alpha``.

``control_test(scores, control, alpha=0.05) -> ControlResult``
    Every encoder against one control (Demsar 2006, 3.2.2) from the same mean ranks:
    ``critical_difference`` (Bonferroni-Dunn, ``q_alpha`` the normal quantile at
    ``alpha / (k - 1)``), ``table`` (``encoder, mean_rank, difference, z, p_value, p_bonferroni,
    p_holm, significant_bd, significant_holm, direction``), ``differing(method)``.

``block_design(scores, design="all") -> BlockDesign``
    Incomplete blocks made explicit: ``n_complete_datasets``, ``n_common_encoders``, and the
    rows of one design (``all``, ``complete-datasets``, ``common-encoders``, ``impute``) to pass
    to ``nemenyi``; ``description`` names it for pages and figures.

Kemeny-Young
------------
``kemeny(scores, *, time_limit=None) -> KemenyResult``
    ``ranking`` (Series), ``objective`` (optimal agreement), ``solve_time`` (s), ``optimal``,
    ``n_rounds``, ``n_transitivity_rows``, ``fractional_root``, ``n_nodes``, ``n_components``.
    Exact: dominance blocks, local search, then our branch and cut over HiGHS LPs with lazy
    transitivity rows.

Q-Imp
-----
``impute_scores(scores, n_iter=10) -> ImputationResult``
    The fitted score ~ quality x difficulty model: ``quality`` (Series, best first; Q-Imp ranks
    by it), ``difficulty`` (per dataset), ``completed`` (dataset x encoder, missing cells
    predicted), ``n_imputed``.

Uncertainty, similarity, sensitivity, replicability
---------------------------------------------------
``rank_intervals(scores, strategy="R-M", B=1000, seed=0, *, level=0.95, **params) -> pd.DataFrame``
    Bootstrap over datasets: ``encoder, rank, low, high``.
``jaccard_best(r1, r2) -> float`` and ``spearman(r1, r2) -> float``
    Similarity of two rankings (Series index encoder) over their common encoders.
``sensitivity(scores, vary, fixed=None, strategy="R-M", *, strategies=None, **params) -> SensitivityResult``
    ``vary`` in model, scoring, tuning, strategy; ``fixed`` pins the other factors. Result:
    ``vary, fixed, labels, rankings`` (encoder x label) and ``jaccard``, ``spearman`` (label x
    label DataFrames).
``replicability(scores, sample_sizes, n_pairs=100, seed=0, strategy="R-M", progress=None, *, ...)``
    Keywords ``n_boot=1000, level=0.95, n_jobs=1, should_stop=None, **params``; returns a
    ``ReplicabilityResult``: ``pairs`` (``sample_size, pair, rho, J``), ``summary`` (``sample_size, n_pairs, rho_mean,
    rho_low, rho_high, J_mean, J_low, J_high``, bootstrapped intervals of the means);
    ``progress(done, total)`` counts samples ranked; ``should_stop()`` cancels
    (:class:`ReplicabilityCancelled`); ``n_jobs`` processes solve R-Kem's problems.
``project_agreement(summary, target=0.9) -> AgreementProjection``
    The datasets per sample at which rho-replicability reaches ``target``, by the Spearman-Brown
    formula fitted to a summary: ``r, needed, target, fits, above`` (``fits``: the curve is inside
    the largest sample size's interval; ``above``: above it, the measured agreement flattening).
``wilcoxon_pairs(scores, encoders=None, pairs=None, *, alpha=0.05, level=0.95, n_boot=1000, seed=0) -> PairwiseResult``
    Wilcoxon signed-rank test over datasets for each pair of encoders (all pairs of
    ``encoders``, or the given ``pairs``), Holm-corrected, with effect sizes; ``table`` holds
    ``encoder_a, encoder_b, n_datasets, wins_a, wins_b, ties, median_difference, statistic,
    p_value, p_holm, significant, median_low, median_high, rank_biserial, rank_biserial_low,
    rank_biserial_high`` (exact interval of the median difference; matched-pairs rank-biserial
    correlation with its percentile bootstrap interval).
``median_interval(diff, level=0.95) -> (low, high)`` and ``rank_biserial(diff) -> float or array``
    The two effect sizes on an array of paired differences.

Win rates and Elo
-----------------
``elo(scores, reference="OH", *, B=1000, seed=0, level=0.95, prior_ties=1.0) -> EloResult``
    Bradley-Terry maximum likelihood on the pairwise outcomes over datasets (ties half, only
    pairs both present), on the Elo scale (400 log10 odds) with ``reference`` = 1000 and
    percentile bootstrap intervals over datasets: ``table`` (``encoder, elo, low, high,
    win_rate, wins, matches``, best first), ``win_rates`` (encoder x encoder), ``ratings``.
``win_rate_matrix(scores) -> pandas.DataFrame``
    Share of the shared datasets on which the row encoder beats the column one (ties half).

Bayesian comparison
-------------------
``bayesian_signed_rank(scores, encoder_a, encoder_b, *, rope=0.01, prior=0.5, n_samples=50000, seed=0)``
    Bayesian signed-rank test with a region of practical equivalence (Benavoli et al. 2017);
    the ``BayesianResult`` holds ``p_a_better, p_equivalent, p_b_better``, the posterior ``samples`` (draws x 3 on the
    simplex), ``n_datasets``, ``rope``, ``prior``; ``table`` (one row) and ``sample_frame()``.
``signed_rank_posterior(diff, rope=0.0, *, prior=0.5, n_samples=50000, seed=0) -> numpy.ndarray``
    The posterior draws for an array of paired differences.

Notes
-----
R-Nem follows the paper's text and code: an encoder's score is the number of encoders
significantly better than it (fewer is better). The study's published R-Nem columns are inverted
(they count encoders beaten), so compare with them after flipping the orientation.

The functions ``kemeny``, ``nemenyi`` and ``replicability`` shadow the submodules of the same name
as attributes of this package: import helpers from them with ``from encbench.stats.kemeny import
kemeny_weights`` (``import encbench.stats.kemeny as m`` would bind the function).
"""
from encbench.stats.bayesian import BayesianResult, bayesian_signed_rank, signed_rank_posterior
from encbench.stats.bootstrap import rank_intervals
from encbench.stats.consensus import (
    DEFAULT_BY,
    HEURISTIC_STRATEGIES,
    STRATEGIES,
    consensus,
    consensus_table,
    params_for,
    strategy_parameters,
)
from encbench.stats.blocks import BLOCK_DESIGNS, BlockDesign, block_design
from encbench.stats.control import ControlResult, control_test
from encbench.stats.elo import EloResult, elo, win_rate_matrix
from encbench.stats.impute import ImputationResult, impute_scores
from encbench.stats.kemeny import KemenyResult, kemeny
from encbench.stats.nemenyi import NemenyiResult, nemenyi
from encbench.stats.pairwise import PairwiseResult, holm, median_interval, rank_biserial, wilcoxon_pairs
from encbench.stats.rankings import dataset_ranks
from encbench.stats.replicability import (
    AgreementProjection, ReplicabilityCancelled, ReplicabilityResult, project_agreement, replicability,
)
from encbench.stats.similarity import SensitivityResult, jaccard_best, sensitivity, spearman

__all__ = [
    "AgreementProjection",
    "BLOCK_DESIGNS",
    "BayesianResult",
    "BlockDesign",
    "ControlResult",
    "DEFAULT_BY",
    "HEURISTIC_STRATEGIES",
    "STRATEGIES",
    "EloResult",
    "ImputationResult",
    "KemenyResult",
    "NemenyiResult",
    "PairwiseResult",
    "ReplicabilityCancelled",
    "ReplicabilityResult",
    "SensitivityResult",
    "bayesian_signed_rank",
    "block_design",
    "consensus",
    "consensus_table",
    "control_test",
    "dataset_ranks",
    "elo",
    "holm",
    "impute_scores",
    "jaccard_best",
    "kemeny",
    "median_interval",
    "nemenyi",
    "params_for",
    "project_agreement",
    "rank_biserial",
    "rank_intervals",
    "replicability",
    "sensitivity",
    "signed_rank_posterior",
    "spearman",
    "strategy_parameters",
    "wilcoxon_pairs",
    "win_rate_matrix",
]
