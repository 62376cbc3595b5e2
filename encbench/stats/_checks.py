"""Checks of the statistics' scalar parameters, in one place.

Each returns the value converted (``float`` or ``int``) or raises ``ValueError`` naming the
parameter and the value it got (docs/ARCHITECTURE.md, Layers). The strategies' parameters
(``theta``, ``alpha``, ``n_iter``, ``time_limit``) are checked by their constraints in the
strategy registry (:data:`encbench.vocab.STRATEGY_REGISTRY`), so a range is written there only;
the resampling ones (``B``, ``level``, ``n_boot``, ...) by the shared intervals of
:mod:`encbench.constraints`.
"""
from __future__ import annotations

from encbench import vocab
from encbench.constraints import OPEN_UNIT, POSITIVE_INT, UNIT_RIGHT


def check_unit_interval(value: object, name: str, *, include_one: bool = False) -> float:
    """Return ``value`` as a float in (0, 1), or in (0, 1] with ``include_one``.

    Raises
    ------
    ValueError
        If ``value`` is not a number in that interval (NaN and infinities included).
    """
    return (UNIT_RIGHT if include_one else OPEN_UNIT).check(value, name)  # type: ignore[return-value]


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int >= 1 (booleans refused) or raise ``ValueError`` naming it."""
    return POSITIVE_INT.check(value, name)  # type: ignore[return-value]


def check_alpha(alpha: object) -> float:
    """The significance level ``alpha``, in (0, 1)."""
    return vocab.ALPHA.validate(alpha)  # type: ignore[return-value]


def check_level(level: object) -> float:
    """A confidence level, in (0, 1)."""
    return check_unit_interval(level, "level")


def check_theta(theta: object) -> float:
    """Q-Th's threshold ``theta``: the share of the best score, in (0, 1]."""
    return vocab.THETA.validate(theta)  # type: ignore[return-value]


def check_n_iter(n_iter: object) -> int:
    """Q-Imp's number of correction sweeps, a positive integer."""
    return vocab.N_ITER.validate(n_iter)  # type: ignore[return-value]


def check_time_limit(time_limit: object) -> float | None:
    """A solver time limit: ``None`` (no limit) or a positive number of seconds."""
    return vocab.TIME_LIMIT.validate(time_limit)  # type: ignore[return-value]
