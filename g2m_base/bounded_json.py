"""Read an untrusted JSON document with bounded work and memory.

A submission is hostile until proven otherwise. Before any JSON value is built:

- the file is read only if it is a regular file (not a link, a FIFO or a device) within ``MAX_FILE_BYTES``; archives
  are refused unopened; gzip is inflated in chunks and stops at ``MAX_JSON_BYTES`` (a bomb costs nothing more);
- the *structure* (everything outside strings) is measured on the bytes: a valid submission has a few kilobytes of
  it, so megabytes of ``[[],[],...]`` (millions of Python lists) are refused before they exist, as are deep nesting
  and ``NaN``/``Infinity``;
- the top-level object is then walked on the bytes, token by token, and each field (each item of a streamed array) is
  decoded and parsed on its own, so memory holds the file and one record, never a decoded copy of the whole file
  (whose characters could take four bytes each).

Duplicate keys are refused at every level (JSON parsers disagree on which one wins).

``read_json(path, max_bytes)`` and ``loads(text)`` are the same rules for the small JSON files G2M reads itself
(a release manifest, a run's results and sample lines, a probe result, a prediction file): a size cap, regular files
only, a BOM read past, NaN/Infinity and repeated keys refused, deep nesting caught, and one error type, ``Rejected``.
Every JSON reader in the package goes through here.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from g2m_base.errors import G2MError

MAX_FILE_BYTES = 64 << 20  # on disk, compressed or not
MAX_JSON_BYTES = 128 << 20  # after decompression: a gzip bomb stops here
MAX_STRUCTURE_BYTES = 1 << 20  # JSON outside strings; a full submission has ~40 KB
MAX_NESTING = 12
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
_CONSTANT = re.compile(rb"NaN|Infinity")
#: One token: a string, a punctuation mark, or a bare word (number, true, false, null).
_TOKEN = re.compile(rb'[ \t\n\r]*+(?:(?P<s>"[^"\\]*+(?:\\.[^"\\]*+)*+")|(?P<p>[{}\[\]:,])|(?P<w>[^ '
                    rb'\t\n\r{}\[\]:,"]++)|(?P<end>\Z))')


class Rejected(G2MError, ValueError):
    """The document is refused; the message says why, in one line."""


def read_bytes(path: Path) -> bytes | bytearray:
    """The document's bytes, gzip inflated, within the size caps; archives and special files refused."""
    if path.is_symlink():
        raise Rejected(f"{path.name} is a symbolic link; submit a regular file")
    raw = _read_capped(path, MAX_FILE_BYTES, lambda size: f"file is {f'{size / 2**20:.1f} MiB' if size else 'over'}"
                       f"{', over' if size else ''} the {MAX_FILE_BYTES >> 20} MiB limit")
    if raw[:4] == b"PK\x03\x04" or raw[257:262] == b"ustar" or raw[:3] == b"BZh" or raw[:6] == b"\xfd7zXZ\x00":
        raise Rejected("archives are not accepted: submit one .json or .json.gz file")
    if raw[:2] != b"\x1f\x8b":
        if len(raw) > MAX_JSON_BYTES:
            raise Rejected(f"over {MAX_JSON_BYTES >> 20} MiB of JSON")
        return _without_bom(raw)
    out = bytearray()  # grown in place: no second copy at the end
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
            while chunk := gz.read(1 << 20):
                out += chunk
                if len(out) > MAX_JSON_BYTES:
                    raise Rejected(f"decompresses to over {MAX_JSON_BYTES >> 20} MiB of JSON")
    except Rejected:
        raise
    except (OSError, EOFError, ValueError) as e:
        raise Rejected(f"not a valid gzip file ({e})") from None
    return _without_bom(out)


def _without_bom(raw: bytes | bytearray) -> bytes | bytearray:
    """Editors on Windows start UTF-8 files with a byte-order mark; JSON parsers may ignore it (RFC 8259), so do we."""
    if raw[:3] != b"\xef\xbb\xbf":
        return raw
    if isinstance(raw, bytearray):
        del raw[:3]  # in place: no copy of a large document
        return raw
    return raw[3:]


def check_structure(raw: bytes | bytearray) -> None:
    """Refuse documents whose structure (outside strings) is large, deep or not strict JSON, before parsing."""
    skeleton = _STRING.sub(b"", raw)
    if len(skeleton) > MAX_STRUCTURE_BYTES:
        raise Rejected(f"{len(skeleton):,} bytes of JSON structure outside strings; a submission has a few "
                       f"kilobytes (limit {MAX_STRUCTURE_BYTES:,})")
    if _CONSTANT.search(skeleton):
        raise Rejected("NaN and Infinity are not JSON")
    codes = np.frombuffer(skeleton, dtype=np.uint8)
    step = np.isin(codes, (ord("["), ord("{"))).astype(np.int32) - np.isin(codes, (ord("]"), ord("}")))
    if len(step) and int(np.cumsum(step).max()) > MAX_NESTING:
        raise Rejected(f"JSON nested more than {MAX_NESTING} levels deep")


def check_utf8(raw: bytes | bytearray) -> None:
    """Refuse text that is not UTF-8, checked a megabyte at a time (nothing of it is kept)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    try:
        for i in range(0, len(view), 1 << 20):
            decoder.decode(view[i : i + (1 << 20)])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise Rejected("not UTF-8 text") from None


def _no_duplicate_keys(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise Rejected(f"a JSON object repeats the key {dup[:80]!r}")
    return out


def _refuse(token: str):
    raise Rejected(f"{token} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_constant=_refuse)


def _parse(raw: bytes | bytearray, start: int, end: int) -> object:
    """One JSON value from ``raw[start:end]``, decoded and parsed on its own."""
    try:
        return _DECODER.decode(bytes(raw[start:end]).decode("utf-8"))
    except UnicodeDecodeError:
        raise Rejected("not UTF-8 text") from None
    except RecursionError:
        raise Rejected("JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise Rejected(f"malformed JSON ({e.msg} in the value at byte {start:,})") from None
    except ValueError as e:  # an integer of more than 4,300 digits: Python refuses to convert it
        raise Rejected(f"unreadable JSON value at byte {start:,} ({str(e)[:100]})") from None


def loads(text: str | bytes | bytearray, where: str = "JSON") -> object:
    """One strict JSON document (no NaN, no repeated key), or ``Rejected`` naming ``where`` and the cause."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(_without_bom(text)).decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected(f"{where}: not UTF-8 text") from None
    try:
        return _DECODER.decode(text.removeprefix("\ufeff"))
    except Rejected as e:
        raise Rejected(f"{where}: {e}") from None
    except RecursionError:
        raise Rejected(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise Rejected(f"{where}: malformed JSON ({e.msg} at line {e.lineno})") from None
    except ValueError as e:  # an integer of more than 4,300 digits
        raise Rejected(f"{where}: unreadable JSON value ({str(e)[:100]})") from None


def read_json(path: str | Path, max_bytes: int, what: str = "JSON file") -> object:
    """A small JSON file G2M reads itself, within ``max_bytes``: a regular file (never a FIFO, a device or a link to
    one), strict JSON; anything else is ``Rejected`` in one line naming the file."""
    path = Path(path)
    raw = _read_capped(path, max_bytes, lambda size: f"{path}: {f'{size:,} bytes, ' if size else ''}over the "
                       f"{max_bytes:,}-byte limit for a {what}")
    return loads(raw, str(path))


def _read_capped(path: Path, limit: int, too_big: Callable[[int | None], str]) -> bytes:
    """The bytes of a regular file (never a FIFO or a device: they could block or never end) of at most ``limit``
    bytes; ``too_big(size)`` words the refusal (size None: it grew past the limit while being read)."""
    try:
        if not path.is_file():
            raise Rejected(f"{path} is not a file")
        size = path.stat().st_size
        if size > limit:
            raise Rejected(too_big(size))
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        raise Rejected(f"{path}: unreadable ({e.strerror or type(e).__name__})") from None
    if len(raw) > limit:
        raise Rejected(too_big(None))
    return raw


class _Tokens:
    """Walks the document one token at a time (strings are skipped whole, never decoded here)."""

    def __init__(self, raw: bytes | bytearray) -> None:
        self.raw, self.pos = raw, 0

    def next(self) -> tuple[str, int, int]:
        m = _TOKEN.match(self.raw, self.pos)
        if m is None:
            raise Rejected(f"malformed JSON (unreadable text at byte {self.pos:,})")
        self.pos = m.end()
        return m.lastgroup or "end", m.start(m.lastgroup), m.end()

    def expect(self, marks: bytes) -> bytes:
        kind, start, end = self.next()
        if kind != "p" or self.raw[start:end] not in [marks[i : i + 1] for i in range(len(marks))]:
            found = "the end" if kind == "end" else repr(bytes(self.raw[start:min(end, start + 20)]))[1:]
            wanted = " or ".join(repr(chr(c)) for c in marks)
            raise Rejected(f"malformed JSON (expected {wanted} at byte {start:,}, found {found})")
        return bytes(self.raw[start:end])

    def value(self) -> tuple[int, int]:
        """The byte span of the next value, found by matching brackets over tokens."""
        kind, start, end = self.next()
        if kind in ("s", "w"):
            return start, end
        opened = self.raw[start:end]
        if kind != "p" or opened not in (b"[", b"{"):
            raise Rejected(f"malformed JSON (expected a value at byte {start:,})")
        depth = 1
        while depth:
            kind, _, end = self.next()
            if kind == "end":
                raise Rejected("malformed JSON (the document ends inside a value)")
            if kind == "p":
                mark = self.raw[end - 1]
                depth += (mark in b"[{") - (mark in b"]}")
        return start, end


def read_object(raw: bytes | bytearray, streamed: dict[str, Callable[[int, object], None]],
                checks: dict[str, Callable[[object], None]] | None = None) -> dict:
    """The top-level object's fields. Arrays named in ``streamed`` are handed over item by item instead (each item
    parsed alone), and each field named in ``checks`` is checked as soon as it is read, so a bad header costs no
    record."""
    tokens = _Tokens(raw)
    fields: dict = {}
    tokens.expect(b"{")
    kind, start, end = tokens.next()
    if not (kind == "p" and raw[start:end] == b"}"):
        tokens.pos = start
        while True:
            kind, start, end = tokens.next()
            if kind != "s":
                raise Rejected(f"malformed JSON (expected a key at byte {start:,})")
            key = _parse(raw, start, end)
            if key in fields:
                raise Rejected(f"a JSON object repeats the key {key[:80]!r}")
            tokens.expect(b":")
            if key in streamed:
                fields[key] = ...  # present; its items went to streamed[key]
                _stream_array(tokens, key, streamed[key])
            else:
                fields[key] = _parse(raw, *tokens.value())
                if checks and key in checks:
                    checks[key](fields[key])
            if tokens.expect(b",}") == b"}":
                break
    if tokens.next()[0] != "end":
        raise Rejected(f"malformed JSON (extra data after the object at byte {tokens.pos:,})")
    return fields


def _stream_array(tokens: _Tokens, key: str, each: Callable[[int, object], None]) -> None:
    kind, start, end = tokens.next()
    if not (kind == "p" and tokens.raw[start:end] == b"["):
        raise Rejected(f"{key} must be a list")
    kind, start, end = tokens.next()
    if kind == "p" and tokens.raw[start:end] == b"]":
        return
    tokens.pos = start
    k = 0
    while True:
        each(k, _parse(tokens.raw, *tokens.value()))
        k += 1
        if tokens.expect(b",]") == b"]":
            return
