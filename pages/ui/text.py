"""Text a user controls, shown as text: escaped for markdown, or as a code span."""
from __future__ import annotations

import logging
import re



log = logging.getLogger(__name__)


#: What :func:`md_text` escapes: the ASCII punctuation that markdown (CommonMark, GFM, Streamlit's
#: directives) gives a meaning; quotes, commas, ``?``, ``/``, ``@``, ``%`` and ``;`` stay as they are.
_MD_PUNCTUATION = re.compile(r"[\\`*_{}\[\]()<>#+\-.!|~:$&=]")


#: Where GFM autolink literals start, in escaped text: the ``:`` of ``://``, ``www`` before a
#: ``.``, and ``@``; :func:`md_text` puts a word joiner after each.
_AUTOLINK_START = re.compile(r"\\:(?=//)|(?i:www)(?=\\\.)|@")


_WORD_JOINER = "\u2060"


def md_text(value) -> str:
    """``value`` as literal text inside markdown: its markdown punctuation backslash-escaped and
    its autolinks broken.

    Alerts, captions and ``st.markdown`` render markdown, so a value a user controls (a link's
    query value, a file, column or dataset name, an error message quoting one) must not form a
    link (``[x](http://...)``), an image the browser fetches (``![x](http://...)``), emphasis,
    Streamlit's ``:color[...]`` or ``$math$``: a backslash before ASCII punctuation is
    CommonMark's escape, and the text renders as the original characters. GFM's autolinks
    (``http://...``, ``www.``, ``a@b.c``) are found in the text after escapes are read, so an
    invisible word joiner (U+2060) goes where they start: after the ``:`` of ``://``, between
    ``www`` and its ``.``, and after ``@``.
    Streamlit's ``:icon:`` shortcodes still render (an icon of its own font, nothing fetched).
    """
    text = _MD_PUNCTUATION.sub(r"\\\g<0>", str(value))
    return _AUTOLINK_START.sub(lambda m: m.group(0) + _WORD_JOINER, text)


def md_code(value) -> str:
    """``value`` as an inline code span: shown verbatim, never read as markdown.

    The fence is one backtick longer than the longest run of backticks in ``value`` (so none
    closes it early), padded with spaces when ``value`` starts or ends with a backtick; line
    breaks become spaces, as they would inside a code span anyway.
    """
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
