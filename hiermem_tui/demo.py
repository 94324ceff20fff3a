"""Deterministic synthetic chat history at any scale, for ``hiermem-tui demo``.

Why this exists: the TUI, the store and compaction must be exercised on databases far larger
than anyone's real history (a million episodes) without shipping such data. So this module
invents sessions that look like chat history (titles, role patterns, lengths, code blocks,
pastes, gaps between turns) from a seed, one session at a time.

Why it is built this way:
- Output depends only on ``(sessions, episodes, seed, start)``: one ``random.Random(seed)`` drives
  everything, and the default ``start`` is a fixed date, never "now".
- Speed: per-message text is picked from pools of whole messages composed once per call, then
  glued to an opener; per episode that is a handful of ``random()`` calls, not one per word.
- Streaming: episode counts are allocated on the fly (each session takes its share of what is
  left), so memory is bounded by the largest single session, whatever ``sessions`` is.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TypeVar

from hiermem_tui.importers.base import ParsedEpisode, ParsedSession

DEFAULT_START = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
"""Default reference time: sessions start over the months before it. Fixed so output is reproducible."""

SPAN_DAYS = 120
"""Session start days are spread over this many days before ``start``."""

SOURCE = "demo"

_T = TypeVar("_T")

_POOL = 256  # composed messages per role per topic; enough variety, built in a few ms
_SIGMA = 1.25  # lognormal spread of session sizes: most sessions short, a few long
_MEAN_W = 2.718281828459045 ** (_SIGMA * _SIGMA / 2)  # mean of lognormvariate(0, _SIGMA)
_STEPS = tuple(timedelta(seconds=s) for s in range(1024))  # gaps under ~17 min, built once (immutable)


def _lines(text: str) -> tuple[str, ...]:
    """One entry per non-blank line: keeps the pools below readable and compact."""
    return tuple(line.strip() for line in text.strip().splitlines() if line.strip())


def _bar(text: str) -> tuple[str, ...]:
    """Short entries separated by ``|`` (titles, slot fillers)."""
    return tuple(item.strip() for item in text.split("|") if item.strip())


def _blocks(text: str) -> tuple[str, ...]:
    """Multi-line entries separated by a line holding only ``~~`` (for code blocks and tool output)."""
    return tuple(block.strip("\n") for block in text.strip("\n").split("\n~~\n") if block.strip())


_GENERIC_SYSTEM = "You are a helpful assistant. Answer concisely and say when you are unsure."


@dataclass(frozen=True, slots=True)
class Topic:
    """Everything needed to invent sessions of one kind (coding help, planning, ...)."""

    name: str
    titles: tuple[str, ...]
    things: tuple[str, ...]
    places: tuple[str, ...]
    files: tuple[str, ...]
    asks: tuple[str, ...]
    openers: tuple[str, ...]
    explains: tuple[str, ...]
    snippets: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    paste_lines: tuple[str, ...] = ()
    tool_rate: float = 0.0
    system: str = _GENERIC_SYSTEM



_CODE_SNIPPETS = _blocks('''
```python
def parse_line(line: str) -> Record | None:
    """Return None for blank or comment lines instead of raising."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    key, _, value = line.partition("=")
    return Record(key.strip(), value.strip())
```
~~
```rust
fn read_config(path: &Path) -> anyhow::Result<Config> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(toml::from_str(&text)?)
}
```
~~
```bash
git bisect start
git bisect bad HEAD
git bisect good v{n}.0
git bisect run pytest -x tests/test_{file}.py
```
~~
```sql
CREATE INDEX IF NOT EXISTS idx_events_user_time ON events(user_id, created_at);
EXPLAIN QUERY PLAN SELECT * FROM events WHERE user_id = ? ORDER BY created_at DESC LIMIT 50;
```
~~
```go
ctx, cancel := context.WithTimeout(ctx, {n}*time.Millisecond)
defer cancel()
if err := w.Process(ctx, job); err != nil {
    return fmt.Errorf("process job %d: %w", job.ID, err)
}
```
~~
```python
@pytest.mark.parametrize("raw, expected", [("", []), ("a", ["a"]), ("a,b", ["a", "b"])])
def test_split_fields(raw: str, expected: list[str]) -> None:
    assert split_fields(raw) == expected
```
''')

_OPS_SNIPPETS = _blocks('''
```bash
kubectl -n prod rollout status deploy/api --timeout=120s
kubectl -n prod logs deploy/api --since=15m | grep -i error | head -50
```
~~
```nginx
location /api/ {
    proxy_pass http://127.0.0.1:{n}00;
    proxy_read_timeout 60s;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
}
```
~~
```bash
sudo du -xh /var --max-depth=2 | sort -h | tail -15
sudo journalctl -u postgresql --since "1 hour ago" --no-pager
```
~~
```yaml
resources:
  requests: {cpu: 250m, memory: 256Mi}
  limits: {memory: 512Mi}
```
''')

TOPICS: tuple[Topic, ...] = (
    Topic(
        name="coding",
        system="You are a senior software engineer. Prefer small, testable changes and explain trade-offs.",
        titles=_bar(
            "fix {thing} | {thing} keeps failing | help with {thing} | question about {thing} | tests for "
            "{thing} | cleaning up {thing} "
        ),
        things=_bar(
            "the flaky retry test | a borrow checker error | pagination | the CSV importer | async cancellation "
            "| a memory leak | the login redirect | type hints | slow queries | JSON schema validation | a race "
            "condition | the config loader | unicode filenames | the release build "
        ),
        places=_bar(
            "the FastAPI service | our Rust CLI | the React dashboard | the Django admin | the data pipeline | "
            "the Go worker | my side project | the SQLite layer | the billing job "
        ),
        files=_bar("parser | cli | models | importer | scheduler | config"),
        asks=_lines("""
            I'm stuck on {thing} in {place}.
            Can you look at this and tell me what's wrong?
            It works locally but fails in CI.
            The error only shows up when I run the whole suite.
            I tried pinning the version and clearing the cache, no change.
            Is there a cleaner way to write this?
            That fixed it, thanks.
            Should I use a dataclass here or a plain dict?
            What would you name this function?
            I'd rather not add another dependency for this.
            Can you write a test for the empty input case?
            The traceback points at line {n} of {file}.py but that line looks fine.
            Now it compiles but the output is off by one.
            How do I make this work on Windows too?
            Let's keep the public API and change the internals.
            Does this need a lock?
            Performance matters here, the input is about {n} MB.
            Why does that work?
            Can you help me with {thing}? I've been at it for an hour.
            I need a hand with {thing} in {place}.
            Here's the diff, does it look right to you?
            The reviewer wants smaller functions in {file}.py.
        """),
        openers=_bar(
            "Good catch. | Short answer: yes. | Let's narrow it down first. | That error is misleading. | "
            "Here's what's going on. | Two things stand out. "
        ),
        explains=_lines("""
            The problem is that {thing} depends on state that outlives a single call.
            I'd start by making the failure reproducible with one small test.
            Move the parsing into its own function so it can be tested without the network.
            This is an off-by-one: the end of the range is exclusive.
            The test passes alone because it inherits state left behind by an earlier test.
            Pin the clock instead of sleeping; sleeps make the test slow and still flaky.
            A dataclass gives you type checking and a readable repr for free.
            Returning early keeps the happy path unindented.
            The cache key ignores the locale, so two users can share a stale entry.
            Run it with `-x -vv` so it stops at the first failure and prints the diff.
            That lock is held across an await, which is why the worker stalls.
            Profile before optimising: most of the time is probably in {file}.py.
            I would keep the old function as a thin wrapper for one release.
            On Windows the path separator and CRLF line endings both bite here.
            Batching the inserts in one transaction should make this roughly {n} times faster.
            Add a regression test named after the bug so nobody removes it by accident.
            The type checker is right: that value can be None after the early return.
            Split the function where the comment says "now do the rest".
            Keep the error message specific, including the file name and the line.
            Check the exit code as well as the output; a crash can print nothing.
        """),
        snippets=_CODE_SNIPPETS,
        tools=_blocks("""
            $ pytest -q tests/test_{file}.py
            ..........F...
            FAILED tests/test_{file}.py::test_handles_empty_input - AssertionError: assert [] == ['']
            1 failed, 13 passed in 0.{n}s
            ~~
            $ cargo test
               Compiling app v0.3.0
                Finished test [unoptimized + debuginfo] target(s) in 4.2s
                 Running unittests src/main.rs
            test result: ok. {n} passed; 0 failed; 0 ignored
            ~~
            Traceback (most recent call last):
              File "app/{file}.py", line {n}, in load
                return json.loads(raw)
            json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)
            ~~
            $ git diff --stat
             app/{file}.py        | 24 ++++++++++++++----------
             tests/test_{file}.py | 31 +++++++++++++++++++++++++++++++
             2 files changed, 45 insertions(+), 10 deletions(-)
        """),
        paste_lines=_lines("""
            2026-05-{n} 10:14:03,118 INFO worker started pid={n} queue=default
            2026-05-{n} 10:14:05,402 WARNING retrying job {n} after ConnectionResetError (attempt 2/5)
            2026-05-{n} 10:14:09,877 ERROR job {n} failed: TimeoutError in {file}.fetch
            File "app/{file}.py", line {n}, in process
            raise ValueError(f"bad record at offset {offset}")
            def handle(self, job: Job) -> None:  # line {n}
            for row in reader:  # {file}.py
        """),
        tool_rate=0.15,
    ),
    Topic(
        name="planning",
        system="You are a practical planner. Ask about constraints, then propose a concrete schedule.",
        titles=_bar(
            "{thing} plan | planning {thing} | {thing}: budget and timeline | help me organise {thing} | "
            "checklist for {thing} "
        ),
        things=_bar(
            "a week in Lisbon | the kitchen renovation | the Q3 roadmap | moving to a new flat | a team offsite "
            "| a hiking trip in the Dolomites | the product launch | a birthday party for 30 people "
        ),
        places=_bar("the shared calendar | a spreadsheet | the budget doc | the group chat"),
        files=_bar("budget | timeline | packing-list"),
        asks=_lines("""
            I'm planning {thing} and don't know where to start.
            Can you help me organise {thing}? Nothing is booked yet.
            The budget is about {n}0 euros, can that work?
            We have two weekends free in October.
            Can you turn this into a checklist?
            What did I forget?
            My partner wants fewer travel days.
            Put it in {place} format so I can share it.
            Which of these should we book first?
            Is a week enough for this?
            Let's cut the second option.
            What's a realistic buffer for delays?
        """),
        openers=_bar(
            "Sounds like a good plan. | Let's break it into phases. | A few things to decide first. | Here's a "
            "draft. "
        ),
        explains=_lines("""
            Book the things with fixed dates first and keep the rest flexible.
            I'd keep a buffer of about 15 percent on the budget for surprises.
            Group the tasks by who owns them, not by date, so nothing falls between chairs.
            The first week is the riskiest, so front-load the bookings there.
            Two travel days in a row are tiring; put a rest day in between.
            You can share the checklist in {place} and tick items off together.
            Ask everyone for their constraints before fixing the date.
            Deposits are usually refundable until about 14 days before.
            Write down the decision and why, so you don't reopen it next week.
            If the weather turns, have an indoor plan for each day.
        """),
        snippets=_blocks("""
| week | what | owner | status |
|------|------|-------|--------|
| 1 | book the fixed-date parts | you | open |
| 2 | confirm numbers, pay deposits | both | open |
| 3 | buffer for whatever slipped | both | - |
~~
- [ ] decide the dates and tell everyone
- [ ] book transport and the first two nights
- [ ] set the budget ceiling ({n}0 EUR) and a 15% buffer
- [ ] make a shared list in {place}
"""),
    ),
    Topic(
        name="research",
        system="You are a research assistant. Say where each claim comes from, or that you are unsure.",
        titles=_bar(
            "reading notes: {thing} | {thing} explained | what is {thing}? | "
            "summary of papers on {thing} "
        ),
        things=_bar(
            "LSM trees | vector clocks | CRDTs | the Raft consensus algorithm | column stores | write-ahead "
            "logging | Bloom filters | skip lists "
        ),
        places=_bar("B-trees | Paxos | operational transforms | row stores | hash indexes | two-phase commit"),
        files=_bar("notes | bibliography"),
        asks=_lines("""
            Can you explain {thing} like I know the basics but not the details?
            How does this compare with {place}?
            What are the main criticisms?
            Which paper should I read first?
            I don't get the part about the failure cases.
            Give me the three key ideas in one paragraph each.
            Is that still true today or is it outdated?
            Where does {thing} break down in practice?
            Summarise what we covered so far.
        """),
        openers=_bar(
            "Good question. | Roughly speaking: | The short version is this. | It helps to separate two ideas "
            "here. "
        ),
        explains=_lines("""
            The core idea of {thing} is to make the common case cheap and pay for it somewhere else.
            Compared with {place}, the difference shows up mostly under heavy writes.
            The original paper is short and readable; start with sections 2 and 3.
            Most criticism focuses on tail latency rather than average throughput.
            Benchmarks in the literature vary by a factor of {n} depending on the workload.
            A useful mental model is a pipeline where each stage batches work for the next.
            Later work relaxed the assumption that the whole index fits in memory.
            The trade-off is consistency versus availability when the network splits.
            In practice the tuning knobs matter more than the algorithm choice.
            I'm not certain of the exact figure, so check the evaluation section.
        """),
        paste_lines=_lines("""
            Abstract. We study the behaviour of {thing} under skewed workloads and show that
            In section {n} the authors compare their approach with {place} and report
            Limitations include the small number of datasets and the lack of a baseline for
            Notes to self: reread the discussion about {thing} before the reading group.
        """),
    ),
    Topic(
        name="writing",
        system="You are an editor. Keep the author's voice and say what you changed.",
        titles=_bar("edit my {thing} | feedback on {thing} | rewrite {thing} to be shorter | {thing} draft"),
        things=_bar(
            "cover letter | blog post intro | conference abstract | resignation email | README | wedding speech "
            "| grant proposal summary "
        ),
        places=_bar("LinkedIn | the company blog | the newsletter"),
        files=_bar("draft | outline"),
        asks=_lines("""
            Can you tighten this {thing}? It feels too long.
            Here's my {thing}, please be honest.
            Keep my voice, just fix the flow.
            Make the opening sentence stronger.
            Is the tone too formal for {place}?
            Cut it to about {n} words.
            I don't like "leverage", find another word.
            Which version do you prefer and why?
            Now the conclusion, please.
        """),
        openers=_bar("Here's a tighter version. | I kept your structure. | A few suggestions."),
        explains=_lines("""
            The second paragraph repeats the first, so I merged them.
            Starting with the concrete result makes the reader care sooner.
            Active voice makes the sentence shorter and clearer.
            I replaced three adjectives with one specific number.
            The ending now points back to the opening image.
            For {place} a slightly warmer tone works better.
            Long sentences are fine if each one carries a single idea.
            Read it aloud: where you run out of breath, split the sentence.
        """),
        snippets=_blocks("""
> Two years ago our team shipped once a quarter. Today we ship every day, and this post explains what that cost us.
~~
> I build tools that keep data pipelines honest, and I would like to do that for your team.
~~
> Thank you all for being here. We promise the speeches will be shorter than the ceremony.
"""),
        paste_lines=_lines("""
            When I started at the company {n} months ago, the team was shipping once a quarter.
            I believe my experience makes me a strong fit for this role, because
            In this post I want to explain why we moved away from microservices and what it cost us.
            Thank you all for coming tonight; it means a great deal to both of us.
        """),
    ),
    Topic(
        name="ops",
        system="You are an SRE on call. Ask for logs before guessing, and never suggest deleting data without a backup.",
        titles=_bar("{thing} again | incident: {thing} | how to fix {thing} | {thing} runbook"),
        things=_bar(
            "disk full | TLS certificate expired | 502 errors | OOMKilled pods | replication lag | DNS not "
            "resolving | cron job not running | high load average "
        ),
        places=_bar("the Postgres primary | the staging cluster | the nginx box | the build server | our VPS"),
        files=_bar("nginx | postgresql | api"),
        asks=_lines("""
            We're seeing {thing} on {place} since this morning.
            Quick one: {thing} again, what do I check first?
            Here's the output, what should I look at?
            Is it safe to restart it now?
            I freed {n} GB but it filled up again.
            How do I stop this happening again?
            Can you write the postmortem summary?
            The alert fired at 03:{n} and nobody saw it.
            Which log should I check first?
        """),
        openers=_bar("Don't restart yet. | First, let's stop the bleeding. | That output is useful."),
        explains=_lines("""
            Check which process holds the deleted files open before freeing more space.
            The WAL directory grows when a replication slot is inactive.
            Raise the memory limit a little, but the real fix is the leak.
            Put an alert on 80 percent usage, not 95, so there is time to act.
            A rolling restart keeps the service up while each pod picks up the new config.
            The certificate renewal job failed silently because its cron has no PATH.
            Keep the incident timeline in UTC so the logs line up.
            Add the command you just ran to the runbook while it is fresh.
        """),
        snippets=_OPS_SNIPPETS,
        tools=_blocks("""
            $ df -h /var
            Filesystem      Size  Used Avail Use% Mounted on
            /dev/sda1        80G   79G  1.0G  99% /var
            ~~
            $ kubectl -n prod get pods
            NAME                   READY   STATUS      RESTARTS   AGE
            api-7d9f8c6b5-x2kqp    0/1     OOMKilled   {n}        3h
            api-7d9f8c6b5-zq8lm    1/1     Running     0          3h
            ~~
            $ systemctl status nginx
            ● nginx.service - A high performance web server
                 Active: failed (Result: exit-code) since Tue 2026-05-12 03:{n}:11 UTC
        """),
        paste_lines=_lines("""
            May 12 03:{n}:01 db1 postgres[{n}]: LOG:  checkpoint starting: time
            May 12 03:{n}:44 db1 postgres[{n}]: ERROR:  could not extend file: No space left on device
            May 12 03:{n}:02 web1 nginx[{n}]: upstream timed out (110: Connection timed out) while reading response header
        """),
        tool_rate=0.2,
    ),
)


def bundled_demo_path() -> Path:
    """Path of the bundled ``demo.jsonl`` (what ``hiermem-tui --demo`` loads).

    Resolved next to this module so it works from a checkout, an editable install and a wheel
    (``assets/**`` is package data).
    """
    return Path(__file__).resolve().parent / "assets" / "demo" / "demo.jsonl"


@dataclass(slots=True)
class _Pools:
    """Messages about one subject (a topic and one of its ``things``), composed once per call.

    Keying pools by subject keeps a session on the subject its title names, while per-episode
    work stays a few index picks.
    """

    topic: Topic
    thing: str
    openings: list[str]
    users: list[str]
    openers: list[str]
    answers: list[str]
    tools: list[str]
    pastes: list[str]


def _pick(rng: random.Random, seq: Sequence[_T]) -> _T:
    return seq[int(rng.random() * len(seq))]


_SLOT_RE = re.compile(r"\{(thing|place|n|file)\}")


def _fill(rng: random.Random, topic: Topic, thing: str, text: str) -> str:
    """Fill the ``{thing}``/``{place}``/``{n}``/``{file}`` slots of a template.

    A regex, not ``str.format``, because code snippets are full of other braces.
    """
    if "{" not in text:
        return text

    def slot(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "thing":
            return thing
        if name == "n":
            return str(rng.randint(2, 480))
        return _pick(rng, topic.places if name == "place" else topic.files)

    return _SLOT_RE.sub(slot, text)


def _sentences(rng: random.Random, topic: Topic, thing: str, pool: tuple[str, ...], count: int) -> list[str]:
    """``count`` distinct sentences of ``pool`` (no sentence twice in one message)."""
    return [_fill(rng, topic, thing, s) for s in rng.sample(pool, min(count, len(pool)))]


def _answer(rng: random.Random, topic: Topic, thing: str) -> str:
    """An assistant body of 40-400 words: paragraphs, sometimes a list, sometimes a code block."""
    parts: list[str] = []
    for i in range(rng.randint(1, 5)):
        chunk = _sentences(rng, topic, thing, topic.explains, rng.randint(4 if i == 0 else 2, 5))
        if i and rng.random() < 0.2:
            parts.append("\n".join(f"- {s}" for s in chunk))
        else:
            parts.append(" ".join(chunk))
    if topic.snippets and rng.random() < 0.4:
        parts.insert(rng.randint(1, len(parts)), _fill(rng, topic, thing, _pick(rng, topic.snippets)))
    return "\n\n".join(parts)


def _paste(rng: random.Random, topic: Topic, thing: str) -> str:
    """A long paste (300-1500 words) of the topic's material: logs, drafts, notes."""
    target = rng.randint(300, 1500)
    source = topic.paste_lines or topic.explains
    lines: list[str] = []
    words = 0
    while words < target:
        line = _fill(rng, topic, thing, _pick(rng, source))
        lines.append(line)
        words += line.count(" ") + 1
    return "\n".join(lines)


def _opening(rng: random.Random, topic: Topic, thing: str) -> str:
    """A first user message: it names the session's subject, like people do when they start a chat."""
    naming = [s for s in topic.asks if "{thing}" in s]
    rest = _sentences(rng, topic, thing, topic.asks, rng.randint(0, 2))
    lead = _fill(rng, topic, thing, _pick(rng, naming))
    return " ".join([lead, *(s for s in rest if s != lead)])


def _build_pools(rng: random.Random, topic: Topic, thing: str) -> _Pools:
    return _Pools(
        topic=topic,
        thing=thing,
        openings=[_opening(rng, topic, thing) for _ in range(_POOL // 8)],
        users=[" ".join(_sentences(rng, topic, thing, topic.asks, rng.randint(1, 4))) for _ in range(_POOL)],
        openers=[o + " " for o in topic.openers],
        answers=[_answer(rng, topic, thing) for _ in range(_POOL)],
        tools=[_fill(rng, topic, thing, _pick(rng, topic.tools)) for _ in range(_POOL // 4)] if topic.tools else [],
        pastes=[_paste(rng, topic, thing) for _ in range(6)],
    )


def _counts(rng: random.Random, sessions: int, episodes: int) -> Iterator[int]:
    """Episode counts per session, lazily, summing to exactly ``episodes``.

    Each session takes a lognormal share of what is left, scaled by how many sessions remain;
    the last takes the rest. Memory is O(1) in ``sessions``.
    """
    floor = 2 if episodes >= 2 * sessions else 1
    extra = episodes - floor * sessions
    for left in range(sessions, 0, -1):
        if left == 1:
            take = extra
        else:
            take = min(extra, int(extra * rng.lognormvariate(0.0, _SIGMA) / (left * _MEAN_W) + 0.5))
        extra -= take
        yield floor + take


def _episodes(rng: random.Random, pools: _Pools, count: int, began: datetime) -> list[ParsedEpisode]:
    """``count`` episodes: maybe a system prompt, then user/assistant turns with some tool output.

    This is the hot loop (a million iterations for a big demo): locals only, one ``random()``
    per decision, whole pre-composed messages.
    """
    rnd = rng.random
    users, openers, answers, tools, pastes = pools.users, pools.openers, pools.answers, pools.tools, pools.pastes
    nu, no, na, nt, npaste = len(users), len(openers), len(answers), len(tools), len(pastes)
    tool_p = pools.topic.tool_rate if nt else 0.0
    eps: list[ParsedEpisode] = []
    append = eps.append
    t = began
    if count >= 3 and rnd() < 0.12:
        append(ParsedEpisode("system", pools.topic.system if rnd() < 0.7 else _GENERIC_SYSTEM, t))
    role = "user"
    text = pools.openings[int(rnd() * len(pools.openings))]
    opening = True
    step = _STEPS
    for _ in range(count - len(eps)):
        if role == "user":
            r = rnd()
            if opening:
                opening = False
                gap = int(r * 30)  # text is the opening message chosen above
            else:
                # Usually minutes after the answer; now and then hours or days later.
                gap = 7200 + int(rnd() * 259200) if r < 0.035 else 25 + int(r * 600)
                text = users[int(rnd() * nu)]
            if rnd() < 0.02:
                text = f"{text}\n\n```\n{pastes[int(rnd() * npaste)]}\n```"
            nxt = "assistant"
        elif role == "assistant":
            gap = 4 + int(rnd() * 80)
            text = openers[int(rnd() * no)] + answers[int(rnd() * na)]
            nxt = "tool" if rnd() < tool_p else "user"
        else:
            gap = 2 + int(rnd() * 40)
            text = tools[int(rnd() * nt)]
            nxt = "assistant"
        t = t + (step[gap] if gap < 1024 else timedelta(seconds=gap))
        append(ParsedEpisode(role, text, t))
        role = nxt
    return eps


def generate(
    sessions: int, episodes: int, seed: int, *, start: datetime | None = None
) -> Iterator[ParsedSession]:
    """Yield ``sessions`` synthetic sessions holding exactly ``episodes`` episodes in total.

    Session ids are ``demo:<seed>:<n>`` (n from 1). Sessions start on days spread over the
    ``SPAN_DAYS`` before ``start`` (default ``DEFAULT_START``), in order. Raises ``ValueError``
    at call time for counts that cannot be honoured (negative, or fewer episodes than sessions).
    """
    if sessions < 0 or episodes < 0:
        raise ValueError("--sessions and --episodes must not be negative")
    if sessions == 0 and episodes:
        raise ValueError(f"--episodes ({episodes}) needs at least one session (--sessions)")
    if episodes < sessions:
        raise ValueError(f"--episodes ({episodes}) must be at least --sessions ({sessions}): every session needs one")
    if start is None:
        start = DEFAULT_START
    elif start.tzinfo is None:
        start = start.replace(tzinfo=timezone.utc)
    return _stream(random.Random(seed), sessions, episodes, seed, start.astimezone(timezone.utc))


def _stream(rng: random.Random, sessions: int, episodes: int, seed: int, start: datetime) -> Iterator[ParsedSession]:
    """The lazy part of ``generate`` (separate so bad arguments raise before iteration starts)."""
    if sessions == 0:
        return
    pools: dict[tuple[str, str], _Pools] = {}  # at most sum(len(topic.things)) entries
    origin = (start - timedelta(days=SPAN_DAYS)).replace(hour=0, minute=0, second=0, microsecond=0)
    day_step = SPAN_DAYS / sessions
    for n, count in enumerate(_counts(rng, sessions, episodes), start=1):
        topic = _pick(rng, TOPICS)
        thing = _pick(rng, topic.things)
        pool = pools.get((topic.name, thing))
        if pool is None:
            pool = pools[(topic.name, thing)] = _build_pools(rng, topic, thing)
        day = int((n - 1 + rng.random()) * day_step)
        began = origin + timedelta(days=day, seconds=int(7 * 3600 + rng.random() * 14 * 3600))
        title = _fill(rng, topic, thing, _pick(rng, topic.titles))
        eps = _episodes(rng, pool, count, began)
        yield ParsedSession(
            id=f"demo:{seed}:{n}",
            title=title[:1].upper() + title[1:],
            source=SOURCE,
            episodes=eps,
            created_at=eps[0].created_at,
            metadata={"generator": "hiermem_tui.demo", "seed": seed, "topic": topic.name},
        )
