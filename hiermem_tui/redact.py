"""Masking secrets in chat text before it leaves the app: MCP answers, ``export``, the TUI's
screen-sharing mode. The stored file is never changed; only what is shown or sent is masked.

A secret is replaced by ``[secret: <kind>]`` (``[secret: github token]``) and counted by kind.

What is found, and by what. The detector is detect-secrets (Yelp's, maintained): every one of
its regex-based plugins (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, JWTs, private keys,
passwords in URLs, …), found through its own plugin registry, so a newer detect-secrets brings
its new providers along. Its keyword plugin's patterns (``password = "…"``, ``api_key: …``)
find values next to key-like names; such a value is masked only when it is a *high-entropy*
string (detect-secrets' own Shannon entropy, over its base64 charset), so prose ("the secret:
patience") and placeholders stay, and detect-secrets' false-positive heuristics (UUIDs,
``*_id`` values, templates, ``$VARS``, sequences, indirect references) apply to them. A few
providers detect-secrets 1.5 does not know yet are added as plugins of the same kind
(:data:`EXTRA_PLUGINS`: Anthropic, newer OpenAI, Google, Hugging Face, GitHub fine-grained keys).

What is deliberately *not* used: detect-secrets' free-standing high-entropy plugins. They flag every
quoted random-looking string, which in chats is a hash, a digest or an id (of the tests' look-alikes, a
quoted md5 etag and a hex id in JSON); its ad-hoc scan (``scan_line``, which drops the quotes) flagged
thousands of plain words in the shared sample chats. The issue asks for high-entropy values *next to
key-like names*, which the keyword patterns give. Public IP addresses are not secrets either.

Why a private key is masked whole: the plugin finds its ``BEGIN … PRIVATE KEY`` line; the mask
runs from there to the matching ``END`` line (or the end of the paragraph), since the key is the
body, not the header.

Masking is idempotent: a ``[secret: …]`` mark is never found again (spans overlapping a mark
are ignored), so text masked twice reads the same. What one answer masked is counted by
:class:`~hiermem_tui.masker.Masker`.

Masking a part of a text (:func:`masked_lines`): what is returned of a long text is often a small
part of it (a search snippet, a listing's excerpt, an item clipped to a budget), and masking costs
0.1–0.3 ms per KB, so only the lines the part comes from are masked. That is exact because every
find is *line-local*: the keyword patterns and the gated plugins run on one line at a time, the
other plugins' patterns cannot match a newline (a test parses each of them to check), and a mask
never grows past a line (the token tails stop at white space). The two exceptions are handled:
npm's ``_authToken=`` may have its value on a later line after blank ones (``\\s*``), so the lines
are read with the non-blank line before them as context; and a private key's mask runs from its
``BEGIN`` line to its ``END`` line, so a text holding one is masked whole.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from re import Pattern
from typing import Any

MARK = "[secret: {}]"
KEYWORD_KIND = "secret keyword"
RANDOM_KIND = "random-looking name"
"""The kind of a summary's derived name masked for its shape alone (:meth:`Redactor.mask_name`)."""
"""The kind of a high-entropy value next to a key-like name (detect-secrets' ``Secret Keyword``)."""
MARK_RE = re.compile(r"\[secret: [a-z0-9 .()\-]+\]")

ENTROPY_LIMIT = 3.0
"""Shannon entropy (bits per character over the base64 charset) a value next to a key-like name
must exceed to be masked. detect-secrets' free-standing base64 plugin uses 4.5, which only strings
of 23+ distinct characters reach; next to a key name a secret is likelier, so the bar is lower: a
16-character random password (~3.8) is masked, ``enabled`` (2.5), ``changeme`` (2.75) and
``hunter2`` (2.8) are not."""

EXTRA_KEYWORDS = ("token", "authorization")
"""Key-like names beside detect-secrets' own list (``api_key``, ``password``, ``secret`` …): an
``access_token`` or an ``Authorization:`` header in pasted JSON or curl commands."""

_AUTH_SCHEMES = ("bearer ", "basic ", "token ")
"""``Authorization: Bearer <value>``: the value is the word after the scheme."""

_VALUE_GROUP_TYPES = frozenset({
    "AWS Access Key", "Basic Auth Credentials", "Cloudant Credentials", "IBM Cloud IAM Key",
    "IBM COS HMAC Credentials", "NPM tokens", "SoftLayer Credentials",
})
"""Plugins whose regex matches a key name or a URL around the secret, in its first group: only
that group is masked (``https://user:[secret: basic auth credentials]@host``). The others match
the secret itself (a group there is a prefix, as GitHub's ``(ghp|gho|…)``)."""

_LEFT_OUT_TYPES = frozenset({"Public IP (ipv4)"})

GATES: dict[str, tuple[str, ...]] = {
    "AWS Access Key": ("a3t", "abia", "acca", "akia", "asia", "aws"),
    "Cloudant Credentials": ("key", "pw", "pass", "token", "cloudant"),
    "IBM COS HMAC Credentials": ("key",),
    "IBM Cloud IAM Key": ("key", "pwd", "pass", "token"),
    "SoftLayer Credentials": ("key", "pwd", "pass", "token", "softlayer"),
    "Mailchimp Access Key": ("-us",),
    "Artifactory Credentials": ("AKC", "AP"),
    "Slack Token": ("xox", "hooks.slack.com"),
    "Stripe Access Key": ("k_live_",),
}
"""Words (lower case: any case matches; with a capital: that case) one of which every pattern of the plugin needs on the line it matches: the
plugin's patterns then run only on the lines that hold one. An optimisation, not a filter: their
patterns start with optional parts and lookbehinds, so a regex engine tries them at every
character (0.1–0.3 s per MB each); a line without the words cannot match. A test scans the same
texts with and without the gates and expects the same secrets."""
_TRIM = " \t\"'`=:,;"
_TRIM_END = _TRIM.replace("=", "")
_VALUE_END = re.compile(r"[\s;&,]")
"""Where an unquoted value ends: white space, or the separator of a connection string or query."""
_KEY_NAME = re.compile(r"[A-Za-z_]{3,}=")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_NAME = re.compile(r"[A-Z][A-Z_]*")
"""A value in capitals and underscores is a name (an environment variable, ``YOUR_API_KEY``), not a key."""


@dataclass(frozen=True, slots=True)
class Found:
    """One secret in a text: where it is and what kind (the mark's words)."""

    start: int
    end: int
    kind: str


class _Plugin:
    """A provider's patterns: detect-secrets' ``secret_type`` and ``denylist``."""

    def __init__(self, secret_type: str, denylist: Sequence[Pattern[str]]) -> None:
        self.kind = _kind(secret_type)
        self.secret_type = secret_type
        self.patterns = tuple(denylist)
        self.value_group = secret_type in _VALUE_GROUP_TYPES
        self.private_key = secret_type == "Private Key"
        self.gate = GATES.get(secret_type, ())
        self.jwt = secret_type == "JSON Web Token"


def _kind(secret_type: str) -> str:
    """``GitHub Token`` → ``github token`` (the words of the mark)."""
    return " ".join(secret_type.lower().split())


EXTRA_PLUGINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Anthropic API Key", (r"sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_\-]{32,}",)),
    ("OpenAI Token", (r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}",)),
    ("Google API Key", (r"AIza[0-9A-Za-z_\-]{35}",)),
    ("Hugging Face Token", (r"hf_[A-Za-z]{34,}",)),
    ("GitHub Token", (r"github_pat_[A-Za-z0-9_]{60,}",)),
)
"""Providers detect-secrets 1.5 has no plugin for (or only an older key format of), as plugins of
the same shape: a ``secret_type`` and its patterns, each anchored on the provider's fixed prefix."""


@lru_cache(maxsize=1)
def _plugins() -> tuple[_Plugin, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[_Plugin] = []
    mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for secret_type, cls in sorted(mapping.items()):
        if secret_type in _LEFT_OUT_TYPES or not issubclass(cls, RegexBasedDetector):
            continue
        found.append(_Plugin(secret_type, list(cls.denylist)))
    found.extend(_Plugin(name, [re.compile(p) for p in patterns]) for name, patterns in EXTRA_PLUGINS)
    return tuple(found)


class _Keywords:
    """detect-secrets' keyword plugin: its patterns, both the quoted ones it uses for code and the
    unquoted ones it uses for config files (a chat holds both), and its false-positive filters."""

    def __init__(self) -> None:
        from detect_secrets.plugins import keyword as kw
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        names = tuple(kw.DENYLIST) + EXTRA_KEYWORDS
        # The lines worth reading: those holding a name, found with plain substring search on the
        # lowered text (a case-insensitive regex alternation costs ~0.6 s per MB): the shortest pieces
        # every name contains (``api_?key`` holds ``key``, ``passwd`` holds ``pass``), one search each.
        variants = {n.replace("_?", sep) for n in names for sep in ("_", "")}
        pieces = ("key", "pass", "pwd", "secret", "contrase", "token", "authorization")
        self.words = pieces + tuple(sorted(v for v in variants if not any(piece in v for piece in pieces)))
        groups: dict[Pattern[str], int] = {}
        groups.update(kw.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
        groups.update(kw.CONFIG_DENYLIST_REGEX_TO_GROUP)
        # The same patterns over the longer list of names (the module builds them from its own).
        own = kw.DENYLIST_REGEX
        wider = r"({}){}".format("|".join(names), kw.AFFIX_REGEX)
        self.patterns = tuple(
            (re.compile(p.pattern.replace(own, wider), p.flags), g) for p, g in groups.items()
        )
        self.entropy = Base64HighEntropyString(limit=4.5).calculate_shannon_entropy

    def find(self, line: str, offset: int) -> Iterator[Found]:
        from detect_secrets.filters import heuristic as h

        for pattern, group in self.patterns:
            for m in pattern.finditer(line):
                start, end = m.span(group)
                if start < 0:
                    continue
                quoted = line[start - 1:start] in ("'", '"', "`")
                value = line[start:end]
                if not quoted:
                    lowered = value.lower()
                    for scheme in _AUTH_SCHEMES:
                        if lowered.startswith(scheme):
                            start += len(scheme)
                            value = line[start:end].lstrip()
                            start = end - len(value)
                            break
                    word = _VALUE_END.split(value.lstrip(), 1)[0]
                    value = word.rstrip(_TRIM_END)
                    end = start + len(value)
                if not value or (not quoted and " " in value):
                    continue
                if (h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value)
                        or h.is_sequential_string(value) or h.is_potential_uuid(value)
                        or h.is_not_alphanumeric_string(value) or h.is_likely_id_string(value, line)
                        or h.is_indirect_reference(line[:end])):
                    continue
                if _NAME.fullmatch(value) or self.entropy(value) <= ENTROPY_LIMIT:
                    continue
                yield Found(offset + start, offset + end, KEYWORD_KIND)


@lru_cache(maxsize=1)
def _keywords() -> _Keywords:
    return _Keywords()


def _private_key_end(text: str, start: int) -> int:
    """Where a private key that starts at ``start`` ends: after its ``-----END …-----`` line (or
    PuTTY's ``Private-MAC:`` line), else at the end of the paragraph."""
    end_marker = re.compile(r"-----END [A-Z0-9 ]*-----|Private-MAC: *\S*")
    m = end_marker.search(text, start)
    paragraph = text.find("\n\n", start)
    paragraph = len(text) if paragraph < 0 else paragraph
    if m is not None and (m.start() < paragraph or "PRIVATE" in m.group(0) or "Private-MAC" in m.group(0)):
        return m.end()
    return paragraph


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


SPANNING = ("PRIVATE KEY", "PuTTY-User-Key-File")
"""Words every pattern of the secrets whose mask runs across lines holds (private keys: from the
``BEGIN`` line to the ``END`` line): :func:`masked_lines` masks a text holding one whole."""

CROSS_LINE_TYPES = frozenset({"NPM tokens"})
"""Plugins (not gated) with a pattern that can match a newline: npm's ``_authToken=\\s*value``,
whose value may follow blank lines. Line-local otherwise; a test keeps this list true."""


def masked_lines(mask: Callable[[str], str], text: str, start: int, end: int) -> tuple[str, int, int]:
    """The lines of ``text`` that ``[start, end)`` touches, masked by ``mask`` exactly as
    ``mask(text)`` masks them (module docstring: every find is line-local), and where those lines
    are: ``(masked, a, b)``, ``a`` the first line's start and ``b`` the last line's end in ``text``
    (its newline or the end; ``a > 0``: the text goes on before the piece, ``b < len(text)``: after).

    Costs what those lines cost, not what the whole text does — except for a text holding a private
    key, masked whole (``(mask(text), 0, len(text))``)."""
    n = len(text)
    start, end = max(0, min(start, n)), max(0, min(end, n))
    if (start == 0 and end >= n) or any(word in text for word in SPANNING):
        return mask(text), 0, n
    a = _line_start(text, start)
    b = text.find("\n", end)
    b = n if b < 0 else b
    context = a
    while context > 0:  # the blank lines before, and the non-blank line before them (npm's value)
        prev = _line_start(text, context - 1)
        blank = not text[prev:context - 1].strip()
        context = prev
        if not blank:
            break
    masked = mask(text[context:b])
    skip = text.count("\n", context, a)
    if masked.count("\n") != skip + text.count("\n", a, b):  # a mask ran across a line: no cut by lines
        return mask(text), 0, n
    at = 0
    for _ in range(skip):
        at = masked.index("\n", at) + 1
    return masked[at:], a, b


def _lines_with(text: str, lowered: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """``(start, stop)`` of each line of ``text`` holding one of ``words``, in order: a word in lower
    case is looked for in ``lowered`` (any case), one with a capital in ``text`` (that case)."""
    starts: set[int] = set()
    for word in words:
        haystack = lowered if word.islower() else text
        at = haystack.find(word)
        while at >= 0:
            starts.add(_line_start(text, at))
            stop = text.find("\n", at)
            if stop < 0:
                break
            at = haystack.find(word, stop)
    out = []
    for start in sorted(starts):
        stop = text.find("\n", start)
        out.append((start, len(text) if stop < 0 else stop))
    return out


class Redactor:
    """Finds and masks secrets in text. Build one and reuse it (the patterns compile once)."""

    def __init__(self, *, gated: bool = True) -> None:
        """``gated=False`` runs every pattern over the whole text (what the gates are tested against)."""
        self.plugins = _plugins()
        self.keywords = _keywords()
        self.gated = gated

    def find(self, text: str) -> list[Found]:
        """The secrets in ``text``, in order, not overlapping each other nor an existing mark."""
        if not text:
            return []
        spans: list[Found] = []
        lowered = text.lower()
        if len(lowered) != len(text):  # a few characters lower to two ('İ'): keep positions aligned
            lowered = "".join(ch.lower()[:1] for ch in text)
        for plugin in self.plugins:
            if plugin.gate and self.gated:
                for start, stop in _lines_with(text, lowered, plugin.gate):
                    line = text[start:stop]
                    for pattern in plugin.patterns:
                        spans.extend(self._span(text, plugin, m, start) for m in pattern.finditer(line))
                continue
            for pattern in plugin.patterns:
                for m in pattern.finditer(text):  # a loop, not extend(generator): most find nothing
                    spans.append(self._span(text, plugin, m))
        for start, stop in _lines_with(text, lowered, self.keywords.words):
            spans.extend(self.keywords.find(text[start:stop], start))
        marks = [(m.start(), m.end()) for m in MARK_RE.finditer(text)] if "[secret: " in text else []
        out: list[Found] = []
        # At the same start a provider's find comes before a keyword's (its kind names the mark), then
        # the longest; overlapping finds become one mark covering them all.
        for f in sorted(spans, key=lambda f: (f.start, f.kind == KEYWORD_KIND, -(f.end - f.start))):
            if f.end <= f.start or any(a < f.end and f.start < b for a, b in marks):
                continue
            if out and f.start < out[-1].end:
                if f.end > out[-1].end:
                    out[-1] = Found(out[-1].start, f.end, out[-1].kind)
                continue
            out.append(f)
        return out

    @staticmethod
    def _span(text: str, plugin: _Plugin, m: re.Match[str], offset: int = 0) -> Found:
        """Where to mask for one match of ``plugin`` (``m`` matched ``text[offset:…]``)."""
        if plugin.private_key:
            start = _line_start(text, offset + m.start())
            return Found(start, _private_key_end(text, offset + m.end()), plugin.kind)
        if plugin.value_group and m.re.groups and m.group(1) is not None:
            return Found(offset + m.start(1), offset + m.end(1), plugin.kind)
        start, end = offset + m.start(), offset + m.end()
        # A pattern that stops early (a fixed length, a lazy last part: detect-secrets' JWT pattern
        # leaves the signature out) must not leave the rest of the same token showing.
        tail = _JWT_TAIL if plugin.jwt else _TOKEN_TAIL
        grown = tail.match(text, end)  # matches the empty string at least
        end = grown.end() if grown is not None else end
        named = _KEY_NAME.match(text, start, end)  # Azure's ``AccountKey=…``: the name stays readable
        if named is not None:
            start = named.end()
        while start < end and text[start] in _TRIM:
            start += 1
        while end > start and text[end - 1] in _TRIM_END:  # base64's closing '=' belong to the key
            end -= 1
        return Found(start, end, plugin.kind)

    def mask(self, text: str, tally: Counter[str] | None = None, seen: dict[str, str] | None = None) -> str:
        """``text`` with every secret replaced by its mark; each one counted in ``tally`` by kind and
        recorded in ``seen`` (secret → kind), for :meth:`mask_name`."""
        found = self.find(text)
        if not found:
            return text
        pieces: list[str] = []
        at = 0
        for f in found:
            pieces.append(text[at:f.start])
            pieces.append(MARK.format(f.kind))
            at = f.end
            if tally is not None:
                tally[f.kind] += 1
            if seen is not None:
                seen[text[f.start:f.end]] = f.kind
        pieces.append(text[at:])
        return "".join(pieces)

    def mask_name(self, name: str, tally: Counter[str] | None = None, seen: dict[str, str] | None = None) -> str:
        """One name from a summary's derived lists (its keywords, the names it lost or made up).

        Those names were cut out of their sources' text, so the context a plugin needs is gone (an npm
        token without its ``_authToken=``, the middle of a PyPI token). A name is masked when the
        detector finds a secret in it; when it is a piece of a secret already masked in the same
        answer (``seen``) or holds one; or when it is *random-looking*: a run of 12+ letters and digits mixing
        capitals, small letters and digits and switching between them at half its characters or more,
        the shape of base64 and of most keys, and not of words, CamelCase names (``ValueError12``),
        paths, constants (``UINT64_MAX``), hashes (one case) or UUIDs.
        """
        if "[secret: " in name:
            return name
        masked = self.mask(name, tally, seen)
        if masked != name:
            return masked
        kind = None
        if seen:
            kind = next((k for secret, k in seen.items()
                         if len(name) >= 6 and name in secret or len(secret) >= 8 and secret in name), None)
        if kind is None and any(_random_run(run) for run in _RUNS.findall(name)):
            kind = RANDOM_KIND
        if kind is None:
            return name
        if tally is not None:
            tally[kind] += 1
        return MARK.format(kind)


_RUNS = re.compile(r"[A-Za-z0-9]{12,}")


def _random_run(run: str) -> bool:
    """Base64-like: capitals, small letters and digits, switching class at half its characters or more
    (random base64 switches at ~62%; a CamelCase name like ``ValueError12`` or ``HttpClient2Factory``
    at a third)."""
    upper = sum(c.isupper() for c in run)
    lower = sum(c.islower() for c in run)
    if upper < 2 or lower < 2 or not any(c.isdigit() for c in run):
        return False
    kinds = [0 if c.isupper() else 1 if c.islower() else 2 for c in run]
    switches = sum(a != b for a, b in zip(kinds, kinds[1:]))
    return switches >= 0.5 * (len(run) - 1)
