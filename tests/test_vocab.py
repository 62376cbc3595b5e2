"""The vocabulary: factors, their order, and the registry of aggregation strategies."""
from __future__ import annotations

import dataclasses
import inspect
from types import MappingProxyType

import numpy as np
import pytest

from encbench import vocab
from encbench.constraints import OPEN_UNIT, POSITIVE_INT, UNIT_RIGHT
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
    """Each offered parameter's default is among its widget's values, and the widget's bounds
    are what the registry says (``bounds``: a select slider's extreme options)."""
    for param, users in vocab.offered_parameters():
        assert users and param.help
        if param.options is not None:
            assert param.default in param.options
            assert param.bounds == (min(param.options), max(param.options))
        else:
            assert param.low <= param.default <= param.high and param.step > 0
            assert param.bounds == (param.low, param.high)
    assert [(p.name, users) for p, users in vocab.offered_parameters()] == [("theta", ("Q-Th",)),
                                                                             ("alpha", ("R-Nem",))]
    assert vocab.N_ITER.bounds is None and vocab.TIME_LIMIT.bounds is None  # not offered
    assert vocab.N_ITER.default == DEFAULT_N_ITER  # Q-Imp's default is impute's


def test_each_parameter_declares_its_constraint_once():
    """A parameter's accepted values come from its constraint: the words (``valid``), the check
    and the widget's range, which lies inside it, as does the default."""
    assert [p.valid for p in (vocab.THETA, vocab.ALPHA, vocab.TIME_LIMIT, vocab.N_ITER)] == [
        "a number in (0, 1]", "a number in (0, 1)", "a positive number of seconds or None", "a positive integer"]
    for spec in vocab.STRATEGY_REGISTRY.values():
        for param in spec.params:
            assert param.validate(param.default) == param.default
            if param.bounds is not None:
                assert param.constraint.accepts_range(*param.bounds)


@pytest.mark.parametrize("param, strategy, value, message", [
    (vocab.THETA, "Q-Th", 1.5, "strategy 'Q-Th': theta must be a number in (0, 1]: got 1.5"),
    (vocab.ALPHA, "R-Nem", "x", "strategy 'R-Nem': alpha must be a number in (0, 1): got 'x'"),
    (vocab.N_ITER, "Q-Imp", 2.5, "strategy 'Q-Imp': n_iter must be a positive integer: got 2.5"),
    (vocab.TIME_LIMIT, "R-Kem", 0, "strategy 'R-Kem': time_limit must be a positive number of seconds or None: "
                                   "got 0"),
    (vocab.ALPHA, ["R-Nem", "R-X"], 1, "strategies 'R-Nem', 'R-X': alpha must be a number in (0, 1): got 1"),
])
def test_validate_names_the_strategy_the_parameter_and_the_value(param, strategy, value, message):
    """A bad value's error says which strategy, which parameter, what it accepts and the value."""
    with pytest.raises(ValueError) as caught:
        param.validate(value, strategy)
    assert str(caught.value) == message


def test_validate_converts_to_the_constraint_kind():
    """validate returns what the computation takes: a float for theta, an int for n_iter."""
    assert type(vocab.THETA.validate(1, "Q-Th")) is float and vocab.TIME_LIMIT.validate(None) is None
    assert type(vocab.N_ITER.validate(np.int64(4), "Q-Imp")) is int


def test_a_parameter_whose_widget_or_default_leaves_its_constraint_is_refused():
    """An entry cannot offer (or default to) a value its own check would refuse."""
    with pytest.raises(ValueError, match="the slider of theta offers 0 to 1, outside a number in \\(0, 1\\]"):
        vocab.StrategyParameter("theta", 0.95, UNIT_RIGHT, "help", low=0.0, high=1.0, step=0.01)
    with pytest.raises(ValueError, match="an option of alpha must be a number in \\(0, 1\\): got 1"):
        vocab.StrategyParameter("alpha", 0.05, OPEN_UNIT, "help", options=(0.05, 1))
    with pytest.raises(ValueError, match="the default of n_iter must be a positive integer: got 0"):
        vocab.StrategyParameter("n_iter", 0, POSITIVE_INT, "help")
    with pytest.raises(ValueError, match="needs low, high and a positive step"):
        vocab.StrategyParameter("theta", 0.95, UNIT_RIGHT, "help", low=0.5, high=1.0)


def test_the_registry_declares_which_strategies_are_expensive_and_run_in_a_worker():
    """R-Kem (an exact solve per ranking) is the one expensive strategy, run in a worker process
    by the pages that compute it over many samples; the lookups keep the order asked for."""
    registry = vocab.STRATEGY_REGISTRY
    assert [n for n, s in registry.items() if s.expensive] == ["R-Kem"]
    assert [n for n, s in registry.items() if s.in_worker] == ["R-Kem"]
    assert registry["R-Kem"].cost == "exact Kemeny solve" and registry["R-Kem"].worker == "kem"
    assert vocab.expensive_strategies(["Q-M", "R-Kem", "nope"]) == ["R-Kem"]
    assert vocab.worker_strategies(["R-M", "Elo"]) == []
    with pytest.raises(ValueError, match="runs in a worker process but declares no cost"):
        vocab.Strategy("X-New", "new", higher_is_better=True, uses_scores=False, worker="new")


def test_the_lookups_read_the_registry_of_the_moment(monkeypatch):
    """Pages ask vocab which strategies are expensive, never a name: a strategy newly marked so
    is found (what the page tests rely on to register an expensive strategy)."""
    elo = dataclasses.replace(vocab.STRATEGY_REGISTRY["Elo"], cost="Bradley-Terry fit", worker="elo")
    monkeypatch.setattr(vocab, "STRATEGY_REGISTRY", MappingProxyType({**vocab.STRATEGY_REGISTRY, "Elo": elo}))
    assert vocab.expensive_strategies(["R-M", "Elo", "R-Kem"]) == ["Elo", "R-Kem"]
    assert vocab.worker_strategies(["Elo"]) == ["Elo"]


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
