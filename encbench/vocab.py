"""Canonical vocabulary of encbench (DESIGN.md section 4) and the mapping from published codes.

Every name used in the database, the API, the UI and exports comes from here.
"""
from __future__ import annotations

import re

ENCODERS: tuple[str, ...] = (
    "Drop", "OH", "Ord", "Bin", "Count", "Sum", "MH", "MT", "WoE", "GLMM", "CB",
    "ME_0.1", "ME_1", "ME_10", "DMT_2", "DMT_5", "DMT_10",
    "PBMT_0.001", "PBMT_0.01", "PBMT_0.1",
    "CVMT_2", "CVMT_5", "CVMT_10", "BUMT_2", "BUMT_5", "BUMT_10",
    "CVGLMM_2", "CVGLMM_5", "CVGLMM_10", "BUGLMM_2", "BUGLMM_5", "BUGLMM_10",
)
MODELS: tuple[str, ...] = ("DT", "LGBM", "SVM", "kNN", "LogReg")
METRICS: tuple[str, ...] = ("BAcc", "F1", "Acc", "AUC")
TUNINGS: tuple[str, ...] = ("no", "model", "full")
#: outer evaluation schemes (issue 15): the published stratified folds, forward folds over time
SPLITS: tuple[str, ...] = ("cv", "time")
AGGREGATIONS: tuple[str, ...] = (
    "R-M", "R-Md", "R-B", "R-W", "Q-M", "Q-Md", "Q-RM", "Q-Th", "R-Nem", "R-Kem",
)

# Published codes -> canonical names (DESIGN.md section 4).
_FIXED_ENCODER_CODES = {
    "BE": "Bin", "CBE": "CB", "CE": "Count", "DE": "Drop", "MHE": "MH", "OE": "Ord",
    "OHE": "OH", "RGLMME": "GLMM", "SE": "Sum", "TE": "MT", "WOEE": "WoE",
    "ME01E": "ME_0.1", "ME1E": "ME_1", "ME10E": "ME_10",
    "PBTE0001": "PBMT_0.001", "PBTE001": "PBMT_0.01", "PBTE01": "PBMT_0.1",
}
_PATTERN_ENCODER_CODES = (
    (re.compile(r"^DTEM(\d+)$"), "DMT_{}"),
    (re.compile(r"^BUCV(\d+)RGLMME$"), "BUGLMM_{}"),
    (re.compile(r"^BUCV(\d+)TE$"), "BUMT_{}"),
    (re.compile(r"^CV(\d+)RGLMME$"), "CVGLMM_{}"),
    (re.compile(r"^CV(\d+)TE$"), "CVMT_{}"),
)
MODEL_CODES = {"DTC": "DT", "LGBMC": "LGBM", "SVC": "SVM", "KNC": "kNN", "LR": "LogReg"}
METRIC_CODES = {"BACC": "BAcc", "ACC": "Acc", "F1": "F1", "AUC": "AUC"}
TUNING_CODES = {t: t for t in TUNINGS}


def encoder_from_code(code: str) -> str:
    """Map a published encoder code (e.g. ``"CV5TE"``) to its canonical name (``"CVMT_5"``).

    Raises
    ------
    ValueError
        If the code is not one of the study's codes or maps to a name outside :data:`ENCODERS`.
    """
    name = _FIXED_ENCODER_CODES.get(code)
    if name is None:
        for pattern, template in _PATTERN_ENCODER_CODES:
            match = pattern.match(code)
            if match:
                name = template.format(match.group(1))
                break
    if name is None or name not in ENCODERS:
        raise ValueError(f"unknown published encoder code: got {code!r}")
    return name


def _lookup(table: dict[str, str], code: str, kind: str) -> str:
    try:
        return table[code]
    except KeyError:
        raise ValueError(f"unknown published {kind} code: got {code!r}") from None


def model_from_code(code: str) -> str:
    """Map a published model code (``"LR"``) to its canonical name (``"LogReg"``)."""
    return _lookup(MODEL_CODES, code, "model")


def metric_from_code(code: str) -> str:
    """Map a published scoring code (``"BACC"``) to its canonical name (``"BAcc"``)."""
    return _lookup(METRIC_CODES, code, "scoring")


def tuning_from_code(code: str) -> str:
    """Validate a published tuning value (already canonical: no, model, full)."""
    return _lookup(TUNING_CODES, code, "tuning")
