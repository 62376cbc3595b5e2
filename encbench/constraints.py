"""Declarative constraints on scalar parameters, in the manner of scikit-learn's ``Interval``.

A constraint is written once, beside the parameter it constrains (the strategy registry in
:mod:`encbench.vocab`, the statistics' checks in :mod:`encbench.stats._checks`), and gives the
check, the error message and the words a help text or a CLI uses for it. It is a leaf: it
imports nothing of the project.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral
from typing import Literal

import numpy as np

Closed = Literal["left", "right", "both", "neither"]


@dataclass(frozen=True)
class Interval:
    """Numbers of one kind between two bounds, optionally also ``None``.

    Attributes
    ----------
    kind : type
        ``int`` (integers only; booleans refused) or ``float`` (anything :func:`float` converts,
        NaN refused).
    low, high : float or None
        The bounds; None: unbounded on that side (infinity allowed there for a float).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    none : str or None
        What ``None`` means when it is accepted (``"no limit"``); None: ``None`` is refused.
    unit : str
        What the number counts, for the description (``"seconds"``).

    Examples
    --------
    >>> Interval(float, 0, 1, closed="right").check(0.5, "theta")
    0.5
    >>> Interval(float, 0, 1, closed="right").describe()
    'a number in (0, 1]'
    """

    kind: type
    low: float | None
    high: float | None
    closed: Closed = "neither"
    none: str | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        if self.kind not in (int, float):
            raise ValueError(f"Interval kind must be int or float: got {self.kind!r}")
        if self.closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval closed must be left, right, both or neither: got {self.closed!r}")
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise ValueError(f"Interval low must be below high: got {self.low!r}, {self.high!r}")

    def _inside(self, number: float) -> bool:
        left = self.closed in ("left", "both")
        right = self.closed in ("right", "both")
        above = self.low is None or (number >= self.low if left else number > self.low)
        below = self.high is None or (number <= self.high if right else number < self.high)
        return above and below

    def __contains__(self, value: object) -> bool:
        try:
            self.check(value, "value")
        except ValueError:
            return False
        return True

    def check(self, value: object, name: str, *, owner: str | None = None) -> int | float | None:
        """``value`` converted to :attr:`kind` (``None`` kept when accepted).

        Raises
        ------
        ValueError
            ``"<name> must be <description>: got <value>"``, prefixed by ``"<owner>: "`` when an
            owner (``"strategy 'Q-Th'"``) is given.
        """
        if value is None and self.none is not None:
            return None
        if self.kind is int:
            ok = isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))
            number = int(value) if ok else None  # type: ignore[arg-type]
        else:
            try:
                number = float(value)  # type: ignore[arg-type]
                ok = not math.isnan(number)
            except (TypeError, ValueError):
                number, ok = None, False
        if not ok or not self._inside(number):  # type: ignore[arg-type]
            prefix = f"{owner}: " if owner else ""
            raise ValueError(f"{prefix}{name} must be {self.describe()}: got {value!r}")
        return number

    def describe(self) -> str:
        """The accepted values in words: ``"a number in (0, 1]"``, ``"a positive integer"``,
        ``"a positive number of seconds or None"``."""
        noun = "integer" if self.kind is int else "number"
        positive = self.high is None and self.low is not None and (
            (self.low == 0 and self.closed in ("neither", "right"))
            or (self.kind is int and self.low == 1 and self.closed in ("left", "both")))
        if positive:
            text = f"a positive {noun}"
        elif self.low is None and self.high is None:
            text = f"{'an' if self.kind is int else 'a'} {noun}"
        else:
            left = "[" if self.closed in ("left", "both") and self.low is not None else "("
            right = "]" if self.closed in ("right", "both") and self.high is not None else ")"
            low = "-inf" if self.low is None else f"{self.low:g}"
            high = "inf" if self.high is None else f"{self.high:g}"
            text = f"{'an' if self.kind is int else 'a'} {noun} in {left}{low}, {high}{right}"
        if self.unit:
            text += f" of {self.unit}"
        if self.none is not None:
            text += " or None"
        return text

    def accepts_range(self, low: float, high: float) -> bool:
        """Whether every number from ``low`` to ``high`` is accepted (a widget's range)."""
        return low <= high and self._inside(low) and self._inside(high) and (
            self.kind is float or (float(low).is_integer() and float(high).is_integer()))


#: a number in (0, 1): a significance or confidence level
OPEN_UNIT = Interval(float, 0, 1, closed="neither")
#: a number in (0, 1]: a share
UNIT_RIGHT = Interval(float, 0, 1, closed="right")
#: an integer >= 1: a count
POSITIVE_INT = Interval(int, 1, None, closed="left")
