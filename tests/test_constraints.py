"""Declarative parameter constraints (encbench/constraints.py): the check, the message, the words."""
from __future__ import annotations

import numpy as np
import pytest

from encbench.constraints import OPEN_UNIT, POSITIVE_INT, UNIT_RIGHT, Interval


def test_a_float_interval_converts_and_keeps_its_bounds():
    """Numbers and numeric text are converted to float; each bound is in or out as ``closed`` says."""
    assert UNIT_RIGHT.check("0.5", "theta") == 0.5 and type(UNIT_RIGHT.check(np.float32(0.25), "t")) is float
    assert UNIT_RIGHT.check(1, "theta") == 1.0                    # (0, 1]: 1 in
    assert 1 not in OPEN_UNIT and 0 not in OPEN_UNIT and 0.5 in OPEN_UNIT
    both = Interval(float, 0, 1, closed="both")
    assert 0 in both and 1 in both and 1.01 not in both and -0.01 not in both
    left = Interval(float, 0, 1, closed="left")
    assert 0 in left and 1 not in left
    for bad in (float("nan"), "x", None, [0.5], float("inf")):
        assert bad not in UNIT_RIGHT


def test_an_unbounded_side_takes_infinity_and_none_only_when_declared():
    """A missing bound is no bound (infinity allowed); None is accepted only with ``none=``."""
    seconds = Interval(float, 0, None, none="no limit", unit="seconds")
    assert seconds.check(None, "time_limit") is None
    assert seconds.check(float("inf"), "time_limit") == float("inf")
    assert 0 not in seconds and float("nan") not in seconds
    assert None not in Interval(float, 0, None)


def test_an_integer_interval_refuses_floats_text_and_booleans():
    """An int interval takes integers (numpy's too) only: 1.0, "3" and True are refused."""
    assert POSITIVE_INT.check(np.int64(3), "B") == 3 and type(POSITIVE_INT.check(np.int64(3), "B")) is int
    for bad in (0, -1, 1.0, "3", True, np.bool_(True), None):
        assert bad not in POSITIVE_INT


@pytest.mark.parametrize("constraint, value, message", [
    (UNIT_RIGHT, 1.5, "theta must be a number in (0, 1]: got 1.5"),
    (OPEN_UNIT, 0, "theta must be a number in (0, 1): got 0"),
    (POSITIVE_INT, 2.5, "theta must be a positive integer: got 2.5"),
    (Interval(float, 0, None, none="no limit", unit="seconds"), -1,
     "theta must be a positive number of seconds or None: got -1"),
    (Interval(int, 2, 10, closed="both"), 11, "theta must be an integer in [2, 10]: got 11"),
    (Interval(float, None, 0, closed="right"), 1, "theta must be a number in (-inf, 0]: got 1"),
])
def test_the_error_names_the_parameter_what_it_accepts_and_the_value(constraint, value, message):
    """The message is the parameter's name, the interval in words and the value given."""
    with pytest.raises(ValueError) as caught:
        constraint.check(value, "theta")
    assert str(caught.value) == message


def test_an_owner_prefixes_the_message():
    """A strategy parameter's error starts with the strategy it is for."""
    with pytest.raises(ValueError) as caught:
        UNIT_RIGHT.check("x", "theta", owner="strategy 'Q-Th'")
    assert str(caught.value) == "strategy 'Q-Th': theta must be a number in (0, 1]: got 'x'"


def test_a_widget_range_is_accepted_only_inside():
    """A slider's range must lie inside the constraint, an int constraint's on whole numbers."""
    assert UNIT_RIGHT.accepts_range(0.5, 1.0)
    assert not UNIT_RIGHT.accepts_range(0.0, 1.0) and not OPEN_UNIT.accepts_range(0.5, 1.0)
    assert not UNIT_RIGHT.accepts_range(0.9, 0.5)
    assert POSITIVE_INT.accepts_range(1, 50) and not POSITIVE_INT.accepts_range(1, 2.5)


def test_a_malformed_interval_is_refused():
    """The kind, the closed side and the order of the bounds are checked when it is written."""
    with pytest.raises(ValueError, match="kind must be int or float"):
        Interval(str, 0, 1)
    with pytest.raises(ValueError, match="closed must be"):
        Interval(float, 0, 1, closed="open")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="low must be below high"):
        Interval(float, 1, 0)
