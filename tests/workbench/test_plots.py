"""Pictures drawn with matplotlib (`workbench.core.plots.Plot`): text is always literal."""

from __future__ import annotations

import pytest

from workbench.core.plots import Plot

# matplotlib reads $...$ as mathtext: the first is a parse error, the second
# would be drawn as a fraction instead of the run tag it is.
HOSTILE = ("$\\immediate\\write18{id}$", "$\\frac{a}{b}$")


def _every_kind_of_text(axes) -> None:
    first, second = HOSTILE
    axes.plot([0, 1], [0, 1], label=first)
    axes.plot([0, 1], [1, 0], label=second)
    axes.set_xticks([0, 1], list(HOSTILE))
    axes.set_yticks([0, 1], list(HOSTILE))
    axes.set_xlabel(first)
    axes.set_ylabel(second)
    axes.text(0.5, 0.5, first)
    axes.annotate(second, (0.2, 0.2))
    axes.legend()


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_text_in_a_picture_is_drawn_as_written_never_as_mathtext(fmt):
    plot = Plot(f"runs {HOSTILE[0]}", ("run",), tuple((t,) for t in HOSTILE), _every_kind_of_text)
    picture = plot.render(fmt)
    if fmt == "svg":
        text = picture.decode()
        # Each text as a whole, as written (mathtext would draw glyph by glyph).
        assert text.count(">$\\immediate\\write18{id}$</text>") >= 4
        assert text.count(">$\\frac{a}{b}$</text>") >= 4
        assert "<title>runs $\\immediate\\write18{id}$</title>" in text
    else:
        assert picture.startswith(b"\x89PNG")


def test_text_stays_literal_after_a_picture_is_drawn():
    import matplotlib

    Plot("$x$", ("x",), (), lambda axes: axes.set_xlabel("$y$")).render("svg")
    # The setting is the picture's own, not changed for the whole process.
    assert matplotlib.rcParams["text.parse_math"] is True
