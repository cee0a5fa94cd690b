"""unj and relstring."""

from tests.scoring.helpers import values


def test_unjudged_fraction_at_cutoffs_counts_documents_not_judged():
    result = values("1 a 1\n1 b 0\n1 c -1", "1 a 4\n1 x 3\n1 c 2\n1 b 1", ["unj.1,2,3,10"])
    assert [result[f"unj_{k} 1"] for k in (1, 2, 3, 10)] == [0.0, 0.5, 2 / 3, 0.2]


def test_relevance_string_shows_one_character_per_ranked_document():
    qrels = "1 a 12\n1 b 3\n1 c -1"
    run = "1 a 4\n1 x 3\n1 b 2\n1 c 1"
    assert values(qrels, run, ["relstring"]) == {"relstring 1": ">-3."}
    assert values(qrels, run, ["relstring.2"]) == {"relstring_2 1": ">-"}


def test_relevance_string_has_no_summary():
    assert "relstring all" not in values("1 a 1", "1 a 1", ["relstring"])
