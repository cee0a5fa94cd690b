"""Mark a topic's query terms in a document's text. Pure core, no Django.

The assessor reads faster when the query terms stand out. Terms are the
topic title's words, minus stopwords and very short words, matched case-
insensitively at word starts so that "infection" also marks "infections".

The work is bounded, so that a judging page stays fast whatever the topic and
the document (a topic title of 420 KB made 55,000 terms, and marking them cost
1.5 s on every page, 38 s on a 100 KB document of such words):

- `query_terms` reads at most the first QUERY_CHARS characters of each text and
  keeps the first MAX_TERMS distinct terms, none longer than MAX_TERM_CHARS (a
  longer "word" is a URL or an identifier, not a query term);
- `highlight_html` marks the terms in the first MARKED_CHARS characters of the
  text; the rest is shown, escaped, without marks.

The regular expression tries each term at each word start of the marked part,
so marking costs at most MARKED_CHARS x MAX_TERMS x MAX_TERM_CHARS character
comparisons, done in C on a lower-cased copy: 50-70 ms in the slowest case
found (bench/bench_highlight.py: 200,000 characters of one-letter words, the
most word starts), a few milliseconds for real titles and documents, and the
issue's 420 KB title 8 ms. Escaping the rest is linear and cheap.
"""

from __future__ import annotations

import html
import re

QUERY_CHARS = 10_000
MAX_TERMS = 50
MAX_TERM_CHARS = 50
MARKED_CHARS = 200_000

_STOPWORDS = frozenset(
    """a an and are as at be but by can do does for from had has have how in into is it its
    of on or that the their there these they this to was were what when which who why will
    with""".split()
)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)


def query_terms(*texts: str) -> list[str]:
    """Distinct terms of the texts, longest first (so longer matches win): the first
    MAX_TERMS met in reading order (see the module's bounds)."""
    terms: dict[str, None] = {}
    for text in texts:
        for match in _WORD.finditer(text or "", 0, QUERY_CHARS):
            word = match.group().lower()
            if 3 <= len(word) <= MAX_TERM_CHARS and word not in _STOPWORDS:
                terms[word] = None
                if len(terms) == MAX_TERMS:
                    return _longest_first(terms)
    return _longest_first(terms)


def _longest_first(terms: dict[str, None]) -> list[str]:
    return sorted(terms, key=lambda term: (-len(term), term))


def highlight_html(text: str, terms: list[str]) -> str:
    """`text` escaped for HTML, with each term's occurrences in <mark> (within the
    first MARKED_CHARS characters; at most MAX_TERMS terms of MAX_TERM_CHARS each
    are looked for, as `query_terms` gives them)."""
    terms = [term.lower() for term in terms if len(term) <= MAX_TERM_CHARS][:MAX_TERMS]
    if not terms:
        return html.escape(text)
    alternatives = "|".join(re.escape(term) for term in terms)
    marked = text[:MARKED_CHARS]
    searched = marked.lower()
    if len(searched) == len(marked):
        # The terms are lower case: matching a lower-cased copy is 4 to 7 times
        # faster than IGNORECASE, which folds the case of every character it tries.
        matches = re.compile(r"\b(?:" + alternatives + r")\w*").finditer(searched)
    else:  # a letter whose lower case is longer (U+0130): the positions would shift
        matches = re.compile(r"\b(?:" + alternatives + r")\w*", re.IGNORECASE).finditer(marked)
    parts, last = [], 0
    for match in matches:
        start, end = match.span()
        parts.append(html.escape(text[last:start]))
        parts.append(f"<mark>{html.escape(text[start:end])}</mark>")
        last = end
    parts.append(html.escape(text[last:]))
    return "".join(parts)
