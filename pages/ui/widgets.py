"""Widgets whose value lives in the URL (so a view can be shared), and the warnings for link
values they cannot take."""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import streamlit as st

from encbench import vocab
from pages.ui.text import md_code, md_text

log = logging.getLogger(__name__)


def _warn_unknown_url_values(key: str, options: list, format_func: Callable | None) -> None:
    """Say so when a shared link names values this view does not have (they are ignored)."""
    # An emptied multiselect is written to the URL as "?key=" (an empty value): a selection of
    # nothing, not an unknown value.
    given = [v for v in st.query_params.get_all(key) if v != ""]
    if not given:
        return
    labels = {str(format_func(o)) if format_func else str(o) for o in options}
    unknown = [v for v in given if v not in labels]
    if unknown:
        st.warning(f"The link sets {key} to {', '.join(md_code(v) for v in unknown)}, which this view does "
                   f"not have; ignored. Available: {', '.join(md_text(v) for v in sorted(labels))}.")


def warn_bad_number(key: str, *, low: float, high: float, options: Sequence[float] | None = None,
                    integer: bool = False) -> None:
    """Say so when a shared link gives a numeric widget a value it cannot take (it is ignored).

    Streamlit drops such a value silently and shows the default; other link values get this
    warning from :func:`multiselect`/:func:`selectbox`, numbers get it here.
    """
    raw = st.query_params.get(key)
    if raw is None or raw == "":
        return
    try:
        value = float(raw)
        ok = low <= value <= high and (not integer or value.is_integer())
        if options is not None:
            ok = ok and any(abs(value - o) < 1e-9 for o in options)
    except ValueError:
        ok = False
    if not ok:
        accepted = (", ".join(f"{o:g}" for o in options) if options is not None
                    else f"{'a whole number ' if integer else 'a number '}from {low:g} to {high:g}")
        st.warning(f"The link sets {key} to {md_code(raw)}, which this view does not accept; ignored, the "
                   f"default is used. Accepted: {accepted}.")


def multiselect(label: str, options: Sequence[str], *, key: str, default: Sequence[str] | None = None,
                help: str | None = None, **kwargs) -> list[str]:
    """A multiselect whose value lives in the URL (``?key=a&key=b``) so a view can be shared."""
    options = list(options)
    _warn_unknown_url_values(key, options, kwargs.get("format_func"))
    default = [d for d in (default if default is not None else options) if d in options]
    return st.multiselect(label, options, default=default, key=key, bind="query-params",
                          help=help, **kwargs)


def selectbox(label: str, options: Sequence[str], *, key: str, default: str | None = None,
              help: str | None = None, **kwargs) -> str | None:
    """A selectbox bound to the URL parameter ``key``."""
    options = list(options)
    _warn_unknown_url_values(key, options, kwargs.get("format_func"))
    index = options.index(default) if default in options else 0
    return st.selectbox(label, options, index=index if options else None, key=key,
                        bind="query-params", help=help, **kwargs)


def warn_bad_parameters() -> None:
    """Flag link values of the strategy parameters (``?theta=2``) their widgets cannot take."""
    for param, _ in vocab.offered_parameters():
        if param.options is not None:
            warn_bad_number(param.name, low=min(param.options), high=max(param.options),
                            options=param.options)
        else:
            warn_bad_number(param.name, low=param.low, high=param.high)


def parameter_inputs(strategies: Sequence[str], *, keep_enabled: Sequence[str] = ()) -> dict[str, float]:
    """One widget per strategy parameter the app offers, side by side, bound to the URL (``?theta=0.9``).

    The parameters, their ranges, defaults and help come from the strategy registry
    (:data:`encbench.vocab.STRATEGY_REGISTRY`); each is labelled with the strategies that use it
    (``"theta (Q-Th)"``) and disabled while none of them is chosen, unless the page uses it
    elsewhere too (``keep_enabled``). Call it where the widgets go (e.g. inside a column).

    Parameters
    ----------
    strategies : sequence of str
        The strategies chosen on the page.
    keep_enabled : sequence of str
        Parameters that stay enabled whatever the strategies.

    Returns
    -------
    dict
        Every offered parameter's value; :func:`encbench.stats.params_for` keeps those the
        strategies use.
    """
    offered = vocab.offered_parameters()
    values: dict[str, float] = {}
    for box, (param, users) in zip(st.columns(len(offered)), offered):
        label = f"{param.name} ({', '.join(users)})"
        disabled = param.name not in keep_enabled and not any(s in strategies for s in users)
        with box:
            if param.options is not None:
                values[param.name] = st.select_slider(
                    label, options=list(param.options), value=param.default, key=param.name,
                    bind="query-params", disabled=disabled, help=param.help)
            else:
                values[param.name] = st.slider(
                    label, param.low, param.high, param.default, param.step, key=param.name,
                    bind="query-params", disabled=disabled, help=param.help)
    return values
