"""Names and groupings every view shares: combination and ranking labels, encoder families."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from encbench import vocab
from encbench.encoders import ALL_REGISTRY, BEYOND_FAMILY, REGISTRY
from encbench.experiment import natural_key, setting_label

__all__ = ["NOT_IN_REGISTRY", "combination_label", "encoder_families", "encoders_of_families",
           "family_names", "family_order", "natural_key", "strategy_label"]

NOT_IN_REGISTRY = "(not in registry)"


def combination_label(*values: str) -> str:
    """``"LogReg / no / AUC"``: how a combination (one value per factor of
    :data:`encbench.vocab.FACTORS`, in order) is named in tables and charts."""
    return setting_label(values)


def strategy_label(strategy: str, params: Mapping[str, object] | None = None) -> str:
    """A strategy with the parameters that change its meaning, e.g. ``"Q-Th (theta=0.95)"``.

    Which parameters those are is the registry's ``in_label`` (:data:`encbench.vocab.STRATEGY_REGISTRY`);
    a parameter not in ``params`` is not named.
    """
    params = params or {}
    spec = vocab.STRATEGY_REGISTRY.get(strategy)
    shown = [f"{p.name}={float(params[p.name]):g}" for p in (spec.params if spec else ())
             if p.in_label and p.name in params]
    return f"{strategy} ({', '.join(shown)})" if shown else strategy


def encoder_families(encoders: Iterable[str]) -> pd.Series:
    """Encoder -> family from the encoder registry (:data:`encbench.encoders.ALL_REGISTRY`: the
    study's 32 and the encoders beyond it, whose family is
    :data:`encbench.encoders.BEYOND_FAMILY`).

    An encoder the registry does not know (e.g. a user's own, or results imported from
    elsewhere) is labelled :data:`NOT_IN_REGISTRY` rather than guessed.
    """
    names = list(dict.fromkeys(map(str, encoders)))
    return pd.Series(
        [ALL_REGISTRY[n].family if n in ALL_REGISTRY else NOT_IN_REGISTRY for n in names],
        index=pd.Index(names, name="encoder"), name="family", dtype=object,
    )


def encoders_of_families(families: Iterable[str]) -> list[str]:
    """Registry encoders (the study's 32, then those beyond it) whose family is one of
    ``families``, in vocabulary order."""
    wanted = set(families)
    return [name for name in vocab.ALL_ENCODERS if name in ALL_REGISTRY and ALL_REGISTRY[name].family in wanted]


def family_names(*, beyond: bool = False) -> list[str]:
    """Families of the registry, in the order of first appearance in the vocabulary; with
    ``beyond``, :data:`encbench.encoders.BEYOND_FAMILY` last (the encoders beyond the study)."""
    names = list(dict.fromkeys(REGISTRY[n].family for n in vocab.ENCODERS if n in REGISTRY))
    return [*names, BEYOND_FAMILY] if beyond else names


def family_order() -> list[str]:
    """Every family a view can show, in one fixed order: the registry's, the family of the
    encoders beyond the study, then :data:`NOT_IN_REGISTRY`. Charts colour families by their
    place in it, so a family keeps its colour from view to view."""
    return [*family_names(beyond=True), NOT_IN_REGISTRY]
