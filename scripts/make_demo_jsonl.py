#!/usr/bin/env python3
"""Compose ``hiermem_tui/assets/demo/demo.jsonl``, the data ``hiermem-tui --demo`` opens.

Why a script rather than a hand-edited JSONL file: the conversations are authored here as
readable text (one ``== role +gap`` marker per turn, relative gaps instead of hand-computed
timestamps), and the repetitive parts of the long coding session -- test runs whose test list
grows as the project does, clippy rounds -- come from small helpers, so they stay consistent.
Everything is deterministic: running it twice writes the same bytes.

Usage:
    python scripts/make_demo_jsonl.py           # (re)write the bundled file
    python scripts/make_demo_jsonl.py --check   # exit 1 if the bundled file is out of date

Script format (inside each session's text):
    @ 2026-05-11T19:42:00Z      sets the clock (next turn happens at exactly this time)
    == user +4m                 starts a turn; the gap is added to the clock (d/h/m/s, combinable: +1h20m)
    Without a gap, a turn comes a typical time after the previous one (see DEFAULT_GAP).
All content is literal text: markup-like strings and backslash sequences are kept as written.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "hiermem_tui" / "assets" / "demo" / "demo.jsonl"

ROLES = ("user", "assistant", "system", "tool")
DEFAULT_GAP = {"user": timedelta(minutes=3), "assistant": timedelta(seconds=40),
               "tool": timedelta(seconds=15), "system": timedelta(0)}

_TURN = re.compile(r"^== (user|assistant|system|tool)(?: \+((?:\d+[dhms])+))?\s*$")
_AT = re.compile(r"^@ (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s*$")
_PART = re.compile(r"(\d+)([dhms])")
_UNIT = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


@dataclass(frozen=True)
class Session:
    """One authored conversation: a stable id, a title, and its script text."""

    id: str
    title: str
    script: str


def _gap(text: str) -> timedelta:
    return sum((timedelta(**{_UNIT[u]: int(n)}) for n, u in _PART.findall(text)), timedelta(0))


def parse_script(script: str) -> list[tuple[str, str, datetime]]:
    """Turn script text into (role, content, created_at) turns; raises ValueError on mistakes."""
    turns: list[tuple[str, str, datetime]] = []
    clock: datetime | None = None
    pinned = False  # an "@" line sets the time of the next turn exactly
    role: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if role is not None:
            content = "\n".join(lines).strip("\n")
            if not content.strip():
                raise ValueError(f"empty {role} turn after {turns[-1][2] if turns else 'start'}")
            turns.append((role, content, when))

    when = datetime.min.replace(tzinfo=timezone.utc)
    for line in script.splitlines():
        at, turn = _AT.match(line), _TURN.match(line)
        if at:
            flush()
            role, lines = None, []
            new = datetime.strptime(at.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            if clock is not None and new < clock:
                raise ValueError(f"clock goes backwards at {at.group(1)}")
            clock, pinned = new, True
        elif turn:
            flush()
            if clock is None:
                raise ValueError("script must start with an '@ <time>' line")
            role, lines = turn.group(1), []
            if not pinned:
                clock += _gap(turn.group(2)) if turn.group(2) else DEFAULT_GAP[role]
            pinned = False
            when = clock
        elif role is not None:
            lines.append(line)
        elif line.strip():
            raise ValueError(f"text outside a turn: {line[:60]!r}")
    flush()
    return turns


def records(sessions: list[Session]) -> list[dict[str, str]]:
    """Native JSONL records (see DESIGN.md §6), checked for the things the TUI relies on."""
    out: list[dict[str, str]] = []
    for s in sessions:
        turns = parse_script(s.script)
        for role, content, when in turns:
            bad = [c for c in content if ord(c) < 32 and c not in "\n\t"]
            if bad:
                raise ValueError(f"{s.id}: control character {bad[0]!r} in content; write it as text")
            out.append({"session": s.id, "title": s.title, "role": role, "content": content,
                        "created_at": when.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return out


def render(sessions: list[Session]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(sessions))


# --- helpers for the long coding session ------------------------------------------------------


class Suite:
    """The logslice test suite as it grows: ``run`` prints a ``cargo test`` the way cargo does.

    Keeping the list of tests in one place makes every test run in the story consistent with
    the tests written so far.
    """

    def __init__(self) -> None:
        self.tests: list[str] = []
        self.builds = 0

    def add(self, *names: str) -> str:
        self.tests.extend(n for n in names if n not in self.tests)
        return ""

    def run(self, gap: str = "25s", failures: dict[str, str] | None = None, cmd: str = "cargo test",
            secs: str = "0.04s", compile_s: str = "2.17s", only: str | None = None) -> str:
        """A ``cargo test`` transcript: unit tests, then the ``tests/cli.rs`` binary once it exists."""
        failures = failures or {}
        out = [f"$ {cmd}", "   Compiling logslice v0.1.0 (/home/sam/src/logslice)",
               f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {compile_s}"]
        units = [t for t in self.tests if not t.startswith("cli_tests::")]
        clis = [t.split("::", 1)[1] for t in self.tests if t.startswith("cli_tests::")]
        sections = [("unittests src/main.rs (target/debug/deps/logslice-5b0e7c2f9a13d846)", units, "--bin logslice")]
        if clis:
            sections.append(("tests/cli.rs (target/debug/deps/cli-0c41e9a87d2b35f1)", clis, "--test cli"))
        failed_any = None
        for title, names, rerun in sections:
            tests = sorted(t for t in names if only is None or only in t)
            failed = {t: failures[t] for t in tests if t in failures}
            out += [f"     Running {title}", "", f"running {len(tests)} test{'s' if len(tests) != 1 else ''}"]
            out += [f"test {t} ... {'FAILED' if t in failed else 'ok'}" for t in tests]
            if failed:
                out += ["", "failures:", ""]
                for name, panic in failed.items():
                    out += [f"---- {name} stdout ----", f"thread '{name}' panicked at {panic}",
                            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", ""]
                out += ["", "failures:"] + [f"    {name}" for name in failed] + [""]
            status = "FAILED" if failed else "ok"
            if not failed:
                out.append("")
            out.append(f"test result: {status}. {len(tests) - len(failed)} passed; {len(failed)} failed; "
                       f"0 ignored; 0 measured; {len(names) - len(tests)} filtered out; "
                       f"finished in {secs if tests else '0.00s'}")
            out.append("")
            if failed:
                failed_any = rerun
                break  # cargo stops at the first failing test binary
        if failed_any:
            out.append(f"error: test failed, to rerun pass `{failed_any}`")
        unknown = set(failures) - set(self.tests)
        if unknown:
            raise ValueError(f"failures for tests not in the suite: {sorted(unknown)}")
        return f"\n== tool +{gap}\n" + "\n".join(out).rstrip("\n") + "\n"


def clippy_error(lint: str, message: str, where: str, code: str, mark: str) -> str:
    """A clippy error block as ``cargo clippy -- -D warnings`` prints it."""
    line_no = where.split(":")[1]
    pad = " " * len(line_no)
    return (f"error: {message}\n{pad}--> {where}\n{pad} |\n{line_no} | {code}\n{pad} | {mark}\n{pad} |\n"
            f"{pad} = help: for further information visit "
            f"https://rust-lang.github.io/rust-clippy/master/index.html#{lint}\n"
            f"{pad} = note: `-D clippy::{lint.replace('_', '-')}` implied by `-D warnings`")


def clippy_round(ask: str, error: str, answer: str) -> str:
    """One lint discussed: the user pastes it with a question, the assistant explains and fixes."""
    return f"\n== user +2m\n{ask}\n\n```\n{error}\n```\n== assistant +45s\n{answer}\n"


# --- (a) the long session: building logslice over five days -----------------------------------

suite = Suite()

DAY1 = [r'''
@ 2026-05-11T19:42:00Z
== user
I want to build a small CLI that cuts a time window out of big log files. Something like `logslice --from 10:02 --to 10:15 app.log`. Our billing worker writes 3-8 GB of logs a day, and when something breaks I end up doing `grep '2026-05-11T10:0' worker.log | less` and scrolling. Rust or Python? I know Python well and Rust only a bit.
== assistant +55s
Either can work; what decides it is how you will run the tool and how big the files are.

**Python**
- Fastest for you to write, and the standard library has everything.
- A plain `for line in f` loop over 3-8 GB runs at very roughly 50-150 MB/s once you parse anything per line, so a minute or more per file.
- You need a Python on every box you ssh into.

**Rust**
- One static binary you can `scp` to a server and forget about.
- A streaming reader is bound by disk speed, not by the language.

The bigger win is not the language, though. Log files are (almost) sorted by time, so you don't have to read the whole file at all: you can binary-search the byte offset where `--from` starts by seeking to the middle, skipping to the next newline, reading one timestamp and halving. A 5 GB file then costs a few dozen small reads instead of 5 GB of reading.

I'd go with Rust, in three steps:
1. `clap` for arguments, timestamp parsing, and a simple linear filter that is correct.
2. The seek-based binary search, checked against the linear filter.
3. Rotated `.gz` files and output formats.

Want me to sketch the project setup?
== user +4m
Rust then, it's a good excuse to learn it properly. Call it logslice. Yes please, sketch it.
== assistant +1m10s
Here is a starting point. Dependencies: `clap` (with the derive feature) for arguments, `chrono` for timestamps, `anyhow` for error handling in `main`.

```bash
cargo new logslice && cd logslice
cargo add clap --features derive
cargo add chrono anyhow
```

`src/main.rs`:

```rust
use clap::Parser;
use std::path::PathBuf;

/// Print the lines of a log file that fall inside a time window.
#[derive(Parser, Debug)]
#[command(name = "logslice", version)]
struct Args {
    /// Start of the window (inclusive), e.g. 10:02 or 2026-05-11T10:02:00Z
    #[arg(short, long)]
    from: Option<String>,

    /// End of the window (exclusive)
    #[arg(short, long)]
    to: Option<String>,

    /// Timestamp format at the start of each line (default: detect)
    #[arg(short, long)]
    format: Option<String>,

    /// Log files to read
    files: Vec<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    println!("{args:?}");
    Ok(())
}
```

Run `cargo run -- --from 10:02 app.log` and you should see the parsed arguments printed.
== tool +3m
$ cargo run -- --from 10:02 app.log
   Compiling logslice v0.1.0 (/home/sam/src/logslice)
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 9.84s
     Running `target/debug/logslice --from 10:02 app.log`
thread 'main' panicked at /home/sam/.cargo/registry/src/index.crates.io-6f17d22bba15001f/clap_builder-4.5.20/src/builder/debug_asserts.rs:112:17:
Command logslice: Short option names must be unique for each argument, but '-f' is in use by both 'from' and 'format'
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
== user +1m
Ha, it panics before doing anything.
== assistant +40s
My mistake: `#[arg(short)]` takes the first letter of the field name, so `from` and `format` both claim `-f`. clap checks this in debug builds (that's the `debug_asserts.rs` in the path), which is why you see a panic rather than a compile error.

Give `format` no short flag; it will be rare on the command line anyway:

```rust
    /// Timestamp format at the start of each line (default: detect)
    #[arg(long)]
    format: Option<String>,
```

So the flags are `-f/--from`, `-t/--to` and `--format`.
== user +2m
Works:

```
Args { from: Some("10:02"), to: None, format: None, files: ["app.log"] }
```

Here are a few real lines from the billing worker so you know what we're dealing with:

```
2026-05-11T10:02:13.456Z INFO  [worker-3] job 88121 started customer=c_4471 plan=pro
2026-05-11T10:02:13.502Z DEBUG [worker-3] fetched 12 invoices in 41ms
2026-05-11T10:02:14.007Z WARN  [worker-1] retrying stripe call (attempt 2/5): timeout after 5000ms
2026-05-11T10:02:14.911Z ERROR [worker-3] job 88121 failed: InvoiceTotalMismatch { expected: 12900, got: 12090 }
    at billing::reconcile::check_totals (src/reconcile.rs:88)
    at billing::worker::run_job (src/worker.rs:214)
2026-05-11T10:02:15.120Z INFO  [worker-1] job 88119 done in 2.31s
```

And the old Python service, ledger-sync, logs like this:

```
2026-05-11 10:02:13,456 INFO ledger_sync.poll: 3 new entries
```
== assistant +1m30s
Good, that tells us three things:

1. **Two timestamp formats.** RFC 3339 with milliseconds and `Z` (the worker), and Python's logging default `%Y-%m-%d %H:%M:%S,%f`-style with a comma and three digits (ledger-sync). Both sit at the very start of the line, so we only ever parse a prefix.
2. **Continuation lines.** The `    at billing::...` lines have no timestamp; they belong to the entry above. If an ERROR falls inside the window, its stack trace must come with it, and a window must never start in the middle of a trace.
3. **Everything is UTC.** Nice, no time zone guessing.

So I'd model the file as a sequence of *entries*: a timestamped line plus any following lines without a timestamp. Let's put timestamp handling in its own module, `src/ts.rs`:

```rust
use chrono::{DateTime, NaiveDateTime, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsFormat {
    /// 2026-05-11T10:02:13.456Z
    Rfc3339,
    /// 2026-05-11 10:02:13,456 (Python logging's default)
    PythonLogging,
}

impl TsFormat {
    /// The timestamp at the start of `line`, or None if the line has none.
    pub fn parse_prefix(self, line: &str) -> Option<DateTime<Utc>> {
        match self {
            TsFormat::Rfc3339 => {
                let end = line.find(' ').unwrap_or(line.len());
                DateTime::parse_from_rfc3339(&line[..end])
                    .ok()
                    .map(|t| t.with_timezone(&Utc))
            }
            TsFormat::PythonLogging => {
                let prefix = line.get(..23)?;
                NaiveDateTime::parse_from_str(prefix, "%Y-%m-%d %H:%M:%S,%3f")
                    .ok()
                    .map(|t| t.and_utc())
            }
        }
    }
}

/// Pick the format that parses most of the sample lines (at least half of them).
pub fn detect(sample: &[&str]) -> Option<TsFormat> {
    [TsFormat::Rfc3339, TsFormat::PythonLogging]
        .into_iter()
        .find(|f| sample.iter().filter(|l| f.parse_prefix(l).is_some()).count() * 2 >= sample.len())
}
```

"At least half" rather than "all" because a sample can start inside a stack trace.
== user +6m
Added it. Can you write tests for it? I want to get into the habit from the start.
== assistant +1m
Yes, and they're cheap here because everything is a pure function. Put them at the bottom of `ts.rs`:

```rust
#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(h: u32, m: u32, s: u32, ms: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 11, h, m, s).unwrap() + chrono::Duration::milliseconds(ms as i64)
    }

    #[test]
    fn rfc3339_with_millis() {
        let line = "2026-05-11T10:02:13.456Z INFO  [worker-3] job 88121 started";
        assert_eq!(TsFormat::Rfc3339.parse_prefix(line), Some(utc(10, 2, 13, 456)));
    }

    #[test]
    fn python_logging_comma_millis() {
        let line = "2026-05-11 10:02:13,456 INFO ledger_sync.poll: 3 new entries";
        assert_eq!(TsFormat::PythonLogging.parse_prefix(line), Some(utc(10, 2, 13, 456)));
    }

    #[test]
    fn continuation_line_has_no_timestamp() {
        let line = "    at billing::reconcile::check_totals (src/reconcile.rs:88)";
        assert_eq!(TsFormat::Rfc3339.parse_prefix(line), None);
        assert_eq!(TsFormat::PythonLogging.parse_prefix(line), None);
    }

    #[test]
    fn detect_prefers_the_format_that_parses() {
        let sample = ["2026-05-11 10:02:13,456 INFO a", "2026-05-11 10:02:14,001 INFO b"];
        assert_eq!(detect(&sample), Some(TsFormat::PythonLogging));
    }

    #[test]
    fn detect_tolerates_a_stack_trace_at_the_start() {
        let sample = ["    at x (src/a.rs:1)", "2026-05-11T10:02:13.456Z INFO a", "2026-05-11T10:02:14.000Z INFO b"];
        assert_eq!(detect(&sample), Some(TsFormat::Rfc3339));
    }
}
```

Don't forget `mod ts;` at the top of `main.rs`.
''', suite.add("ts::tests::rfc3339_with_millis", "ts::tests::python_logging_comma_millis",
              "ts::tests::continuation_line_has_no_timestamp", "ts::tests::detect_prefers_the_format_that_parses",
              "ts::tests::detect_tolerates_a_stack_trace_at_the_start"),
    suite.run(gap="4m", compile_s="3.02s"), r'''
== user +1m
All green. There were a bunch of "never used" warnings but I guess that's expected until main uses it.
== assistant +30s
Exactly, dead-code warnings will go away once `main` calls into `ts`. Next piece: turning `--from 10:02` into an actual instant.

Proposal for what `--from`/`--to` accept:
- a full RFC 3339 timestamp: `2026-05-11T10:02:00Z`
- a time of day: `10:02` or `10:02:30`, meaning that time **on the date of the first entry in the file**

The second form is what you'll type 95% of the time, and taking the date from the file means you never have to type it for today's log. Sound right?
== user +2m
Yes. And if only --from is given, go to the end of the file; only --to means from the start.
== assistant +1m
Makes sense. A `Window` with optional ends covers that:

```rust
use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

impl Window {
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.from.map_or(true, |f| t >= f) && self.to.map_or(true, |e| t < e)
    }
}

/// "10:02", "10:02:30" or an RFC 3339 timestamp. `day` is the date of the file's first entry.
pub fn parse_bound(text: &str, day: NaiveDate) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    for fmt in ["%H:%M:%S", "%H:%M"] {
        if let Ok(time) = NaiveTime::parse_from_str(text, fmt) {
            return Ok(day.and_time(time).and_utc());
        }
    }
    anyhow::bail!("cannot read {text:?} as a time: use HH:MM, HH:MM:SS or 2026-05-11T10:02:00Z")
}
```

The error message names the accepted forms, so someone who types `10h02` knows what to do.
== user +7m
I added tests for the bound parsing. One thing I thought of: what about --from 23:50 --to 00:10? That's a real case, the nightly invoice run starts at 23:45.
== assistant +50s
Good catch, and a decision to make. With the rule above, both times land on the same date, so `to` is before `from` and the window is empty.

Two options:
1. Treat `to <= from` as an error ("--to is before --from").
2. When *both* are times of day and `to <= from`, roll `to` over to the next day.

I'd do option 2 only for the time-of-day form: nobody writing `--from 23:50 --to 00:10` means an empty window. If both are full timestamps and `to <= from`, that is a genuine mistake, so error out there. Write the midnight test first and see it fail:

```rust
#[test]
fn window_across_midnight() {
    let day = NaiveDate::from_ymd_opt(2026, 5, 11).unwrap();
    let w = Window::parse(Some("23:50"), Some("00:10"), day).unwrap();
    assert_eq!(w.to.unwrap().to_rfc3339(), "2026-05-12T00:10:00+00:00");
}
```
''', suite.add("window::tests::time_of_day_uses_file_date", "window::tests::rfc3339_bound",
              "window::tests::bad_bound_names_accepted_forms", "window::tests::window_across_midnight",
              "window::tests::open_ended_window"),
    suite.run(gap="5m", failures={"window::tests::window_across_midnight": "src/window.rs:77:9:\n"
              "assertion `left == right` failed\n  left: \"2026-05-11T00:10:00+00:00\"\n right: \"2026-05-12T00:10:00+00:00\""}), r'''
== user +30s
Fails as expected. Where does the roll-over go, in parse_bound?
== assistant +1m
Not in `parse_bound`: a single bound doesn't know about the other one. Put it in `Window::parse`, which sees both and knows whether they were times of day:

```rust
impl Window {
    pub fn parse(from: Option<&str>, to: Option<&str>, day: NaiveDate) -> anyhow::Result<Window> {
        let from_t = from.map(|s| parse_bound(s, day)).transpose()?;
        let mut to_t = to.map(|s| parse_bound(s, day)).transpose()?;
        if let (Some(f), Some(t)) = (from_t, to_t) {
            if t <= f {
                let both_clock = is_time_of_day(from.unwrap()) && is_time_of_day(to.unwrap());
                anyhow::ensure!(both_clock, "--to ({}) is not after --from ({})", to.unwrap(), from.unwrap());
                to_t = Some(t + chrono::Duration::days(1));
            }
        }
        Ok(Window { from: from_t, to: to_t })
    }
}

fn is_time_of_day(s: &str) -> bool {
    !s.contains('T') && s.contains(':')
}
```
''', suite.add("window::tests::reversed_timestamps_are_an_error"), suite.run(gap="4m"), r'''
== user +1m
Green, and I added a test that reversed full timestamps error out. Now the actual filtering?
== assistant +1m20s
Yes. First version: read line by line, keep an `inside` flag so continuation lines follow their entry, and stop early once we pass `--to` (the file is sorted, so nothing later can match).

```rust
use std::io::{self, BufRead, BufReader, Write};

fn slice(reader: impl BufRead, fmt: TsFormat, window: Window, out: &mut impl Write) -> io::Result<u64> {
    let mut inside = false;
    let mut printed = 0;
    for line in reader.lines() {
        let line = line?;
        if let Some(t) = fmt.parse_prefix(&line) {
            if window.to.is_some_and(|end| t >= end) {
                break;
            }
            inside = window.contains(t);
        }
        if inside {
            writeln!(out, "{line}")?;
            printed += 1;
        }
    }
    Ok(printed)
}
```

In `main`: open the file, read the first 64 lines for `detect`, take the date of the first timestamp for `Window::parse`, then reopen (or seek to 0) and call `slice` with `io::stdout()`. If `detect` returns None, exit with "could not recognise the timestamp format of app.log; pass --format".
== user +9m
Done. Trying it on a copy of yesterday's full worker log (3.2 GB, about 28 million lines), I pulled it to my laptop:
== tool +2m
$ ls -lh ~/logs/worker-2026-05-10.log
-rw-r--r-- 1 sam sam 3.2G May 11 20:31 /home/sam/logs/worker-2026-05-10.log
$ time ./target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log > /tmp/slice.txt

real	0m41.212s
user	0m38.904s
sys	0m1.977s
$ wc -l /tmp/slice.txt
251346 /tmp/slice.txt
$ time grep -c '^2026-05-10T10:0' ~/logs/worker-2026-05-10.log
186201

real	0m6.087s
user	0m4.713s
sys	0m1.350s
== user +1m
41 seconds?! grep is almost 7x faster, and that's with the early exit. What's slow?
== assistant +1m30s
A few things, roughly in order of cost:

1. **`reader.lines()` allocates a new `String` per line** and validates it as UTF-8: 28 million allocations.
2. **`parse_from_rfc3339` on every line.** chrono's parser is careful and general; we call it 28 million times.
3. **`writeln!` to an unlocked, line-buffered stdout.** Each `println!`-style write takes the stdout lock, and with a 250k-line window that adds up.

Fixes:

1. Reuse one buffer: `read_until(b'\n', &mut buf)` into a `Vec<u8>` that you `clear()` each time. Work on bytes; only the timestamp prefix needs to be text.
2. Skip parsing entirely for RFC 3339: when every timestamp has the same width and ends in `Z`, **byte order is time order**. `2026-05-11T10:02:13.456Z` < `2026-05-11T10:15:00.000Z` compares the same as strings as it does as instants. So format the window bounds once in the file's exact shape and compare the first 24 bytes with `memcmp`.
3. Lock stdout once and wrap it: `let mut out = BufWriter::new(io::stdout().lock());`.

The lexical trick needs a guard: only use it when `detect` saw fixed-width stamps (same length, `Z` suffix, in the sample). Otherwise fall back to parsing. The ledger-sync format also compares correctly as bytes, by the way: `2026-05-11 10:02:13,456` is fixed-width and big-endian too.
== user +12m
Let me try 1 and 3 first, then 2 separately, so I can see what each buys.
== tool +3m
$ cargo build --release && time ./target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log > /tmp/slice.txt
    Finished `release` profile [optimized] target(s) in 11.40s

real	0m9.794s
user	0m8.118s
sys	0m1.660s
== user +30s
9.8s with the buffer reuse and BufWriter. Now the byte compare.
== assistant +1m10s
Here's the shape of it. A `Key` is the bound rendered the way the file writes timestamps:

```rust
/// A window bound rendered in the file's own timestamp layout, so that
/// comparing line prefixes as bytes is the same as comparing instants.
pub struct Key(Vec<u8>);

impl Key {
    pub fn new(t: DateTime<Utc>, fmt: TsFormat) -> Key {
        let s = match fmt {
            TsFormat::Rfc3339 => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
            TsFormat::PythonLogging => t.format("%Y-%m-%d %H:%M:%S,%3f").to_string(),
        };
        Key(s.into_bytes())
    }

    /// Compare with the start of `line`; None if the line is too short to hold a stamp.
    pub fn cmp_line(&self, line: &[u8]) -> Option<std::cmp::Ordering> {
        line.get(..self.0.len()).map(|p| p.cmp(&self.0[..]))
    }
}
```

Note `cmp_line` alone can't tell a continuation line from a timestamped one (a stack-trace line just compares as "less", since a space sorts before digits). So you still need a cheap "does this line start with a timestamp" check: for RFC 3339, `line.len() >= 24 && line[4] == b'-' && line[10] == b'T' && line[23] == b'Z'` is enough in practice.
== tool +8m
$ cargo build --release && time ./target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log > /tmp/slice.txt
    Finished `release` profile [optimized] target(s) in 10.92s

real	0m3.902s
user	0m2.311s
sys	0m1.583s
$ cmp /tmp/slice.txt /tmp/slice-linear.txt && echo same
same
== user +1m
3.9s, faster than grep now, and identical output to the slow version. I kept the old output around to compare, as you can see.
== assistant +45s
That's exactly the right habit: the slow, obviously-correct version is the oracle for every optimisation after it. Worth making that permanent: keep `slice_parse` (the chrono path) in the code and add a test that runs both on a generated file and asserts byte-identical output. We'll want the same oracle for the binary search tomorrow.

Where the remaining 3.9 s goes: we still read 3.2 GB up to 10:15 because the window is late in the day; `sys 1.58s` is mostly reading. The binary search removes that part: we'll jump straight to 10:02.
''', suite.add("slice::tests::lexical_matches_parsed_on_generated_log", "slice::tests::continuation_lines_follow_entry",
              "slice::tests::stops_after_window_end"), suite.run(gap="14m", secs="0.31s"), r'''
== user +2m
Added the oracle test plus two more, all pass. Calling it a night. Commit message?
== assistant +30s
Something like:

```
Linear slicer with byte-order timestamp compare

- ts: detect RFC 3339 / Python logging stamps, parse prefixes
- window: --from/--to as HH:MM[:SS] (date of first entry) or RFC 3339;
  time-of-day windows roll over midnight
- slice: reuse line buffer, BufWriter on locked stdout,
  compare stamps as bytes when the layout is fixed-width
- 3.2 GB file, 10:02-10:15: 41.2s -> 3.9s (grep -c: 6.1s)
```

Tomorrow: binary search on byte offsets.
== tool +2m
$ git add -A && git commit -q -F /tmp/msg.txt && git log --oneline
4e1c2a9 (HEAD -> main) Linear slicer with byte-order timestamp compare
''']

DAY2 = [r'''
@ 2026-05-12T08:51:00Z
== user
Morning. Binary search time. How should I structure it so it's testable?
== assistant +1m20s
Morning! Keep it generic over `Read + Seek` so tests can use `std::io::Cursor<Vec<u8>>` and the real thing uses `File`. The job of the search is narrow: **return the byte offset of the first entry whose timestamp is >= the key**. Printing stays in `slice`, which then runs from that offset.

The loop:

1. `lo = 0`, `hi = file length`. Invariant: the answer is in `[lo, hi]`, and `lo` is always the start of a line.
2. While `hi - lo` is bigger than some threshold (say 64 KiB): take `mid`, seek there, throw away the rest of the partial line, then read forward to the first line that *has* a timestamp (skipping stack-trace lines).
3. If that stamp is `< key`, the answer is after it: `lo` = the start of the line after it. Otherwise `hi = mid`.
4. When the range is small, scan linearly from `lo`.

```rust
pub fn find_start<R: BufRead + Seek>(r: &mut R, len: u64, key: &Key, fmt: TsFormat) -> io::Result<u64> {
    let (mut lo, mut hi) = (0u64, len);
    let mut buf = Vec::with_capacity(512);
    while hi - lo > LINEAR_BELOW {
        let mid = lo + (hi - lo) / 2;
        r.seek(SeekFrom::Start(mid))?;
        let mut pos = mid + r.read_until(b'\n', &mut buf)? as u64; // skip the partial line
        loop {
            buf.clear();
            let n = r.read_until(b'\n', &mut buf)? as u64;
            if fmt.is_stamp(&buf) {
                if key.cmp_line(&buf) == Some(Ordering::Less) {
                    lo = pos + n;
                } else {
                    hi = mid;
                }
                break;
            }
            pos += n;
        }
    }
    linear_start(r, lo, key, fmt)
}
```

`LINEAR_BELOW` as a `const` so tests can make it tiny and exercise the loop on small inputs.
== user +18m
Written, plus a test that builds a 10k-line log in memory and checks find_start against a plain linear search for 200 random keys. I set LINEAR_BELOW to 16 under cfg(test).
''', suite.add("seek::tests::agrees_with_linear_search", "seek::tests::finds_first_line_at_or_after",
              "seek::tests::from_before_first_entry", "seek::tests::from_after_last_entry",
              "seek::tests::skips_stack_trace_lines"),
    suite.run(gap="3m", failures={"seek::tests::agrees_with_linear_search": "src/seek.rs:141:13:\n"
              "assertion `left == right` failed: key 2026-05-12T08:00:00.913Z\n  left: 486122\n right: 486066",
              "seek::tests::finds_first_line_at_or_after": "src/seek.rs:118:9:\n"
              "assertion `left == right` failed\n  left: 112\n right: 56"}, secs="0.08s"), r'''
== user +1m
Two failures, and weirdly the random test fails on a few keys only. In the small one, 112 vs 56: each line is 56 bytes in that test, so it's one line too far.
== assistant +1m10s
One line too far, only for some keys: that's the `mid` landing **exactly at the start of a line**. We then "skip the partial line", but there is no partial line: we skip a whole one. If that skipped line was the answer, the search steps past it, and the final linear scan starts after it.

Fix: seek to `mid - 1` instead. If the byte at `mid - 1` is the newline that ends the previous line, `read_until` consumes just that byte and we are at `mid`, the line start; otherwise we skip the rest of the partial line as before.

```rust
        let mid = lo + (hi - lo) / 2;
        r.seek(SeekFrom::Start(mid - 1))?;   // mid > lo >= 0, so mid >= 1
        let mut pos = mid - 1 + r.read_until(b'\n', &mut buf)? as u64;
```

`mid - 1` can't underflow: the loop only runs while `hi - lo > LINEAR_BELOW`, so `mid > lo >= 0`.
''', suite.run(gap="6m", secs="0.05s", cmd="cargo test seek::tests::agrees", only="seek::tests::agrees"), r'''
== user +2m
The random one agrees now. But the full suite hangs, I had to Ctrl-C it:

```
test seek::tests::agrees_with_linear_search ... ok
test seek::tests::finds_first_line_at_or_after ... ok
test seek::tests::from_after_last_entry has been running for over 60 seconds
```
== assistant +1m
That one's an infinite loop, and I can see it in the code I gave you: the inner `loop` never checks for end of file. When `--from` is after the last entry, a probe eventually lands in the last line, skips it, and then `read_until` returns `Ok(0)` forever: an empty buffer is not a stamp, so we `continue` reading zero bytes.

EOF in the probe means "no entry at or after mid", which for the search is the same as "too late": move `hi` down.

```rust
        loop {
            buf.clear();
            let n = r.read_until(b'\n', &mut buf)? as u64;
            if n == 0 {
                hi = mid; // nothing stamped after mid
                break;
            }
            ...
```

Also cap the skip: if a probe reads more than, say, 10 000 lines without a stamp, something is odd (a huge binary blob in the log?); return an error naming the offset rather than reading the whole file.
''', suite.run(gap="5m", secs="0.09s"), r'''
== user +1m
All pass. Trying it on the real file now.
== tool +2m
$ cargo build --release -q && time ./target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log > /tmp/slice-seek.txt

real	0m0.041s
user	0m0.012s
sys	0m0.027s
$ cmp /tmp/slice-seek.txt /tmp/slice-linear.txt
/tmp/slice-seek.txt /tmp/slice-linear.txt differ: byte 1, line 1
$ diff <(head -5 /tmp/slice-linear.txt) <(head -5 /tmp/slice-seek.txt)
1,3d0
< 2026-05-10T10:02:00.004Z INFO  [worker-2] job 80512 started customer=c_1180 plan=team
< 2026-05-10T10:01:59.998Z DEBUG [worker-4] fetched 3 invoices in 12ms
< 2026-05-10T10:02:00.011Z INFO  [worker-4] job 80513 started customer=c_9051 plan=pro
== user +40s
41 ms is amazing, but the output differs from the linear version: it's missing the first lines. And look at the timestamps: 10:02:00.004 then 10:01:59.998. The log isn't sorted?!
== assistant +1m30s
Right: it's *almost* sorted. Four worker threads write to one file; each formats its timestamp and then takes the write lock, so a line stamped a few milliseconds earlier can land after a later one. The linear filter doesn't care (it tests every entry against the window), but binary search assumes sortedness. Here the probe hit the `10:01:59.998` line, saw "less than 10:02", and moved `lo` past it, and past the `10:02:00.004` line just before it.

The diff also shows a problem in the *linear* output: it printed the `10:01:59.998` line, which is outside `[10:02, 10:15)`. Before going on, can you grep those lines with one line of context in the original file, so we know the order is real and not an artefact of the slicer?
== tool +2m
$ grep -n -B1 -A1 '10:01:59.998Z DEBUG \[worker-4\]' ~/logs/worker-2026-05-10.log | head
16283090-2026-05-10T10:02:00.004Z INFO  [worker-2] job 80512 started customer=c_1180 plan=team
16283091:2026-05-10T10:01:59.998Z DEBUG [worker-4] fetched 3 invoices in 12ms
16283092-2026-05-10T10:02:00.011Z INFO  [worker-4] job 80513 started customer=c_9051 plan=pro
== assistant +1m10s
Thanks. So the linear output printed a line stamped `10:01:59.998`, which is outside `[10:02, 10:15)`. That's a second bug, in the lexical fast path: `Key::cmp_line` compares the first 24 bytes, which is right, but the fast path decides `inside` only when it **enters** the window and then keeps printing until it sees a stamp `>= to`. It never re-checks `>= from` for later lines. With a sorted file that's equivalent; with a nearly-sorted one it isn't.

Two decisions to make, then:

1. **What should the output be for out-of-order lines near the edges?** I'd say: exactly the entries whose stamp is in the window, in file order. That's what a user expects when they compare with grep.
2. **How does the search cope?** Search for `from - slack` instead of `from`, then filter every entry with `contains()`. Likewise, stop reading at the first stamp `>= to + slack`. The slack is how out-of-order the file can be. Measure it rather than guess; this awk prints the largest backwards jump in milliseconds:

```bash
awk '{ t = substr($1, 12, 12); split(t, a, ":"); ms = (a[1]*3600 + a[2]*60 + a[3]) * 1000;
       if (ms < prev - max) max = prev - ms; if (ms > prev) prev = ms }
     END { print max " ms" }' ~/logs/worker-2026-05-10.log
```
== tool +1m30s
$ awk '...' ~/logs/worker-2026-05-10.log
1847 ms
== user +1m
1.8 seconds worst case over a whole day. So a default slack of 5s?
== assistant +50s
5 s is a good default: nearly 3x the worst you've seen, and it costs nothing measurable (we read at most 5 extra seconds of log on each side, a few MB at your rate). Make it a flag, `--slack <DURATION>` with default `5s`, and say in `--help` what it's for: "entries logged more than this out of order near the window edges may be missed". `--slack 0` gives the strict behaviour for logs that are truly sorted.

And the fix to the fast path: the lexical compare still works per line, it just has to check both ends every time: `key_from.cmp_line(line) != Less && key_to.cmp_line(line) == Less`.
''', suite.add("slice::tests::out_of_order_entries_near_from", "slice::tests::out_of_order_entries_near_to",
              "window::tests::slack_parses_units"),
    suite.run(gap="16m", secs="0.12s", failures={"slice::tests::out_of_order_entries_near_to": "src/slice.rs:203:9:\n"
              "assertion `left == right` failed: missing entries stamped before --to\n  left: 4\n right: 5"}), r'''
== user +1m
I wrote the out-of-order tests first. The `near_to` one fails: 4 entries instead of 5. I think I stop at the first stamp >= to without the slack.
== assistant +30s
Yes, that's it: the early exit has to be `t >= to + slack`, and *inside* that extra stretch you keep filtering with `contains()`, so late entries are still excluded from output; you just don't stop reading yet.
''', suite.run(gap="4m", secs="0.12s"), r'''
== tool +3m
$ cargo build --release -q && ./target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log > /tmp/slice-seek.txt
$ ./target/release/logslice --slack 0 --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log | wc -l
251337
$ awk -v a='2026-05-10T10:02' -v b='2026-05-10T10:15' '$1 ~ /^2026/ { ok = ($1 >= a && $1 < b) } ok' ~/logs/worker-2026-05-10.log > /tmp/slice-awk.txt
$ cmp /tmp/slice-seek.txt /tmp/slice-awk.txt && echo same
same
== user +1m
Identical to an independent awk version. And with --slack 0 we lose 7 lines, which matches the theory.
== assistant +40s
That's a solid result: an independent oracle (awk) and the search agree, and `--slack 0` shows exactly why the slack exists. Regenerate `/tmp/slice-linear.txt` from the fixed linear path too, so all three agree, and it's worth a commit.

Suggested message:

```
Binary search for the window start

- seek::find_start: bisect byte offsets, probe = first stamped line after mid
- fix: mid landing on a line start skipped that line (seek to mid-1)
- fix: probe looped forever at EOF
- --slack (default 5s): logs are only nearly sorted (worst seen: 1847 ms)
- fast path re-checks both window ends per entry
- 3.2 GB, 10:02-10:15: 3.9s -> 0.041s
```
== user +3h10m
Back after lunch. I'm refactoring the probe into a struct so it can keep its buffer between calls, and the borrow checker hates me:

```
error[E0503]: cannot use `self.pos` because it was mutably borrowed
  --> src/seek.rs:64:13
   |
61 |             let line = self.next_line()?;
   |                        ---- `*self` is borrowed here
...
64 |             self.pos += line.len() as u64;
   |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ use of borrowed `*self`
65 |             if self.fmt.is_stamp(line) {
   |                                  ---- borrow later used here
```

next_line is `fn next_line(&mut self) -> io::Result<&[u8]>`, it reads into self.buf and returns it.
== assistant +1m40s
This one is a classic, and the compiler is being precise rather than fussy. `next_line(&mut self) -> &[u8]` says: "the returned slice borrows **all of `self`** mutably, for as long as the slice lives". The signature can't express "only `self.buf`", so while `line` is alive, nothing else in `self` may be touched, not even `self.pos`, which `next_line` never looks at.

Three ways out, from least to most restructuring:

1. **Let `next_line` do the bookkeeping.** It already knows the length; have it advance `self.pos` itself before returning the slice. Then the caller never needs `self.pos` while holding `line`.
2. **Copy what you need out of the borrow first**, then drop it:
   ```rust
   let (n, stamped) = { let line = self.next_line()?; (line.len() as u64, self.fmt.is_stamp(line)) };
   self.pos += n;
   ```
   (`self.fmt` inside the block is still a use of `self` while borrowed, so this variant needs `fmt` copied into a local first: `let fmt = self.fmt;`.)
3. **Borrow disjoint fields.** Make `next_line` a free function taking `(&mut R, &mut Vec<u8>)`; Rust does track borrows of distinct *fields* separately, it just can't see through a method call.

I'd take option 1: it's the natural owner of that bookkeeping, and it removes a class of "forgot to advance pos" bugs.
== user +12m
Went with option 1, compiles, tests pass. It's also nicer to read.

Unrelated question: with the binary search, do I still need the lexical trick? The search only parses ~20 lines now.
== assistant +1m
For the *search*, no: 20 chrono parses are nothing. For the *scan of the window itself*, it still matters when the window is large. A 10:00-18:00 slice of that file is ~2 GB of output, and there the per-line parse cost is what you measured yesterday (9.8 s vs 3.9 s).

Worth keeping, but make it an internal detail: `Stamp::Lexical(Key)` vs `Stamp::Parsed(TsFormat)` chosen once per file, with the oracle test checking both produce identical output. Then nobody has to think about it again.

How many probes does a search take on the 3.2 GB file, by the way? Worth printing under `RUST_LOG=debug` or a hidden `--explain` flag; it makes the next performance question easy to answer.
== user +25m
Added a hidden --explain flag.

```
$ ./target/release/logslice --explain --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log > /dev/null
worker-2026-05-10.log: 3,398,215,604 bytes, format rfc3339 (lexical), slack 5s
search --from: 17 probes, 23 lines read, start at byte 1,946,081,377
scan: 250,912 entries printed (251,344 lines), 251,380 read, stopped at 10:15:05.002Z
```
== assistant +45s
That reads well. 17 probes is `log2(3.4e9 / 64 KiB)` ≈ 15.6 plus the last couple of short ones, as expected; 23 lines read means the probes almost never landed in stack traces.

Since it's there, I'd un-hide it later as `--explain` in the README: people debugging "why is my slice empty" will want the `start at byte` and `stopped at` lines.

I think the core is done. Next session: `.gz` rotated files?
== user +5m
Yes, Thursday probably. Thanks!
== assistant +25s
See you Thursday!
@ 2026-05-12T20:41:00Z
== user
Quick one tonight, I got curious: does the search time depend on where the window is in the file? I ran hyperfine over five windows.
== tool +2m
$ hyperfine -N -w 3 --output=null -L from 00:00,06:00,12:00,18:00,23:55 './target/release/logslice --from {from} --to {from}:59 /home/sam/logs/worker-2026-05-10.log' 2>&1 | grep -E 'Benchmark|Time'
Benchmark 1: ./target/release/logslice --from 00:00 --to 00:00:59 /home/sam/logs/worker-2026-05-10.log
  Time (mean ± σ):       4.1 ms ±   0.3 ms    [User: 1.2 ms, System: 2.8 ms]
Benchmark 2: ./target/release/logslice --from 06:00 --to 06:00:59 /home/sam/logs/worker-2026-05-10.log
  Time (mean ± σ):       4.3 ms ±   0.4 ms    [User: 1.2 ms, System: 3.0 ms]
Benchmark 3: ./target/release/logslice --from 12:00 --to 12:00:59 /home/sam/logs/worker-2026-05-10.log
  Time (mean ± σ):       6.0 ms ±   0.5 ms    [User: 1.9 ms, System: 4.0 ms]
Benchmark 4: ./target/release/logslice --from 18:00 --to 18:00:59 /home/sam/logs/worker-2026-05-10.log
  Time (mean ± σ):       5.2 ms ±   0.4 ms    [User: 1.6 ms, System: 3.5 ms]
Benchmark 5: ./target/release/logslice --from 23:55 --to 23:55:59 /home/sam/logs/worker-2026-05-10.log
  Time (mean ± σ):       3.6 ms ±   0.3 ms    [User: 1.0 ms, System: 2.5 ms]
== user +1m
These are one-minute windows, not 13 like before. Anyway: 3.6 to 6 ms everywhere.
== assistant +1m20s
**The position barely matters**, as binary search promises: 17 probes whatever the offset. What varies is the *amount printed*: noon is the busiest minute of the day for the billing worker, so there are more lines to write. The 13-minute window earlier cost ~40 ms mostly for the same reason: it's dominated by output, not by the search.

One more thing these numbers hide: they're all on a **warm page cache**. After the first run, the 17 probe pages are in memory. For a cold cache (the realistic case during an incident on a host that hasn't touched the file), drop the cache first and measure once: `sync && echo 3 | sudo tee /proc/sys/vm/drop_caches`.
== tool +3m
$ sync && echo 3 | sudo tee /proc/sys/vm/drop_caches > /dev/null && time ./target/release/logslice --from 12:00 --to 12:00:59 ~/logs/worker-2026-05-10.log > /dev/null

real	0m0.027s
user	0m0.002s
sys	0m0.009s
== user +1m
27 ms cold. That's an NVMe laptop though. The log hosts have spinning disks.
== assistant +50s
On a spinning disk each probe is roughly one seek, around 8-10 ms, so ~17 probes is ~150 ms cold, plus reading the window. Still far better than a full scan at ~150 MB/s (over 20 s for this file). Measure it there on Thursday to be sure; if probes ever dominate, the fix is to stop the bisection earlier (a bigger `LINEAR_BELOW`, say 1 MiB, trades a few probes for one sequential read).
== user +2m
Noted for Thursday. Good night for real now.
== assistant +25s
Good night!
''']

DAY3 = [r'''
@ 2026-05-14T17:48:00Z
== user
Thursday! First the spinning-disk numbers you asked for on Tuesday. I'm on the log host (it doubles as our old build box, so it has a Rust toolchain), cold cache each time:
== tool +2m
$ for below in 64K 1M; do sync; echo 3 | sudo tee /proc/sys/vm/drop_caches > /dev/null; LOGSLICE_LINEAR_BELOW=$below ./target/release/logslice --explain --from 12:00 --to 12:00:59 /var/log/billing/worker.log.1 2>&1 >/dev/null | grep -E 'search|elapsed'; done
search --from: 17 probes, 21 lines read, start at byte 1,702,448,913
elapsed: 171 ms
search --from: 13 probes, 16 lines read, start at byte 1,702,448,913
elapsed: 129 ms
== user +1m
171 ms with 64 KiB, 129 ms with 1 MiB. I added a hidden env var to try it, plus an "elapsed" line in --explain.
== assistant +1m
That matches the estimate nicely: 17 probes at ~9 ms per seek is ~150 ms, plus reading the minute of output. With 1 MiB, four fewer seeks (~36 ms) minus one extra sequential MiB (~7 ms at ~150 MB/s) gives roughly the 40 ms you saved.

I'd make 1 MiB the default: on SSDs the difference is invisible (microseconds either way), on spinning disks it's a 25% win. Keep the env var out of the release though, or document it; hidden knobs tend to become folklore.
== user +2m
1 MiB default, env var removed. OK, the real topic for today: rotated logs. logrotate keeps worker.log and worker.log.1 plain, then worker.log.2.gz up to worker.log.14.gz. Most incidents I dig into are a few days old, so the .gz ones matter. Can we binary-search inside a gzip file?
== assistant +1m30s
Not directly. A deflate stream has no random access: to get to uncompressed byte N you have to decompress everything before it, because each block refers back to the previous 32 KiB of output. So the options are:

1. **Decompress sequentially and filter**, like the linear path, stopping at `to + slack`. Cost grows with how late in the file the window is. No new ideas, works today.
2. **Build a seek index** the way zlib's `zran.c` example does: while decompressing once, save a checkpoint (bit offset + the 32 KiB window) every few MB of output, store it next to the file, and later start decompressing at the nearest checkpoint. Fast repeat queries, but it's real work: index files, invalidation, ~32 KiB per checkpoint.
3. **Change what logrotate writes**: block-compressed formats such as BGZF (`bgzip`) or seekable zstd can be searched directly. That's an infrastructure change, not a logslice change.

I'd do 1 now and write 2 and 3 down for later. Most windows you look at are probably during the working day, so early exit already helps a lot.
== user +3m
Agreed, 1 for now. I'll note 3 for the ops channel. Which crate?
== assistant +1m
`flate2`. One detail matters: use **`MultiGzDecoder`**, not `GzDecoder`. A gzip file can contain several members back to back (`cat a.gz b.gz > c.gz` is a valid gzip file, and some rotation setups produce exactly that); `GzDecoder` stops silently after the first member, which would look like "the log ends at 03:12".

Open files through one function that sniffs the magic bytes instead of trusting the extension:

```rust
pub enum Source {
    Plain(BufReader<File>),
    Gzip(BufReader<MultiGzDecoder<File>>),
}

pub fn open(path: &Path) -> anyhow::Result<Source> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic)?;
    file.rewind()?;
    Ok(if n == 2 && magic == [0x1f, 0x8b] {
        Source::Gzip(BufReader::with_capacity(256 * 1024, MultiGzDecoder::new(file)))
    } else {
        Source::Plain(BufReader::with_capacity(256 * 1024, file))
    })
}
```

`Plain` goes through `find_start` + scan; `Gzip` goes straight to the scan from offset 0.
== user +2m
Why sniff? Our gz files always end in .gz.
== assistant +40s
Today they do. Sniffing costs one 2-byte read and removes two failure modes: someone renames `worker.log.3.gz` to `incident.log` to attach it to a ticket (we'd print binary garbage), or a file ends in `.gz` but isn't compressed yet (flate2 fails with "invalid gzip header", which reads like corruption). It also means `logslice` works the same on `zcat`-ed copies.
''', suite.add("source::tests::sniffs_gzip_by_magic", "source::tests::plain_file_named_gz",
              "source::tests::concatenated_gzip_members"),
    suite.run(gap="15m", secs="0.21s", failures={"source::tests::concatenated_gzip_members": "src/source.rs:97:9:\n"
              "assertion `left == right` failed\n  left: 500\n right: 1000"}), r'''
== user +1m
And of course I used GzDecoder because that's what the first docs example I found used. The concatenated test caught it: 500 lines instead of 1000.
== assistant +20s
That's what the test is for. Swap in `MultiGzDecoder` and it should pass; the API is identical.
''', suite.run(gap="2m", secs="0.20s"), r'''
== tool +6m
$ ls -lh /var/log/billing/worker.log.5.gz
-rw-r----- 1 billing billing 612M May 10 00:00 /var/log/billing/worker.log.5.gz
$ time ./target/release/logslice --from 10:02 --to 10:15 /var/log/billing/worker.log.5.gz > /tmp/gz-morning.txt

real	0m7.913s
user	0m7.402s
sys	0m0.488s
$ time ./target/release/logslice --from 21:00 --to 21:30 /var/log/billing/worker.log.5.gz > /tmp/gz-evening.txt

real	0m16.804s
user	0m15.977s
sys	0m0.801s
$ time sh -c "zcat /var/log/billing/worker.log.5.gz | grep -c '^2026-05-09T21:[0-2]'"
160544

real	0m17.911s
user	0m19.630s
sys	0m3.118s
== user +1m
So we're as fast as zcat | grep, which is the floor for this approach I guess. 17s for an evening window is annoying though.
== assistant +1m10s
Yes, we're now decompression-bound: 4.1 GB of output in 16.8 s is about 245 MB/s, which is about what a single core inflates.

One cheap thing to try: flate2's default backend is `miniz_oxide` (pure Rust, portable). It can instead use **zlib-ng**, which is usually quite a bit faster at inflating. It's a Cargo feature:

```toml
flate2 = { version = "1", default-features = false, features = ["zlib-ng"] }
```

The catch: zlib-ng is C, built with CMake, so you need `cmake` and a C compiler wherever you build. Try it and measure before deciding.
== tool +4m
$ cargo build --release
   Compiling libz-ng-sys v1.1.16
error: failed to run custom build command for `libz-ng-sys v1.1.16`

Caused by:
  process didn't exit successfully: `/home/sam/src/logslice/target/release/build/libz-ng-sys-8a1f0e6c2b9d7734/build-script-build` (exit status: 101)
  --- stderr
  thread 'main' panicked at /home/sam/.cargo/registry/src/index.crates.io-6f17d22bba15001f/cmake-0.1.51/src/lib.rs:1106:5:

  failed to execute command: No such file or directory (os error 2)
  is `cmake` not installed?
== user +30s
Right, cmake. Installing.
== tool +3m
$ sudo apt-get install -y cmake > /dev/null && cargo build --release -q && time ./target/release/logslice --from 21:00 --to 21:30 /var/log/billing/worker.log.5.gz > /tmp/gz-evening-ng.txt

real	0m11.204s
user	0m10.389s
sys	0m0.790s
$ cmp /tmp/gz-evening.txt /tmp/gz-evening-ng.txt && echo same
same
== user +1m
16.8s -> 11.2s, same output. But I'm worried about the cmake dependency for Windows and Mac builds later, and for my teammates building it themselves.
== assistant +1m
Reasonable worry, and there's a standard way to have both: make it an **optional feature of logslice** that turns on zlib-ng, default off.

```toml
[features]
default = []
fast-gzip = ["flate2/zlib-ng"]

[dependencies]
flate2 = "1"
```

flate2 documents how it picks a backend when more than one is enabled; check with `cargo tree -e features -i flate2` and a timing run that the feature build really uses zlib-ng. Then:

- `cargo build --release` anywhere: pure Rust, no cmake, ~245 MB/s.
- `cargo build --release --features fast-gzip` for the Linux binaries you deploy to the log hosts: ~365 MB/s.

Document it in the README under "Building".
== user +5m
Done that way. Next: several files at once. `logslice --from 10:02 --to 10:15 /var/log/billing/worker.log*` gives them to me in shell glob order: worker.log, worker.log.1, worker.log.10.gz, worker.log.11.gz, ..., worker.log.2.gz. So time order is all over the place.
== assistant +1m20s
Glob order is lexicographic, and rotation numbers don't sort that way. Don't sort by name at all: **sort by each file's first timestamp**. Reading the first few lines of each file is cheap, even for `.gz` (decompress a few KB).

Then two things come almost for free:
- **Skip files that can't overlap the window.** Since the files are in time order, file *i* ends roughly where file *i+1* begins. If the next file's first stamp is `<= from - slack`, file *i* is entirely before the window; if a file's first stamp is `>= to + slack`, it and everything after it are too late.
- **Early exit across files** once we pass `to + slack`.

For a three-day-old incident across 15 files, that means opening 15 files for one line each, then reading one or two of them.
== user +2m
What does --from 10:02 mean with 15 files though? Each file is a different day.
== assistant +1m
Good question, and it needs a decision, because today "time of day" means "on the date of the file's first entry".

With several files spanning several days, `10:02` is ambiguous. Options:
1. Use the date of the earliest file (surprising: you'd get a two-week-old window).
2. Use the latest file's date (surprising in the other direction).
3. **Refuse and say what to type**: `--from 10:02 is ambiguous: the files span 2026-04-30 to 2026-05-14; give a date, e.g. --from '2026-05-12 10:02'`.

I'd pick 3. An error that tells you the exact fix costs five seconds; a silently wrong window can cost an hour. And if all files are from one day, time of day keeps working. Also accept `'2026-05-12 10:02'` with a space: it's what people type, and RFC 3339's `T` is awkward.
== user +4m
Yes, 3. Writing it now.
''', suite.add("files::tests::orders_by_first_timestamp", "files::tests::skips_files_before_window",
              "files::tests::stops_after_window_across_files", "window::tests::ambiguous_time_of_day_across_days",
              "window::tests::date_space_time_form"),
    suite.run(gap="31m", secs="0.26s", failures={"files::tests::skips_files_before_window": "src/files.rs:162:9:\n"
              "assertion `left == right` failed: files read\n  left: [\"w.log.3.gz\", \"w.log.2.gz\", \"w.log.1\"]\n right: [\"w.log.2.gz\", \"w.log.1\"]"}), r'''
== user +1m
One failure: it reads w.log.3.gz even though the window starts in w.log.2.gz. My skip condition is `next.first <= from - slack`.
== assistant +50s
The condition is right; I suspect the *data* in the test makes it false. If the window starts near midnight, within `slack` of w.log.2.gz's first entry, then w.log.3.gz's tail could hold out-of-order entries that belong to the window, and reading it is correct. What are the test's times?
== user +2m
Oh. w.log.2.gz starts at 00:00:00.120 and my window starts at 00:00:03. So 3.gz legitimately has to be read, within the slack. The test is wrong, not the code.
== assistant +30s
Exactly. Keep that case (it's a good one: rename it `reads_previous_file_within_slack` and assert 3.gz *is* read) and add a separate one with the window at 10:00 that asserts it is skipped.
''', suite.add("files::tests::reads_previous_file_within_slack"), suite.run(gap="7m", secs="0.27s"), r'''
== tool +4m
$ time ./target/release/logslice --from '2026-05-11 23:50' --to '2026-05-12 00:10' /var/log/billing/worker.log* > /tmp/midnight.txt

real	0m0.394s
user	0m0.203s
sys	0m0.190s
$ ./target/release/logslice --explain --from '2026-05-11 23:50' --to '2026-05-12 00:10' /var/log/billing/worker.log* > /dev/null
15 files, ordered by first timestamp; 13 skipped (outside window), 2 read
worker.log.3.gz: gzip, scan from start, 41,227 lines read
worker.log.2.gz: gzip, scan from start, stopped at 2026-05-12T00:10:05.031Z
== user +1m
0.39s for the midnight window across 15 files. The explain output is nice. Hmm wait, it says it read worker.log.3.gz "from start", that's the whole day file just to get the last 10 minutes. 41k lines read though? A normal day is 28 million.
== assistant +1m
3.gz is the older file (the 11th), 2.gz the newer (the 12th), and the window 23:50-00:10 starts near the end of 3.gz. For a gzip file, "scan from start" means decompressing the whole day to reach 23:50, so that part is expected.

What doesn't add up is the timing: decompressing a normal day takes 11-17 s, and the whole command took 0.39 s. Either "lines read" counts something narrower than we think (worth checking in your explain code: if it only counts lines examined inside the window, call it that), or 3.gz is unusually small. What size is it?
== tool +1m
$ ls -lh /var/log/billing/worker.log.2.gz /var/log/billing/worker.log.3.gz
-rw-r----- 1 billing billing 598M May 13 00:00 /var/log/billing/worker.log.2.gz
-rw-r----- 1 billing billing 2.1M May 12 00:00 /var/log/billing/worker.log.3.gz
== user +1m
Ha, 2.1M. On the 11th the worker was down most of the day (that was the outage), so the log is tiny. OK, mystery solved, nothing wrong.
== assistant +40s
Good, nothing wrong then, and a nice reminder that `--explain` should print sizes. I'd add `(2.1 MB compressed)` to each file line; it would have answered this in one glance. And I'd still rename "lines read" to "lines examined" if that's what it counts.
== user +15m
Both done. Last thing for today: someone on the team asked whether mmap would make it faster. Should I try memmap2?
== assistant +1m20s
Worth a measurement, but here's what I'd expect and why I'd probably say no:

- **The search**: 17 probes. mmap saves a handful of syscalls; nothing to win.
- **The scan**: on a large window, mmap avoids copying data from the page cache into our buffer. That's maybe 5-15% on a hot cache.
- **The cost**: mapping a file is `unsafe` in Rust for a real reason. If the file is **truncated** while mapped, touching the vanished pages raises `SIGBUS` and the process dies. And logrotate's `copytruncate` mode does exactly that to the live `worker.log`. Does your logrotate config use `copytruncate`?
== tool +1m
$ grep -A8 'billing' /etc/logrotate.d/billing-worker
/var/log/billing/worker.log {
    daily
    rotate 14
    compress
    delaycompress
    copytruncate
    missingok
    notifempty
}
== user +1m
It does, copytruncate. I measured anyway, 10:00-18:00 window: 3.1s with read, 2.8s with mmap (on the 05-10 copy on my laptop).
== assistant +45s
Then I'd not do it: ~10% on a multi-second query, against a crash (not an error, a `SIGBUS`) if someone runs logslice on the live `worker.log` at midnight. Write the decision down in the code where someone would add mmap, so the next person doesn't redo the experiment:

```rust
// Not mmap: measured ~10% faster on large windows (3.1s -> 2.8s, May 2026),
// but logrotate's copytruncate shrinks the live file under a mapping, which is
// SIGBUS, not an io::Error. Revisit only if logs stop being truncated in place.
```
== user +3m
Perfect. Commit and done for today.
== tool +1m
$ git commit -qam "gzip input, multiple files ordered by first timestamp, --explain sizes" && git log --oneline | head -3
b71d0e3 (HEAD -> main) gzip input, multiple files ordered by first timestamp, --explain sizes
2f48a6c Binary search for the window start
4e1c2a9 Linear slicer with byte-order timestamp compare
''']

DAY4 = [r'''
@ 2026-05-15T09:34:00Z
== user
Friday. Two things today: a JSON output mode (our on-call dashboard wants to ingest slices), and CI. JSON first. I was going to add `--format json` but --format is already the timestamp format flag.
== assistant +1m10s
Good moment to fix the naming before anyone depends on it. `--format` is ambiguous between *input* and *output*, so I'd rename both sides:

- `--ts-format <rfc3339|python>` for the input timestamp layout (still auto-detected by default, so almost nobody types it);
- `--output <text|json>` (short `-o`) for what we print.

Since nothing is released yet, just rename; no deprecation alias needed.

For JSON, I'd print **one object per entry** (JSON Lines), not one per line and not one big array: it streams, `jq` reads it, and your dashboard can ingest it line by line. Fields:

```json
{"ts":"2026-05-10T10:02:14.911Z","level":"ERROR","thread":"worker-3","msg":"job 88121 failed: InvoiceTotalMismatch { expected: 12900, got: 12090 }\n    at billing::reconcile::check_totals (src/reconcile.rs:88)\n    at billing::worker::run_job (src/worker.rs:214)","file":"worker-2026-05-10.log","line":16283095}
```

The continuation lines go into `msg` joined with `\n`, so a stack trace stays attached to its error. `level` and `thread` are best effort: `null` when the line doesn't have them.
== user +3m
How do I avoid allocating a String per field? You made a big deal of allocations on Monday.
== assistant +1m20s
With serde you can serialize borrowed data: a struct of `&str` fields pointing into the line buffer, serialized straight into the `BufWriter`:

```rust
#[derive(Serialize)]
struct JsonEntry<'a> {
    ts: &'a str,
    level: Option<&'a str>,
    thread: Option<&'a str>,
    msg: &'a str,
    file: &'a str,
    line: u64,
}

serde_json::to_writer(&mut out, &entry)?;
out.write_all(b"\n")?;
```

The only copy is for multi-line entries, where `msg` has to be assembled; keep one reusable `String` for that in the scanner. And the lines must be valid UTF-8 for `&str`: use `std::str::from_utf8` and, on failure, fall back to `String::from_utf8_lossy` for that entry only (logs do occasionally contain garbage bytes).

Split the line like this: stamp = up to the first space; level = next whitespace-separated token if it's one of `TRACE DEBUG INFO WARN WARNING ERROR FATAL CRITICAL`; thread = the next token if it looks like `[...]`; msg = the rest.
''', suite.add("output::tests::json_single_line_entry", "output::tests::json_keeps_stack_trace_in_msg",
              "output::tests::json_unknown_level_is_null", "output::tests::json_invalid_utf8_is_lossy"),
    suite.run(gap="26m", secs="0.29s", failures={"output::tests::json_single_line_entry": "src/output.rs:188:9:\n"
              "assertion `left == right` failed\n  left: \"{\\\"ts\\\":\\\"2026-05-10T10:02:13.456Z\\\",\\\"level\\\":null,\\\"thread\\\":null,\\\"msg\\\":\\\"INFO  [worker-3] job 88121 started\\\",...\"\n right: \"{\\\"ts\\\":\\\"2026-05-10T10:02:13.456Z\\\",\\\"level\\\":\\\"INFO\\\",\\\"thread\\\":\\\"worker-3\\\",\\\"msg\\\":\\\"job 88121 started\\\",...\""}), r'''
== user +1m
level and thread come out null on the simplest line. I split on a single space...
== assistant +40s
That's the padding: the worker writes `INFO ` with two spaces so that levels line up (`INFO `, `WARN `, `ERROR`). Splitting on one space gives you an empty token after `INFO`, which isn't a known level, so everything falls through into `msg`. Use `split_whitespace()`-style tokenising for the level and thread, but slice `msg` from the original line (after the thread token's end) so that spacing inside the message is preserved.
''', suite.run(gap="6m", secs="0.28s"), r'''
== tool +3m
$ ./target/release/logslice -o json --from 10:02:14 --to 10:02:15 ~/logs/worker-2026-05-10.log | jq -c 'select(.level == "ERROR") | {ts, thread, first: (.msg | split("\n")[0])}'
{"ts":"2026-05-10T10:02:14.911Z","thread":"worker-3","first":"job 88121 failed: InvoiceTotalMismatch { expected: 12900, got: 12090 }"}
== user +1m
Works with jq. The dashboard team will be happy. Now, colours in text mode? Mostly I want ERROR lines to stand out when I'm paging through a slice.
== assistant +1m30s
Sure. I'd avoid a dependency for this, it's a handful of escape codes:

```rust
fn level_style(level: &str) -> Option<&'static str> {
    match level {
        "ERROR" | "FATAL" | "CRITICAL" => Some("\x1b[31m"), // red
        "WARN" | "WARNING" => Some("\x1b[33m"),              // yellow
        _ => None,
    }
}
const RESET: &str = "\x1b[0m";
```

The important part is *when* to colour. Standard behaviour:

- `--color auto` (default): colour only if stdout is a terminal (`std::io::stdout().is_terminal()`, from `std::io::IsTerminal`) **and** `NO_COLOR` is not set;
- `--color always`: for `| less -R`;
- `--color never`.

Never colour JSON output, whatever the flag says. And colour only the level token, not the whole line: a red 300-line stack trace is harder to read, not easier.
== user +12m
Done. Looks good in the terminal, and piping to a file gives plain text. `less -R` with --color always works too.

Before CI: main.rs has grown to 180 lines and I don't like it. Here's its outline:

```rust
fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // 1. open every file, sniff, read first lines, detect format (40 lines)
    // 2. sort files by first timestamp (15 lines)
    // 3. work out the date, parse window + slack (30 lines)
    // 4. decide colour, build the writer (20 lines)
    // 5. for each file: skip / search / scan, collect explain info (50 lines)
    // 6. print explain, print warnings (25 lines)
    Ok(())
}
```
== assistant +1m40s
The outline is already the design, it just isn't in the code yet. Three suggestions:

1. **`main` only does process things**: parse args, call `run`, turn the result into output on stderr and an exit code. Everything else moves into `fn run(args: &Args, out: &mut dyn Write) -> anyhow::Result<Outcome>`. That makes `run` testable with a `Vec<u8>` as output, no process needed.
2. **One function per numbered step**, named after the comment: `open_all`, `order_by_first_stamp`, `resolve_window`, `make_output`, `slice_files`. Each step's inputs and outputs become explicit types (`Vec<Opened>`, `Window`, ...), which is where the bugs hide when they're local variables in one long function.
3. **Explain info is data, not printing**: have `slice_files` return per-file `FileReport` structs and print them in `main`. Then a test can assert "2 of 15 files were read" without parsing stderr.

Resist going further (traits for sources, a config struct for everything): six functions and four small types is the right size for this program.
== user +22m
Refactored that way. main.rs is 38 lines now, the rest is in run.rs. Tests still pass, no behaviour change. It's much easier to follow.
== assistant +30s
Nice. That `run` function is also what the upcoming CI tests will mostly exercise, so it came at the right moment.
== user +1m
Now CI. GitHub Actions, I'd like Linux, Mac and Windows since a teammate is on Windows.
== assistant +1m10s
Here's a workflow that runs formatting, clippy and tests on all three:

```yaml
name: ci
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    strategy:
      fail-fast: false
      matrix:
        os: [ubuntu-latest, macos-latest, windows-latest]
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
        with:
          components: clippy, rustfmt
      - uses: Swatinem/rust-cache@v2
      - run: cargo fmt --check
      - run: cargo clippy --all-targets -- -D warnings
      - run: cargo test
```

`fail-fast: false` so a Windows failure doesn't cancel the Linux run and hide a second problem. `-D warnings` turns clippy warnings into errors; expect a first round of findings.
== user +9m
Pushed. First run: mac green, Linux red on clippy, Windows red on tests. Windows first, here's the failure:

```
---- slice::tests::fixture_window_offsets stdout ----
thread 'slice::tests::fixture_window_offsets' panicked at src\slice.rs:241:9:
assertion `left == right` failed
  left: 1187
 right: 1164
```
== assistant +1m
`left - right = 23`: my bet is that the fixture file has 23 lines before that offset, and each line gained one byte on Windows. That's `git`'s `core.autocrlf` on the Windows runner: it checks text files out with `\r\n` line endings, so `tests/data/worker-sample.log` is not the file you committed.

Two separate fixes, both worth doing:

1. **Make fixtures byte-exact everywhere**, with a `.gitattributes`:
   ```
   tests/data/** -text
   ```
   (`-text` = never convert line endings for these files.)
2. **Handle real CRLF logs on purpose**: Windows services do write `\r\n`. In text output we print bytes as they are (no change needed), but anything that *interprets* the line must ignore a trailing `\r`: the JSON `msg`, and the stamp check for very short lines. Add a CRLF fixture so this stays tested on every OS, not just on Windows.
''', suite.add("slice::tests::fixture_window_offsets", "slice::tests::crlf_log_same_entries",
              "output::tests::json_strips_carriage_return"), r'''
== user +14m
Added .gitattributes (had to `git rm --cached -r tests/data && git add tests/data` to renormalise), plus a CRLF fixture and two tests. Pushed.
== tool +6m
$ gh run view
X main ci · 9184432210
Triggered via push about 6 minutes ago

JOBS
✓ test (macos-latest) in 1m31s
✓ test (windows-latest) in 2m48s
X test (ubuntu-latest) in 1m12s
  X Run cargo clippy --all-targets -- -D warnings
== user +1m
Windows green. Now clippy on Linux. Odd that it only fails on Linux, mac has the same toolchain?
== assistant +1m
Good question: if macOS had run the same clippy on the same code, it would have failed too, so something differs between the jobs. Two likely explanations: the mac job got an older toolchain (newer clippy versions add lints), or `rust-cache` restored a stale `target/` and clippy didn't re-check the crate. The clippy version line near the top of each job log will tell. Either way, the Linux findings are real, so let's fix them. Paste the clippy output?
== tool +2m
$ cargo clippy --all-targets -- -D warnings 2>&1 | grep -E '^error' | sort | uniq -c
      1 error: could not compile `logslice` (bin "logslice" test) due to 5 previous errors
      1 error: length comparison to zero
      1 error: redundant closure
      1 error: stripping a suffix manually
      1 error: this expression creates a reference which is immediately dereferenced by the compiler
      1 error: you should consider adding a `Default` implementation for `Explain`
== user +30s
Reproduced locally, 5 errors. Let's go through them one at a time, I want to understand each rather than just apply fixes.
== assistant +30s
Good plan. Paste them one by one.
''',
    clippy_round("First one:", clippy_error(
        "needless_borrow", "this expression creates a reference which is immediately dereferenced by the compiler",
        "src/seek.rs:58:35", "        let ts = fmt.parse_prefix(&line)?;",
        "                                  ^^^^^ help: change this to: `line`"),
        "`line` is already a `&str` there (it came from `std::str::from_utf8`), so `&line` is a `&&str`. It compiles "
        "because Rust auto-dereferences it back to `&str` at the call, which is exactly what clippy is saying: the "
        "extra `&` does nothing. Harmless, but it misleads the reader into thinking `line` is an owned `String`.\n\n"
        "```rust\n        let ts = fmt.parse_prefix(line)?;\n```"),
    clippy_round("Next:", clippy_error(
        "redundant_closure", "redundant closure", "src/main.rs:41:47",
        "    let files: Vec<PathBuf> = args.files.iter().map(|p| PathBuf::from(p)).collect();",
        "                                              ^^^^^^^^^^^^^^^^^^^^ help: replace the closure with the function itself: `PathBuf::from`"),
        "A closure that only forwards its argument to a function can be replaced by the function's path:\n\n"
        "```rust\n    let files: Vec<PathBuf> = args.files.iter().map(PathBuf::from).collect();\n```\n\n"
        "But look at the line as a whole: `args.files` is already `Vec<PathBuf>` (clap parsed it that way), so this "
        "is cloning a vector of paths into another vector of paths. Just use `args.files` directly, or "
        "`&args.files` where you only read it; the lint pointed at a line that shouldn't exist."),
    clippy_round("Third:", clippy_error(
        "len_zero", "length comparison to zero", "src/main.rs:47:8", "    if files.len() == 0 {",
        "       ^^^^^^^^^^^^^^^ help: using `is_empty` is clearer and more explicit: `files.is_empty()`"),
        "Pure readability: `is_empty()` says what you mean.\n\n```rust\n    if args.files.is_empty() {\n"
        "        anyhow::bail!(\"no log files given (try: logslice --from 10:02 app.log)\");\n    }\n```\n\n"
        "While you're there: reading from stdin when no files are given would be a nice feature "
        "(`zcat x.gz | logslice ...`), but stdin can't seek, so it'd use the linear path. Maybe later."),
    clippy_round("Fourth, this one's in the --slack parsing:", clippy_error(
        "manual_strip", "stripping a suffix manually", "src/window.rs:121:26",
        "        let n: u64 = s[..s.len() - 1].parse()?;",
        "                         ^^^^^^^^^^^^^^^^"),
        "That's the pattern `if s.ends_with('s') { &s[..s.len() - 1] }`: check a suffix, then slice it off by hand. "
        "`strip_suffix` does both in one step and can't get the length wrong (with a multi-byte suffix, `len() - 1` "
        "would even slice inside a character and panic):\n\n"
        "```rust\nfn parse_slack(s: &str) -> anyhow::Result<Duration> {\n"
        "    if let Some(ms) = s.strip_suffix(\"ms\") {\n        return Ok(Duration::milliseconds(ms.parse()?));\n    }\n"
        "    if let Some(secs) = s.strip_suffix('s') {\n        return Ok(Duration::seconds(secs.parse()?));\n    }\n"
        "    anyhow::bail!(\"cannot read slack {s:?}: use e.g. 5s or 500ms\")\n}\n```\n\n"
        "Note the order: check `ms` before `s`, or `500ms` would strip to `500m` and fail to parse."),
    clippy_round("Last one:", clippy_error(
        "new_without_default", "you should consider adding a `Default` implementation for `Explain`",
        "src/explain.rs:14:5", "    pub fn new() -> Self {",
        "    ^^^^^^^^^^^^^^^^^^^^"),
        "When a type has a public `new()` with no arguments, clippy expects `Default` too, because generic code "
        "(`Option::unwrap_or_default`, `#[derive(Default)]` on a struct containing an `Explain`, `mem::take`) "
        "needs it. If `new()` just zeroes everything, derive it and make `new` call it, or drop `new`:\n\n"
        "```rust\n#[derive(Debug, Default)]\npub struct Explain {\n    pub enabled: bool,\n    pub probes: u32,\n"
        "    pub lines_examined: u64,\n}\n```"),
    r'''
== tool +9m
$ cargo clippy --all-targets -- -D warnings && cargo test -q 2>&1 | tail -2
    Checking logslice v0.1.0 (/home/sam/src/logslice)
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 1.62s

test result: ok. 38 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.40s
== user +1m
Clean. And you were right about mac: its log says it restored an older toolchain from the cache. I bumped the cache key to include the rustc version.
== assistant +40s
Good find. `Swatinem/rust-cache` already keys on the toolchain by default, so if it restored an older one, check whether `dtolnay/rust-toolchain@stable` ran before the cache step (it should, as in the workflow above). If you reordered them, that explains it.
== user +4m
It was reordered, my fault. Fixed. All three green now.
== tool +5m
$ gh run view
✓ main ci · 9184713502
Triggered via push about 5 minutes ago

JOBS
✓ test (macos-latest) in 1m44s
✓ test (windows-latest) in 2m51s
✓ test (ubuntu-latest) in 1m19s
== user +1m
Weekend tomorrow but I might do the edge-case pass you mentioned, if I'm bored. Thanks!
== assistant +30s
Enjoy! When you do, a good list to go through: empty file, file with no timestamps at all, a window entirely before or after the file, a final line without a newline, an entry longer than the buffer, invalid UTF-8, a directory or unreadable file on the command line, and the live file growing while you read it.
''']


def edge_case(ask: str, answer: str, test: str, failure: str | None = None,
              reaction: str = "", fix: str = "") -> str:
    """One item of the edge-case pass: question, expected behaviour, the test run, and a fix if it failed."""
    suite.add(test)
    text = f"\n== user +6m\n{ask}\n== assistant +50s\n{answer}\n"
    short = test.rsplit("::", 1)[1]
    if failure is None:
        return text + suite.run(gap="9m", cmd=f"cargo test {short}", only=short, secs="0.01s", compile_s="1.21s")
    text += suite.run(gap="9m", cmd=f"cargo test {short}", only=short, secs="0.01s", compile_s="1.21s",
                      failures={test: failure})
    text += f"\n== user +1m\n{reaction}\n== assistant +45s\n{fix}\n"
    return text + suite.run(gap="7m", cmd=f"cargo test {short}", only=short, secs="0.01s", compile_s="1.30s")


DAY5 = [r'''
@ 2026-05-16T14:12:00Z
== user
Saturday, rainy, so: the edge-case pass. I'll take your list in order, tell me what the behaviour *should* be before I test each one.
== assistant +30s
Sounds good. For each: I'll say what I think is right and why, you write the test, and we fix whatever disagrees.
''',
    edge_case(
        "1. Empty file.",
        "It should print nothing and not be an error: an empty `worker.log` right after rotation is normal. With "
        "`--explain`, say `worker.log: empty, skipped`. One thing to watch: `detect` on an empty sample computes "
        "`0 * 2 >= 0`, which is true, so it would happily \"detect\" RFC 3339 on nothing. Harmless by itself, but "
        "then the time-of-day window wants the date of the first entry, and there is none.",
        "files::tests::empty_file_prints_nothing",
        "src/files.rs:201:10:\ncalled `Result::unwrap()` on an `Err` value: worker-empty.log: no timestamped line to "
        "take the date from",
        "As you predicted: it dies looking for the date.",
        "Skip empty files before anything looks at their content (`metadata.len() == 0`, or for gzip: no line "
        "after decompressing the first block), and take the date for time-of-day bounds from the first *non-empty* "
        "file. If every file is empty there's no date and also nothing to print: exit as \"no match\" without "
        "complaining about the date."),
    edge_case(
        "2. A file with no timestamps at all. Someone will pass a CSV by accident.",
        "That one should be an error, and a specific one: `logslice: data.csv: no known timestamp format in the first "
        "64 lines (pass --ts-format if it is rfc3339 or python)`. Unlike the empty file, silently printing nothing "
        "here would hide a mistake.",
        "files::tests::no_timestamps_is_an_error"),
    r'''
== user +3m
That one passed first time. 3 is a window entirely before or after the file. Print nothing, exit 0?
== assistant +1m10s
Print nothing, yes. The exit code deserves a thought, because scripts will use it. grep's convention is well known: **0** = something matched, **1** = nothing matched, **2** = error. clap already exits with 2 on usage errors, so we'd match it for free. I'd adopt grep's convention fully:

| code | meaning |
|------|---------|
| 0 | at least one entry printed |
| 1 | no entry in the window |
| 2 | error (bad arguments, unreadable file, unknown format) |

Then `logslice --from 10:02 --to 10:05 worker.log > /dev/null || echo quiet` works as people expect. Also print a one-line note on stderr when nothing matched, like `logslice: no entries between 10:02 and 10:05 (files cover 00:00:01 to 09:58:44)`: that's the most common confusion ("is my window wrong or is the log?").
''',
    edge_case(
        "Agreed on grep's exit codes. Writing the before/after tests with exit code 1 and the stderr note.",
        "Check the note's wording in the test too, with the actual covered range, so it doesn't regress into "
        "something vague.",
        "cli::tests::window_outside_file_exits_1"),
    edge_case(
        "4. Last line without a trailing newline.",
        "Print it with a newline added. With several files, otherwise, the last line of one file and the first "
        "line of the next get glued together, which corrupts both entries. Text output is otherwise byte-exact, but "
        "a line terminator isn't content.",
        "cli::tests::last_line_without_newline_gets_one",
        "src/cli.rs:133:9:\nassertion `left == right` failed\n  left: \"...job 88119 done in 2.31s2026-05-11T00:00:00.120Z INFO  [worker-1] ...\"\n"
        " right: \"...job 88119 done in 2.31s\\n2026-05-11T00:00:00.120Z INFO  [worker-1] ...\"",
        "Glued, exactly like you said.",
        "In the writer: after writing a line, if it doesn't end with `\\n`, write one. Do it in the one place "
        "that writes text lines, not in the reader, so JSON output (which never contains raw newlines at the end "
        "of `msg`) isn't affected."),
    edge_case(
        "5. An entry longer than the buffer. We sometimes log a whole request body, I've seen 10 MB lines.",
        "`read_until` grows the `Vec` as needed, so correctness is fine; there's no fixed buffer to overflow. The "
        "subtle cost is memory afterwards: the buffer keeps its 10 MB capacity for the rest of the run. Harmless "
        "for one file, but tidy: after each line, `if buf.capacity() > 1 << 20 { buf.shrink_to(64 * 1024) }`. "
        "Test with a generated 10 MB line inside the window and one as the probe target.",
        "slice::tests::huge_line_in_window"),
    edge_case(
        "6. Invalid UTF-8 inside a line.",
        "Text mode: bytes pass through untouched; we never need the message to be UTF-8, only the stamp prefix, "
        "which is ASCII. JSON mode: lossy conversion for that entry (you have that test already). Worth one more test "
        "where the invalid byte sits right after the stamp, where the level is parsed.",
        "output::tests::invalid_utf8_after_stamp"),
    edge_case(
        "7. A directory on the command line, like `logslice --from 10:02 /var/log/billing`.",
        "A clear error naming the path, plus a hint: `logslice: /var/log/billing is a directory (did you mean "
        "/var/log/billing/worker.log*?)`. Careful: on Linux `File::open` on a directory *succeeds*; it's the first "
        "read that fails with `EISDIR`, and by then the error has lost the path.",
        "cli::tests::directory_argument_is_clear_error",
        "src/cli.rs:178:9:\nassertion failed: stderr.contains(\"is a directory\")\nstderr: \"Error: Is a directory (os error 21)\\n\"",
        "The message is \"Is a directory (os error 21)\", no path.",
        "Check up front, before opening: `let meta = fs::metadata(path).with_context(|| format!(\"cannot read "
        "{}\", path.display()))?; if meta.is_dir() { bail!(...) }`. Doing all the checks for all files before "
        "printing anything also means a typo in the 14th file name fails immediately, not after 13 files of output."),
    edge_case(
        "8. Unreadable file (permission denied). Fail, or skip it and continue?",
        "Fail, before printing anything, exit 2: `logslice: cannot read /var/log/billing/worker.log: Permission "
        "denied (os error 13)`. Skipping would produce output that silently lacks part of the window, and during an "
        "incident nobody reads stderr. If someone really wants best-effort, that's a future `--skip-unreadable` flag.",
        "cli::tests::unreadable_file_fails_before_output"),
    edge_case(
        "9. The live file changing while we read it. Growing is fine I think. But copytruncate at midnight?",
        "Growing is fine: we take the length at the start for the search, and the scan simply reads until EOF or "
        "`to + slack`, so new lines may or may not be included, both correct. Truncation is the real case: the "
        "file shrinks under us, reads hit EOF early, and the output is silently short. Detect it: remember the "
        "length at open, check it again at EOF; if it's smaller, warn `logslice: worker.log was truncated while "
        "reading (log rotation?); output may be incomplete` and exit with a distinct code, **3** = partial. Same code "
        "for a truncated `.gz` (the \"unexpected end of file\" from flate2). Test it with a hook that truncates a "
        "temp file between the search and the scan.",
        "slice::tests::truncated_during_read_is_partial",
        "src/slice.rs:377:9:\nassertion `left == right` failed: exit code\n  left: 0\n right: 3",
        "Exit code 0: I print the warning but forgot to carry it out to main.",
        "Return it instead of printing it deep inside: let the scan return `Outcome { printed: u64, partial: "
        "Option<String> }`, and have `main` print the warnings and pick the exit code (`3` if any file was "
        "partial, else `0`/`1` by whether anything was printed). Then all the exit-code logic lives in one "
        "place you can read at a glance."),
    suite.run(gap="12m", secs="0.52s", compile_s="2.64s"), r'''
== user +2m
All 9 done, everything green. That was worth a Saturday afternoon: 4 real bugs.
== assistant +50s
Four bugs found by tests instead of users: the empty-file date crash, glued lines across files, the directory error without a path, and truncation being reported with exit 0. And the exit codes are now a documented contract:

| code | meaning |
|------|---------|
| 0 | entries printed |
| 1 | no entry in the window |
| 2 | error: usage, unreadable input, unknown format |
| 3 | partial: input truncated while reading |

Put that table in `--help` (clap's `after_help`) and the README. I think logslice is ready for a 0.1.0.
''']


def cli_case(run: str, output: str, code: int, test: str, comment: str, ack: str) -> str:
    """One manual CLI run turned into an assert_cmd test: the run, the test, the user's next step."""
    suite.add(f"cli_tests::{test}")
    return f"""
== tool +4m
$ {run}; echo "exit=$?"
{output}exit={code}
== assistant +40s
{comment}
== user +1m
{ack}
"""


DAY5B = [r'''
@ 2026-05-17T10:05:00Z
== user
Sunday morning coffee. The CLI-level tests in cli.rs call main's internals. I'd like real end-to-end tests that run the binary, so exit codes and stderr are tested for real. Worth it?
== assistant +1m
Yes, for exactly the things you named: exit codes, stderr wording, argument parsing. Those are the contract with scripts, and only a real process run tests them honestly. The usual setup:

```toml
[dev-dependencies]
assert_cmd = "2"
predicates = "3"
tempfile = "3"
```

Tests go in `tests/cli.rs` (an integration test crate, built against the real binary). A helper that writes a log into a temp dir keeps each test short:

```rust
use assert_cmd::Command;
use predicates::prelude::*;

fn log(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn logslice() -> Command {
    let mut cmd = Command::cargo_bin("logslice").unwrap();
    cmd.env_remove("NO_COLOR");
    cmd
}
```

Suggestion: run each case by hand first, look at the output, and if it's right, freeze it into a test. That way the tests record behaviour you've actually seen.
== user +3m
OK, doing it that way. I'll paste each run.
''',
    cli_case("logslice --from 10:02 --to 10:03 tests/data/worker-sample.log | head -3",
             "2026-05-10T10:02:00.004Z INFO  [worker-2] job 80512 started customer=c_1180 plan=team\n"
             "2026-05-10T10:02:00.011Z INFO  [worker-4] job 80513 started customer=c_9051 plan=pro\n"
             "2026-05-10T10:02:00.350Z DEBUG [worker-2] fetched 7 invoices in 19ms\n", 0,
             "prints_window_and_exits_0",
             "That's the happy path. Note `echo $?` after a pipe reports `head`'s status, not logslice's; in the "
             "test you get logslice's own code:\n\n```rust\n#[test]\nfn prints_window_and_exits_0() {\n"
             "    logslice().args([\"--from\", \"10:02\", \"--to\", \"10:03\", \"tests/data/worker-sample.log\"])\n"
             "        .assert()\n        .success()\n"
             "        .stdout(predicate::str::starts_with(\"2026-05-10T10:02:00.004Z INFO\"));\n}\n```",
             "Good point about the pipe, I'll remember that. Next, nothing in window:"),
    cli_case("logslice --from 23:59:59.5 tests/data/worker-sample.log",
             "logslice: no entries from 23:59:59.500 (files cover 00:00:00.120 to 23:59:58.004)\n", 1,
             "no_match_exits_1_with_note",
             "Exit 1 with the note, as designed. Check both stream contents, so a regression that moves the note to "
             "stdout (where it would pollute pipelines) fails:\n\n```rust\n    .assert()\n    .code(1)\n"
             "    .stdout(\"\")\n    .stderr(predicate::str::contains(\"no entries from 23:59:59.500\"));\n```\n\n"
             "Interesting detail: `23:59:59.5` parsed. Did you add fractional seconds to time-of-day bounds? I don't "
             "think we listed that form in `--help`.",
             "I did, `%H:%M:%S%.f` as a third format, I'll add it to --help. Next: bad arguments."),
    cli_case("logslice --from 10h02 tests/data/worker-sample.log",
             "Error: cannot read \"10h02\" as a time: use HH:MM, HH:MM:SS, 'YYYY-MM-DD HH:MM' or 2026-05-11T10:02:00Z\n", 2,
             "bad_time_exits_2",
             "Exit 2 and a message that says what to type. One nit: it starts with `Error: ` (anyhow's default from "
             "returning `Err` out of `main`) while our other messages start with `logslice: `. Make `main` return "
             "`ExitCode`, print errors yourself as `logslice: {err:#}` (the `#` prints the whole context chain on "
             "one line), and all messages look alike.",
             "Changed main to print `logslice: {err:#}`. Next: the directory case."),
    cli_case("logslice --from 10:02 tests/data",
             "logslice: tests/data is a directory (did you mean tests/data/*?)\n", 2, "directory_exits_2",
             "Good, same wording as the unit test from yesterday. For the integration test, assert on the stable "
             "part (`is a directory`) rather than the whole hint, so improving the hint later doesn't break it.",
             "Next: truncated gzip. I made one with `head -c 20000 w.log.gz > trunc.gz`."),
    cli_case("logslice --from 00:00 tests/data/trunc.gz | wc -l",
             "logslice: tests/data/trunc.gz: gzip stream ends early (file truncated or still being written); output may be incomplete\n"
             "214\n", 3, "truncated_gzip_exits_3",
             "Exactly the contract: the 214 lines that could be decompressed, a warning, exit 3. (Again `echo $?` "
             "shows `wc`'s status; it's the same pipe trap, and assert_cmd doesn't have it.) Commit `trunc.gz` as a "
             "fixture; `tests/data/** -text` in .gitattributes already protects it from line-ending conversion.",
             "Next: JSON output sanity."),
    cli_case("logslice -o json --from 10:02:14.9 --to 10:02:15 tests/data/worker-sample.log | jq -r .level",
             "ERROR\n", 0, "json_output_is_valid_jsonl",
             "For the test, don't compare JSON text byte-for-byte (key order and escaping are serde_json's business); "
             "parse each stdout line with `serde_json::from_str::<serde_json::Value>` and check fields. Add "
             "`serde_json` to dev-dependencies too, it's already a normal dependency so it costs nothing.",
             "Next: --color always, to check the escape codes are there and only around the level."),
    cli_case("logslice --color always --from 10:02:14.9 --to 10:02:15 tests/data/worker-sample.log | cat -v",
             "2026-05-10T10:02:14.911Z ^[[31mERROR^[[0m [worker-3] job 88121 failed: InvoiceTotalMismatch { expected: 12900, got: 12090 }\n"
             "    at billing::reconcile::check_totals (src/reconcile.rs:88)\n"
             "    at billing::worker::run_job (src/worker.rs:214)\n", 0, "color_always_wraps_level_only",
             "`cat -v` shows ESC as `^[`, so: red around `ERROR` only, reset right after, and the stack trace "
             "uncoloured. In the test, compare against the string with the real escape byte, `\"\\u{1b}[31mERROR\\u{1b}[0m\"`, "
             "and add the opposite case: `NO_COLOR=1` with `--color auto` must produce no escapes even though... well, "
             "in a test stdout is never a terminal, so `auto` is always off there. Test `always` and `never` only; "
             "`auto` is covered by the unit test of the decision function.",
             "Makes sense. Last one: forcing the wrong --ts-format."),
    cli_case("logslice --ts-format python --from 10:02 tests/data/worker-sample.log",
             "logslice: tests/data/worker-sample.log: no line in the first 64 starts with a python-style timestamp "
             "(detected: rfc3339; drop --ts-format?)\n", 2, "forced_format_mismatch_exits_2",
             "Good message: when someone forces a format that contradicts the file, saying what *was* detected "
             "turns a puzzling error into a one-second fix. Test the exit code and that stderr mentions "
             "`detected: rfc3339`.",
             "OK, that's the list. Running the whole thing."),
    suite.run(gap="6m", secs="0.71s", compile_s="14.02s"), r'''
== user +1m
All green, 14 seconds to compile the first time, assert_cmd pulls a few crates. That's 8 end-to-end tests. Now, you mentioned property tests once. What would a property even be here?
== assistant +1m30s
The best property is the one we've been checking by hand all week: **the fast path and the slow path agree**. Stated for proptest:

> For any log that is sorted up to a jitter smaller than `slack`, and any window, `slice` via binary search + byte comparison produces exactly the same bytes as a linear scan that parses every timestamp with chrono.

proptest generates random logs and windows, and when it finds a disagreement it *shrinks* it to a minimal example, which is the valuable part. A generator sketch:

```rust
fn arb_log() -> impl Strategy<Value = Vec<Entry>> {
    prop::collection::vec((0u32..3_000, 0usize..3, "[a-z ]{0,40}"), 1..200).prop_map(|raw| {
        let mut t = base_time();
        raw.into_iter()
            .map(|(step_ms, cont, msg)| {
                t += Duration::milliseconds(step_ms as i64);
                Entry { ts: t, continuation_lines: cont, msg }
            })
            .collect()
    })
}
```

Then render entries as text with a few lines of jitter and run both paths. Start without jitter; add it once the simple version passes.
== user +24m
Written. Without jitter it passes 256 cases. I then made the renderer more realistic: it formats timestamps with `to_rfc3339_opts(SecondsFormat::AutoSi, true)` because that's what our Go service does (it trims trailing zeros). And now:
''', suite.add("props::fast_path_matches_linear_scan"),
    suite.run(gap="1m", cmd="cargo test props", only="props", secs="2.88s", compile_s="6.40s",
              failures={"props::fast_path_matches_linear_scan": "src/props.rs:88:5:\n"
              "Test failed: fast path and linear scan differ: left: 0 entries, right: 1 entries.\n"
              "minimal failing input: log = [\n"
              "    Entry { ts: 2026-05-10T10:02:13Z, continuation_lines: 0, msg: \"\" },\n"
              "], window = Window { from: Some(2026-05-10T10:02:13.001Z), to: None }\n"
              "\tsuccesses: 41\n\tlocal rejects: 0\n\tglobal rejects: 0"}), r'''
== user +1m
Minimal case: one entry stamped exactly 10:02:13 with no fraction, window from 10:02:13.001. Hmm, so the fast path says... wait, it's the *linear* one that printed it? right is linear, 1 entry. But 10:02:13 is before 10:02:13.001, it shouldn't print at all.
== assistant +1m40s
Let me untangle it, because the shrunk example is telling us something real.

The line is `2026-05-10T10:02:13Z` (the trimmed form: no `.000`). The key is `2026-05-10T10:02:13.001Z`. Compare them **as bytes**: they agree up to `13`, then the line has `Z` (0x5A) and the key has `.` (0x2E). `Z` > `.`, so byte order says the line is *after* the key. In time, it's before. That's the fast path being wrong, not the linear one.

So which side is `left`? If your assertion is `assert_eq!(fast, linear)`, then `left` = fast = 0 entries, `right` = linear = 1 entry. Then the *linear* path printed an entry that's outside the window, which is a second problem... unless your linear oracle in the property test isn't the chrono-parsing one. Which function does the property call as "linear"?
== user +4m
You're right, I got them backwards. `left` is the linear scan, `right` is fast, I wrote `assert_eq!(linear, fast)`. So: linear (correct) prints nothing, fast prints the 10:02:13 line. Byte-order bug, exactly as you describe.
== assistant +1m10s
Good, then it's one bug, and an important one: **byte order equals time order only for fixed-width stamps**. Our guard checked the width on the first 64 lines at detection time. A logger that trims trailing zeros (Go's `RFC3339Nano`, or chrono's `AutoSi` as here) produces `13Z`, `13.5Z`, `13.45Z` and `13.456Z` in the same file, and a 64-line sample will usually contain only 3-digit ones.

Fix: check the shape **per line**, which costs two byte comparisons: for the fast path, a line qualifies only if `line.len() >= 24 && line[19] == b'.' && line[23] == b'Z'`. Any other stamped line goes through the chrono parse. The binary search probes use the same check, so they stay correct too. The common case stays fast; odd lines become slow but right.

This is the best kind of property-test find: we'd never have written this example by hand, and it would have bitten on the Go service's logs.
''', suite.run(gap="17m", cmd="cargo test props", only="props", secs="4.12s", compile_s="2.90s"), r'''
== user +1m
Passes, and I bumped it to 2000 cases locally: still passes, 31 seconds. I'll keep 256 in CI.
== assistant +30s
Good balance. Set it with `ProptestConfig::with_cases(256)` in the test and let people override with the `PROPTEST_CASES` environment variable for long local runs. And commit the `proptest-regressions/` file it wrote: it stores the failing seed, so that exact case is re-run first forever.
== user +2m
Committed, regressions file included. Enough for a Sunday.
== assistant +25s
Definitely. Enjoy the rest of it.
''']

DAY6 = [r'''
@ 2026-05-18T19:20:00Z
== user
Release evening. Here's the current --help, anything you'd change before 0.1.0?

```
Print the lines of a log file that fall inside a time window.

Usage: logslice [OPTIONS] [FILES]...

Arguments:
  [FILES]...  Log files to read

Options:
  -f, --from <FROM>            Start of the window (inclusive), e.g. 10:02 or 2026-05-11T10:02:00Z
  -t, --to <TO>                End of the window (exclusive)
      --slack <SLACK>          [default: 5s]
      --ts-format <TS_FORMAT>  [possible values: rfc3339, python]
  -o, --output <OUTPUT>        [default: text] [possible values: text, json]
      --color <COLOR>          [default: auto] [possible values: auto, always, never]
      --explain
  -h, --help                   Print help
  -V, --version                Print version
```
== assistant +1m40s
It's close. Suggestions:

1. **First line**: "log file**s**", and say the key property: `Print the entries of time-sorted log files that fall inside a time window.`
2. **`--from`/`--to`**: list all accepted forms once, and mention that `--to` is exclusive in the same words: `Start of the window (inclusive): HH:MM[:SS], 'YYYY-MM-DD HH:MM[:SS]' or RFC 3339`.
3. **`--slack`** has no description at all, and it's the least obvious flag: `How far out of order entries may be near the window edges [default: 5s]`.
4. **`--ts-format`**: `Timestamp layout at the start of each line [default: detected]`.
5. **`--explain`**: `Print to stderr how the files were searched and read`.
6. **`[FILES]...`**: `Log files, plain or gzip, in any order`: "in any order" tells people they don't have to sort them.
7. Add an `after_help` with two examples and the exit-code table:

```
Examples:
  logslice --from 10:02 --to 10:15 worker.log
  logslice --from '2026-05-12 23:50' --to '2026-05-13 00:10' /var/log/billing/worker.log*

Exit status: 0 entries printed, 1 none in the window, 2 error, 3 partial (input truncated)
```
== user +16m
Applied all of them. README next. Can you draft it? Keep it short, I hate READMEs that scroll forever.
== assistant +1m50s
Here's a short one:

````markdown
# logslice

Print the entries of big, time-sorted log files that fall inside a time window. Fast: it
binary-searches plain files by byte offset, so a 3 GB file answers in ~40 ms.

```
logslice --from 10:02 --to 10:15 /var/log/billing/worker.log*
```

## What it understands
- Timestamps at the start of the line: RFC 3339 (`2026-05-11T10:02:13.456Z`) or Python
  logging's default (`2026-05-11 10:02:13,456`), detected automatically.
- Multi-line entries: lines without a timestamp (stack traces) stay with their entry.
- Plain and gzip files, several at once, in any order (sorted by their first timestamp).
- Nearly-sorted logs: entries up to `--slack` (default 5s) out of order near the window edges.

## Window
`--from` is inclusive, `--to` exclusive. Either may be omitted. Accepted forms: `10:02`,
`10:02:30` (on the date of the files, if they cover one day), `'2026-05-12 10:02'`, RFC 3339.
`--from 23:50 --to 00:10` crosses midnight.

## Output
Text (byte-exact lines; `--color auto|always|never`, honours `NO_COLOR`) or JSON Lines
(`-o json`: `ts`, `level`, `thread`, `msg`, `file`, `line`).

## Exit status
0 entries printed · 1 none in the window · 2 error · 3 partial (input truncated while reading)

## Building
`cargo build --release`. For faster gzip (needs cmake and a C compiler):
`cargo build --release --features fast-gzip`.
````
== user +9m
Good. Some housekeeping before the binary stuff. License: the company is fine with open source. MIT?
== assistant +1m
MIT is fine. The Rust ecosystem convention is **dual MIT OR Apache-2.0** (what most crates, and Rust itself, use): MIT is short and permissive; Apache-2.0 adds an explicit patent grant, which some companies' lawyers want before they let people contribute. Dual licensing lets each user pick. In `Cargo.toml`:

```toml
license = "MIT OR Apache-2.0"
```

plus `LICENSE-MIT` and `LICENSE-APACHE` files in the repo root. Since it's a company project, check who the copyright holder should be in the MIT text (the company, probably, not you).
== user +3m
Dual it is, copyright goes to the company. Next: should I declare a minimum Rust version?
== assistant +1m10s
Yes, for a tool others build from source. Find the real minimum rather than guessing: the newest things we use are probably `std::io::IsTerminal` (stable since 1.70) and `Option::is_some_and` (1.70), so 1.70 is a candidate, but dependencies may need newer. `cargo-msrv` finds it by bisecting toolchains: `cargo install cargo-msrv && cargo msrv find`.

Then set it and make CI prove it:

```toml
[package]
rust-version = "1.74"   # whatever cargo msrv reports
```

and a CI job that runs `cargo check` on exactly that toolchain (`dtolnay/rust-toolchain@master` with `toolchain: "1.74"`). Without the CI job the number silently goes stale the first time someone uses a newer API.
== tool +9m
$ cargo msrv find
Fetching index
Determining the Minimum Supported Rust Version (MSRV) for toolchain x86_64-unknown-linux-gnu
Using check command cargo check
   Finished The MSRV is: 1.74.1
== user +1m
1.74.1. Something in the dependency tree, I guess, since our own code would be fine on 1.70. Set rust-version = "1.74" and added the CI job.
== assistant +40s
Good. `rust-version` accepts "1.74" and means 1.74.0; since msrv found 1.74.1, check that the CI job on plain "1.74" passes too. If it doesn't, write "1.74.1" explicitly: the field must be honest, because cargo uses it to refuse builds on older compilers with a clear message instead of a wall of errors.
== user +4m
1.74 passes in CI. Last housekeeping item: shell completions. clap can generate them, right?
== assistant +1m20s
Yes, with `clap_complete`. The question is how users get them. Options:

1. A hidden flag, `logslice --completions bash > ~/.local/share/bash-completion/completions/logslice`. Always matches the binary's actual flags.
2. Generate files at build time (`build.rs`) and ship them in the release archives. Nice for packagers, but a `build.rs` that needs the CLI definition means moving `Args` into a separate module both can include.

I'd do 1: it's ten lines and can't go stale. A subcommand (`logslice completions bash`) would clash with `[FILES]...` (is `completions` a file?), so a flag is the cleaner fit:

```rust
    /// Print a shell completion script and exit
    #[arg(long, value_name = "SHELL", hide = true)]
    completions: Option<clap_complete::Shell>,
```

```rust
if let Some(shell) = args.completions {
    clap_complete::generate(shell, &mut Args::command(), "logslice", &mut io::stdout());
    return Ok(ExitCode::SUCCESS);
}
```

`Args::command()` needs `use clap::CommandFactory;`.
== user +7m
Done, works in bash and zsh. Now the release binary. It's 4.3 MB, which feels big for what it does.
== tool +1m
$ ls -l target/release/logslice
-rwxr-xr-x 2 sam sam 4472880 May 18 19:47 target/release/logslice
== assistant +1m10s
Most of that is debug symbols and unused code the linker kept. A release profile for a small CLI:

```toml
[profile.release]
lto = true           # whole-program optimisation, lets the linker drop more
codegen-units = 1    # slower build, slightly smaller and faster binary
strip = true         # remove symbols
panic = "abort"      # no unwinding tables; fine for a CLI
```

`panic = "abort"` is the only one with a behaviour change: a panic exits immediately instead of unwinding. We don't catch panics anywhere, so nothing changes for users. Expect a build that takes noticeably longer; it only matters for releases.
== tool +3m
$ cargo build --release -q && ls -l target/release/logslice
-rwxr-xr-x 2 sam sam 1391616 May 18 19:51 target/release/logslice
$ hyperfine -w 3 './target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log'
Benchmark 1: ./target/release/logslice --from 10:02 --to 10:15 ~/logs/worker-2026-05-10.log
  Time (mean ± σ):      38.6 ms ±   1.9 ms    [User: 10.8 ms, System: 27.1 ms]
  Range (min … max):    35.9 ms …  44.0 ms    74 runs
== user +1m
1.4 MB, and no slower. Now a release workflow. I want static Linux binaries (musl) because the log hosts are a mix of distros, plus mac and Windows.
== assistant +1m30s
Tag-triggered workflow, one job per target, upload to the GitHub release:

```yaml
name: release
on:
  push:
    tags: ["v*"]

permissions:
  contents: write

jobs:
  build:
    strategy:
      matrix:
        include:
          - { os: ubuntu-latest,  target: x86_64-unknown-linux-musl, features: fast-gzip }
          - { os: macos-latest,   target: aarch64-apple-darwin,      features: "" }
          - { os: windows-latest, target: x86_64-pc-windows-msvc,    features: "" }
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
        with:
          targets: ${{ matrix.target }}
      - run: cargo build --release --locked --target ${{ matrix.target }} --features "${{ matrix.features }}"
      - shell: bash
        run: |
          cd target/${{ matrix.target }}/release
          name=logslice-${GITHUB_REF_NAME}-${{ matrix.target }}
          if [ -f logslice.exe ]; then 7z a ../../../$name.zip logslice.exe; else tar czf ../../../$name.tar.gz logslice; fi
      - uses: softprops/action-gh-release@v2
        with:
          files: logslice-*
```

`--locked` makes the build fail if `Cargo.lock` is out of date instead of silently resolving new versions: release builds should be reproducible.
== user +11m
Pushed a test tag v0.1.0-rc1. Linux failed:

```
  error occurred: Failed to find tool. Is `musl-gcc` installed?
```

It's from the libz-ng-sys build.
== assistant +50s
Right: Rust itself can target musl with nothing but `rustup target add` (it ships the musl C runtime objects), but **C dependencies** need a C compiler for musl, and that's `musl-gcc` from the `musl-tools` package. zlib-ng is the only C code we have, via `fast-gzip`. Add a step before the build on Linux:

```yaml
      - if: matrix.os == 'ubuntu-latest'
        run: sudo apt-get update && sudo apt-get install -y musl-tools cmake
```

cmake is probably already on the runner image, but listing it makes the dependency explicit.
== tool +14m
$ gh release view v0.1.0-rc1 --json assets --jq '.assets[] | "\(.name)  \(.size)"'
logslice-v0.1.0-rc1-aarch64-apple-darwin.tar.gz  612093
logslice-v0.1.0-rc1-x86_64-pc-windows-msvc.zip  587310
logslice-v0.1.0-rc1-x86_64-unknown-linux-musl.tar.gz  701242
== user +2m
All three built. Tried the musl one on the oldest box we have (CentOS 7, don't ask) and it runs. Tagging v0.1.0 for real.
== assistant +40s
Congrats! For the release notes, a short list is enough:

```
logslice 0.1.0

First release.
- Binary search on plain files, streaming for gzip; several files in any order
- RFC 3339 and Python-logging timestamps, detected; multi-line entries kept whole
- --slack for nearly-sorted logs (default 5s)
- Text (colour) or JSON Lines output
- Exit status: 0 printed, 1 none in window, 2 error, 3 partial
```

And delete the `-rc1` release and tag so people don't grab it: `gh release delete v0.1.0-rc1 --cleanup-tag`.
== tool +3m
$ git tag -a v0.1.0 -m "logslice 0.1.0" && git push origin v0.1.0 && gh release delete v0.1.0-rc1 --cleanup-tag --yes
To github.com:sam-ops/logslice.git
 * [new tag]         v0.1.0 -> v0.1.0
✓ Deleted release and tag v0.1.0-rc1
== user +1m
Done. Posted it in the team channel.
== assistant +25s
Nice. I'm curious what the first feedback will be.
''']

DAY7 = [r'''
@ 2026-05-20T08:40:00Z
== user
Feedback round! Two days in, three people use logslice. Tomás found a real bug: on the ledger-sync logs his slices come out an hour off. He asked for 10:00-10:05 and got entries from 11:00-11:05.
== assistant +1m20s
An hour off on ledger-sync but not on the worker points at time zones. The worker writes `...Z`, explicitly UTC. ledger-sync uses Python logging's default format, and **Python's `asctime` is local time** with no offset in the text. If that host runs in `Europe/Lisbon`, May is UTC+1 (summer time), so `10:00` in the file is `09:00Z`.

We parse those stamps with `and_utc()`, i.e. we *assume* UTC. So `--from 10:00` (interpreted as UTC) matches file text `11:00` local... which is exactly what Tomás saw.

Can you check the host's zone? `timedatectl | grep 'Time zone'` on the ledger-sync box.
== tool +2m
$ ssh ledger-sync-1 timedatectl | grep 'Time zone'
                Time zone: Europe/Lisbon (WEST, +0100)
== user +1m
Lisbon, +0100. So what's the fix, assume local time?
== assistant +1m30s
Not the local time of the machine *running logslice*: that's the wrong machine half the time (you read logs on your laptop too). The honest statement is "this format carries no offset; someone has to say what it is". Options:

1. `--tz <ZONE>` taking an IANA name (`Europe/Lisbon`), which handles summer time correctly. Needs the `chrono-tz` crate, which embeds the tz database (adds a few hundred KB to the binary).
2. `--tz <OFFSET>` taking a fixed offset (`+01:00`). No dependency, but wrong across a DST change, and people have to know the current offset.
3. Change ledger-sync to log UTC with an offset (`logging.Formatter.converter = time.gmtime` plus a `Z`), which fixes it at the source.

I'd do 3 (it's a two-line change in ledger-sync, and UTC logs are better for everyone) **and** 1, because there will always be old files and other services. Default stays UTC, and `--explain` should say `timestamps have no offset; read as UTC (use --tz)` so this is discoverable. Also, for windows given as time of day with `--tz`, interpret `--from 10:00` in that zone too: you'd type the times you see in the file.
== user +3m
1 + 3 it is. The 300 KB is fine. What about the hour that happens twice when clocks go back in October?
== assistant +1m
Good question: in `Europe/Lisbon`, on the last Sunday of October, local times from 01:00 to 01:59 happen twice, and a naive stamp like `01:30:00,000` is ambiguous. chrono-tz gives you `LocalResult::Ambiguous(earliest, latest)` for those.

For a *search*, the practical choice: take the earliest interpretation for `--from` and the latest for `--to`, so the window is never narrower than intended. For *entries* in the file we can't tell either way from one line, but since the file is in order, a jump backwards by ~1 hour in the stamps is the moment the clock changed. That's more machinery than it's worth right now: document the ambiguous hour in the README, and note in `--explain` when the window touches it.

The hour that doesn't exist in March (spring forward: `LocalResult::None`) should be an error if someone types it: `--from 01:30 does not exist in Europe/Lisbon on 2027-03-28`.
''', suite.add("window::tests::tz_shifts_naive_stamps", "window::tests::tz_applies_to_time_of_day_bounds",
              "window::tests::ambiguous_local_hour_widens_window", "window::tests::nonexistent_local_time_is_error"),
    suite.run(gap="38m", secs="0.55s", compile_s="4.81s"), r'''
== user +2m
Implemented --tz with chrono-tz and those four tests, all green. Tomás confirms his 10:00-10:05 slice is right now with --tz Europe/Lisbon.
== assistant +30s
Nice. Is the ledger-sync change (log in UTC) going in as well? That makes `--tz` unnecessary for new files.
== user +1m
PR is up for ledger-sync, two lines as you said. Second feedback item: Ana wants `--last 15m` for live debugging, "show me the last 15 minutes of worker.log".
== assistant +1m10s
Useful, and there's a decision hidden in it: last 15 minutes **relative to what**?

- Relative to **now** (the clock): what you want on a live file during an incident. On an old file it gives an empty result, which is confusing.
- Relative to **the last entry in the files**: works on live files (the last entry is seconds old) *and* on old ones ("the last 15 minutes before the crash"), and it's deterministic, so tests don't depend on the clock.

I'd go with "relative to the last entry", and say so in `--help`: `--last <DURATION>  Window of this length ending at the last entry`. It conflicts with `--from`/`--to`, which clap can enforce with `conflicts_with_all`.

Finding the last entry in a plain file is cheap: seek to `len - 64 KiB`, read to the end, take the last stamped line (if none, step back another 64 KiB). For gzip there's no shortcut, you decompress the whole file; `--explain` should say so.
== user +5m
Relative to last entry, agreed. For the live file during an incident it's the same thing anyway.
''', suite.add("window::tests::last_is_relative_to_last_entry", "seek::tests::finds_last_entry_in_tail",
              "seek::tests::last_entry_behind_long_stack_trace", "cli::tests::last_conflicts_with_from"),
    suite.run(gap="44m", secs="0.61s", compile_s="3.02s",
              failures={"seek::tests::last_entry_behind_long_stack_trace": "src/seek.rs:301:9:\n"
              "assertion `left == right` failed\n  left: None\n right: Some(2026-05-10T23:59:58.004Z)"}), r'''
== user +1m
The stack-trace one fails: the last entry has a 90 KB stack trace after it, so the last 64 KB are all continuation lines.
== assistant +40s
That's the "if none, step back another 64 KiB" part. Make it a loop that doubles the window each time (64 KiB, 128 KiB, 256 KiB, ...) up to the start of the file: doubling keeps the total work linear even for a pathological file that is one enormous stack trace.
''', suite.run(gap="8m", secs="0.60s"), r'''
== user +2m
Green. Ana tried it on the live log:

```
$ logslice --last 2m /var/log/billing/worker.log | grep -c ERROR
14
```

Third thing: Kofi is on Windows and says wildcards don't work:

```
PS C:\Users\kofi> logslice --from 10:02 --to 10:15 C:\logs\billing\worker.log*
logslice: cannot read C:\logs\billing\worker.log*: The filename, directory name, or volume label syntax is incorrect. (os error 123)
```
== assistant +1m20s
That's a real platform difference, not a bug in our file handling: on Unix the **shell** expands `worker.log*` before the program starts, so logslice receives 15 paths. On Windows, neither cmd nor PowerShell expands wildcards for native programs; each program is expected to do it itself. So we received the literal string `C:\logs\billing\worker.log*`.

The `wild` crate does exactly the Unix-like expansion on Windows and is a no-op elsewhere:

```rust
let args = Args::parse_from(wild::args_os());
```

One line, and the behaviour matches on all platforms. Add a Windows-only test (`#[cfg(windows)]`) that passes a pattern and checks two files were read, so CI's Windows job keeps it honest.
== user +9m
Added, Kofi confirms it works. CI Windows job has the test too.

Last thing: someone asked if it can go faster on the gz files. You mentioned the zran-style index on Thursday.
== assistant +1m20s
It can, but I'd wait. Numbers from Thursday: a full-day `.gz` takes 11.2 s with `fast-gzip`. An index would make repeated queries on the same file fast (well under a second), but the *first* query still pays the full 11 s to build it, plus an index file per log (~32 KiB per checkpoint, so a few MB per day at one checkpoint every 4 MB of output) that has to live somewhere writable and be invalidated when files rotate.

How often does someone query the same old `.gz` more than once? If it's "once per incident", the index never pays off. The cheaper win is option 3 from Thursday: ask ops to rotate with `zstd` instead of gzip. Decompression is several times faster, and logrotate supports custom compress commands. Then logslice needs zstd input (the `zstd` crate), which is a small change next to what we have.

So my suggestion for 0.2: `--tz`, `--last` (done), zstd input, and stdin input. The gz index only if people actually complain about repeat queries.
== user +3m
Makes sense. Can you write up where the project stands, decisions and all, so I can paste it into the repo as docs/DESIGN.md? Future me will thank you.
== assistant +2m10s
Here it is:

```markdown
# logslice: design notes

## What it does
Prints the entries of time-sorted log files inside a window. An entry is a line starting
with a timestamp plus the following lines without one (stack traces).

## Decisions (and why)
- **Rust**, single static binary (musl on Linux) that can be copied to any log host.
- **Binary search on byte offsets** for plain files: seek to mid-1, skip to the next line
  start, read the first stamped line, halve. 17 probes on a 3.4 GB file; 41 s -> 0.04 s.
  The mid-1 detail fixes "mid on a line start skips that line"; EOF in a probe means "too late".
- **Byte-order comparison** of fixed-width stamps instead of parsing each line (9.8 s -> 3.9 s
  on a full scan); both window ends are checked for every entry.
- **--slack (5s)**: logs are only nearly sorted (worst measured disorder 1847 ms, from 4 threads
  sharing a file). Search for from-slack, stop at to+slack, filter exactly in between.
- **gzip is streamed** (no random access in deflate); MultiGzDecoder for multi-member files;
  optional `fast-gzip` (zlib-ng, needs cmake): 16.8 s -> 11.2 s per day file.
- **Files are ordered by their first timestamp**, not by name (glob order puts .10 before .2),
  and files that cannot overlap the window are skipped.
- **Time of day** (`10:02`) uses the files' date; refused when files span several days.
  Windows like 23:50-00:10 roll over midnight.
- **No mmap**: ~10% faster, but logrotate's copytruncate would turn truncation into SIGBUS.
- **Naive timestamps are UTC** unless `--tz <IANA zone>` says otherwise; in an ambiguous
  local hour the window is widened, a non-existent local time is an error.
- **--last D** is relative to the last entry, not the clock (works on old files, testable).

## Contracts
- Output: text (byte-exact, newline added to an unterminated last line) or JSON Lines
  (`ts, level, thread, msg, file, line`; invalid UTF-8 converted lossily per entry).
- Exit status: 0 printed, 1 none in window, 2 error, 3 partial (input truncated while reading).
- Unreadable files and directories fail before any output.

## Next (0.2)
zstd input · stdin input · README section on the ambiguous DST hour ·
a gzip seek index only if repeat queries on old files turn out to be common.
```
== user +4m
Committed as docs/DESIGN.md. This was a really good week, thanks. From "grep and scroll" to a tool three people use daily.
== assistant +30s
It was a pleasure, and most of the credit goes to the habits you kept: an oracle for every optimisation, the failing test before each fix, and measuring before deciding. Those are why the numbers in that design note are real. Good luck with 0.2!
''']

DAY8 = [r'''
@ 2026-05-21T16:02:00Z
== user
Ana opened a PR adding `--grep PATTERN` so you can slice and filter in one go. Can you review it with me? Here's the core of the diff:

```diff
--- a/src/slice.rs
+++ b/src/slice.rs
@@ -142,6 +142,7 @@ pub struct ScanOpts {
     pub window: Window,
     pub slack: Duration,
+    pub grep: Option<String>,
 }
@@ -201,9 +202,14 @@ fn scan<R: BufRead>(r: &mut R, opts: &ScanOpts, out: &mut Output) -> io::Result<Outcome> {
         if let Some(t) = stamp_of(&buf, opts.fmt) {
             inside = opts.window.contains(t);
         }
-        if inside {
+        let line = String::from_utf8_lossy(&buf);
+        let matches = match &opts.grep {
+            Some(p) => line.contains(p.as_str()),
+            None => true,
+        };
+        if inside && matches {
             out.write_line(&buf)?;
             outcome.printed += 1;
         }
```
== assistant +2m
Nice idea, and small. Review comments, most important first:

1. **It filters lines, not entries.** `--grep InvoiceTotalMismatch` would print the ERROR line but drop its stack trace (those lines don't contain the pattern), and `--grep reconcile.rs` would print a lonely `    at billing::reconcile...` line without its entry. Since everything else in logslice thinks in entries, grep should too: buffer the current entry (stamp line + continuations), and print the whole entry if **any** of its lines matches.
2. **`String::from_utf8_lossy` on every line** allocates whenever a line has invalid UTF-8, and even when it's valid it's wasted work if there's no `--grep`. Search bytes directly: the `memchr` crate's `memmem::Finder` is built for this (build the finder once, reuse it).
3. **Substring vs regex.** A plain substring is a fine start, and fast. If people will want regexes, `regex::bytes::Regex` works on `&[u8]`; but then `--grep` semantics change later. Decide now: I'd keep `--grep` literal and add `--regex` only if asked.
4. **Exit codes.** With `--grep`, "printed nothing" should still be exit 1. Check that `printed` counts entries *after* the grep filter (it does here, since the increment is inside the `if`), and add a test, because that's easy to break when moving to entry buffering.
5. **Tests**: none in the PR yet. At least: match in the first line prints the whole entry; match only in a continuation line prints the whole entry; no match exits 1.
== user +3m
Agree with all of it. On 3, literal only, she can add --regex later. How would you buffer an entry without copying every line?
== assistant +1m40s
Keep one `Vec<u8>` for the current entry and append each line to it (`entry.extend_from_slice(&buf)`), remembering whether any line matched. When the next stamped line arrives (or EOF), flush: write `entry` if it's inside the window and matched, then `entry.clear()`. That's one copy per line into a buffer that keeps its capacity, much cheaper than the lossy conversion, and only when `--grep` is set: without `--grep`, keep the current streaming path that writes lines directly, so the default case doesn't pay anything.

```rust
struct EntryBuf {
    bytes: Vec<u8>,
    matched: bool,
    inside: bool,
}

impl EntryBuf {
    fn flush(&mut self, out: &mut Output, printed: &mut u64) -> io::Result<()> {
        if self.inside && self.matched && !self.bytes.is_empty() {
            out.write_entry(&self.bytes)?;
            *printed += 1;
        }
        self.bytes.clear();
        self.matched = false;
        Ok(())
    }
}
```

And don't forget the flush at EOF: the last entry in the file is the classic one to lose.
== user +5m
Posted the review. She'll rework it tomorrow.

Meanwhile ops agreed to try zstd for the billing worker's rotation! They changed logrotate to `compresscmd /usr/bin/zstd`, `compressext .zst`, `compressoptions -T0 --long`. First .zst file appears tonight. So logslice needs zstd input.
== assistant +1m20s
Good news, and the change is small because `Source` is already an enum:

```rust
pub enum Source {
    Plain(BufReader<File>),
    Gzip(BufReader<MultiGzDecoder<File>>),
    Zstd(BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>),
}
```

Sniff the zstd frame magic `28 b5 2f fd` (little-endian `0xFD2FB528`) next to the gzip one. Two details:

1. **`--long` matters on the reading side.** ops used `--long`, which allows a back-reference window up to 128 MiB; a decoder with the default limit refuses such frames with an error about the window size. Call `decoder.window_log_max(27)` (2^27 = 128 MiB) so those files decode.
2. The `zstd` crate builds the C library with `cc` (no cmake), so it's lighter than zlib-ng, but it's still C: for the musl release you already install `musl-tools`, which covers it.
''', suite.add("source::tests::sniffs_zstd_by_magic", "source::tests::zstd_long_window"),
    suite.run(gap="34m", secs="0.66s", compile_s="21.40s",
              failures={"source::tests::zstd_long_window": "src/source.rs:151:14:\n"
              "called `Result::unwrap()` on an `Err` value: Custom { kind: Other, error: \"Frame requires too much memory for decoding\" }"}), r'''
== user +1m
The long-window test fails with "Frame requires too much memory for decoding". I did set window_log_max(27)... on the encoder side in the test. Oh.
== assistant +30s
That's it: in the test, the *encoder* needs `long_distance_matching(true)` and `window_log(27)` to produce such a frame, and the *decoder* in `Source::open` needs `window_log_max(27)` to accept it. The failure shows the test successfully produced a long-window frame, so half of it is right. Add the decoder setting in `open`.
''', suite.run(gap="6m", secs="0.64s", compile_s="3.11s"), r'''
== user +1m
Green. I'll test on tonight's real .zst tomorrow morning.
== assistant +25s
Sounds good. If you can, compare it with a gzip file from a similar day.
@ 2026-05-22T07:55:00Z
== user
Morning. The first real .zst is there. Numbers:
== tool +3m
$ ls -lh /var/log/billing/ | grep -E 'log\.[23]\.'
-rw-r----- 1 billing billing 571M May 21 00:00 worker.log.2.zst
-rw-r----- 1 billing billing 603M May 20 00:00 worker.log.3.gz
$ time logslice --from 21:00 --to 21:30 /var/log/billing/worker.log.3.gz > /dev/null

real	0m11.482s
user	0m10.701s
sys	0m0.771s
$ time logslice --from 21:00 --to 21:30 /var/log/billing/worker.log.2.zst > /dev/null

real	0m3.917s
user	0m3.205s
sys	0m0.702s
== user +1m
3.9s vs 11.5s for an evening window, and the file is smaller too. Nice. Though careful, those are different days, not the same data.
== assistant +50s
Right to flag it: different days, so the sizes aren't directly comparable (571 MB vs 603 MB could be a quieter day). For a fair comparison, recompress one day both ways: `zcat worker.log.3.gz | zstd -T0 --long -o /tmp/w3.zst` and time both on the same content. The speed difference is large enough that I'd expect it to hold, but it's the kind of number that ends up quoted in a design note, so it should be measured properly.
== tool +4m
$ zcat /var/log/billing/worker.log.3.gz | zstd -q -T0 --long -o /tmp/w3.zst && ls -l /var/log/billing/worker.log.3.gz /tmp/w3.zst | awk '{print $5, $9}'
632274109 /var/log/billing/worker.log.3.gz
588913466 /tmp/w3.zst
$ time logslice --from 21:00 --to 21:30 /tmp/w3.zst > /dev/null

real	0m4.102s
user	0m3.388s
sys	0m0.711s
== user +1m
Same day: 632 MB gz vs 589 MB zst, 11.5s vs 4.1s. Holds up.
== assistant +40s
About 2.8x faster on the same data and 7% smaller. That's worth a line in docs/DESIGN.md next to the gzip numbers, and it changes the calculus for the gzip seek index: with zstd rotation, an evening window on a day-old file costs 4 s, and the index idea can go off the list.
== user +2m
Updated the design doc. Ana's reworked PR just came in: entries instead of lines, memchr, three tests. Looks right to me. Merging. I think that's logslice 0.2 almost done.
== assistant +30s
Sounds like it. Before tagging: run the property test with `PROPTEST_CASES=2000` once more (the grep path adds a second way to print entries), and add a `--grep` line to the README. Then 0.2 is: `--tz`, `--last`, `--grep`, zstd input.
== user +1m
Will do. Thanks for everything this week.
== assistant +25s
You're welcome. Congratulations on 0.2, and enjoy the weekend.
''']


# --- (d) debugging a flaky test ------------------------------------------------------------------

FLAKY = r'''
@ 2026-04-21T13:05:00Z
== user
We have a flaky test in our Python job queue library and it's driving the team nuts. `test_retry_backoff` fails maybe 1 run in 30 on CI, never locally. Where do I even start?
== assistant +1m
Start by making it fail on purpose, locally. "Never locally" usually means "not under local conditions", and the usual differences are: test order, parallelism, machine speed, and time.

A good first step is brute force with `pytest-repeat`:

```bash
pip install pytest-repeat
pytest tests/test_retry.py::test_retry_backoff --count 200 -x -q
```

If that never fails, the test alone is fine and the flakiness comes from *other tests* (order or shared state). Can you paste the test and the CI failure?
== user +4m
Here's the test:

```python
def test_retry_backoff():
    calls = []

    def flaky_job():
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise TemporaryError("try again")
        return "ok"

    q = JobQueue(workers=1)
    q.submit(flaky_job, retry=RetryPolicy(attempts=5, base_delay=0.05))
    q.join(timeout=2)

    assert len(calls) == 3
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert 0.05 <= gaps[0] < 0.15
    assert 0.10 <= gaps[1] < 0.25
```

And the CI failure:

```
FAILED tests/test_retry.py::test_retry_backoff - assert 0.05 <= 0.0
```
== assistant +1m20s
That failure message is more useful than it looks: the first gap is **exactly 0.0**. That's not "CI is slow" (slowness makes gaps *bigger*, and would break the upper bounds). A gap of zero means the second attempt ran **immediately**, with no backoff at all. So in the failing runs, the retry policy isn't delaying.

Things that would do that:
1. The delay is computed with jitter, and jitter can produce 0 (e.g. "full jitter": `random.uniform(0, delay)`).
2. Something else mutated the policy or a shared default.
3. `time.monotonic()` being mocked by another test and not restored.

How does `RetryPolicy` compute the delay?
== user +3m
```python
@dataclass
class RetryPolicy:
    attempts: int = 3
    base_delay: float = 0.1
    max_delay: float = 30.0
    jitter: bool = False

    def delay(self, attempt: int) -> float:
        d = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        if self.jitter:
            d = random.uniform(0, d)
        return d
```

jitter defaults to False and the test doesn't set it.
== assistant +50s
Then with the code as shown, `delay(1)` is 0.05 and can't be 0. So either the policy the worker uses isn't the one the test created, or something sets `jitter` to True. Let's find out which rather than guess. Run the repeat loop first:
== user +1m
Before that: CI runs with `pytest -n 4` (xdist) and locally I run plain `pytest`. Could that be it?
== assistant +1m
It could contribute, and it's worth knowing what it changes: with `-n 4`, tests are spread over 4 worker processes, so **which tests share a process, and in what order, changes from run to run**. That's a classic source of "only fails on CI": a test that depends on state left by another test only fails when the two land in the same worker in the wrong order.

Quick check: run locally the way CI does, a few times:

```bash
for i in 1 2 3 4 5 6 7 8 9 10; do pytest -n 4 -q tests/ 2>&1 | tail -1; done
```

If it fails sometimes here too, it's not the CI machine, it's the distribution of tests.
== tool +7m
$ for i in 1 2 3 4 5 6 7 8 9 10; do pytest -n 4 -q tests/ 2>&1 | tail -1; done
314 passed, 4 skipped in 12.41s
314 passed, 4 skipped in 12.08s
1 failed, 313 passed, 4 skipped in 12.37s
314 passed, 4 skipped in 12.22s
314 passed, 4 skipped in 12.19s
314 passed, 4 skipped in 12.57s
314 passed, 4 skipped in 12.30s
314 passed, 4 skipped in 12.11s
314 passed, 4 skipped in 12.44s
314 passed, 4 skipped in 12.26s
== user +1m
1 failure in 10 runs with -n 4 locally! So it's not the CI machine. But which test causes it is random with xdist.
== assistant +40s
Right, xdist makes it reproducible-ish but not *replayable*: you can't easily rerun the same distribution. That's why I'd go to a single process with a controlled, random order next. But first, confirm the test is fine alone:
== tool +3m
$ pytest tests/test_retry.py::test_retry_backoff --count 200 -x -q
........................................................................ [ 36%]
........................................................................ [ 72%]
........................................................                 [100%]
200 passed in 41.37s
== user +30s
200 out of 200 alone. So it's the other tests.
== assistant +1m
Good, that narrows it a lot: the test is fine in isolation, so some other test leaves state behind. Next step: find *which* test. If you use `pytest-randomly` (or can install it), random order plus a seed makes order-dependent failures reproducible:

```bash
pip install pytest-randomly
for seed in $(seq 1 40); do
  pytest -q -p randomly -p no:cacheprovider --randomly-seed=$seed tests/ > /tmp/run-$seed.txt 2>&1 \
    || echo "seed $seed failed"
done
```

Each failing seed is a test order you can replay exactly.
== tool +9m
$ for seed in $(seq 1 40); do pytest -q -p randomly -p no:cacheprovider --randomly-seed=$seed tests/ > /tmp/run-$seed.txt 2>&1 || echo "seed $seed failed"; done
seed 7 failed
seed 22 failed
seed 31 failed
$ grep FAILED /tmp/run-7.txt /tmp/run-22.txt /tmp/run-31.txt
/tmp/run-7.txt:FAILED tests/test_retry.py::test_retry_backoff - assert 0.05 <= 0.0
/tmp/run-22.txt:FAILED tests/test_retry.py::test_retry_backoff - assert 0.05 <= 0.0
/tmp/run-31.txt:FAILED tests/test_retry.py::test_retry_backoff - assert 0.05 <= 0.0
== user +1m
3 of 40 seeds fail, all with the same assertion. Reproducible now!
== assistant +1m10s
Now we can bisect the order. For a failing seed, the culprit must run *before* `test_retry_backoff`. Get the order pytest used:

```bash
pytest -p randomly --randomly-seed=7 tests/ --collect-only -q | grep '::' > /tmp/order-7.txt
```

Then take the tests before `test_retry_backoff` in that list and halve: run the first half plus `test_retry_backoff` with `-p no:randomly` (so the order you give is kept), see whether it fails, and keep the half that does. With a few hundred tests that's 8-9 runs. Doing it by hand once is instructive, and it's mechanical enough to script later.

Alternatively, cheaper first: intersect. Which tests run before `test_retry_backoff` in **all three** failing seeds, but not in the passing ones? That's often a short list immediately.
== user +12m
I did the intersection with a little script. Tests that come before test_retry_backoff in all 3 failing orders: 11. Tests among those that ALSO come before it in most passing orders: 10. The one that's different: `test_jitter_spreads_delays` in tests/test_policy.py. It runs before test_retry_backoff in all 3 failing seeds and in only 2 of the 37 passing ones.
== assistant +40s
Nice piece of detective work. And the name fits the symptom perfectly: a test about jitter, followed by a test that suddenly has zero-ish delays. Can you paste it?
== user +1m
```python
def test_jitter_spreads_delays():
    policy = DEFAULT_POLICY
    policy.jitter = True
    delays = {round(policy.delay(3), 3) for _ in range(50)}
    assert len(delays) > 10
```

Oh no. It mutates DEFAULT_POLICY.
== assistant +1m30s
There it is. `DEFAULT_POLICY` is a module-level `RetryPolicy` instance, and the test sets `jitter = True` on **the shared object** and never restores it. Every later test using the default policy now has full jitter, and `random.uniform(0, d)` sometimes returns a tiny value; rounded in the failure message, `0.0`.

But wait: `test_retry_backoff` passes its *own* `RetryPolicy(attempts=5, base_delay=0.05)`. So why does the default's jitter affect it? Something must merge the two. Does `submit` combine the given policy with `DEFAULT_POLICY`?
== user +3m
Yes!

```python
    def submit(self, fn, *args, retry: RetryPolicy | None = None, **kwargs):
        policy = DEFAULT_POLICY if retry is None else dataclasses.replace(DEFAULT_POLICY, **{
            k: v for k, v in dataclasses.asdict(retry).items() if v != getattr(RetryPolicy, k, None)
        })
```

It takes the default and overrides only the fields the caller changed from the class defaults. Since the test didn't change jitter, jitter comes from DEFAULT_POLICY, which the other test set to True.
== assistant +1m40s
So there are two bugs, and the flaky test found the real one:

1. **The test bug**: `test_jitter_spreads_delays` mutates shared state. Fix: build its own policy, `RetryPolicy(jitter=True)`.
2. **The library bug**, more important: `submit` treats "field equals the class default" as "caller didn't set it". A caller who explicitly passes `RetryPolicy(jitter=False)` gets the default's jitter anyway, if someone changed the default. That's a silent behaviour change in production code, not just in tests: any app that tweaks `DEFAULT_POLICY` at startup changes policies that callers spelled out explicitly.

Fix for 2: if the caller passes a policy, **use it as is**. If you want "start from the defaults and tweak", give that its own explicit API:

```python
q.submit(job, retry=DEFAULT_POLICY.with_(attempts=5))
```

where `with_` is `dataclasses.replace(self, **changes)`. And make `RetryPolicy` frozen (`@dataclass(frozen=True)`), so nothing can mutate `DEFAULT_POLICY` in place ever again: the jitter test would have raised `FrozenInstanceError` on day one instead of causing months of flakiness.
== user +4m
Frozen dataclass is a great idea. Let me check what breaks if I freeze it.
== tool +2m
$ pytest -q -x tests/
..........................F
=================================== FAILURES ===================================
__________________________ test_jitter_spreads_delays __________________________

    def test_jitter_spreads_delays():
        policy = DEFAULT_POLICY
>       policy.jitter = True
E       dataclasses.FrozenInstanceError: cannot assign to field 'jitter'

tests/test_policy.py:31: FrozenInstanceError
=========================== short test summary info ============================
FAILED tests/test_policy.py::test_jitter_spreads_delays - dataclasses.FrozenInstanceError: cannot assign to field 'jitter'
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
1 failed, 26 passed in 1.84s
== user +30s
Exactly the culprit, caught immediately. Are there other places that mutate it? Running without -x.
== tool +1m
$ pytest -q tests/ 2>&1 | tail -4
FAILED tests/test_policy.py::test_jitter_spreads_delays - dataclasses.FrozenInstanceError: cannot assign to field 'jitter'
FAILED tests/test_worker.py::test_worker_gives_up_after_attempts - dataclasses.FrozenInstanceError: cannot assign to field 'attempts'
2 failed, 312 passed, 4 skipped in 38.91s
== user +1m
A second one! test_worker_gives_up_after_attempts sets DEFAULT_POLICY.attempts = 2. That one never caused visible flakiness because no other test checks the attempt count with the default policy, I guess.
== assistant +50s
Right: a latent bug of the same kind, waiting for the test that would notice. Freezing found both in one run; that's the value of turning a convention ("don't mutate the default") into something the language enforces. Fix both tests to build their own policy, then let's look at the library change and the remaining timing sensitivity.
== user +8m
Both tests fixed. Library: `submit` now uses the given policy as is, and I added `RetryPolicy.with_()`. Grepped our two services that use the library: neither mutates DEFAULT_POLICY, one uses `retry=RetryPolicy(attempts=10)` and expects base_delay 0.1 (the class default), which still holds.
== assistant +1m
Good that you checked the callers. That one would behave the same: with "use as is", `RetryPolicy(attempts=10)` has `base_delay=0.1` from the class default, as before, and only the merge-with-mutated-global surprise is gone. Put a line in the changelog anyway: "`submit(retry=...)` now uses the given policy exactly; it no longer inherits fields from `DEFAULT_POLICY`." Someone may have relied on it without knowing.

Now the remaining flakiness risk. `test_retry_backoff` still measures real time with upper bounds like `< 0.15`. On a loaded CI runner a 100 ms scheduling hiccup is not unusual, so this test *will* fail occasionally for a different reason, and you'll be back here in three months. Does the queue let you inject the clock and the sleep?
== user +2m
No, it calls time.monotonic() and time.sleep() directly in worker.py.
== assistant +1m40s
Then that's the structural fix: give the worker a clock it can be handed. Smallest version:

```python
class Clock(Protocol):
    def now(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...

class SystemClock:
    def now(self) -> float:
        return time.monotonic()
    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

class JobQueue:
    def __init__(self, workers: int = 4, clock: Clock | None = None):
        self._clock = clock or SystemClock()
```

And in tests, a fake clock whose `sleep` just advances `now` and records the requested delay:

```python
class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []
    def now(self) -> float:
        return self.t
    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
```

Then the test asserts the **delays the policy asked for**, exactly, instead of wall-clock gaps with tolerances:

```python
def test_retry_backoff():
    clock = FakeClock()
    q = JobQueue(workers=1, clock=clock)
    q.submit(flaky_job, retry=RetryPolicy(attempts=5, base_delay=0.05))
    q.join()
    assert clock.sleeps == [0.05, 0.1]
```

No tolerances, no sleeps, runs in microseconds, and it fails for exactly one reason: wrong backoff.
== user +3m
One problem: with workers > 1 the workers are threads, and the fake clock isn't thread-safe. Does that matter?
== assistant +1m
For `workers=1`, no: one thread calls the clock. For multi-worker tests it matters in two ways: `self.t += seconds` isn't atomic across threads, and, more fundamentally, "advance time when anyone sleeps" stops making sense when two threads sleep concurrently (time should advance by the max, not the sum).

I'd keep it simple: timing tests use `workers=1` and the fake clock; concurrency tests use the real clock and assert only on *outcomes* (all jobs ran, none twice), never on durations. If you later need deterministic multi-thread timing, that's a bigger tool (a scheduler that controls which thread runs), and it's rarely worth it.
== user +25m
Implemented the Clock protocol, FakeClock in tests/conftest.py as a fixture, rewrote test_retry_backoff and two other timing tests in test_worker.py. Running the seed loop again:
== tool +6m
$ for seed in $(seq 1 40); do pytest -q -p randomly -p no:cacheprovider --randomly-seed=$seed tests/ > /tmp/run-$seed.txt 2>&1 || echo "seed $seed failed"; done; echo done
done
$ tail -1 /tmp/run-7.txt
314 passed, 4 skipped in 31.02s
== user +1m
All 40 seeds pass, including 7. And the suite went from 38.9s to 31.0s, the timing tests were sleeping for real.
== assistant +50s
Both results are what you'd hope for. To keep it this way:

1. **Keep `pytest-randomly` on in CI permanently.** Order-dependence bugs get caught the week they're introduced, and the seed is printed at the top of every run, so a failure is reproducible with `--randomly-seed=<n>`.
2. **A lint for the pattern**: a small test that imports the package and checks that module-level policy objects are frozen, or simply keep `RetryPolicy` frozen and review any new `DEFAULT_*` object the same way.
3. **Write the postmortem note** in the PR: symptom (1 in 30 CI failures, gap 0.0), cause (test mutated a shared default; `submit` merged it into explicit policies), fixes (frozen policy, use given policy as is, injected clock), and how it was found (seeded random order, intersection of orders). The next flaky test goes much faster when the method is written down.
== user +3m
Writing it up now. Can you sanity-check my summary?

"test_retry_backoff failed ~3% of CI runs with a zero first backoff. Cause: test_jitter_spreads_delays set jitter=True on the module-level DEFAULT_POLICY; JobQueue.submit merged DEFAULT_POLICY into caller-provided policies, so the jitter leaked into unrelated jobs. A second test mutated attempts the same way. Fix: RetryPolicy is frozen; submit uses the given policy unchanged (new RetryPolicy.with_() for derived policies); workers take an injectable Clock and timing tests use FakeClock. Found via pytest-randomly seeds 7/22/31 and intersecting test orders."
== assistant +1m
That's accurate and complete. Two small suggestions:

- "~3% of CI runs" → say how you know: "3 of 40 random orders locally; roughly 1 in 30 CI runs". It shows the estimate and the reproduction agree.
- Add the user-facing consequence explicitly, because it's the part reviewers of the library change care about: "Behaviour change: `submit(retry=p)` no longer inherits fields from `DEFAULT_POLICY`."

Otherwise it's a model postmortem: symptom, cause, fix, method, in five sentences.
== user +2m
Added both. PR is up. Thanks, this was a satisfying one.
== assistant +25s
It was a good one. Good luck with the review!
@ 2026-04-22T08:47:00Z
== user
Follow-up from yesterday's flaky test PR. A reviewer asks: why not just use `freezegun` or `time-machine` instead of adding a Clock parameter to the library?
== assistant +1m20s
Fair question; both are good tools. The trade-offs:

**freezegun / time-machine** patch the time functions globally for the duration of a test.
- No change to library code.
- But they patch *process-wide*: with worker threads, every thread sees the patched time, and "sleep" behaviour varies (freezegun doesn't make `time.sleep` return instantly; time-machine can tick or not). The worker thread would still really sleep unless you also patch `time.sleep`.
- The test ends up depending on *how* the library gets the time (`time.monotonic` vs `time.time` vs `datetime.now`). Refactor one call and the test silently stops controlling it.

**An injected clock**
- One small library change (an optional parameter, default unchanged for users).
- The test controls exactly the dependency the code uses, including `sleep`, and records what was requested, so you assert on intent (`[0.05, 0.1]`), not on observed durations.

For a queue whose core behaviour *is* timing (backoff, timeouts), the injected clock is the sturdier choice. For an app that calls `datetime.now()` in one place to stamp a record, time-machine is perfectly fine.
== user +2m
I'll paste that into the PR thread, nicely put. Reviewer approved.
== assistant +25s
Great, merge away.
@ 2026-04-29T15:22:00Z
== user
pytest-randomly paid off already: a CI run failed today on a different test, and the log printed the seed. `Using --randomly-seed=3141592`. Failure:

```
FAILED tests/test_queue.py::test_pending_lists_jobs_in_order - AssertionError: assert ['b', 'a', 'c'] == ['a', 'b', 'c']
```
== assistant +50s
The method from last week applies directly, and you already have step one for free: replay the exact order.

```bash
pytest -p randomly --randomly-seed=3141592 tests/ -q
```

If it fails locally with that seed, we're in business. Then the same question as before: what state does the test depend on? A list of names in the wrong order smells like **iteration order of a set** (or of a dict built from one) somewhere in `pending()`.
== tool +2m
$ pytest -p randomly --randomly-seed=3141592 tests/ -q 2>&1 | tail -2
FAILED tests/test_queue.py::test_pending_lists_jobs_in_order - AssertionError: assert ['b', 'a', 'c'] == ['a', 'b', 'c']
1 failed, 313 passed, 4 skipped in 30.77s
$ pytest -p randomly --randomly-seed=3141592 tests/test_queue.py::test_pending_lists_jobs_in_order -q 2>&1 | tail -1
1 failed in 0.21s
== user +1m
Fails even alone with that seed! So this time it's not another test. And pending() is:

```python
    def pending(self) -> list[str]:
        return [job.name for job in self._pending]   # self._pending is a set()
```
== assistant +1m20s
There it is: iterating a `set` of objects. The order depends on the elements' hashes. For a `Job` object without a custom `__hash__`, the hash is derived from its memory address, which varies with everything allocated before it. So set order is effectively arbitrary and can change between runs, Python versions, or just because a different test ran first.

Why the *seed* makes it reproducible even alone, I'm less sure of. My best guess: pytest-randomly seeds Python's `random` module (and a few others) before each test, so anything random during setup repeats exactly, and with it the pattern of allocations, so the set comes out in the same wrong order every time for that seed. Either way, the deeper point stands: the test asserted an order the code never promised.

Fix the code, not the test: if `pending()` should be in submission order (the test's name says so), store pending jobs in an insertion-ordered structure. A dict keyed by job id gives O(1) removal and keeps order:

```python
self._pending: dict[int, Job] = {}
...
def pending(self) -> list[str]:
    return [job.name for job in self._pending.values()]
```
== user +6m
Switched to a dict keyed by job id. Test passes with seed 3141592 and with 40 other seeds.
== assistant +40s
Good. Also check for other `set()` attributes in the library whose order leaks out through an API or a log line; the same bug could be sitting elsewhere, waiting for a test that notices. A quick `grep -n "= set()" src/` will list the candidates.
== tool +1m
$ grep -rn "= set()" src/
src/jobqueue/queue.py:58:        self._cancelled: set[int] = set()
src/jobqueue/worker.py:31:        self._seen_errors = set()
== user +2m
`_cancelled` is only used for membership checks, fine. `_seen_errors` is logged on shutdown as a list, so the log order is random. Harmless but I'll sort it so logs are diffable.
== assistant +30s
Sensible: sorting for output is the cheapest fix when order doesn't mean anything. That's two flaky tests explained in a week, both by making randomness replayable first. Worth adding a line to the contributing guide: "if CI fails, rerun locally with the seed printed at the top of the log".
== user +1m
Added to CONTRIBUTING.md. Thanks again.
== assistant +25s
You're welcome. That one line will save someone an afternoon.
'''


# --- (b) trip planning -------------------------------------------------------------------------------

TRIP = r'''
@ 2026-04-04T20:12:00Z
== user
My partner Marta and I want to do Portugal in October, 9 days, probably Oct 3-11. Lisbon and Porto for sure. Budget around 2,400 EUR for the two of us, not counting flights. We like food, walking around neighbourhoods, one or two day trips. Marta hates early mornings. Where do we start?
== assistant +1m10s
Nice trip. Start with the skeleton, because everything else (hotels, trains, day trips) hangs off it:

**1. Split of nights.** 9 days = 8 nights. With two cities and a day trip or two, something like:
- Lisbon: 4 nights (city + a Sintra day trip)
- Porto: 4 nights (city + a Douro valley day)

**2. Direction and flights.** If you can, fly **into Lisbon and out of Porto** (an "open-jaw" ticket). Then you never backtrack: Lisbon, train to Porto, fly home. Usually it costs about the same as a return ticket, sometimes less.

**3. Budget shape.** 2,400 EUR for 8 nights is 300 EUR a day for two. A workable split:
- accommodation ~120/night → 960
- food ~100/day → 900
- transport, day trips, tickets → ~350
- buffer ~190 (keep ~8% for the unexpected)

Want to start from that and adjust? The first decision is whether the 4/4 split feels right to you.
== user +6m
Open-jaw is a great idea, I'll check flights. 4/4 sounds right, though Marta says Lisbon deserves more. Maybe 5/3?
== assistant +50s
5/3 works if the Douro day is what you'd cut short in Porto. With 3 nights in Porto you get 2 full days: one for the city, one for the Douro, and no slack if it rains. With 5 in Lisbon you'd have room for Sintra plus a slow day (or a second day trip, e.g. to the coast at Cascais).

Honest take: Porto is more compact, so 3 nights is fine *if* you accept that the Douro day is weather-dependent. I'd book 5/3 and keep the Douro day flexible between the two Porto days.
== user +3m
5/3 it is. Neighbourhood for Lisbon? We want to walk everywhere and not be in party central.
== assistant +1m20s
Three good candidates, with trade-offs:

- **Alfama**: the old, hilly, atmospheric part; fado at night; very walkable but steep with cobbles, and some streets are busy with tourists in the day. Quiet at night in the residential lanes.
- **Príncipe Real**: leafy, calm, good restaurants and small shops, a short walk downhill to Chiado and Bairro Alto. Probably the best "live like a local" option.
- **Graça**: above Alfama, quieter, great viewpoints, a bit of a climb home every evening.

Avoid staying *in* Bairro Alto itself if you want to sleep: it's where the nightlife spills into the streets until late. Being a ten-minute walk away (Príncipe Real) gives you the food without the noise.

Given "walk everywhere, not party central": Príncipe Real, or the quiet upper part of Alfama if you want the old-town feel.
== user +4m
Príncipe Real sounds like us. Porto?
== assistant +1m
For 3 nights in Porto, stay central so you're never far from anything:

- **Around the Baixa/Aliados area**: central, flat-ish for Porto, near São Bento station (where the Douro trains leave).
- **Ribeira**: the riverfront, gorgeous, but touristy and the walk up from the river is steep.
- **Cedofeita / around Rua de Miguel Bombarda**: galleries, cafés, quieter, 10-15 minutes' walk to the centre.

Since the Douro day trip leaves from São Bento, Baixa is the practical choice; Cedofeita if you prefer quiet evenings.
== user +5m
Baixa. Now the order of days. Marta won't do anything before 10am, remember.
== assistant +1m40s
Here's a draft that respects the 10am rule and puts the weather-sensitive things where they can move:

| day | date | where | plan |
|-----|------|-------|------|
| 1 | Sat Oct 3 | Lisbon | arrive, check in Príncipe Real, evening walk to a viewpoint (miradouro) |
| 2 | Sun Oct 4 | Lisbon | Alfama and the castle, late lunch, fado in the evening |
| 3 | Mon Oct 5 | Sintra | day trip (go on a weekday: weekends are much busier) |
| 4 | Tue Oct 6 | Lisbon | Belém (monastery, riverside), pastries, LX Factory in the afternoon |
| 5 | Wed Oct 7 | Lisbon | slow day: markets, Chiado, maybe Cascais by train if sunny |
| 6 | Thu Oct 8 | → Porto | late-morning train (~3 h), check in, evening in Ribeira |
| 7 | Fri Oct 9 | Porto / Douro | Douro day if the forecast is good, else city day |
| 8 | Sat Oct 10 | Porto | the other of the two |
| 9 | Sun Oct 11 | fly home | from Porto |

Sintra on a Monday: check opening days for the specific palaces you want, some places close one day a week.
== user +3m
Good catch on closing days. How do we get to Sintra, and is it doable with a 10am start?
== assistant +1m
Yes: trains to Sintra run frequently from Lisbon's Rossio station, and the ride is under an hour, so leaving Príncipe Real around 10 gets you there before noon. The catch with a late start is that you'll arrive with the crowds, so pick **two** sights, not four. The hills between the palaces are steep and the local buses get full; many people underestimate the walking.

Pick two from: Pena Palace (the colourful one, most crowded), Quinta da Regaleira (gardens, the initiation well), the Moorish Castle (walls, views), Monserrate (gardens, quieter). For a late start I'd suggest Regaleira (near the town centre) and Pena or Monserrate, and book timed tickets in advance where offered.
== user +4m
Regaleira and Pena. Trains between Lisbon and Porto: book now or later?
== assistant +50s
Book a few weeks ahead rather than now. The fast trains (Alfa Pendular) between Lisbon and Porto typically take around 3 hours, and advance fares are usually cheaper than at the station; sales normally open a limited time before travel, so check the operator's site (CP) for when your date opens. Put a reminder in the calendar for early September.

A late-morning departure fits the 10am rule and gets you to Porto mid-afternoon.
== user +2m
Reminder set. Let's do the budget properly now that we have the plan.
== assistant +1m50s
Here's the budget against the plan, for two people, in EUR:

| item | estimate | notes |
|------|---------:|-------|
| Lisbon, 5 nights @ ~130 | 650 | Príncipe Real runs a bit above average |
| Porto, 3 nights @ ~110 | 330 | Baixa |
| food, 9 days @ ~100 | 900 | mix of tascas and two nicer dinners |
| Sintra (train + 2 sights) | 80 | |
| Lisbon → Porto train | 80 | advance fare, 2 people |
| Douro day trip | 120 | train + boat, or a small-group tour costs more |
| fado evening | 60 | some venues have a minimum spend |
| local transport, misc | 70 | metro, trams, taxis back uphill |
| **subtotal** | **2,290** | |
| buffer | 110 | |
| **total** | **2,400** | |

It fits, but the buffer is thin (under 5%). If you want ~10%, the flexible items are the two nicer dinners and the Douro choice (DIY train + boat vs tour).
== user +6m
Marta says the nicer dinners are non-negotiable, ha. DIY Douro then. How does that work?
== assistant +1m20s
The classic DIY version: take the regional train from Porto São Bento up the Douro line to **Pinhão** (roughly 2.5 hours each way; the second half runs along the river and is the scenic part: sit on the right-hand side going up, facing the river). In Pinhão:

- a one-hour river boat trip from the waterfront,
- lunch,
- a winery visit with tasting (book ahead; several quintas are walkable or a short taxi ride from the station).

Then the train back. It's a long day (~9 hours door to door), so with a 10am start you'd take a late-morning train and come back in the evening. Check the return timetable first: there are only a handful of trains per day on that line, and missing the last one is the one way this plan goes wrong.
== user +3m
Long day but sounds lovely. Is Sunday Oct 11 morning OK for the flight or should we go later?
== assistant +50s
Given Marta and mornings: aim for a flight **after 13:00**. Porto's airport is about 30-40 minutes from Baixa by metro, and you'd want to be there ~2 hours before a flight in the EU. A 13:00 flight means leaving the hotel around 10:00, which is exactly the boundary. A 15:00 flight gives you a relaxed breakfast and one last walk.
== user +4m
Flights found: into Lisbon Sat 3rd landing 11:40, out of Porto Sun 11th at 15:20. 412 EUR for both of us. Booking.
== assistant +40s
That's a good result for an open-jaw, and the times are ideal: a Lisbon afternoon on day 1 and a slow last morning in Porto. Next bookings, in order of what sells out first:

1. Príncipe Real accommodation (5 nights)
2. Porto accommodation (3 nights)
3. Pena + Regaleira timed tickets for Mon Oct 5 (closer to the date)
4. Lisbon → Porto train (when sales open)
5. fado dinner and the two nice dinners (2-3 weeks ahead)
6. Douro winery visit (a week ahead, once you know which day)
@ 2026-04-06T19:30:00Z
== user
Booked both places. Lisbon: a flat in Príncipe Real, 5 nights, 640 EUR total. Porto: small hotel near Aliados, 3 nights, 345. So 985 for accommodation vs 980 planned.
== assistant +40s
Nicely on budget: +5 EUR on accommodation. Running total of fixed costs: 985 accommodation. Flights are outside the 2,400, so nothing else is committed yet. Your buffer is still ~105 EUR.

One thing to check on the Lisbon flat: Príncipe Real is on a hill, and "3rd floor, no lift" is common in old Lisbon buildings. Worth knowing before you arrive with suitcases.
== user +2m
Ha, it is 3rd floor no lift. We'll pack light. Can you give us a packing list for October? Marta runs cold.
== assistant +1m30s
October in Lisbon and Porto is usually mild, often somewhere in the high teens to low 20s °C by day and cooler in the evenings, with a real chance of rain, more so in Porto. So layers, and pack for one or two wet days. For two people, carry-on sized:

**Clothes (each)**
- 2 pairs of comfortable walking shoes with grip (the cobbles, "calçada", are slippery when wet)
- light rain jacket, packable
- 1 warm layer (a fleece or thin down jacket; Marta: maybe both)
- 5-6 tops, 2-3 bottoms, one outfit for the nice dinners
- a scarf: evenings by the river get chilly

**Other**
- small umbrella
- day backpack for Sintra and the Douro
- reusable water bottle
- EU plug: same as most of continental Europe, so nothing needed if you're coming from within the EU
- copies of bookings offline (train tickets, winery, fado)

Skip: heavy coat, more than two pairs of shoes each. Three flights of stairs, remember.
== user +3m
Perfect. Can you put the whole plan in one message I can share with Marta? Plan, bookings status, what's left.
== assistant +1m40s
Here it is:

**Portugal, Sat Oct 3 - Sun Oct 11**

*Booked*
- Flights: into Lisbon Sat 3rd (lands 11:40), out of Porto Sun 11th (15:20). 412 EUR, outside the budget.
- Lisbon: flat in Príncipe Real, 5 nights, 640 EUR (3rd floor, no lift: pack light!)
- Porto: hotel near Aliados, 3 nights, 345 EUR

*Plan*
1. Sat 3: arrive, evening miradouro walk
2. Sun 4: Alfama + castle, fado dinner
3. Mon 5: Sintra: Quinta da Regaleira + Pena (timed tickets)
4. Tue 6: Belém, LX Factory
5. Wed 7: slow day: markets, Chiado, maybe Cascais
6. Thu 8: late-morning train to Porto, evening in Ribeira
7. Fri 9 / Sat 10: Porto city + Douro day (Pinhão: boat, lunch, winery), whichever day has better weather
8. Sun 11: slow morning, airport by ~13:20

*To book*
- Pena + Regaleira tickets for Mon 5 (September)
- Lisbon → Porto train, Thu 8 late morning (when sales open; reminder set for early Sept)
- Fado dinner Sun 4, plus two nice dinners (2-3 weeks ahead)
- Douro winery visit (a week ahead)

*Budget* (2 people, excl. flights): 2,400 planned; 985 committed; buffer ~105 EUR.

*Rules*: nothing before 10:00. Non-negotiable nice dinners.
== user +2m
She loves it. "Non-negotiable nice dinners" is going on the fridge.
== assistant +25s
As it should be. Enjoy the planning, and come back when the train sales open if you want a second look at the Porto days.
@ 2026-05-24T11:20:00Z
== user
Update on Portugal: a friend who lived in Lisbon says we should swap Belém and Sintra, because Monday is when lots of museums in Lisbon are closed, so a Monday day trip out of the city is smart, and Belém on Tuesday is right. Wait, that's what we already have. But she also says Pena might be closed for restoration in parts. How do I check?
== assistant +1m
Your plan already does what she suggests: Sintra on Monday, Belém on Tuesday, so nothing to swap. The Monday logic is sound for Lisbon's museums, though you should still confirm each Sintra site's own opening days.

For Pena and partial closures: the official ticket site of the organisation that runs the Sintra parks is the source to trust. It lists opening hours, which areas are open, and any works. Check it once now and again a week before the trip, because restoration schedules change. If part of the palace interior is closed, the park and terraces are usually still worth it, and you could swap in Monserrate as your second sight.
== user +3m
Found it, the palace terraces are open, some interior rooms under restoration until "end of 2026". We'll still go. Also: Marta wants to add a cooking class in Porto. Where does it fit?
== assistant +50s
Porto has two days, one of them is the Douro. A cooking class is usually a late morning or afternoon thing lasting ~3-4 hours including the meal, so it fits best on the **city day**, and doubles as that day's lunch or dinner (budget: it replaces a meal, so the net cost is the class price minus ~40 EUR of food).

Since the Douro day floats with the weather, book the class only once you know which day is the city day, or pick a class with free cancellation up to a day before. Check your buffer first: it's ~105 EUR, and classes often cost more than that for two.
== user +2m
It's 95 EUR each, so 190. Over the buffer. Hmm.
== assistant +50s
Then it's a trade, not an addition. Options within the plan:

1. Make the class replace one of the two nice dinners (Marta decides, since those are non-negotiable): saves ~100.
2. Skip the LX Factory afternoon and the Cascais maybe-trip (~30), and take ~60 from the food line, since the class *is* a big meal.
3. Accept going ~90 EUR over the original 2,400. Perfectly legitimate, just decide it explicitly.

Option 2 keeps both dinners and lands you roughly on budget with a thinner buffer.
== user +2m
Option 3, she says, the class is the highlight. New total 2,490. Done deliberating.
== assistant +25s
Good call: decided on purpose, and for the highlight of the trip. Have a wonderful time in Portugal!
'''


# --- (c) research / reading ---------------------------------------------------------------------------

RESEARCH = r'''
@ 2026-04-27T18:30:00Z
== system
You are a research assistant helping with a reading group on storage engines. Explain clearly, separate what the papers claim from your own interpretation, and say when you are unsure of a detail.
== user +5s
Our reading group does LSM trees vs B-trees next week. I've read the original LSM-tree paper (O'Neil et al., 1996) once and I'm lost in the details. Can you give me the big picture first?
== assistant +1m20s
The big picture in one sentence: **an LSM tree turns random writes into sequential writes by buffering them in memory and merging them to disk in sorted batches, and pays for it with more work on reads and in the background.**

In a bit more detail:

- **B-tree**: data lives in fixed-size pages sorted by key. An update finds the page and modifies it *in place*. Reads are fast (a few page lookups); writes are random I/O, one page at a time.
- **LSM tree** (log-structured merge tree): writes go to an in-memory sorted structure (today usually called the *memtable*). When it fills, it's written out as an immutable sorted file. Over time, background *compaction* merges these files into larger sorted files, discarding overwritten and deleted entries.

The 1996 paper frames it in terms of 1990s disks: sequential I/O was far cheaper than random I/O, so a structure that only ever writes sequentially could sustain much higher insert rates for workloads like history tables and logs. The paper's multi-component structure (C0 in memory, C1...Ck on disk, "rolling merges" between them) is the ancestor of what RocksDB, LevelDB and Cassandra do, though the modern designs differ a lot in the details.

What part lost you? The rolling merge, or the cost analysis?
== user +3m
Actually first: what's in the memtable, physically? The paper talks about an AVL tree or something for C0.
== assistant +1m
Yes: the paper's in-memory component C0 can be any ordered structure; it mentions balanced trees such as AVL or 2-3 trees. What matters is that it stays sorted, so it can be written out as a sorted run.

Modern engines mostly use a **skip list** (LevelDB and RocksDB's default memtable): a sorted linked list with extra "express lanes" of pointers, giving O(log n) inserts and lookups on average. Skip lists are popular here because they're simple and can be made to work well with concurrent inserts. Every write also goes to a write-ahead log on disk first, so the memtable can be rebuilt after a crash; the memtable itself is purely in memory.
== user +2m
And the "rolling merge" between C0 and C1?
== assistant +1m20s
In the paper, C1 is a B-tree-like structure on disk, and the rolling merge continuously takes a range of entries from C0, merges them with the corresponding range of C1's leaf pages, and writes the merged result as **new** pages in large sequential blocks, never updating C1 pages in place. Think of a cursor sweeping through the key space again and again, moving data from memory to disk in sorted chunks.

Modern engines simplified this: instead of one continuously merged disk tree per level, they flush the whole memtable as an immutable sorted file (an SSTable) and let compaction merge files later. Same principle (sequential writes of sorted data, merging instead of updating in place), more modular mechanics.
== user +3m
OK, now the cost analysis. They have this whole argument about "the five minute rule" and page costs.
== assistant +1m40s
That section is the most dated part, so don't feel bad. The core of the argument, without the 1990s prices:

1. **The five-minute rule** (Gray and Putzolu, from the 1980s) is an economic rule of thumb: keep a page in memory if it's accessed more often than about once every few minutes, because the memory costs less than the disk arms you'd need to fetch it repeatedly. The exact number depends on the price ratio of memory to disk I/O capacity.
2. The LSM paper uses this kind of reasoning to argue that for a **high insert rate** on a big index, a B-tree needs many random I/Os per second, which means paying for lots of disk arms, whereas the LSM tree batches inserts so that each disk page write carries many entries.
3. Their conclusion, roughly: for insert-heavy workloads where reads of the index are comparatively rare, the LSM approach reduces the I/O cost by a large factor.

My interpretation, to separate from the paper's claims: the *specific* numbers are obsolete (SSDs changed the random/sequential gap, and memory is far cheaper), but the *shape* of the argument survives: LSM trees trade read cost and background work for cheaper writes, and whether that's a good trade depends on the workload's read/write mix.
== user +4m
OK that helps. Modern terms I keep seeing: write amplification, read amplification, space amplification. Can you define them precisely?
== assistant +1m50s
Sure, these three are the vocabulary of every modern comparison:

- **Write amplification (WA)**: bytes written to storage divided by bytes written by the application. If you insert 1 GB and the engine writes 10 GB to disk over time (because compaction rewrites data several times), WA = 10.
- **Read amplification (RA)**: the number of I/Os (or pages/files consulted) per logical read. A B-tree point lookup touches about one page per level; an LSM point lookup may have to check the memtable and several files, unless filters rule them out.
- **Space amplification (SA)**: bytes on storage divided by bytes of live data. An LSM tree holds obsolete versions and tombstones until compaction removes them; a B-tree wastes space in partly empty pages.

Rough characterisations, hedged because they depend heavily on configuration:
- B-trees: low RA, moderate SA (pages are often ~2/3 full), WA can be high for small random updates (rewriting a whole page for a small change).
- Leveled LSM (LevelDB/RocksDB default style): lower SA, higher WA (data gets rewritten at each level).
- Tiered LSM (common in Cassandra's size-tiered compaction): lower WA, higher SA and RA.

There's a nice framing paper for this trade-off: the **RUM conjecture** (Athanassoulis et al., 2016): you can optimise for two of Read, Update and Memory (space) overheads, but not all three at once.
== user +3m
Ooh, RUM conjecture is a good discussion starter for the group. Where do Bloom filters fit in?
== assistant +1m20s
They're the LSM tree's answer to read amplification on point lookups.

Each sorted file gets a Bloom filter over its keys: a compact bit array that answers "is key K in this file?" with either "definitely not" or "maybe". A lookup checks the filter first and skips files that definitely don't have the key. With something like 10 bits per key, the false-positive rate is around 1%, so a point lookup reads roughly one data block instead of one per file.

Two limits worth raising in the group:
1. Filters help **point lookups only**. A range scan ("all keys between A and B") still has to consult every file whose key range overlaps, and merge them. Prefix filters and range filters are an active research area for that reason.
2. Filters cost memory: 10 bits per key for a billion keys is over a gigabyte. That's the "M" in RUM showing up again.
@ 2026-04-28T19:05:00Z
== user
Next day. I've now read the first half of the RocksDB tuning guide and the LevelDB docs. Question: why does leveled compaction have such high write amplification? The numbers people quote are like 10-30x.
== assistant +2m
Let's derive it, because it's simple once you see it.

In leveled compaction, each level is about **T times larger** than the previous (T, the *fanout*, is often 10). Level L+1's files have non-overlapping key ranges. When data is moved from level L to L+1, each file from L is merged with **all files in L+1 that overlap its key range**, and since L+1 is ~T times bigger, a file from L overlaps about T files' worth of data in L+1 on average. All of that gets rewritten.

So each byte, each time it moves down one level, causes roughly **T bytes** of rewriting (in the worst case; on average somewhat less). With several levels, a byte moves down every level eventually:

    WA ≈ (number of levels) × (about T)

With T = 10 and ~4 levels below the memtable, that's in the tens, matching the 10-30x people quote. (Plus 1 for the write-ahead log, plus the initial flush.)

Tiered compaction instead waits until a level has ~T files of similar size and merges them *together* into one file in the next level, so each byte is rewritten about **once per level**: WA ≈ number of levels. That's why tiered is write-friendlier, at the cost of up to T overlapping files per level to search (RA) and more obsolete data lying around (SA).

Caveat: these are back-of-envelope models; real numbers depend on key distribution, update patterns, and many RocksDB options.
== user +4m
That's really clear. And B-tree write amplification, how does that compare?
== assistant +1m30s
For a B-tree, think per update: changing a 100-byte record means rewriting (at least) the **whole page** it lives in, say 4-16 KB. So for small random updates, WA per update can be in the **tens to hundreds**, which is worse than leveled LSM! Plus the write-ahead log, plus occasional page splits.

Two things soften that in practice:
1. **Batching in the buffer pool**: if many updates hit the same page before it's written back, one page write covers all of them. Hot pages get amortised; cold random updates don't.
2. **Full-page writes** in some engines (PostgreSQL writes a full page image to the WAL after each checkpoint for torn-page protection) make it *worse*, not better.

So the honest summary for the group: "B-trees have low read amplification and update in place; for write-heavy workloads with random keys, their write amplification can exceed an LSM's. LSMs win on writes and space (leveled) but pay in reads and in background compaction that competes with foreground work."
== user +3m
"Background compaction competes with foreground work": that's the tail latency thing, right? I saw a RocksDB talk about write stalls.
== assistant +1m20s
Yes. Compaction is work that has to keep up with the write rate. If writes come in faster than compaction can merge:

1. Level 0 accumulates files (and L0 files can overlap each other, so reads slow down),
2. RocksDB then deliberately **slows down** incoming writes, and past a further threshold **stops** them, until compaction catches up. Those are the "write stalls".

So throughput looks great on average, but the p99/p999 write latency has spikes. B-trees have their own hiccups (checkpoints, page splits), but generally smoother latency under sustained writes.

That's a good question to pose to the group: "Are you optimising for average throughput or tail latency?" The answer often decides between the two structures more than raw benchmarks do.
== user +5m
Can you help me structure a 20 minute intro for the group? I want to end with discussion questions.
== assistant +1m50s
Here's a structure:

**1. The problem (3 min)**
Random writes are expensive; the 1996 paper's insight was to make all writes sequential by buffering and merging. Show one diagram: memtable → L0 → L1 → L2.

**2. Two structures, one trade-off (5 min)**
- B-tree: update in place, low read amplification.
- LSM: append and merge, low write cost per entry, reads check several places.
- The vocabulary: write / read / space amplification, with one number each.

**3. The knobs inside LSM trees (6 min)**
- Leveled vs tiered compaction, with the back-of-envelope WA derivation (levels × fanout vs levels).
- Bloom filters: what they fix (point lookups) and what they don't (range scans).

**4. The RUM conjecture (3 min)**
Read, Update, Memory: pick two. Place B-tree, leveled LSM and tiered LSM on a triangle.

**5. Discussion questions (3 min + open)**
1. Our own system: is it read-heavy or write-heavy, and do we know the real ratio?
2. Do we care about average throughput or tail latency more? (write stalls vs B-tree checkpoints)
3. SSDs narrowed the random/sequential gap. Does the 1996 argument still hold, and if so, why? (hint: SSD write endurance and write amplification at the flash level)
4. Where does a design like a B-tree with buffered updates (B^ε-trees) sit on the RUM triangle?
== user +4m
Love question 3. What's the hint pointing at exactly?
== assistant +1m30s
That on SSDs, the argument shifts from "seek time" to "how flash works":

- Flash can't overwrite in place: pages are written once, and erasing happens in much larger **erase blocks**. The SSD's firmware (the flash translation layer) remaps writes and garbage-collects behind the scenes, which is *itself* a log-structured design, with its own write amplification inside the device.
- Small random writes tend to increase that internal write amplification; large sequential writes are friendlier to it.
- Flash cells wear out after a limited number of program/erase cycles, so total bytes written matters for the device's lifetime.

So "make writes large and sequential" is still good advice on SSDs, for endurance and for the device's internal garbage collection, even though the random-read penalty largely disappeared. There's research on how the LSM's compaction and the SSD's garbage collection interact (sometimes badly, doing similar work twice); I don't remember the specific papers well enough to cite them, so I'd present that as an open question rather than a claim.
== user +2m
Perfect, thanks for being upfront about what you're not sure of. Last thing: a reading list, ordered, for people who want more after the session.
== assistant +1m20s
Ordered from gentlest to deepest. I'm confident about the first four existing as described; double-check exact titles and years before sending:

1. **Designing Data-Intensive Applications** (Kleppmann), chapter 3 "Storage and Retrieval": the best gentle introduction to both structures.
2. **The Log-Structured Merge-Tree (LSM-Tree)**, O'Neil, Cheng, Gawlick, O'Neil, Acta Informatica, 1996: the original, now with context.
3. **Designing Access Methods: The RUM Conjecture**, Athanassoulis et al., EDBT 2016: short, and it frames the whole trade-off.
4. The **RocksDB wiki** pages on compaction and tuning: how a production engine exposes the knobs.
5. For the deep end: survey papers on LSM-based storage techniques (there is at least one well-cited survey from around 2019-2020); search for "LSM-based storage techniques survey" and check it's the VLDB Journal one.
== user +3m
Great list. I'll check the titles. Thanks, I actually feel ready for this now.
== assistant +25s
You are. Have a good session, and bring back any questions the group comes up with.
@ 2026-05-05T20:10:00Z
== user
The session went well! A few questions came up that I couldn't answer. First: why are deletes "expensive" in an LSM tree? Someone said deleting is just writing a marker.
== assistant +1m30s
They're right that the delete itself is cheap: a delete is written as a **tombstone**, a marker saying "key K is deleted as of now", just like any other write. The cost shows up later:

1. **Reads**: until compaction removes both the tombstone and the older values it shadows, a lookup or scan still has to read past them. A range scan over a region with many deleted keys can read lots of tombstones to return few rows.
2. **Space**: the deleted data stays on disk until the tombstone reaches the level holding the old values and both are compacted away. With leveled compaction, that can take a long time for cold key ranges.
3. **Range deletes** ("delete everything with prefix X") written as many point tombstones are the worst case. That's why RocksDB added a dedicated range tombstone, one marker covering a key range.

So "deletes are expensive" is really "deletes are cheap to write, but their cost is deferred and paid by reads and space until compaction catches up". A queue-like workload (insert, read once, delete) is the classic way to get bitten.
== user +3m
The queue example is exactly what one person in the group does with Cassandra, they said scans got slower over time. Second question: how does SQLite fit into this? It's a B-tree but it has a WAL.
== assistant +1m40s
SQLite is a B-tree engine; the WAL is a durability and concurrency mechanism layered on top, not an LSM:

- In **WAL mode**, a write appends the changed *pages* to the `-wal` file instead of modifying the main database file. Readers check the WAL for the newest version of a page (via the `-shm` index) and fall back to the main file.
- A **checkpoint** copies pages from the WAL back into the database file, in place, B-tree style, and the WAL starts over.

So the WAL makes commits mostly sequential appends, and lets readers proceed while a writer writes, but the data structure is still a B-tree updated in place at checkpoint time. Compared with an LSM there's no multi-level merging and no sorted runs; the WAL is "just" a log of recent page images, bounded by checkpointing (by default it checkpoints automatically when the WAL reaches about 1000 pages).

One practical consequence that matches our RUM discussion: a long-running reader can prevent a checkpoint from completing, and the WAL keeps growing meanwhile. Space amplification again, from a different mechanism.
== user +2m
Nice connection. Last one: RocksDB has "universal compaction". Is that the same as tiered?
== assistant +1m10s
Close relatives. RocksDB's universal compaction is its tiered-style strategy: it merges whole sorted runs of similar sizes together instead of pushing data level by level, aiming for lower write amplification at the cost of space and read amplification, which is the tiered trade-off we discussed. It has its own rules for *when* to merge (size ratios between runs, a cap on the number of runs, a space-amplification limit), so "universal ≈ RocksDB's flavour of tiered" is a fair one-liner, but the details differ from, say, Cassandra's size-tiered strategy. I'd check the RocksDB wiki's page on universal compaction for the exact triggers before quoting them.
== user +3m
Thanks. Can you write a short recap of the session for the group's notes page? Five bullets max.
== assistant +1m
- **Core trade-off**: B-trees update in place (cheap reads, random writes); LSM trees buffer and merge (cheap sequential writes, reads check several places, background compaction).
- **Vocabulary**: write, read and space amplification; the RUM conjecture says you can't minimise all three.
- **Compaction**: leveled ≈ levels × fanout write amplification, low space overhead; tiered/universal ≈ levels, more space and read overhead. Compaction competes with foreground writes: write stalls and tail latency.
- **Deletes** are cheap to write (tombstones) but their cost is deferred to reads and space; queue-like workloads suffer most.
- **SSDs** didn't end the argument: flash has its own log-structured layer, and large sequential writes still help endurance and garbage collection.
== user +1m
Posted. Thanks for all the help with this.
== assistant +25s
My pleasure. Enjoy the next reading!
'''


# --- (e) a short one ------------------------------------------------------------------------------------

GIT_UNDO = r'''
@ 2026-05-06T16:41:00Z
== user
git: I committed to main by accident instead of my feature branch. How do I undo the commit but keep the changes? Not pushed yet.
== assistant +40s
Since it's not pushed, it's easy:

```bash
git reset --soft HEAD~1      # undo the commit, keep the changes staged
git switch -c my-feature     # or: git switch my-feature, if the branch exists
git commit -m "..."          # commit there
```

`--soft` moves `main` back one commit and leaves your changes staged, exactly as they were just before you committed. (`--mixed`, the default, would keep them too but unstaged; `--hard` would throw them away, so don't use that one.)

If `my-feature` already exists and has other commits, `git switch` carries your staged changes along as long as they don't conflict with that branch.
== user +2m
Did it. main is back where it was. What if I had pushed already?
== assistant +50s
Then don't rewrite `main`, because others may have pulled it. Instead:

1. `git revert <sha>` on `main`: a new commit that undoes it, safe to push.
2. `git cherry-pick <sha>` onto your feature branch to get the change where it belongs.

When the feature branch merges later, git sees the original change come back, which is what you want. (If your team allows force-pushing main, `reset` + `push --force-with-lease` also works, but most teams protect main for good reason.)
== user +30s
Got it. And if it had been three commits on main instead of one?
== assistant +40s
Same idea, three steps back: `git reset --soft HEAD~3` keeps all three commits' changes staged as one combined change. If you'd rather keep them as three separate commits, move them with a branch instead:

```bash
git branch my-feature        # the branch now points at your 3 commits
git reset --hard origin/main # main goes back to the remote's state
git switch my-feature
```

Here `--hard` is safe because the commits still exist on `my-feature`. Check with `git log --oneline my-feature` before the reset if you want to be sure.
== user +20s
Perfect, thanks!
== assistant +25s
Anytime.
'''

# --- (f) writing / editing ---------------------------------------------------------------------------

WRITING = r'''
@ 2026-05-09T10:15:00Z
== user
I'm writing a blog post for our engineering blog: "Why we stopped paging on CPU". Here's my intro, it feels flabby:

"In this post I want to talk about something that has been on our minds for quite a while now, which is the question of alerting, and more specifically the question of which alerts should actually wake someone up in the middle of the night. For a long time, we had an alert on high CPU usage on our database servers, and it would fire quite often, and people would get woken up, and most of the time there was nothing to do."
== assistant +1m
The content is good, the problem is the run-up: the first sentence takes 40 words to get to "which alerts should wake someone up". Start with the concrete thing instead:

> For three years, our on-call engineers were woken up by a CPU alert on the database servers. Most nights it fired, there was nothing to do. This post is about why we deleted it, and what we page on instead.

What I changed:
- Opened with the **specific story** (the CPU alert) instead of the abstract topic ("alerting"). The abstract framing can come after, once the reader cares.
- "for quite a while now" → "for three years" (use the real number if you have it; I guessed).
- "most of the time there was nothing to do" kept, it's the punchline, just shorter.
- Added a promise of what the post delivers ("what we page on instead"), which is what makes people keep reading.
== user +3m
Much better. It was actually about two and a half years. "Most nights it fired" isn't right though, it was more like twice a week.
== assistant +40s
Accuracy first, then:

> For two and a half years, our on-call engineers were woken up by a CPU alert on the database servers, about twice a week. Almost every time, there was nothing to do. This post is about why we deleted it, and what we page on instead.

"About twice a week" is actually stronger than "most nights": it's specific, and anyone who's been on call knows what two wake-ups a week feels like.
== user +5m
Yes! Next paragraph:

"The reason why CPU is a bad thing to alert on is because high CPU in and of itself is not actually a problem. A database that is using 90% CPU might be perfectly healthy and serving all its queries in a timely manner. What actually matters to our users is whether their requests are being served successfully and quickly, which CPU usage does not directly tell us."
== assistant +1m10s
Same idea as a tighter paragraph:

> High CPU isn't a problem in itself. A database at 90% CPU can be perfectly healthy, serving every query on time: that's the machine doing its job. What our users care about is whether their requests succeed, and how fast. CPU usage doesn't tell us either.

Changes:
- "The reason why ... is because" → cut: it's a double construction ("reason why", "is because") that adds nothing.
- "in and of itself is not actually" → "isn't ... in itself": three hedges down to one.
- Added "that's the machine doing its job": a short reframe that makes the point memorable.
- Split the last sentence in two; the final short sentence lands harder.
== user +2m
"That's the machine doing its job" is great. Now the section where we explain what we page on instead. I have a list:

- error rate over 1% for 5 minutes
- p99 latency over 800ms for 10 minutes
- replication lag over 30s
- disk over 85%

Should I write it as prose or keep the list?
== assistant +1m20s
Keep the list: these are thresholds people will want to scan and copy. But give each item its **reason**, because the reasons are the actual content of the post (anyone can copy thresholds; the thinking is what transfers):

> We now page on four things, each tied to something a user or the data would feel:
>
> - **Error rate above 1% for 5 minutes.** Users are seeing failures right now.
> - **p99 latency above 800 ms for 10 minutes.** Users are waiting; 800 ms is where our checkout flow's abandonment starts to climb.
> - **Replication lag above 30 seconds.** A failover now would lose data, or serve stale reads.
> - **Disk above 85%.** Not urgent yet, but running out of disk is the one failure that gets worse on its own and can't be fixed quickly at 3am.

I invented the checkout abandonment detail as a placeholder: replace it with your real reason for 800 ms, or drop the clause if there isn't a specific one. A made-up justification is worse than none.
== user +4m
Good flag. The 800ms came from our SLO, not from abandonment data. I'll say "800 ms is our latency SLO". And disk at 85%: someone on the team argued that shouldn't page either, it should be a ticket.
== assistant +1m
That's a reasonable argument, and it fits the logic of your own post: page only when someone must act *now*. Disk at 85% usually gives you days, not minutes.

Options:
1. **Ticket at 85%, page at 95%** (or on a *rate*: "will be full within 4 hours at the current growth"). The predictive version is the better alert, because 85% on a slow-growing disk is fine for weeks while 70% can be an emergency if something is writing 10 GB a minute.
2. Keep it as is and explain why you chose it.

If you go with 1, it makes a nice closing point for that section: "The disk alert is the only one that predicts the future; the other three describe the present."
== user +3m
Going with the predictive version, and stealing your closing line. Should I mention that it was Priya who argued against the disk page? She'd probably like the credit.
== assistant +40s
If she's fine with being named, yes: it's a nice touch and shows the decision came out of a real team discussion, which makes the post more credible. Something like "Priya argued that disk at 85% shouldn't wake anyone either, and she was right" keeps it short. Ask her first; some people prefer not to be named on a public blog.
== user +3m
She said yes, and she'd like a link to her own post about SLOs, which I'll add. Can you read the whole thing once more for tone? I'll paste the full draft.

"For two and a half years, our on-call engineers were woken up by a CPU alert on the database servers, about twice a week. Almost every time, there was nothing to do. This post is about why we deleted it, and what we page on instead.

High CPU isn't a problem in itself. A database at 90% CPU can be perfectly healthy, serving every query on time: that's the machine doing its job. What our users care about is whether their requests succeed, and how fast. CPU usage doesn't tell us either.

We now page on four things, each tied to something a user or the data would feel: [list]. The disk alert is the only one that predicts the future; the other three describe the present.

Since the change in February, pages went from about 9 a month to 2, and both of those were real incidents. Nobody misses the CPU alert."
== assistant +1m
The tone is right: direct, concrete, a little dry. Three last touches:

1. The ending: "Nobody misses the CPU alert" is a good line; consider adding what you did with CPU data, because readers will wonder whether you stopped *looking* at it: "We still graph CPU; we just don't wake anyone up for it."
2. "about 9 a month to 2": say over what period ("in the three months since"), so it doesn't read like one lucky month.
3. The intro promises "why we deleted it"; the second paragraph delivers the why. Good structure; nothing to change.

It's a strong short post. Ship it.
== user +2m
Added both. What about the title? "Why we stopped paging on CPU" is fine but a bit flat.
== assistant +50s
It's clear, which matters most. A few alternatives in different registers:

1. "Why we stopped paging on CPU" (current: plain, searchable)
2. "We deleted our CPU alert. Nobody noticed." (a hook; the body delivers on it)
3. "Page on symptoms, not causes: retiring our CPU alert" (names the principle, good for readers who know the SRE literature)
4. "Two wake-ups a week for nothing" (personal, a bit bleak)

For an engineering blog, I'd pick 2 or 3. Number 2 is more fun and the post's last line pays it off; number 3 ages better and is easier to find by search.
== user +2m
2, with 3 as the subtitle. And a one-line summary for the blog index?
== assistant +30s
"Our database CPU alert woke someone up twice a week for two and a half years, almost always for nothing. Here's what we page on now, and why."
== user +1m
Perfect. Publishing Monday. Thanks!
== assistant +25s
Good luck with it!
'''


# --- (g) markup-looking text, to exercise the TUI's literal display ------------------------------------
# Everything below is plain text. The "\x1b[31m" is a backslash followed by letters, not an escape byte.

MARKUP = r'''
@ 2026-05-03T21:10:00Z
== user
I'm building a small Textual app that shows chat messages in a scrollable list, one `Static` per message. Weird bug: a message that contains `[bold red]error[/]` shows up as a bold red "error" instead of the literal text. How do I display text exactly as it is?
== assistant +1m10s
That's Textual doing what it's designed to do: `Static` (and `Label`, which is a `Static`) parses its content as **markup** by default, so anything that looks like `[style]...[/]` is treated as styling. For user-provided text, like chat messages, you want it never interpreted. Two ways:

1. Turn markup off for that widget:

```python
yield Static(message_text, markup=False)
```

2. Or pass a Rich `Text` object, which is never parsed for markup:

```python
from rich.text import Text

yield Static(Text(message_text))
```

I'd use the `Text` version for message content: it's explicit at the call site that this string is data, not markup, and it also lets you add *your own* styling safely later (e.g. `Text(message_text, style="dim")`) without the content being able to inject any.
== user +4m
markup=False fixed it. But now I'm nervous, what else could a message do? A teammate pasted a test message with this in a code block and clicking it quit my app:

```
Click [@click=app.quit]here[/] for the docs
```
== assistant +1m20s
Good instinct to be nervous: that's the same mechanism, and it's more than cosmetic. In Textual markup, `[@click=...]` attaches an **action** to the text; clicking it runs the action, here `app.quit`. Any action your app exposes could be triggered that way, by anyone who can get text into a message.

With `markup=False` (or a `Text` object) the string is shown literally, square brackets and all, and nothing is clickable. So the fix you already made covers this too. The rule worth adopting across the app: **anything that comes from outside (messages, file contents, log lines, usernames) goes into widgets as `Text` or with markup off**; only strings you wrote yourself are markup.

A quick way to audit: search the code for `Static(`, `Label(`, `.update(` and `notify(` and check where each string comes from. Notifications are easy to miss: a toast that says "Imported {title}" is markup too.
== user +6m
Found two more: a notify() with the session title and a Label with a filename. Fixed both with rich.markup.escape for now.
== assistant +50s
`escape` works for those: it escapes the square brackets so they render literally. Two small notes:

- `escape` is right when you want to *combine* your markup with untrusted text, e.g. `notify(f"Imported [b]{escape(title)}[/b]")`: your bold stays, their brackets don't become markup.
- Make sure it's the escape function matching the markup you're rendering: Textual's newer content markup and Rich's markup are closely related but not identical, so check the Textual docs for your version for a `textual.markup.escape`, and prefer that for Textual widgets if it exists.

Then write a test: put a message containing `[bold red]x[/]`, `[@click=app.quit]y[/]` and a stray `[/]` into the list, and assert the rendered text equals the input exactly and the app is still running after a click on it.
== user +5m
Related thing. Some messages contain terminal colour codes because people paste command output. In the raw data it looks like this: `\x1b[31mFAILED\x1b[0m test_login`. In my app it shows garbage like `[31mFAILED[0m` or nothing at all, depending on the widget. What's the right way to show those?
== assistant +1m30s
First, decide what you *want* to show; there are three honest options:

1. **Literally, as characters**, making the invisible visible: show `\x1b[31mFAILED\x1b[0m` as text, with the escape byte rendered as a visible placeholder (e.g. `\x1b` or `␛`). Best for a tool whose job is to show data exactly, e.g. a history inspector.
2. **Interpreted**, i.e. red "FAILED": `Text.from_ansi(s)` in Rich parses the codes into styles. Nice for pasted terminal output, but it means message content can again style itself, the same concern as markup, just smaller.
3. **Stripped**: remove the codes and show `FAILED test_login`. Readable, loses information.

What you shouldn't do is pass the raw string with the real escape byte (ESC, 0x1b) straight to the terminal: that's the "garbage or nothing" you're seeing, since the terminal or the renderer half-interprets it.

Note that your example shows the *written-out* form: a backslash, `x`, `1`, `b`. If the data really contains those four characters, it's already literal text and `Text(...)` will show it exactly as typed. If it contains the actual ESC byte, you need option 1, 2 or 3 explicitly. For option 1, a small translation table does it:

```python
CONTROL = {i: f"\\x{i:02x}" for i in range(32) if chr(i) not in "\n\t"}
CONTROL[0x7F] = "\\x7f"

def visible(s: str) -> str:
    """Show control characters as \\xNN so they can't act on the terminal."""
    return s.translate(CONTROL)
```

`str.translate` with a dict is fast and handles every control character, not just ESC.
== user +4m
Option 1 fits my app (it's for inspecting chat logs). The data in my case does contain the real byte, I checked with `repr()`: `'\x1b[31mFAILED\x1b[0m test_login'`.
== assistant +50s
Then `visible()` plus `Text(...)` is exactly right: the ESC byte becomes the four characters `\x1b`, which can't do anything to the terminal, and `Text` keeps `[31m` from being read as markup. Combined:

```python
yield Static(Text(visible(message_text)))
```

Add that string to the test from before, so the test message now covers all three kinds of hostile-looking content: `[bold red]` markup, a `[@click=app.quit]` action, and a real ESC sequence. If all three render literally, you're in good shape.
== user +7m
Test written, all three render literally, app survives the click. Thanks, I learned more about terminals tonight than I wanted to.
== assistant +25s
That's the usual price of terminal apps. Your app is safer for it.
'''

# --- (h) ops: a disk-full incident, with a system prompt -----------------------------------------

OPS = r'''
@ 2026-04-15T03:12:00Z
== system
You are an SRE assistant. Ask for evidence before suggesting changes, prefer reversible steps, and never suggest deleting data without saying how to get it back.
== user +3s
Paged at 3am: Postgres primary disk at 97% and climbing. db-main-1, PostgreSQL 15. What do I check first?
== assistant +50s
First, buy time without deleting anything, then find what's growing. Run these and paste the output:

```bash
df -h /var/lib/postgresql
sudo du -sh /var/lib/postgresql/15/main/pg_wal /var/lib/postgresql/15/main/base
```

If `pg_wal` is large (more than a few GB), the WAL isn't being recycled, and the usual reasons are an inactive replication slot, failing WAL archiving, or a very long checkpoint interval. If `base` is what grew, it's table or index data (a runaway job, bloat). The two have very different fixes.
== tool +2m
$ df -h /var/lib/postgresql
Filesystem      Size  Used Avail Use% Mounted on
/dev/nvme1n1    500G  486G   14G  98% /var/lib/postgresql
$ sudo du -sh /var/lib/postgresql/15/main/pg_wal /var/lib/postgresql/15/main/base
211G	/var/lib/postgresql/15/main/pg_wal
262G	/var/lib/postgresql/15/main/base
== user +30s
pg_wal is 211G!
== assistant +40s
That's the problem: WAL that Postgres is keeping around. Don't delete anything in `pg_wal` by hand, ever: that can corrupt the database. Check what's holding it:

```sql
SELECT slot_name, slot_type, active,
       pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)) AS retained
FROM pg_replication_slots;

SELECT archived_count, failed_count, last_failed_wal, last_failed_time
FROM pg_stat_archiver;
```
== tool +1m
 slot_name      | slot_type | active | retained
----------------+-----------+--------+----------
 replica_2      | physical  | t      | 48 MB
 replica_3_old  | physical  | f      | 208 GB
(2 rows)

 archived_count | failed_count | last_failed_wal | last_failed_time
----------------+--------------+-----------------+------------------
         918342 |            0 |                 |
(1 row)
== user +1m
replica_3_old, inactive, 208 GB. That's the replica we decommissioned... three weeks ago I think. Nobody dropped the slot.
== assistant +1m
That explains it exactly: a physical replication slot makes the primary keep every WAL segment the slot's consumer hasn't confirmed, forever, even if that consumer is gone. Archiving is healthy (0 failures), so it's only the slot.

Before dropping it, confirm it's really unused, because dropping a slot that a live replica needs would force that replica to be rebuilt:

1. Is there any host still configured with `primary_slot_name = 'replica_3_old'`? Check your config management / inventory.
2. `active = f` means nothing is connected to it right now.

If replica_3 was decommissioned and its VM deleted, the slot is orphaned and dropping it is safe. Dropping a slot doesn't touch any data: it just lets Postgres recycle WAL it no longer needs to keep. The "way back" if you were wrong is rebuilding that replica from a base backup, which is annoying but not data loss.
== user +3m
Checked the inventory: replica_3 was deleted on March 24, its config is gone from the repo. Dropping.
== tool +2m
$ psql -c "SELECT pg_drop_replication_slot('replica_3_old');"
 pg_drop_replication_slot
--------------------------

(1 row)
$ psql -c "CHECKPOINT;"
CHECKPOINT
$ df -h /var/lib/postgresql
Filesystem      Size  Used Avail Use% Mounted on
/dev/nvme1n1    500G  281G  219G  57% /var/lib/postgresql
== user +30s
57%. Phew.
== assistant +1m
Good work, and quick. The manual `CHECKPOINT` let Postgres remove the old segments right away instead of at the next scheduled checkpoint.

Two things before you go back to sleep, both cheap:

1. **Confirm the remaining replica is healthy**: `SELECT client_addr, state, replay_lag FROM pg_stat_replication;` should show replica_2 `streaming` with small lag.
2. **Put a ceiling on this failure mode**: PostgreSQL 13+ has `max_slot_wal_keep_size`. Setting it (say `50GB`) means an abandoned slot can hold at most that much WAL; past that, the slot is invalidated instead of filling the disk. The trade-off: a replica that falls further behind than that must be rebuilt. For you, better than a 3am page. It can be changed with a reload, no restart.

The rest (alerts, runbook, postmortem) can wait for daylight.
== tool +2m
$ psql -c "SELECT client_addr, state, replay_lag FROM pg_stat_replication;"
 client_addr  |   state   |   replay_lag
--------------+-----------+-----------------
 10.20.3.12   | streaming | 00:00:00.000913
(1 row)
== user +1m
Replica fine. I'll do max_slot_wal_keep_size in the morning with the team. Going back to bed.
== assistant +20s
Sleep well. The incident is over; the follow-ups will keep until morning.
@ 2026-04-15T09:40:00Z
== user
Morning. Can you help me write the postmortem? Timeline from the pager: alert at 03:04 (disk 95%), I acked at 03:09, slot dropped at 03:21, disk at 57% at 03:22.
== assistant +1m40s
Here's a draft in the usual shape; fill in anything I've marked:

**Postmortem: db-main-1 disk nearly full (2026-04-15)**

*Summary*
The PostgreSQL primary's data volume reached 98% because an orphaned physical replication slot (`replica_3_old`) retained 208 GB of WAL. The slot was dropped at 03:21 UTC and usage fell to 57%. No downtime, no data loss.

*Timeline (UTC)*
- Mar 24: replica_3 decommissioned; its replication slot on the primary was not dropped.
- Mar 24 → Apr 15: the slot retains all WAL since replica_3 disconnected, ~9.5 GB/day.
- 03:04: alert, disk 95%.
- 03:09: on-call acknowledges.
- 03:15: `pg_wal` identified at 211 GB; `pg_replication_slots` shows `replica_3_old` inactive, 208 GB retained.
- 03:18: inventory confirms replica_3 no longer exists.
- 03:21: slot dropped, manual checkpoint.
- 03:22: disk at 57%. Remaining replica verified streaming.

*Root cause*
Decommissioning a replica has no step for dropping its slot on the primary, and nothing alerted on an inactive slot retaining WAL.

*What went well*
Diagnosis took ~10 minutes; no manual deletion in `pg_wal`.

*Action items*
1. Set `max_slot_wal_keep_size = 50GB` on all primaries. (owner: _, due: _)
2. Alert when any slot is inactive for > 1 hour or retains > 10 GB. (owner: _)
3. Add "drop the replication slot on the primary" to the replica decommissioning runbook. (owner: _)
4. Alert on disk *growth rate* (full within 24h), not only on a fixed percentage: this took three weeks to fill and could have been caught on day two. (owner: _)

The ~9.5 GB/day figure is 208 GB over 22 days; adjust if the decommission date was different.
== user +4m
Decommission was March 24, so 22 days is right. This is great. One question: action item 4, is that really needed if we have item 2?
== assistant +50s
Item 2 catches *this* cause; item 4 catches the *next* one, whatever it is (a runaway table, logs on the wrong volume, a backup written locally). Three weeks of steady growth is exactly the case a growth-rate alert is good at and a 95% threshold is bad at: the threshold fires at 3am with hours left; the rate alert would have fired during working hours with weeks left. I'd keep both, with item 4 as a ticket rather than a page.
== user +2m
Convinced. Sending it to the team.
== assistant +25s
Good. Calm diagnosis at 3am and a clear writeup the same morning: well handled.
'''


# --- assembly --------------------------------------------------------------------------------------------

LOGSLICE = "".join(DAY1 + DAY2 + DAY3 + DAY4 + DAY5 + DAY5B + DAY6 + DAY7 + DAY8)

SESSIONS = [
    Session("demo-portugal-trip", "Portugal in October: Lisbon and Porto", TRIP),
    Session("demo-pg-wal-incident", "Incident: Postgres disk full from an orphaned replication slot", OPS),
    Session("demo-flaky-retry-test", "Flaky test_retry_backoff in the job queue", FLAKY),
    Session("demo-lsm-reading", "Reading group prep: LSM trees vs B-trees", RESEARCH),
    Session("demo-textual-literal", "Textual shows [bold red] as red: displaying text literally", MARKUP),
    Session("demo-git-undo", "Undo a commit made on the wrong branch", GIT_UNDO),
    Session("demo-blog-cpu-alerts", "Editing: Why we stopped paging on CPU", WRITING),
    Session("demo-logslice", "Building logslice, a Rust CLI that slices logs by time", LOGSLICE),
]


def main(argv: list[str]) -> int:
    text = render(SESSIONS)
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python scripts/make_demo_jsonl.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    for s in SESSIONS:
        turns = parse_script(s.script)
        days = len({when.date() for _, _, when in turns})
        print(f"{s.id:28} {len(turns):4} episodes over {days} day(s)")
    print(f"wrote {OUT} ({len(text.encode('utf-8')):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
