"""Which encoder for my data? A recommendation from the reference datasets most like the user's.

The advisor describes a table by its meta-features (:mod:`encbench.metafeatures`), finds the
``k`` reference datasets of its task nearest to it and ranks the encoders by their R-M consensus
over those datasets, next to the global consensus over every reference dataset of the task
(:func:`recommend`; :func:`verify` checks it on the user's own results). Its leave-one-dataset-out
validation (:func:`validate_advisor`) decides, per setting, whether the neighbours, the global
winner or always OH is advised; the summary ships with encbench (:func:`validation_summary`).

The modules behind this one, by concern: ``_neighbours`` (distances, rank order), ``_reference``
(the reference scores and the shipped summary, shared by the other two), ``_advice`` (online:
the advice for one table) and ``_validation`` (offline: the leave-one-dataset-out validation).
"""
from __future__ import annotations

from encbench.advisor._advice import (
    MIN_VALIDATED,
    N_TOP,
    POLICIES,
    VERDICTS,
    Recommendation,
    Verification,
    choose_policy,
    outside_reference,
    recommend,
    verify,
)
from encbench.advisor._neighbours import distances, encoder_order, feature_matrix, nearest
from encbench.advisor._reference import (
    ALPHA,
    BASELINE_ENCODER,
    VALIDATION_FILE,
    published_consensus,
    reference_label,
    reference_scores,
    validation_summary,
)
from encbench.advisor._validation import K_GRID, AdvisorValidation, regrets_of, validate_advisor

__all__ = [
    "ALPHA", "AdvisorValidation", "BASELINE_ENCODER", "K_GRID", "MIN_VALIDATED", "N_TOP", "POLICIES",
    "Recommendation", "VALIDATION_FILE", "VERDICTS", "Verification", "choose_policy", "distances",
    "encoder_order", "feature_matrix", "nearest", "outside_reference", "published_consensus",
    "recommend", "reference_label", "reference_scores", "regrets_of", "validate_advisor", "validation_summary",
    "verify",
]
