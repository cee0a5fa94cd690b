"""Document collections (JSONL, TREC SGML, TSV), read as a stream. Pure core, no Django."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from workbench.core.file_input import BOM, NUL_PROBLEM, holds_nul, json_object, strip_bom, tsv_rows
from workbench.core.id_limits import MAX_DOCNO, MAX_URL, control_problem, length_problem
from workbench.core.problems import ProblemLog


@dataclass
class DocumentRecord:
    docno: str
    title: str = ""
    text: str = ""
    url: str = ""
    line: int = 0


DOCUMENT_FORMATS = ("jsonl", "sgml", "tsv")
_DOCNO_KEYS = ("docno", "doc_id", "docid", "id", "_id", "pid")
_TITLE_KEYS = ("title", "headline")
_TEXT_KEYS = ("text", "contents", "body", "abstract", "passage")
_SGML_TITLE_TAGS = ("TITLE", "HEADLINE", "HL", "HEAD")


def detect_document_format(name: str, head: bytes) -> str:
    lower = name.lower().removesuffix(".gz")
    if lower.endswith((".jsonl", ".json")):
        return "jsonl"
    if lower.endswith(".tsv"):
        return "tsv"
    text = head.lstrip(BOM).lstrip()
    if text[:5].upper() == b"<DOC>":
        return "sgml"
    if text.startswith(b"{"):
        return "jsonl"
    return "tsv"


def iter_documents(
    stream: IO[bytes],
    log: ProblemLog,
    *,
    format: str,
    only: set[str] | frozenset[str] | None = None,
) -> Iterator[DocumentRecord]:
    """Stream documents from a binary file, one record at a time.

    Memory stays bounded by one document plus the set of docnos seen (to
    report a docno given twice). With `only`, documents whose docno is not in
    it are skipped, which is how a large collection is loaded for one pool.
    Problems go to `log`; the caller decides whether to keep what was read.
    """
    if format not in DOCUMENT_FORMATS:
        raise ValueError(
            f"unknown document format {format!r}; expected one of {', '.join(DOCUMENT_FORMATS)}"
        )
    readers = {"jsonl": _documents_jsonl, "sgml": _documents_sgml, "tsv": _documents_tsv}
    seen: set[str] = set()
    count = 0
    for record in readers[format](_decoded_lines(stream, log), log):
        count += 1
        if holds_nul(record.docno, record.title, record.text, record.url):
            log.add(record.line, f"document {NUL_PROBLEM}")
            continue
        if not record.docno:
            log.add(record.line, "document has no docno")
            continue
        too_long = length_problem("docno", record.docno, MAX_DOCNO) or length_problem(
            "url", record.url, MAX_URL
        )
        if too_long:
            log.add(record.line, too_long)
            continue
        if any(c.isspace() for c in record.docno):
            log.add(record.line, f"docno {record.docno!r} contains whitespace")
            continue
        control = control_problem("docno", record.docno)
        if control:
            log.add(record.line, control)
            continue
        if record.docno in seen:
            log.add(record.line, f"docno {record.docno!r} given twice")
            continue
        seen.add(record.docno)
        if only is None or record.docno in only:
            yield record
    if count == 0 and log.ok:
        log.add(0, f"no documents found (read as {format})")


def _decoded_lines(stream: IO[bytes], log: ProblemLog) -> Iterator[tuple[int, str]]:
    """(line number, text) pairs; undecodable lines are reported and skipped."""
    for number, raw in enumerate(stream, start=1):
        if number == 1:
            raw = strip_bom(raw)
        try:
            yield number, raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            log.add(
                number, f"not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})"
            )


def _document_from_fields(fields: dict[str, Any], line: int) -> DocumentRecord:
    lowered = {str(k).lower(): v for k, v in fields.items()}

    def first(keys: tuple[str, ...]) -> str:
        for key in keys:
            value = lowered.get(key)
            if value not in (None, ""):
                return str(value).strip()
        return ""

    return DocumentRecord(
        docno=first(_DOCNO_KEYS),
        title=first(_TITLE_KEYS),
        text=first(_TEXT_KEYS),
        url=first(("url",)),
        line=line,
    )


def _documents_jsonl(lines: Iterable[tuple[int, str]], log: ProblemLog) -> Iterator[DocumentRecord]:
    for number, raw in lines:
        if not raw.strip():
            continue
        record = json_object(raw, number, log)
        if record is not None:
            yield _document_from_fields(record, number)


def _documents_tsv(lines: Iterable[tuple[int, str]], log: ProblemLog) -> Iterator[DocumentRecord]:
    """TSV: `docno, text` or `docno, title, text`, or any columns under a header row."""
    rows = tsv_rows(
        lines, header_keys=_DOCNO_KEYS, positional=("docno", "title", "text", "url"), log=log
    )
    for line, fields in rows:
        if set(fields) == {"docno", "title"}:
            # Two unnamed columns are docno and text (MS MARCO's collection.tsv).
            fields = {"docno": fields["docno"], "text": fields["title"]}
        yield _document_from_fields(fields, line)


def _documents_sgml(lines: Iterable[tuple[int, str]], log: ProblemLog) -> Iterator[DocumentRecord]:
    """TREC SGML: `<DOC><DOCNO>..</DOCNO> .. <TEXT>..</TEXT></DOC>`."""
    body: list[str] = []
    start = 0
    for number, raw in lines:
        stripped = raw.strip()
        if stripped.upper().startswith("<DOC>"):
            if start:
                log.add(start, "<DOC> without a closing </DOC>")
            start, body, stripped = number, [], stripped[5:]
        if not start:
            if stripped:
                log.add(number, "text outside a <DOC> element")
            continue
        if stripped.upper().endswith("</DOC>"):
            body.append(stripped[:-6])
            yield _sgml_document("\n".join(body), start)
            start, body = 0, []
            continue
        body.append(stripped)
    if start:
        log.add(start, "<DOC> without a closing </DOC>")


# A tag, opening or closing, with its attributes. `[^<>]*` stops at the next
# `<`, so a scan from one `<` never runs past the next: the reader is linear
# in its input however many unclosed tags it holds.
_SGML_TAG = re.compile(r"<(/?)([A-Za-z][\w.-]*)(?:\s[^<>]*)?>")
_ANY_TAG = re.compile(r"<[^<>]*>")


@dataclass(frozen=True)
class _Element:
    text: str
    start: int  # of the opening tag
    end: int  # after the closing tag


def _sgml_elements(body: str) -> dict[str, list[_Element]]:
    """Every element, by upper-case tag name, in order: from each opening tag to the
    next closing tag of the same name (one scan over the tags)."""
    elements: dict[str, list[_Element]] = {}
    open_at: dict[str, tuple[int, int]] = {}
    for tag in _SGML_TAG.finditer(body):
        closing, name = tag.group(1), tag.group(2).upper()
        if not closing:
            open_at.setdefault(name, (tag.start(), tag.end()))
        elif name in open_at:
            start, content = open_at.pop(name)
            element = _Element(body[content : tag.start()], start, tag.end())
            elements.setdefault(name, []).append(element)
    return elements


def _sgml_document(body: str, line: int) -> DocumentRecord:
    elements = _sgml_elements(body)

    def clean(text: str) -> str:
        return " ".join(_ANY_TAG.sub(" ", text).split())

    docnos = [e.text for e in elements.get("DOCNO", [])]
    title = next(
        (
            clean(e.text)
            for tag in _SGML_TITLE_TAGS
            for e in elements.get(tag, [])
            if e.text.strip()
        ),
        "",
    )
    texts = [e.text for e in elements.get("TEXT", [])]
    if texts:
        text = "\n\n".join(clean(t) for t in texts)
    else:  # the whole body but its DOCNO elements
        kept, position = [], 0
        for element in elements.get("DOCNO", []):
            kept.append(body[position : element.start])
            position = element.end
        text = clean(" ".join([*kept, body[position:]]))
    return DocumentRecord(
        docno=docnos[0].strip() if docnos else "", title=title, text=text, line=line
    )
