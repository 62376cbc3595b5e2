"""pages/ui/text.py: text a user controls is shown as text, never read as markdown.

Alerts, captions and ``st.markdown`` render markdown: a query value, a file or column name
echoed into them as it is would turn ``[click here](http://x)`` into a live link and
``![x](http://x)`` into an image the browser fetches from outside.
"""
from __future__ import annotations

import re

import pytest
from pagetest import open_page
from small_db import copy_db

from encbench.store import Writer
from pages.ui.text import md_code, md_text

HOSTILE = [
    "[click here](http://x)",
    "![x](http://x)",
    "<img src=http://x>",
    "http://x.example/a_b",
    "WWW.x.example",
    "mail me@x.example",
    "**bold** _it_ `code` $x^2$ :red[red] :material/warning:",
    "a\\](http://x)",            # a backslash trying to undo the escape of what follows it
    "``` fence",
]


def _read(text: str) -> str:
    """Text as CommonMark reads it: a backslash before ASCII punctuation drops. GFM looks for
    autolinks in this text."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def _unescape(text: str) -> str:
    """The text a reader sees: :func:`_read` without the invisible word joiners (U+2060)."""
    return _read(text).replace("\u2060", "")


def _outside_code(body: str) -> str:
    """``body`` with its inline code spans (CommonMark: equal backtick fences) cut out."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", " ", body, flags=re.S)


def _live_markdown(text: str) -> list[str]:
    """Markdown constructs in ``text`` that are not escaped: link or image openers, angle
    brackets, GFM autolinks (found after escapes are read), emphasis, code, math and Streamlit's
    colour directive."""
    autolinks = re.findall(r"(?i)https?://|www\.|@\w", _read(text))
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", text)   # drop every escaped character
    return autolinks + re.findall(r"!\[|\]\(|[\[\]<>`*_$]|:\w+\[", unescaped)


def _links(text: str) -> list[str]:
    """Unescaped link and image openers, angle brackets and autolinks in ``text``."""
    autolinks = re.findall(r"(?i)https?://|www\.|@\w", _read(text))
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", text)
    return autolinks + re.findall(r"!\[|\]\(|[<>]", unescaped)


@pytest.mark.parametrize("value", HOSTILE)
def test_md_text_escapes_every_construct_and_reads_back_as_the_value(value):
    escaped = md_text(value)
    assert _live_markdown(escaped) == []
    assert _unescape(escaped) == value


def test_md_text_by_hand():
    assert md_text("[a](http://b)") == "\\[a\\]\\(http\\:\u2060//b\\)"
    assert md_text("www.b and a@b") == "www\u2060\\.b and a@\u2060b"
    assert md_text("plain words, 42; 'quoted'?") == "plain words, 42; 'quoted'?"
    assert md_text(ValueError("bad 'x_y' in a.csv")) == r"bad 'x\_y' in a\.csv"


@pytest.mark.parametrize("value, expected", [
    ("Foo", "`Foo`"),
    ("a`b", "``a`b``"),
    ("`a", "`` `a ``"),
    ("a``b`", "``` a``b` ```"),
    ("two\nlines", "`two lines`"),
])
def test_md_code_fences_longer_than_any_backtick_run_inside(value, expected):
    assert md_code(value) == expected


@pytest.mark.parametrize("value", HOSTILE)
def test_md_code_is_one_code_span_holding_the_value(value):
    code = md_code(value)
    assert _outside_code(code).strip() == ""
    fence = re.match(r"`+", code).group(0)
    assert code[len(fence):-len(fence)].strip(" ") == value


# -- hostile links ---------------------------------------------------------------------------

#: A local upload's dataset name comes from its file name, which the uploader chose.
HOSTILE_NAME = "![pic](http://x)"


@pytest.fixture(scope="module")
def mixed_db(small_published_db, tmp_path_factory):
    """The small database's published results (tests/small_db.py) and one local run on an upload
    with a hostile name (the origin and prefer controls appear only when local results exist)."""
    path = copy_db(small_published_db, tmp_path_factory.mktemp("mixed") / "encbench.duckdb")
    with Writer(path) as writer:
        writer.upsert_dataset({"dataset": "file:abc123", "name": HOSTILE_NAME, "source": "upload",
                               "sha256": "abc123"})
        writer.ensure_run("local-hostile", origin="local", label="[run](http://x)", status="done",
                          n_expected=2)
        writer.write_results([
            dict(run_id="local-hostile", dataset="file:abc123", encoder=e, model="LogReg", tuning="no",
                 scoring="AUC", fold=0, n_folds=1, cv_score=v, time=0.1, status="ok", error=None)
            for e, v in (("OH", 0.6), ("MT", 0.7))])
    return path


@pytest.fixture()
def mixed_env(mixed_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(mixed_db))


def _alerts(at) -> list[str]:
    return [e.value for kind in ("warning", "info", "error", "success") for e in getattr(at, kind)]


@pytest.mark.parametrize("payload", ["[click here](http://x)", "![x](http://x)"])
@pytest.mark.parametrize("key, echo", [
    ("model", "The link sets model to "),      # a multiselect's unknown value
    ("prefer", "The link sets prefer to "),    # a radio's unknown value
    ("alpha", "The link sets alpha to "),      # a number widget's bad value
    ("section", "This view has no "),          # a tab the page does not have
])
def test_a_hostile_link_value_is_echoed_as_code_only(mixed_env, payload, key, echo):
    at = open_page("consensus", {key: payload, "origin": "both"})
    echoed = [body for body in _alerts(at) if echo in body]
    assert len(echoed) == 1, _alerts(at)
    (body,) = echoed
    assert md_code(payload) in body                          # the value, verbatim, as code
    assert _links(_outside_code(body)) == [], body           # and no link or image outside it
    assert not at.exception


def test_a_hostile_dataset_name_among_the_offered_values_is_escaped(mixed_env):
    at = open_page("explorer", {"origin": "local", "all_datasets": "false", "dataset": "nope"})
    (body,) = [w for w in _alerts(at) if "The link sets dataset to " in w]
    assert md_text(HOSTILE_NAME) in body and HOSTILE_NAME not in body
    assert _links(_outside_code(body)) == [], body


def test_an_error_message_quoting_user_text_is_escaped(mixed_env, monkeypatch):
    import importlib

    def boom(*args, **kwargs):
        raise ValueError("column '![x](http://x)' is odd")

    # the Consensus page's one-line summary, called on every run (its view is cached)
    monkeypatch.setattr(importlib.import_module("encbench.views.consensus"), "best_summary", boom)
    at = open_page("consensus")
    (body,) = [e.value for e in at.error]
    assert "could not be shown: ValueError: " in body
    assert _live_markdown(body.split("ValueError: ", 1)[1]) == []
    assert _unescape(body).endswith("column '![x](http://x)' is odd")
