"""Links to URLs that came with uploaded data."""

from urllib.parse import urlsplit

from django import template

register = template.Library()

LINK_SCHEMES = frozenset({"http", "https"})
# What a browser's URL parser ignores (WHATWG URL): C0 controls and spaces
# around the URL, tabs and newlines anywhere in it ("java\tscript:").
_AROUND = "".join(map(chr, range(0x21)))
_INSIDE = str.maketrans("", "", "\t\n\r")


@register.filter
def safe_link(url: str | None) -> str:
    """The URL if it is an absolute http or https URL, else "" (never javascript:, data:, ...)."""
    cleaned = (url or "").strip(_AROUND).translate(_INSIDE)
    parts = urlsplit(cleaned)
    if parts.scheme.lower() in LINK_SCHEMES and parts.netloc:
        return cleaned
    return ""
