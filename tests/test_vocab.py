"""The vocabulary: factors, their order, and the registry of aggregation strategies."""
from __future__ import annotations

import inspect

import pytest

from encbench import vocab
from encbench.stats.consensus import _COMPUTE, _computes
from encbench.stats.impute import DEFAULT_N_ITER


def test_factors_and_their_order():
    assert vocab.FACTORS == ("model", "tuning", "scoring")
    assert vocab.ordered("tuning", ["full", "no", "zzz", "model", "no"]) == ["no", "model", "full", "zzz"]
    assert vocab.ordered("model", ["LogReg", "DT", "Foo", "Bar"]) == ["DT", "LogReg", "Bar", "Foo"]
    assert vocab.ordered("strategy", ["Q-Imp", "R-Kem", "R-M"]) == ["R-M", "R-Kem", "Q-Imp"]
    assert vocab.ordered("split", ["time", "cv"]) == ["cv", "time"]
    assert vocab.ordered("dataset", [10, 9, "x"]) == ["10", "9", "x"]  # no vocabulary: by text
    assert sorted(["AUC", "zz", "BAcc"], key=lambda v: vocab.order_key("scoring", v)) == ["BAcc", "AUC", "zz"]


def test_strategy_registry_is_complete_and_consistent():
    registry = vocab.STRATEGY_REGISTRY
    assert vocab.AGGREGATIONS == tuple(registry) and len(registry) == 12
    for name, spec in registry.items():
        assert spec.name == name and spec.description
        assert spec.uses_scores == name.startswith("Q-")  # the study's naming: Q- aggregates scores
    assert [n for n, s in registry.items() if s.higher_is_better is None] == ["R-Kem"]
    assert [n for n, s in registry.items() if not s.heuristic] == ["R-Kem", "Q-Imp", "Elo"]
    with pytest.raises(TypeError):
        registry["X"] = registry["R-M"]  # read-only: one place to change it, this module


def test_parameter_defaults_lie_in_what_the_app_offers():
    for param, users in vocab.offered_parameters():
        assert users and param.help
        if param.options is not None:
            assert param.default in param.options
        else:
            assert param.low <= param.default <= param.high and param.step > 0
    assert [(p.name, users) for p, users in vocab.offered_parameters()] == [("theta", ("Q-Th",)),
                                                                             ("alpha", ("R-Nem",))]
    assert vocab.N_ITER.default == DEFAULT_N_ITER  # Q-Imp's default is impute's


def test_every_registry_strategy_has_a_computation_with_its_parameters():
    for name, spec in vocab.STRATEGY_REGISTRY.items():
        compute = _COMPUTE[name]
        keywords = tuple(inspect.signature(compute).parameters)[1:]
        assert keywords == spec.param_names, name
    assert set(_COMPUTE) == set(vocab.STRATEGY_REGISTRY)
    with pytest.raises(ValueError, match="no strategy 'X-New' in encbench.vocab.STRATEGY_REGISTRY"):
        _computes("X-New")


def test_strategy_help_names_every_strategy():
    text = vocab.strategy_help()
    for spec in vocab.STRATEGY_REGISTRY.values():
        assert f"{spec.name}: {spec.description}" in text
