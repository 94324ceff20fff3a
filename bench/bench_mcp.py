"""``hiermem-tui mcp`` on 10k sessions / 1M episodes, through a real MCP session, each against a baseline.

Targets (issue 23), the server already started and the client the SDK's own:

(a) ``search`` through MCP ≤ 1.2× the CLI's time for the same query. The CLI's time is
    ``hiermem-tui search QUERY --json`` run in this process (open the store, bring the index up to
    date, search, print the JSON: the command's work without the interpreter's start), interleaved
    with the MCP calls, 9 runs of each of bench_find's 20 queries; the ratio is of the medians, and
    per query (each query's line: hits, KB of text under them, both medians, the ratio of the fastest
    runs, which a loaded machine's pauses touch least, and the CPU each side spent). The CLI as a whole
    process (what an agent pays to shell out to it) is printed too;
(b) ``sessions``, first page (20 sessions, each with its 3 newest top summaries) ≤ 100 ms, 30 runs
    after one call of a far page (which compiles the client's validator of the tool's output
    schema, ~8 ms once, and leaves the first page's rows cold): the first run, the median, p90 and
    the slowest, and the server's CPU per call (from /proc: what is not contention);
    baseline: the bare ``store.sessions.page(limit=20)``;
(c) ``expand`` of a 1,000-episode leaf under a 4,000-token budget ≤ 100 ms, 15 runs; baseline:
    reading that page's episodes with ``store.episodes.range``;
(d) peak RSS of the server process (VmHWM) ≤ 150 MB after all of the above; baseline: the same
    server right after it started (VmRSS after the handshake).

MCP times are round trips (request written, JSON-RPC answer read, parsed and checked against the
tool's output schema by the client), secrets masked (the server's default).

The file is bench_find's (``make_big``: demo 10k/1M, a full extractive pass, the search index built);
a session with one leaf over 1,000 episodes is added to it once (``bench:mcp-leaf``), since passes
make leaves of a few thousand tokens.

    .venv/bin/python bench/bench_mcp.py --db /tmp/find.db [--sessions 10000] [--episodes 1000000]
        [--baseline-server ../main/.venv/bin/hiermem-tui]

With ``--baseline-server`` a second server (another checkout's, say main's) is started beside this
one and every call of (a)–(c) goes to both in turn, so the two compare under the same load; each
line is marked ``[this]`` or ``[baseline]``, with the server's CPU time per call (from /proc:
what a loaded machine's waiting is not).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from bench_find import QUERIES, make_big
from mcp import Client, StdioServerParameters

from hiermem_tui.cli import main as cli
from hiermem_tui.search import build_search_index
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite, new_id

LEAF_SESSION = "bench:mcp-leaf"
LEAF_EPISODES = 1000
BUDGET = 4000


def ensure_leaf(db: Path) -> str:
    """A session of 1,000 episodes (texts of the largest demo session) under one leaf; its id."""
    with Store.open(db) as store:
        if store.sessions.get(LEAF_SESSION) is None:
            source = store.db.conn.execute("SELECT id FROM sessions ORDER BY episode_count DESC LIMIT 1").fetchone()[0]
            texts = [e.content for _, e in zip(range(LEAF_EPISODES), store.episodes.each(source))]
            store.sessions.upsert(LEAF_SESSION, title="one leaf over 1,000 episodes", source="bench")
            store.episodes.append(LEAF_SESSION, [NewEpisode(str(i), ("user", "assistant")[i % 2], t, None)
                                                 for i, t in enumerate(texts)])
            summary = NewSummary(new_id("s"), LEAF_SESSION, 0, "normal", "extractive", None, "bench",
                                 "A leaf over a thousand episodes, for the expand benchmark.", 12)
            store.dag.write([SummaryWrite(summary, episode_range=(0, len(texts) - 1))])
        build_search_index(store)
        return str(store.dag.top(LEAF_SESSION)[0].id)


def timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


async def atimed(coro: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = await coro
    return time.perf_counter() - t0, result


def server_pid(known: set[int]) -> int:
    """The ``hiermem-tui mcp`` child of this process that is not in ``known``."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in known:
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me and b"mcp" in cmdline:
                return int(entry.name)
    raise RuntimeError("no mcp server child found")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(field)


@dataclass
class Server:
    """One server under test: this checkout's, or a baseline's (``--baseline-server``)."""

    name: str
    client: Any
    pid: int
    started_rss: float


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def run(db: Path, leaf_id: str, config: Path, baseline: Path | None) -> None:
    script = Path(sys.executable).with_name("hiermem-tui")
    os.environ["HIERMEM_CONFIG"] = str(config)
    async with AsyncExitStack() as stack:
        servers: list[Server] = []
        for name, exe in [("this", script)] + ([("baseline", baseline)] if baseline else []):
            params = StdioServerParameters(command=str(exe), args=["mcp", "--db", str(db)],
                                           env={"HIERMEM_CONFIG": str(config)})
            client = await stack.enter_async_context(Client(params))
            pid = server_pid({s.pid for s in servers})
            servers.append(Server(name, client, pid, memory(pid, "VmRSS")))
            await client.list_tools()
        await measure(db, leaf_id, script, servers)


async def measure(db: Path, leaf_id: str, script: Path, servers: list[Server]) -> None:
    """(a)–(d) for each server, their calls interleaved (so a loaded machine weighs on each alike)."""
    def cli_search(query: str) -> None:
        assert cli(["search", "--db", str(db), query, "--json"], stdout=io.StringIO(), stderr=io.StringIO()) == 0

    # (a) search: MCP round trip vs the CLI in process, interleaved, 9 runs each query
    meds: dict[str, list[float]] = {s.name: [] for s in servers}
    bests: dict[str, list[float]] = {s.name: [] for s in servers}
    cpus: dict[str, list[float]] = {s.name: [] for s in servers}
    cli_med: list[float] = []
    cli_best: list[float] = []
    cli_cpu: list[float] = []
    shapes: list[tuple[int, float]] = []
    with Store.open_reader(db) as store:
        for query in QUERIES:
            for s in servers:
                await s.client.call_tool("search", {"query": query})  # warm each on this query's pages
            cli_search(query)
            times: dict[str, list[float]] = {s.name: [] for s in servers}
            cpu0 = {s.name: cpu_seconds(s.pid) for s in servers}
            theirs, their_cpu = [], []
            for _ in range(9):
                for s in servers:
                    dt, result = await atimed(s.client.call_tool("search", {"query": query}))
                    assert not result.is_error, result.content
                    times[s.name].append(dt)
                c0 = time.thread_time()
                theirs.append(timed(lambda: cli_search(query)))
                their_cpu.append(time.thread_time() - c0)
            for s in servers:
                meds[s.name].append(statistics.median(times[s.name]))
                bests[s.name].append(min(times[s.name]))
                cpus[s.name].append((cpu_seconds(s.pid) - cpu0[s.name]) / 9)
            cli_med.append(statistics.median(theirs))
            cli_best.append(min(theirs))
            cli_cpu.append(statistics.median(their_cpu))
            hits = result.structured_content["hits"]  # type: ignore[index]
            texts = store.dag.texts([h["id"] for h in hits if h["kind"] == "summary"])
            texts.update(store.episodes.texts(h["id"] for h in hits if h["kind"] == "episode"))
            shapes.append((len(hits), sum(len(t) for t in texts.values()) / 1024))
    process = [timed(lambda: subprocess.run([str(script), "search", "--db", str(db), q, "--json"],
                                             capture_output=True, check=True)) for q in QUERIES[:5]]
    for i, (q, (n, kb)) in enumerate(zip(QUERIES, shapes)):
        each = "; ".join(f"{s.name} {ms(meds[s.name][i])} ({meds[s.name][i] / cli_med[i]:.2f}x; fastest "
                         f"{bests[s.name][i] / cli_best[i]:.2f}x; server CPU {ms(cpus[s.name][i])})" for s in servers)
        print(f"    {q!r:24} {n:2} hits, {kb:6.1f} KB: CLI {ms(cli_med[i])} (CPU {ms(cli_cpu[i])}); MCP {each}")
    c = statistics.median(cli_med)
    for s in servers:
        m = statistics.median(meds[s.name])
        ratios = sorted((a / b, q, a, b) for a, b, q in zip(meds[s.name], cli_med, QUERIES))
        worst, best = ratios[-1], ratios[0]
        fastest = max(a / b for a, b in zip(bests[s.name], cli_best))
        print(f"(a) [{s.name}] search, {len(QUERIES)} queries x 9: MCP round trip median {ms(m)}, the CLI in process "
              f"{ms(c)}: ratio {m / c:.2f}x (target <= 1.2x); per query: median ratio "
              f"{statistics.median(r[0] for r in ratios):.2f}x, from {best[0]:.2f}x to {worst[0]:.2f}x "
              f"({worst[1]!r}: {ms(worst[2])} vs {ms(worst[3])}); fastest of 9 against fastest of 9, the worst "
              f"query {fastest:.2f}x")
    print(f"    the CLI as a process (python start included) {statistics.median(process) * 1000:.0f} ms")

    # (b) sessions, first page
    with Store.open_reader(db) as store:
        bare = statistics.median(timed(lambda: store.sessions.page(limit=20)) for _ in range(9))
        first_seq = store.dag.get(leaf_id).first_seq  # type: ignore[union-attr]
        page_items = [r for r in store.episodes.headers(LEAF_SESSION, first_seq - 1, first_seq + 999, 1000)]
        used, n = 0, 0
        for r in page_items:
            if used + r[2] > BUDGET:
                break
            used, n = used + r[2], n + 1
        bare_expand = statistics.median(
            timed(lambda: store.episodes.range(LEAF_SESSION, first_seq, first_seq + n - 1)) for _ in range(9))
    for s in servers:
        await s.client.call_tool("sessions", {"limit": 1, "offset": 5000})  # the client's validator, compiled once
    runs: dict[str, list[float]] = {s.name: [] for s in servers}
    cpu0 = {s.name: cpu_seconds(s.pid) for s in servers}
    for _ in range(30):
        for s in servers:
            dt, result = await atimed(s.client.call_tool("sessions", {"limit": 20}))
            assert not result.is_error and len(result.structured_content["sessions"]) == 20  # type: ignore[index]
            runs[s.name].append(dt)
    total = result.structured_content["total"]  # type: ignore[index]
    for s in servers:
        r = runs[s.name]
        cpu = (cpu_seconds(s.pid) - cpu0[s.name]) / len(r)
        print(f"(b) [{s.name}] sessions, first page of {total:,} (20, with their newest top summaries), 30 runs: "
              f"first {ms(r[0])}, median {ms(statistics.median(r))}, p90 {ms(sorted(r)[26])}, slowest {ms(max(r))} "
              f"(target <= 100 ms); the server's CPU {ms(cpu)} a call; the bare page query {ms(bare)}")
    print(f"    load average now {os.getloadavg()[0]:.1f}")

    # (c) expand of the 1,000-episode leaf under a budget
    runs = {s.name: [] for s in servers}
    for _ in range(15):
        for s in servers:
            dt, result = await atimed(s.client.call_tool("expand", {"id": leaf_id, "budget": BUDGET}))
            assert not result.is_error, result.content
            runs[s.name].append(dt)
    page = result.structured_content
    for s in servers:
        r = runs[s.name]
        print(f"(c) [{s.name}] expand of a {page['total']:,}-episode leaf, budget {BUDGET:,}: "  # type: ignore[index]
              f"{len(page['items'])} episodes, {page['tokens']:,} tokens; median {ms(statistics.median(r))}, "  # type: ignore[index]
              f"slowest {ms(max(r))} (target <= 100 ms); reading those episodes bare {ms(bare_expand)}")

    # (d) peak RSS of each server
    for s in servers:
        peak = memory(s.pid, "VmHWM")
        print(f"(d) [{s.name}] server peak RSS after all of the above {peak:.1f} MB (target <= 150 MB); right after "
              f"it started {s.started_rss:.1f} MB ({peak / s.started_rss:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True, help="the big file (bench_find's): built here once, reused after")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--episodes", type=int, default=1_000_000)
    ap.add_argument("--baseline-server", type=Path, help="another checkout's hiermem-tui executable (say main's "
                    ".venv/bin/hiermem-tui): its MCP server is measured too, its calls interleaved with this one's")
    args = ap.parse_args()
    db = Path(args.db)
    make_big(db, args.sessions, args.episodes)
    leaf_id = ensure_leaf(db)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    anyio.run(run, db, leaf_id, db.with_suffix(".none.toml"), args.baseline_server)


if __name__ == "__main__":
    main()
