"""Names typeset as themselves: LaTeX's special characters and Markdown's inline syntax escaped."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: LaTeX's special characters as text, replaced in one pass (a replacement's own braces
#: are not escaped again: ``\\`` is ``\textbackslash{}``, not ``\textbackslash\{\}``).
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # OT1 fonts type < > | in text as other glyphs
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_SPECIAL = re.compile("|".join(map(re.escape, _LATEX_SPECIALS)))


def latex_escape(text: str) -> str:
    r"""``text`` typeset as itself in LaTeX.

    >>> print(latex_escape("a_b&50%~^\\x{}"))
    a\_b\&50\%\textasciitilde{}\textasciicircum{}\textbackslash{}x\{\}
    """
    return _LATEX_SPECIAL.sub(lambda found: _LATEX_SPECIALS[found[0]], text)


#: Markdown's inline syntax in a system name, backslash-escaped (``*bm25*`` is no emphasis,
#: ``a|b`` no extra cell, ``#1`` no heading, ``$x$`` no formula).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]<>|~$#]")


def escape_markdown(text: str) -> str:
    """``text`` shown as itself in Markdown (a run named ``*bm25*`` is not emphasis).

    >>> print(escape_markdown("*bm25*_v1 [x] $5"))
    \\*bm25\\*\\_v1 \\[x\\] \\$5
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text)
