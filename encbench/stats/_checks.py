"""Checks of the statistics' scalar parameters, in one place.

Each returns the value converted (``float`` or ``int``) or raises ``ValueError`` naming the
parameter and the value it got (docs/ARCHITECTURE.md, Layers). The strategies' parameters
(``theta``, ``alpha``, ``n_iter``, ``time_limit``) and the resampling ones (``B``, ``level``,
``n_boot``, ...) share them.
"""
from __future__ import annotations

import math

import numpy as np


def check_unit_interval(value: object, name: str, *, include_one: bool = False) -> float:
    """Return ``value`` as a float in (0, 1), or in (0, 1] with ``include_one``.

    Raises
    ------
    ValueError
        If ``value`` is not a number in that interval (NaN and infinities included).
    """
    interval = "(0, 1]" if include_one else "(0, 1)"
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in {interval}: got {value!r}") from None
    inside = 0.0 < number <= 1.0 if include_one else 0.0 < number < 1.0
    if not (math.isfinite(number) and inside):
        raise ValueError(f"{name} must be a number in {interval}: got {value!r}")
    return number


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int >= 1 (booleans refused) or raise ``ValueError`` naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer: got {value!r}")
    return int(value)


def check_alpha(alpha: object) -> float:
    """The significance level ``alpha``, in (0, 1)."""
    return check_unit_interval(alpha, "alpha")


def check_level(level: object) -> float:
    """A confidence level, in (0, 1)."""
    return check_unit_interval(level, "level")


def check_theta(theta: object) -> float:
    """Q-Th's threshold ``theta``: the share of the best score, in (0, 1]."""
    return check_unit_interval(theta, "theta", include_one=True)


def check_n_iter(n_iter: object) -> int:
    """Q-Imp's number of correction sweeps, a positive integer."""
    return check_positive_int(n_iter, "n_iter")


def check_time_limit(time_limit: object) -> float | None:
    """A solver time limit: ``None`` (no limit) or a positive number of seconds."""
    if time_limit is None:
        return None
    try:
        value = float(time_limit)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"time_limit must be a positive number of seconds or None: got {time_limit!r}") from None
    if not value > 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None: got {time_limit!r}")
    return value
