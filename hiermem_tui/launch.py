"""Opening the TUI from the CLI: resolve the database (or the demo copy), then build the app
through the one factory the tests use too."""

from __future__ import annotations

from dataclasses import replace

from .commands.common import EXIT_OK, CliContext


def launch_tui(ctx: CliContext, *, demo: bool = False) -> int:
    from .tui.app import make_app

    settings = ctx.settings
    demo_path = None
    if demo:
        from .demo_db import fresh_demo_copy

        demo_path = fresh_demo_copy(ctx.tokenizer)
        settings = replace(settings, db_path=demo_path)
        ctx = replace(ctx, settings=settings)
    store = ctx.open_store()
    try:
        store.episodes.fill_missing_tokens()  # a partial index finds them: nothing to read when there are none
        # rows not indexed for search yet (an upgraded file, an older version's imports) are indexed by the
        # app in the background: the sessions show at once (a read-only file is searched as far as it is
        # indexed, and its newest unindexed rows by a scan)
        app = make_app(settings, store, index_search=True, plan_backlog=True, demo=demo)
        app.run()
        return int(app.return_code or EXIT_OK)
    finally:
        store.close()
        if demo_path is not None:
            from .demo_db import cleanup_demo_copy

            cleanup_demo_copy(demo_path)
