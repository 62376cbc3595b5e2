"""Labels and groupings every view shares."""
from __future__ import annotations

from encbench import vocab
from encbench.encoders import REGISTRY
from encbench.views import labels


def test_family_helpers_use_the_registry():
    families = labels.family_names()
    assert set(families) == {spec.family for spec in REGISTRY.values()}
    assert labels.encoders_of_families(["identifier"]) == ["OH", "Ord", "Bin"]
    mapped = labels.encoder_families(["OH", "NotAnEncoder"])
    assert mapped["OH"] == REGISTRY["OH"].family and mapped["NotAnEncoder"] == labels.NOT_IN_REGISTRY


def test_labels_and_orders():
    assert labels.combination_label("LogReg", "no", "AUC") == "LogReg / no / AUC"
    assert labels.strategy_label("Q-Th", {"theta": 0.95, "alpha": 0.05}) == "Q-Th (theta=0.95)"
    assert labels.strategy_label("R-M", {"theta": 0.95}) == "R-M"
    assert vocab.ordered("tuning", ["full", "no", "zzz", "model"]) == ["no", "model", "full", "zzz"]
    assert sorted(["10", "9", "x"], key=labels.natural_key) == ["9", "10", "x"]


def test_encoders_beyond_the_study_get_their_registry_family():
    """The registry gives every encoder its family, those beyond the study included; only a
    name it does not know is "(not in registry)"."""
    from encbench.encoders import BEYOND_FAMILY, BEYOND_REGISTRY

    mapped = labels.encoder_families(["SkTE", "Native", "OH", "Mine"])
    assert mapped["SkTE"] == mapped["Native"] == BEYOND_FAMILY == BEYOND_REGISTRY["SkTE"].family
    assert mapped["Mine"] == labels.NOT_IN_REGISTRY
    assert labels.encoders_of_families([BEYOND_FAMILY]) == list(vocab.BEYOND_ENCODERS)
    assert labels.family_names(beyond=True)[-1] == BEYOND_FAMILY
    assert BEYOND_FAMILY not in labels.family_names()
    order = labels.family_order()
    assert order[-2:] == [BEYOND_FAMILY, labels.NOT_IN_REGISTRY] and len(set(order)) == len(order)
