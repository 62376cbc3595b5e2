"""Deprecated: the views moved to :mod:`encbench.views` (one module per page); this module
re-exports them under their old names for one release.

Three functions kept their old return types here: :func:`score_counts` and :func:`coverage`
return dicts and :func:`sensitivity_view` a dict of its fields; their :mod:`encbench.views`
versions return the result objects (:class:`~encbench.views.overview.ScoreCounts`,
:class:`~encbench.views.explorer.Coverage`, :class:`~encbench.views.sensitivity.SensitivityView`).
"""
from __future__ import annotations

from dataclasses import fields

from encbench.experiment import natural_key
from encbench.views import explorer as _explorer
from encbench.views import overview as _overview
from encbench.views import sensitivity as _sensitivity
from encbench.views.consensus import (
    MODES, POOLED, ConsensusView, KemenyRanks, agreement_long, assemble, best_summary, cd_inputs,
    cd_subtitle, combinations_of, consensus_ranks, kemeny_ranks, nemenyi_table, pool_combinations,
    subset_for,
)
from encbench.views.explorer import encoder_dataset_matrix, published_vs_local, ranked_scores
from encbench.views.labels import (
    NOT_IN_REGISTRY, combination_label, encoder_families, encoders_of_families, family_names,
    strategy_label,
)
from encbench.views.origins import (
    ORIGIN_CHOICES, ORIGIN_LABELS, OriginMix, origin_banner, origin_mix, origins_of,
)
from encbench.views.overview import HEADLINE_STRATEGY, counts_by_pair, datasets_in_view, headline_consensus
from encbench.views.replicability import default_sample_sizes, replicability_long
from encbench.views.sensitivity import AVERAGE_ALL, VARIABLE, similarity_table
from encbench.vocab import FACTORS, ordered

__all__ = [
    "AVERAGE_ALL", "FACTORS", "HEADLINE_STRATEGY", "MODES", "NOT_IN_REGISTRY", "ORIGIN_CHOICES",
    "ORIGIN_LABELS", "POOLED", "VARIABLE", "ConsensusView", "KemenyRanks", "OriginMix",
    "agreement_long", "assemble", "best_summary", "cd_inputs", "cd_subtitle", "combination_label",
    "combinations_of", "consensus_ranks", "counts_by_pair", "coverage", "datasets_in_view",
    "default_sample_sizes", "encoder_dataset_matrix", "encoder_families", "encoders_of_families",
    "family_names", "headline_consensus", "kemeny_ranks", "natural_key", "nemenyi_table",
    "ordered", "origin_banner", "origin_mix", "origins_of", "pool_combinations",
    "published_vs_local", "ranked_scores", "replicability_long", "score_counts",
    "sensitivity_view", "similarity_table", "strategy_label", "subset_for",
]


def _as_dict(result) -> dict:
    return {f.name: getattr(result, f.name) for f in fields(result)}


def score_counts(scores) -> dict[str, int]:
    """:func:`encbench.views.overview.score_counts` as a dict."""
    return _as_dict(_overview.score_counts(scores))


def coverage(ranked, encoders, datasets) -> dict[str, int]:
    """:func:`encbench.views.explorer.coverage` as a dict."""
    return _as_dict(_explorer.coverage(ranked, encoders, datasets))


def sensitivity_view(scores, vary, fixed, **kwargs) -> dict[str, object]:
    """:func:`encbench.views.sensitivity.sensitivity_view` as a dict of its fields."""
    return _as_dict(_sensitivity.sensitivity_view(scores, vary, fixed, **kwargs))
