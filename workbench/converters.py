"""Path converters for values that come from uploaded data.

A docno is whatever a collection calls its documents: `10.1371/journal.x`,
a whole URL, `.`, `..` or `a/../b`. Django's `path` converter puts it in
the URL as it is, and a browser then resolves the dot segments before it
sends the request (WHATWG URL: `/history/1/a/../b/` is fetched as
`/history/1/b/`, `/history/1/../` as `/history/`): the link opens another
document, or a 404.

`DocnoConverter` makes any docno one path segment that no browser changes:
`/` is written `~2F` (a `%2F` would be decoded by Django before routing,
and reversing would quote its `%` again), a docno that is `.` or `..` is
written `~2E` or `~2E~2E` (browsers resolve `%2E` as a dot too), and the
escape character itself `~7E`. Reversing percent-encodes the rest (`%`,
`?`, `#`, `\\`, non-ASCII letters), which Django decodes again.
"""

from __future__ import annotations

import re

_ESCAPES = {"~": "~7E", "/": "~2F"}
_UNESCAPES = {"7E": "~", "2F": "/", "2E": "."}
_ESCAPE = re.compile(r"[~/]")
_ESCAPED = re.compile(r"~(..)?")


class DocnoConverter:
    regex = r"[^/]+"

    def to_python(self, value: str) -> str:
        def unescape(match: re.Match[str]) -> str:
            code = match.group(1)
            if code not in _UNESCAPES:
                raise ValueError(f"{match.group()!r} is no escape of a docno in a URL")
            return _UNESCAPES[code]

        return _ESCAPED.sub(unescape, value)

    def to_url(self, value: str) -> str:
        text = _ESCAPE.sub(lambda match: _ESCAPES[match.group()], value)
        return "~2E" * len(text) if text in (".", "..") else text
