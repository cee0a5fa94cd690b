"""The docno path converter: any docno is one URL segment that reads back as itself."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.converters import DocnoConverter

CONVERTER = DocnoConverter()


@given(st.text(alphabet=st.sampled_from("./~2EF%?#\\ab"), min_size=1, max_size=12))
def test_a_docno_reads_back_from_its_segment_as_itself(docno):
    segment = CONVERTER.to_url(docno)
    assert "/" not in segment
    assert segment not in (".", "..")
    assert CONVERTER.to_python(segment) == docno


@pytest.mark.parametrize("segment", ["a~", "a~zz", "~2f", "~"])
def test_a_segment_with_a_broken_escape_matches_no_docno(segment):
    with pytest.raises(ValueError, match="no escape of a docno"):
        CONVERTER.to_python(segment)
