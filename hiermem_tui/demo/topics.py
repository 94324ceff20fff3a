"""The five kinds of session the demo invents: their titles, subjects, sentences and pastes.

Why a module of its own: it is data, three hundred lines of it, and the generator reads it
only through :class:`~.topic.Topic`. The order of :data:`TOPICS` is part of the output: the
generator picks a topic by index from the seeded random stream.
"""

from __future__ import annotations

from .snippets import CODE_SNIPPETS, OPS_SNIPPETS
from .topic import Topic, bar, blocks, lines

TOPICS: tuple[Topic, ...] = (
    Topic(
        name="coding",
        system="You are a senior software engineer. Prefer small, testable changes and explain trade-offs.",
        titles=bar(
            "fix {thing} | {thing} keeps failing | help with {thing} | question about {thing} | tests for "
            "{thing} | cleaning up {thing} "
        ),
        things=bar(
            "the flaky retry test | a borrow checker error | pagination | the CSV importer | async cancellation "
            "| a memory leak | the login redirect | type hints | slow queries | JSON schema validation | a race "
            "condition | the config loader | unicode filenames | the release build "
        ),
        places=bar(
            "the FastAPI service | our Rust CLI | the React dashboard | the Django admin | the data pipeline | "
            "the Go worker | my side project | the SQLite layer | the billing job "
        ),
        files=bar("parser | cli | models | importer | scheduler | config"),
        asks=lines("""
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
        openers=bar(
            "Good catch. | Short answer: yes. | Let's narrow it down first. | That error is misleading. | "
            "Here's what's going on. | Two things stand out. "
        ),
        explains=lines("""
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
        snippets=CODE_SNIPPETS,
        tools=blocks("""
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
        paste_lines=lines("""
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
        titles=bar(
            "{thing} plan | planning {thing} | {thing}: budget and timeline | help me organise {thing} | "
            "checklist for {thing} "
        ),
        things=bar(
            "a week in Lisbon | the kitchen renovation | the Q3 roadmap | moving to a new flat | a team offsite "
            "| a hiking trip in the Dolomites | the product launch | a birthday party for 30 people "
        ),
        places=bar("the shared calendar | a spreadsheet | the budget doc | the group chat"),
        files=bar("budget | timeline | packing-list"),
        asks=lines("""
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
        openers=bar(
            "Sounds like a good plan. | Let's break it into phases. | A few things to decide first. | Here's a "
            "draft. "
        ),
        explains=lines("""
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
        snippets=blocks("""
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
        titles=bar(
            "reading notes: {thing} | {thing} explained | what is {thing}? | "
            "summary of papers on {thing} "
        ),
        things=bar(
            "LSM trees | vector clocks | CRDTs | the Raft consensus algorithm | column stores | write-ahead "
            "logging | Bloom filters | skip lists "
        ),
        places=bar("B-trees | Paxos | operational transforms | row stores | hash indexes | two-phase commit"),
        files=bar("notes | bibliography"),
        asks=lines("""
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
        openers=bar(
            "Good question. | Roughly speaking: | The short version is this. | It helps to separate two ideas "
            "here. "
        ),
        explains=lines("""
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
        paste_lines=lines("""
            Abstract. We study the behaviour of {thing} under skewed workloads and show that
            In section {n} the authors compare their approach with {place} and report
            Limitations include the small number of datasets and the lack of a baseline for
            Notes to self: reread the discussion about {thing} before the reading group.
        """),
    ),
    Topic(
        name="writing",
        system="You are an editor. Keep the author's voice and say what you changed.",
        titles=bar("edit my {thing} | feedback on {thing} | rewrite {thing} to be shorter | {thing} draft"),
        things=bar(
            "cover letter | blog post intro | conference abstract | resignation email | README | wedding speech "
            "| grant proposal summary "
        ),
        places=bar("LinkedIn | the company blog | the newsletter"),
        files=bar("draft | outline"),
        asks=lines("""
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
        openers=bar("Here's a tighter version. | I kept your structure. | A few suggestions."),
        explains=lines("""
            The second paragraph repeats the first, so I merged them.
            Starting with the concrete result makes the reader care sooner.
            Active voice makes the sentence shorter and clearer.
            I replaced three adjectives with one specific number.
            The ending now points back to the opening image.
            For {place} a slightly warmer tone works better.
            Long sentences are fine if each one carries a single idea.
            Read it aloud: where you run out of breath, split the sentence.
        """),
        snippets=blocks("""
> Two years ago our team shipped once a quarter. Today we ship every day, and this post explains what that cost us.
~~
> I build tools that keep data pipelines honest, and I would like to do that for your team.
~~
> Thank you all for being here. We promise the speeches will be shorter than the ceremony.
"""),
        paste_lines=lines("""
            When I started at the company {n} months ago, the team was shipping once a quarter.
            I believe my experience makes me a strong fit for this role, because
            In this post I want to explain why we moved away from microservices and what it cost us.
            Thank you all for coming tonight; it means a great deal to both of us.
        """),
    ),
    Topic(
        name="ops",
        system="You are an SRE on call. Ask for logs before guessing, and never suggest deleting data without a backup.",
        titles=bar("{thing} again | incident: {thing} | how to fix {thing} | {thing} runbook"),
        things=bar(
            "disk full | TLS certificate expired | 502 errors | OOMKilled pods | replication lag | DNS not "
            "resolving | cron job not running | high load average "
        ),
        places=bar("the Postgres primary | the staging cluster | the nginx box | the build server | our VPS"),
        files=bar("nginx | postgresql | api"),
        asks=lines("""
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
        openers=bar("Don't restart yet. | First, let's stop the bleeding. | That output is useful."),
        explains=lines("""
            Check which process holds the deleted files open before freeing more space.
            The WAL directory grows when a replication slot is inactive.
            Raise the memory limit a little, but the real fix is the leak.
            Put an alert on 80 percent usage, not 95, so there is time to act.
            A rolling restart keeps the service up while each pod picks up the new config.
            The certificate renewal job failed silently because its cron has no PATH.
            Keep the incident timeline in UTC so the logs line up.
            Add the command you just ran to the runbook while it is fresh.
        """),
        snippets=OPS_SNIPPETS,
        tools=blocks("""
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
        paste_lines=lines("""
            May 12 03:{n}:01 db1 postgres[{n}]: LOG:  checkpoint starting: time
            May 12 03:{n}:44 db1 postgres[{n}]: ERROR:  could not extend file: No space left on device
            May 12 03:{n}:02 web1 nginx[{n}]: upstream timed out (110: Connection timed out) while reading response header
        """),
        tool_rate=0.2,
    ),
)
