"""``hiermem-tui mcp`` on 10k sessions / 1M episodes, through a real MCP session, each against a baseline.

Targets (issue 23), the server already started and the client the SDK's own:

(a) ``search`` through MCP ≤ 1.2× the CLI's time for the same query. The CLI's time is
    ``hiermem-tui search QUERY --json`` run in this process (open the store, bring the index up to
    date, search, print the JSON: the command's work without the interpreter's start), interleaved
    with the MCP calls, 5 runs of each of bench_find's 20 queries; the ratio is of the medians, and
    per query. The CLI as a whole process (what an agent pays to shell out to it) is printed too;
(b) ``sessions``, first page (20 sessions, each with its 3 newest top summaries) ≤ 100 ms;
    baseline: the bare ``store.sessions.page(limit=20)``;
(c) ``expand`` of a 1,000-episode leaf under a 4,000-token budget ≤ 100 ms; baseline: reading that
    page's episodes with ``store.episodes.range``;
(d) peak RSS of the server process (VmHWM) ≤ 150 MB after all of the above; baseline: the same
    server right after it started (VmRSS after the handshake).

MCP times are round trips (request written, JSON-RPC answer read, parsed and checked against the
tool's output schema by the client), secrets masked (the server's default).

The file is bench_find's (``make_big``: demo 10k/1M, a full extractive pass, the search index built);
a session with one leaf over 1,000 episodes is added to it once (``bench:mcp-leaf``), since passes
make leaves of a few thousand tokens.

    .venv/bin/python bench/bench_mcp.py --db /tmp/find.db [--sessions 10000] [--episodes 1000000]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
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


def server_pid() -> int:
    """The ``hiermem-tui mcp`` child of this process."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me and b"mcp" in cmdline:
                return int(entry.name)
    raise RuntimeError("no mcp server child found")


def memory(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(field)


async def run(db: Path, leaf_id: str, config: Path) -> None:
    script = Path(sys.executable).with_name("hiermem-tui")
    params = StdioServerParameters(command=str(script), args=["mcp", "--db", str(db)],
                                   env={"HIERMEM_CONFIG": str(config)})
    os.environ["HIERMEM_CONFIG"] = str(config)
    async with Client(params) as client:
        pid = server_pid()
        started_rss = memory(pid, "VmRSS")
        await client.list_tools()

        # (a) search: MCP round trip vs the CLI in process, interleaved, 5 runs each query
        def cli_search(query: str) -> None:
            assert cli(["search", "--db", str(db), query, "--json"], stdout=io.StringIO(), stderr=io.StringIO()) == 0

        mcp_med: list[float] = []
        cli_med: list[float] = []
        for query in QUERIES:
            await client.call_tool("search", {"query": query})  # warm both on this query's pages
            cli_search(query)
            ours, theirs = [], []
            for _ in range(5):
                dt, result = await atimed(client.call_tool("search", {"query": query}))
                assert not result.is_error, result.content
                ours.append(dt)
                theirs.append(timed(lambda: cli_search(query)))
            mcp_med.append(statistics.median(ours))
            cli_med.append(statistics.median(theirs))
        process = [timed(lambda: subprocess.run([str(script), "search", "--db", str(db), q, "--json"],
                                                 capture_output=True, check=True)) for q in QUERIES[:5]]
        m, c = statistics.median(mcp_med), statistics.median(cli_med)
        ratios = sorted((a / b, q, a, b) for a, b, q in zip(mcp_med, cli_med, QUERIES))
        worst, best = ratios[-1], ratios[0]
        print(f"(a) search, {len(QUERIES)} queries x 5: MCP round trip median {m * 1000:.1f} ms, the CLI in process "
              f"{c * 1000:.1f} ms: ratio {m / c:.2f}x (target <= 1.2x); per query: median ratio "
              f"{statistics.median(r[0] for r in ratios):.2f}x, from {best[0]:.2f}x to {worst[0]:.2f}x "
              f"({worst[1]!r}: {worst[2] * 1000:.1f} vs {worst[3] * 1000:.1f} ms); the CLI as a process "
              f"(python start included) {statistics.median(process) * 1000:.0f} ms")

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
        runs = []
        for _ in range(9):
            dt, result = await atimed(client.call_tool("sessions", {"limit": 20}))
            assert not result.is_error and len(result.structured_content["sessions"]) == 20  # type: ignore[index]
            runs.append(dt)
        total = result.structured_content["total"]  # type: ignore[index]
        print(f"(b) sessions, first page of {total:,} (20, with their newest top summaries): median "
              f"{statistics.median(runs) * 1000:.1f} ms, slowest {max(runs) * 1000:.1f} ms (target <= 100 ms); "
              f"the bare page query {bare * 1000:.1f} ms ({statistics.median(runs) / bare:.1f}x)")

        # (c) expand of the 1,000-episode leaf under a budget
        runs = []
        for _ in range(9):
            dt, result = await atimed(client.call_tool("expand", {"id": leaf_id, "budget": BUDGET}))
            assert not result.is_error, result.content
            runs.append(dt)
        page = result.structured_content
        print(f"(c) expand of a {page['total']:,}-episode leaf, budget {BUDGET:,}: {len(page['items'])} episodes, "  # type: ignore[index]
              f"{page['tokens']:,} tokens; median {statistics.median(runs) * 1000:.1f} ms, slowest "  # type: ignore[index]
              f"{max(runs) * 1000:.1f} ms (target <= 100 ms); reading those episodes bare {bare_expand * 1000:.1f} ms")

        # (d) peak RSS of the server
        peak = memory(pid, "VmHWM")
        print(f"(d) server peak RSS after all of the above {peak:.1f} MB (target <= 150 MB); right after it started "
              f"{started_rss:.1f} MB ({peak / started_rss:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True, help="the big file (bench_find's): built here once, reused after")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--episodes", type=int, default=1_000_000)
    args = ap.parse_args()
    db = Path(args.db)
    make_big(db, args.sessions, args.episodes)
    leaf_id = ensure_leaf(db)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    anyio.run(run, db, leaf_id, db.with_suffix(".none.toml"))


if __name__ == "__main__":
    main()
