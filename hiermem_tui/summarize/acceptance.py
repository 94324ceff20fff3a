"""Is a model's answer a summary? The checks that catch what small local models really do.

Each rule here comes from an answer a real small model gave (SmolLM2-135M behind the
Ollama API, on real chats with code) that the old length-only check accepted as a
``normal`` summary:

* **loop** — the same sentence or paragraph over and over, or long runs of repeated words;
* **echo** — the prompt's own scaffolding copied back: the ``<previous_summary>`` /
  ``<conversation>`` blocks, ``--- Part 2 of 4`` headers, or transcript lines
  (``user: …`` / ``[2025-01-02 10:00 UTC] assistant: …``);
* **continues chat** — the model answers the user instead of reporting on the chat
  ("Sure! Here's the next step…", "Let me know if…", or new code that is in no source);
* **invented** — more identifiers that appear in no source than kept ones;
* **thinking only** — a thinking model spent its whole answer budget thinking and wrote no answer.

Length is not among them: an answer that runs past its target, or that the server cut off at
``num_predict``, is clipped at a sentence or bullet boundary and kept (the summariser records
that it was). A model's answer costs a CPU user minutes; regenerating one for length alone
throws that away. ``cut_off``, ``too_long``, ``not_shorter`` and ``low_fidelity`` stay in
:data:`REASONS` because summaries made before that change recorded them.

A leading preamble ("Here's a summary of the conversation:") is not a reason to reject:
it is stripped. Every rejection has a short machine reason (counted per run) and a one-line
detail for the user.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence

from hiermem_tui.summarize.prompts import SCAFFOLD_HEADINGS
from hiermem_tui.summarize.text import split_sentences

REASONS = {
    "error": "the model call failed",
    "empty": "empty answer",
    "malformed": "a structured answer that is not readable JSON",
    "thin": "says almost nothing (a few words besides names)",
    "thinking_only": "only thought, wrote no answer",
    "loop": "repeats itself",
    "echo": "echoes the prompt's scaffolding",
    "continues_chat": "continues the conversation instead of summarising it",
    "invented": "names more identifiers that are in no source than it keeps",
    "misattributed": "makes a user speak in a part where no user says anything, and says nothing else",
    # recorded by earlier versions only (length no longer rejects an answer; no fidelity retry)
    "cut_off": "cut off by the server before it finished",
    "too_long": "longer than the tier's target",
    "not_shorter": "not shorter than its input",
    "low_fidelity": "kept too few of the sources' identifiers",
}
"""Every rejection reason, with the words the UI uses for it."""


_PREAMBLE = re.compile(
    r"\A\s*(?:(?:sure|certainly|of course|okay|ok)[,!.]?\s*)?"
    r"(?:#+\s*|\*\*)?"
    r"(?:here(?:'s| is| are)\s+(?:a|an|the|my)?\s*(?:brief |short |concise |detailed |faithful |terse )?"
    r"(?:summary|summaries|overview|notes?)[^\n:]{0,80}[:.]"
    r"|(?:summary|overview|notes)(?:\s+of[^\n:]{0,60})?\s*:(?:\*\*)?)"
    r"[ \t]*(?:\*\*)?[ \t]*\n*",
    re.I,
)
_WORD = re.compile(r"\w+", re.U)
_SCAFFOLD = re.compile(
    r"</?(?:previous_summary|conversation|summaries|material|transcript|key_lines)>|^-{2,}\s*Part \d+ of \d+"
    r"|^\s*(?:<pre>\s*)?\[tool_(?:use|result|call)\b|</tool_use\b"
    # a heading's first 35 characters: enough to be the prompt's own words, short enough to
    # survive an answer clipped at the aggressive target
    r"|^\s*(?:" + "|".join(re.escape(h.rstrip(":")[:35]) for h in SCAFFOLD_HEADINGS) + ")",
    re.I | re.M,
)
# a transcript line as the prompt renders it: "[2025-01-02 10:00] user:" or "#12 user:"
_SCAFFOLD_LINE = re.compile(r"^\s*(?:\[[^\]\n]{4,40}\]|#\d+)\s*(?:user|assistant|system|tool)\s*:", re.I)
_ROLE_LINE = re.compile(r"^\s*(?:user|assistant|system|tool)\s*:\s*(.*)$", re.I)
_OPENERS = re.compile(
    r"\A\s*(?:sure\b|certainly\b|of course\b|absolutely\b|great question|good question|i'd be happy|i would be happy|"
    r"i can help|i'll help|let me\b|here's the next step|here is the next step|as an ai\b|thanks for|thank you for)",
    re.I,
)
_CLOSERS = re.compile(
    r"let me know if|feel free to|hope (?:this|that) helps|would you like me to|do you want me to|"
    r"shall i\b|is there anything else|happy to help",
    re.I,
)
_FIRST_PERSON = re.compile(r"(?<![\w'’])I(?:'m|’m|'ve|’ve|'ll|’ll|'d|’d| am| was| have| will)(?![\w])")
"""The writer speaking as itself ("I'm happy to report that they …"): a summary is in the
third person, so two of these outside quotes and code are the assistant's voice."""
_QUOTED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”")
_FENCED = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_INDENTED = re.compile(r"^(?: {4,}|\t+)(?![-*•]|\d+[.)])\S")
_CODE_DEF = re.compile(r"^\s*(?:def|class|function|fn|func|public|private|static|int|void|#include)\b.*[({:;]\s*$", re.M)
# a statement line: ends like code (``;``, an opening ``{``) or starts with a declaration;
# prose sentences end with a full stop (a real SmolLM2 leaf was two lines of a JS test file)
_CODE_LINE = re.compile(
    r"^\s*(?:(?:const|let|var|import|export|using namespace|#include|#define)\b.*|.*(?:;|\{|=>\s*\{|\}\);?))\s*$", re.M)


_PROMPT_TAGS = r"(?:previous_summary|conversation|summaries|material|transcript|key_lines)\b"
_TAG_LINE = re.compile(
    rf"^[ \t]*(?:\[/?(?!{_PROMPT_TAGS})[A-Za-z][\w-]{{2,40}}\]|</?(?!{_PROMPT_TAGS})[A-Za-z][\w-]{{2,40}}>)[ \t]*(?:\n|\Z)",
    re.M | re.I,
)
"""A line that is nothing but a tag name, such as ``[system-reminder]`` or ``<analysis>``: a
real SmolLM2 leaf opened with the first, copied from a Claude Code transcript's markup. The
prompt's own block tags are not stripped: copying those back is an echo, judged as one."""


def strip_preamble(text: str) -> str:
    """Drop one leading "Here's a summary…:" style line and every tag-only line.

    Neither carries content, and both are what a small model adds around a usable summary,
    so they are removed rather than failing the attempt.
    """
    return _TAG_LINE.sub("", _PREAMBLE.sub("", text, count=1)).strip()


def _norm_sentences(text: str) -> list[str]:
    out = []
    for part in split_sentences(text):
        words = _WORD.findall(part.lower())
        if len(words) >= 4:
            out.append(" ".join(words))
    return out


def find_loop(text: str) -> str | None:
    """A sentence said three times, a paragraph said twice, or mostly repeated 6-word runs."""
    sentences = Counter(_norm_sentences(text))
    if sentences:
        sentence, times = sentences.most_common(1)[0]
        if times >= 3:
            return f"a sentence repeated {times} times: \"{sentence[:60]}\""
    paragraphs = Counter(" ".join(_WORD.findall(p.lower())) for p in re.split(r"\n\s*\n", text))
    for para, times in paragraphs.items():
        if times >= 2 and len(para.split()) >= 12:
            return f"a paragraph repeated {times} times"
    words = _WORD.findall(text.lower())
    grams = [tuple(words[i : i + 6]) for i in range(len(words) - 5)]
    if len(grams) >= 24:
        counts = Counter(grams)
        repeated = sum(c - 1 for c in counts.values() if c > 1)
        share = repeated / len(grams)
        if share > 0.35:
            return f"{share:.0%} of its 6-word runs are repeats"
    return None


def find_echo(text: str, prior: str | None, sources: Sequence[str] = (), *, leaf: bool = True) -> str | None:
    """Prompt scaffolding, transcript lines, or the prior summary copied back.

    A line such as ``User: asked about X`` is a fine way to summarise; it is an echo only
    when it carries the prompt's line prefix (a bracketed time or ``#12``) or when what
    follows the role is copied word for word from a source.
    """
    m = _SCAFFOLD.search(text)
    if m:
        return f"copies the prompt's {m.group(0).strip()!r} marker"
    material = "\n".join(sources)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    echoed = []
    for ln in lines:
        if _SCAFFOLD_LINE.match(ln):
            echoed.append(ln)
            continue
        role = _ROLE_LINE.match(ln)
        if role and len(role.group(1).split()) >= 6 and role.group(1).strip() in material:
            echoed.append(ln)
    if echoed:
        return f"copies {len(echoed)} transcript line(s) such as {echoed[0].strip()[:50]!r}"
    copied = _copied_share(text, material) if leaf else None  # merging summaries may reuse their sentences
    if copied is not None and copied >= COPY_SHARE:
        return f"{copied:.0%} of its 6-word runs are copied from the log"
    if prior:
        copied, own = copied_statements(text, prior)
        if copied >= 2 and copied * 2 >= own:
            return f"{copied} of its {own} statements copy the previous summary"
    return None


NEAR_COPY = 0.75
"""A statement near-copies one of the previous summary when their word sequences match this much
(``difflib`` ratio over words), whatever the chat's topic: in a chat that stays on one subject every
copied word also occurs in the new chunk, so "its words are in the chunk" cannot tell a copy from
a report. An answer
is an echo when half or more of its statements, and at least two, are such copies."""


def statements(text: str) -> list[list[str]]:
    """The sentences and bullets of ``text`` as lists of lower-case words (four or more)."""
    out = []
    for part in split_sentences(text):
        words = _WORD.findall(part.lower())
        if len(words) >= 4:
            out.append(words)
    return out


def copied_statements(text: str, prior: str) -> tuple[int, int]:
    """(statements of ``text`` that near-copy one of ``prior``, statements of ``text``)."""
    own = statements(text)
    before = statements(prior)
    if not before:
        return 0, len(own)
    copied = 0
    for s in own:
        matcher = difflib.SequenceMatcher(None, b=s, autojunk=False)
        for p in before:
            matcher.set_seq1(p)
            if matcher.real_quick_ratio() >= NEAR_COPY and matcher.quick_ratio() >= NEAR_COPY \
                    and matcher.ratio() >= NEAR_COPY:
                copied += 1
                break
    return copied, len(own)


ASK_GRAM = 5
"""Words in a run that, found in the request, mark a line as copied from it."""
ASK_LINE_SHARE = 0.5
"""A line of the answer copies the request when this share of its word runs are the request's."""


def _runs(words: list[str], n: int) -> list[tuple[str, ...]]:
    """Every run of ``n`` consecutive words, in order."""
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def ask_copies(text: str, ask: str) -> list[str]:
    """The lines of ``text`` that copy the request ``ask`` back: its sentences ("Write the report
    now as …"), its list of what to name ("file paths, commands, functions …"), or a field name
    standing alone as an item. A small model does this when the chat gives it little to say, and
    a server that ignores ``format`` and echoes the prompt's tail answers with nothing else."""
    ask_words = _WORD.findall(ask.lower())
    grams = set(_runs(ask_words, ASK_GRAM))
    vocabulary = set(ask_words)
    out = []
    for line in text.splitlines():
        words = _WORD.findall(line.lower())
        if not words:
            continue
        if len(words) >= ASK_GRAM:
            runs = _runs(words, ASK_GRAM)
            if sum(r in grams for r in runs) >= ASK_LINE_SHARE * len(runs):
                out.append(line)
                continue
        if len(words) >= 3 and all(w in vocabulary or w in _FILLER for w in words):
            out.append(line)  # the request's own words rearranged: "names, paths and commands"
    return out


_FILLER = frozenset("a an the and or of to in on for with each every all any none n a is are was were "
                    "it this that these those".split())


FRAME_GRAM = 4
"""Words in a run that, found in the prompt's own wording, mark a title as copying it."""
_PLACEHOLDER = re.compile(r"\{\w+\}")


def frame_copy(title: str, frame: str) -> str | None:
    """The first run of ``FRAME_GRAM`` words a title shares with ``frame`` (the prompt's wording
    without the chat: its system text, template and ask, placeholders dropped), or None. A title is
    a dozen words; one run of the ask in it is the ask written back ("The report is about the thing asked
    about, worked on, …", "Report on the chat log to report on: …")."""
    grams = set(_runs(_WORD.findall(_PLACEHOLDER.sub(" ", frame).lower()), FRAME_GRAM))
    return next((" ".join(run) for run in _runs(_WORD.findall(title.lower()), FRAME_GRAM) if run in grams), None)


def find_ask_copy(text: str, ask: str | None) -> str | None:
    """The request copied back: two lines or more, or a fifth of the answer's words."""
    if not ask:
        return None
    copies = ask_copies(text, ask)
    if not copies:
        return None
    copied_words = sum(len(_WORD.findall(c)) for c in copies)
    if len(copies) >= 2 or copied_words * 5 >= len(_WORD.findall(text)):
        return f"copies the request back ({one_line(copies[0])!r})"
    return None


def one_line(text: str, width: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


COPY_SHARE = 0.5
"""An answer this much of which (6-word runs) is copied from the sources is the log, not a report."""


def _copied_share(text: str, material: str) -> float | None:
    """Share of the answer's 6-word runs found in the sources (None for answers under 20 runs).

    A one-sentence answer that restates the key line of its source (names, path, number)
    is a fine terse summary, not the log copied back; only longer answers are judged.
    """
    words = _WORD.findall(text.lower())
    grams = {tuple(words[i : i + 6]) for i in range(len(words) - 5)}
    if len(grams) < 20:
        return None
    source_words = _WORD.findall(material.lower())
    source = {tuple(source_words[i : i + 6]) for i in range(len(source_words) - 5)}
    return len(grams & source) / len(grams)


_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s")


def unquoted(text: str) -> str:
    """``text`` without its code blocks and quoted spans (backticks, straight or curly quotes): what its writer
    says in their own voice."""
    return _QUOTED.sub("", _FENCED.sub("", text))


def _looks_like_code(line: str) -> bool:
    """A statement-shaped line that is not a list item of prose ("- fixed the loader;")."""
    return not _BULLET.match(line) and any(c in line for c in "=(){}[]<>")


def find_continuation(text: str, sources: Sequence[str]) -> str | None:
    """The assistant's voice answering the chat, or code that no source contains."""
    m = _OPENERS.search(text)
    if m:
        return f"opens like a chat reply ({m.group(0).strip()!r})"
    m = _CLOSERS.search(text)
    if m:
        return f"talks to the user ({m.group(0).strip()!r})"
    own_voice = list(_FIRST_PERSON.finditer(unquoted(text)))
    if len(own_voice) >= 2:
        return f"speaks in the first person ({own_voice[0].group(0)!r}, {len(own_voice)} times)"
    material = "\n".join(sources)
    blocks = [b for b in _FENCED.findall(text) if b.strip()]
    code_lines = [ln.strip() for b in blocks for ln in b.splitlines() if len(ln.strip()) >= 8]
    unfenced = _FENCED.sub("", text)
    code_lines += [m.group(0).strip() for m in _CODE_DEF.finditer(unfenced) if len(m.group(0).strip()) >= 8]
    code_lines += [ln for ln in (m.group(0).strip() for m in _CODE_LINE.finditer(unfenced))
                   if len(ln) >= 8 and ln not in code_lines and _looks_like_code(ln)]
    # an indented block right in the text: summaries do not indent, pasted code does
    code_lines += [ln.strip() for ln in unfenced.splitlines() if _INDENTED.match(ln) and len(ln.strip()) >= 8]
    if code_lines:
        new = [ln for ln in code_lines if ln not in material]
        if len(new) >= 2 and len(new) * 2 > len(code_lines):
            return f"writes code that is in no source ({new[0][:50]!r})"
    return None


_SHOUTED = re.compile(r"[A-Z][A-Z0-9]*s?")


def find_invented(novel: Sequence[str], kept: int) -> str | None:
    """Made-up names: a URL, path or address that no source has (a small model inventing a
    link is the commonest case), or more invented identifiers than kept ones."""
    made_up = [n for n in novel if "://" in n or "/" in n or "@" in n]
    if made_up:
        return f"names {made_up[0][:60]!r}, which is in no source"
    strong = [n for n in novel if not _SHOUTED.fullmatch(n)]  # "LEAF", "NOTE": emphasis, not names
    if len(strong) >= 3 and len(strong) > kept:
        return f"{len(strong)} identifiers in no source, {kept} kept"
    return None


def judge_text(text: str, *, prior: str | None, sources: Sequence[str], leaf: bool = True,
               ask: str | None = None) -> tuple[str, str] | None:
    """The first content rule ``text`` breaks, as (reason, detail), or None. ``prior``: the
    previous summary *as the prompt showed it* (None when the prompt showed none); ``ask``: the
    request the prompt made (its copy is an echo)."""
    for reason, found in (
        ("echo", find_ask_copy(text, ask) or find_echo(text, prior, sources, leaf=leaf)),
        ("loop", find_loop(text)),
        ("continues_chat", find_continuation(text, sources)),
    ):
        if found:
            return reason, found
    return None


def judge_answer(text: str, *, thinking_tokens: int | None, prior: str | None, sources: Sequence[str],
                 leaf: bool = True, ask: str | None = None) -> tuple[str, str] | None:
    """The first rule an answer's ``text`` breaks, as (reason, detail), or None: no text at all (``empty``, or
    ``thinking_only`` when the model only thought), then the content rules (``judge_text``)."""
    if not text:
        return ("thinking_only", f"{thinking_tokens} tokens of thinking, no answer") if thinking_tokens else ("empty", "")
    return judge_text(text, prior=prior, sources=sources, leaf=leaf, ask=ask)
