"""Mark a topic's query terms in a document's text. Pure core, no Django.

The assessor reads faster when the query terms stand out. Terms are the
topic title's words, minus stopwords and very short words, matched case-
insensitively at word starts so that "infection" also marks "infections".
"""

from __future__ import annotations

import html
import re

_STOPWORDS = frozenset(
    """a an and are as at be but by can do does for from had has have how in into is it its
    of on or that the their there these they this to was were what when which who why will
    with""".split()
)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)


def query_terms(*texts: str) -> list[str]:
    """Distinct terms of the texts, longest first (so longer matches win)."""
    terms = {
        word.lower()
        for text in texts
        for word in _WORD.findall(text or "")
        if len(word) >= 3 and word.lower() not in _STOPWORDS
    }
    return sorted(terms, key=lambda term: (-len(term), term))


def highlight_html(text: str, terms: list[str]) -> str:
    """`text` escaped for HTML, with each term's occurrences in <mark>."""
    if not terms:
        return html.escape(text)
    pattern = re.compile(
        r"\b(?:" + "|".join(re.escape(term) for term in terms) + r")\w*", re.IGNORECASE
    )
    parts, last = [], 0
    for match in pattern.finditer(text):
        parts.append(html.escape(text[last : match.start()]))
        parts.append(f"<mark>{html.escape(match.group(0))}</mark>")
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)
