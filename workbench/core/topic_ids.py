"""Topic ids: strings everywhere, never cast to int, shown in a decided order. Pure core."""

from __future__ import annotations


def topic_sort_key(topic_id: str) -> tuple[int, int, str]:
    """Numeric topic ids in numeric order, then the others as strings.

    So "2" comes before "10"; the id itself comes last so that "7" and "007"
    still have a fixed order.
    """
    numeric = topic_id.isascii() and topic_id.isdigit()
    return (0, int(topic_id), topic_id) if numeric else (1, 0, topic_id)
