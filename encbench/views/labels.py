"""Names and groupings every view shares: combination and ranking labels, encoder families."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from encbench import vocab
from encbench.encoders import REGISTRY
from encbench.experiment import natural_key, setting_label

__all__ = ["NOT_IN_REGISTRY", "combination_label", "encoder_families", "encoders_of_families",
           "family_names", "natural_key", "strategy_label"]

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
    """Encoder -> family from the encoder registry (:data:`encbench.encoders.REGISTRY`).

    An encoder the registry does not know (e.g. results imported from elsewhere) is labelled
    :data:`NOT_IN_REGISTRY` rather than guessed.
    """
    names = list(dict.fromkeys(map(str, encoders)))
    return pd.Series(
        [REGISTRY[n].family if n in REGISTRY else NOT_IN_REGISTRY for n in names],
        index=pd.Index(names, name="encoder"), name="family", dtype=object,
    )


def encoders_of_families(families: Iterable[str]) -> list[str]:
    """Canonical encoders whose registry family is one of ``families`` (vocabulary order)."""
    wanted = set(families)
    return [name for name in vocab.ENCODERS if name in REGISTRY and REGISTRY[name].family in wanted]


def family_names() -> list[str]:
    """Families of the registry, in the order of first appearance in the vocabulary."""
    return list(dict.fromkeys(REGISTRY[n].family for n in vocab.ENCODERS if n in REGISTRY))
