"""Highlighter benchmark: a judging page's marking of query terms, whatever the sizes.

    python bench/bench_highlight.py [--repeat N]

For each case, the time of `query_terms(title)` plus `highlight_html(text,
terms)`, best of N, and of escaping the text alone (`html.escape`, the least
any page showing the text does), measured here:

  ordinary     a 9-word title, a 60 KB document
  huge title   a 420 KB title of random words, a 100 KB document of them
               (the issue's case: 55,000 terms, 1.5 s a page before)
  worst case   50 terms, and a document of one-letter words: the most word
               starts, at each of which every term is tried (the slowest
               case found; terms that share long prefixes with the words
               cost less)
  huge text    an ordinary title, a 20 MB document

Target: marking adds at most 0.1 s to escaping, in each case (judging/core/highlight.py
states the bound).
"""

from __future__ import annotations

import argparse
import html
import random
import string

from common import best_time

from judging.core.highlight import MARKED_CHARS, MAX_TERMS, highlight_html, query_terms


def cases() -> dict[str, tuple[str, str]]:
    rng = random.Random(7)
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 10))) for _ in range(60_000)
    ]
    ordinary_title = "effect of vitamin d supplements on bone fractures in adults"
    ordinary_text = " ".join(rng.choices([*words[:2000], "fractures", "Vitamin"], k=9000))
    worst_title = " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(MAX_TERMS)
    )
    worst_text = " ".join(rng.choices(string.ascii_lowercase, k=MARKED_CHARS))
    return {
        "ordinary": (ordinary_title, ordinary_text),
        "huge title": (" ".join(words)[:420_000], " ".join(rng.choices(words, k=15_000))),
        "worst case": (worst_title, worst_text),
        "huge text": (ordinary_title, ordinary_text * 340),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"best of {args.repeat}")
    for name, (title, text) in cases().items():
        ours = best_time(lambda t=title, x=text: highlight_html(x, query_terms(t)), args.repeat)
        base = best_time(lambda x=text: html.escape(x), args.repeat)
        print(
            f"{name:<11} title {len(title):>9,} chars, text {len(text):>11,} chars: "
            f"{ours * 1000:6.1f} ms, escaping alone {base * 1000:6.1f} ms: "
            f"marking adds {(ours - base) * 1000:6.1f} ms"
        )
    print("target: marking adds at most 100 ms in each case")


if __name__ == "__main__":
    main()
