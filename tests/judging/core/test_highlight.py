"""Query terms marked in a document: what is marked, and the bounds on the work."""

from __future__ import annotations

from judging.core.highlight import (
    MARKED_CHARS,
    MAX_TERM_CHARS,
    MAX_TERMS,
    QUERY_CHARS,
    highlight_html,
    query_terms,
)


def test_terms_are_the_titles_words_without_stopwords_longest_first():
    assert query_terms("Effect of X-ray on the infections of an ox") == [
        "infections",
        "effect",
        "x-ray",
    ]


def test_terms_are_marked_at_word_starts_whatever_their_case_and_the_text_is_escaped():
    terms = query_terms("infection x-ray")
    text = "Infections & INFECTION <b>; reinfection; X-RAY; \u0130nfection"
    assert highlight_html(text, terms) == (
        "<mark>Infections</mark> &amp; <mark>INFECTION</mark> &lt;b&gt;; reinfection; "
        "<mark>X-RAY</mark>; <mark>\u0130nfection</mark>"
    )


def test_a_huge_title_gives_at_most_the_first_terms_in_reading_order():
    words = [f"term{i:05d}" for i in range(60_000)]  # a 420 KB title
    terms = query_terms(" ".join(words))
    assert sorted(terms) == words[:MAX_TERMS]


def test_only_the_start_of_a_title_is_read_and_no_overlong_word_is_a_term():
    title = "x" * (MAX_TERM_CHARS + 1) + " " * QUERY_CHARS + " vitamin"
    assert query_terms(title) == []
    assert query_terms("y" * MAX_TERM_CHARS) == ["y" * MAX_TERM_CHARS]


def test_terms_are_marked_in_the_start_of_a_long_text_and_the_rest_is_shown_escaped():
    text = "vitamin " * (MARKED_CHARS // 8) + "vitamin <i>"
    page = highlight_html(text, ["vitamin"])
    assert page.count("<mark>vitamin</mark>") == MARKED_CHARS // 8
    assert page.endswith(" vitamin &lt;i&gt;")


def test_at_most_the_allowed_number_of_terms_is_looked_for():
    terms = [f"word{i:03d}" for i in range(MAX_TERMS + 10)]
    page = highlight_html(" ".join(terms), terms)
    assert page.count("<mark>") == MAX_TERMS
