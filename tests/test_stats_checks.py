"""The statistics' parameter checks (encbench/stats/_checks.py)."""
from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

from encbench import vocab
from encbench.stats import _checks
from encbench.stats._checks import (
    check_alpha, check_level, check_n_iter, check_positive_int, check_theta, check_time_limit,
    check_unit_interval,
)


@pytest.mark.parametrize("value", [0.05, "0.5", np.float32(0.25), 1e-9])
def test_unit_interval_accepts_and_converts(value):
    assert check_unit_interval(value, "x") == float(value)


@pytest.mark.parametrize("value", [0, 1, 1.0, -0.1, 2, float("nan"), float("inf"), None, "a", [0.5]])
def test_open_unit_interval_refuses_naming_the_value(value):
    with pytest.raises(ValueError, match=r"^alpha must be a number in \(0, 1\): got "):
        check_alpha(value)
    with pytest.raises(ValueError, match=r"^level must be a number in \(0, 1\): got "):
        check_level(value)


def test_theta_includes_one():
    assert check_theta(1) == 1.0
    for bad in (0, 1.5, float("nan"), "x"):
        with pytest.raises(ValueError, match=rf"^theta must be a number in \(0, 1\]: got {bad!r}"):
            check_theta(bad)


@pytest.mark.parametrize("value", [1, 7, np.int64(3)])
def test_positive_int(value):
    assert check_positive_int(value, "B") == int(value)
    assert type(check_n_iter(value)) is int


@pytest.mark.parametrize("value", [0, -1, 1.0, True, np.bool_(True), "3", None])
def test_positive_int_refuses(value):
    with pytest.raises(ValueError, match=rf"^n_iter must be a positive integer: got {value!r}$"):
        check_n_iter(value)


def test_time_limit():
    assert check_time_limit(None) is None
    assert check_time_limit(2) == 2.0
    for bad in (0, -1, float("nan"), "soon"):
        with pytest.raises(ValueError, match="time_limit must be a positive number of seconds or None"):
            check_time_limit(bad)


def test_the_stats_modules_share_these_checks():
    """Each module checks a parameter with the one function of _checks; the consensus
    strategies check theirs with the registry's constraints, as _checks does."""
    names = ("bootstrap", "impute", "kemeny", "nemenyi", "pairwise", "replicability")
    # (encbench.stats exports functions of the same names as some of these modules)
    bootstrap, impute, kemeny, nemenyi, pairwise, replicability = (
        importlib.import_module(f"encbench.stats.{name}") for name in names)
    assert nemenyi.check_alpha is pairwise.check_alpha is _checks.check_alpha
    assert bootstrap.check_level is replicability.check_level is _checks.check_level
    assert impute.check_n_iter is _checks.check_n_iter
    assert kemeny.check_time_limit is _checks.check_time_limit


@pytest.mark.parametrize("check, param", [(check_alpha, "ALPHA"), (check_theta, "THETA"),
                                          (check_n_iter, "N_ITER"), (check_time_limit, "TIME_LIMIT")])
def test_strategy_parameter_checks_are_the_registry_constraints(check, param):
    """A strategy parameter's range is written once, in the registry: _checks applies it, with
    the same message (without a strategy's name)."""
    spec = getattr(vocab, param)
    for value in (-1, 0, 0.5, 1, 3, 1.5, float("nan"), "x", None):
        try:
            expected = spec.constraint.check(value, spec.name)
        except ValueError as exc:
            with pytest.raises(ValueError, match=f"^{re.escape(str(exc))}$"):
                check(value)
        else:
            assert check(value) == expected
