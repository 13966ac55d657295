"""Text from outside the library (an objective's error message, a name it was given) made
safe to print on one line of a terminal or a table (:func:`printable`), and cut to a width
at a word's end (:func:`shorten`).

This module imports nothing from the library, so any module may import it.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable", "shorten"]

# control characters (C0, DEL, C1), formatting characters (bidirectional overrides, zero
# widths), line and paragraph separators, surrogates: each can move the cursor, colour the
# terminal, reorder what follows it or break a table's line
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def printable(text: str) -> str:
    """``text`` with every character that is not plainly printable written as its Python
    escape (a newline as ``\\n``, ESC as ``\\x1b``, U+202E as ``\\u202e``), so that it
    prints on one line, changes no terminal state and keeps a table's columns. Other
    characters, any script, are kept; a backslash is kept as it is.

    Store text as it was given and call this where it is shown.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if text.isprintable():  # the common case, at C speed
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch for ch in text)


def shorten(text: str, width: int) -> str:
    """``text`` whole if it has at most ``width`` characters, else cut after its last whole
    word that fits with ``…`` appended (``width`` characters at most, the ellipsis included;
    a first word longer than that is cut inside, as nothing shorter would say anything).
    Whitespace runs count as they are: pass one line (:func:`printable`'s output).

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: ``width`` is not an int >= 2.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not isinstance(width, int) or isinstance(width, bool) or width < 2:
        raise ValueError(f"width must be an int >= 2, got {width!r}")
    if len(text) <= width:
        return text
    room = text[:width - 1]  # the characters that fit beside the ellipsis
    if not text[width - 1].isspace():  # the cut falls inside a word: back to the space before it
        space = max(room.rfind(" "), room.rfind("\t"))
        if space > 0:
            room = room[:space]
    return room.rstrip(" \t,;:") + "…"
