"""The SQLite schema, as a list of migrations keyed by ``PRAGMA user_version``.

Aggregates on ``sessions`` are maintained by triggers, not by application code, so that
other tools writing sessions and episodes straight into the file (the README documents
how) keep them right too, and listing 10k sessions never has to scan episodes.
Guard triggers make two invariants structural: episodes are immutable once written and
summaries are never deleted.
"""

from __future__ import annotations

APP_ID = "hiermem-tui"

# Recomputes every summary-derived aggregate of one session from its *active* summaries.
# Active summaries of a session are few (thousands at most) and indexed, so this is cheap.
_RECOMPUTE = """
    UPDATE sessions SET
        (summary_count, max_depth, covered_episodes, covered_tokens, fallback_count,
         top_tokens, last_summarized_seq, last_summary_at) = (
            SELECT count(*),
                   max(depth),
                   coalesce(sum(CASE WHEN kind = 'leaf' THEN last_seq - first_seq + 1 END), 0),
                   coalesce(sum(CASE WHEN kind = 'leaf' THEN source_tokens END), 0),
                   coalesce(sum(tier = 'fallback'), 0),
                   coalesce(sum(CASE WHEN parent_id IS NULL THEN tokens END), 0),
                   max(CASE WHEN kind = 'leaf' THEN last_seq END),
                   max(created_at)
            FROM summaries WHERE session_id = {sid} AND status = 'active')
    WHERE id = {sid};
"""

# Version 2 adds the lowest identifier retention of a session's active summaries (NULL:
# none measured), so the sessions list can flag low-fidelity sessions without a scan.
_RECOMPUTE_V2 = """
    UPDATE sessions SET
        (summary_count, max_depth, covered_episodes, covered_tokens, fallback_count,
         top_tokens, last_summarized_seq, last_summary_at, min_retention) = (
            SELECT count(*),
                   max(depth),
                   coalesce(sum(CASE WHEN kind = 'leaf' THEN last_seq - first_seq + 1 END), 0),
                   coalesce(sum(CASE WHEN kind = 'leaf' THEN source_tokens END), 0),
                   coalesce(sum(tier = 'fallback'), 0),
                   coalesce(sum(CASE WHEN parent_id IS NULL THEN tokens END), 0),
                   max(CASE WHEN kind = 'leaf' THEN last_seq END),
                   max(created_at),
                   min(CASE WHEN fid_identifiers > 0 THEN fid_kept * 1.0 / fid_identifiers END)
            FROM summaries WHERE session_id = {sid} AND status = 'active')
    WHERE id = {sid};
"""

KEY_RETENTION = (
    "CASE WHEN fid_key > 0 THEN fid_key_kept * 1.0 / fid_key "
    "WHEN fid_key IS NULL AND fid_identifiers > 0 THEN fid_kept * 1.0 / fid_identifiers END"
)
"""A summary row's low-fidelity figure in SQL, the one place it is written: the share of its key names it
kept (``Fidelity.key_retention``), the plain retention for a row measured before key names were (schema
< 4), NULL when it was not measured or had nothing to judge. A row is low-fidelity when it is under the
threshold (``Fidelity.low``)."""

# Version 4: the sessions' lowest figure is KEY_RETENTION (the plain retention before).
_RECOMPUTE_V4 = _RECOMPUTE_V2.replace(
    "min(CASE WHEN fid_identifiers > 0 THEN fid_kept * 1.0 / fid_identifiers END)", f"min({KEY_RETENTION})"
)
assert _RECOMPUTE_V4 != _RECOMPUTE_V2

MIGRATIONS: list[str] = [
    # ---- version 1 -------------------------------------------------------------------
    f"""
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    INSERT INTO meta (key, value) VALUES ('app', '{APP_ID}');

    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        title       TEXT NOT NULL DEFAULT '',
        source      TEXT NOT NULL DEFAULT 'unknown',
        source_ref  TEXT,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        metadata    TEXT NOT NULL DEFAULT '{{}}',
        -- aggregates, kept by triggers
        episode_count       INTEGER NOT NULL DEFAULT 0,
        token_count         INTEGER NOT NULL DEFAULT 0,
        summary_count       INTEGER NOT NULL DEFAULT 0,
        max_depth           INTEGER,
        covered_episodes    INTEGER NOT NULL DEFAULT 0,
        covered_tokens      INTEGER NOT NULL DEFAULT 0,
        fallback_count      INTEGER NOT NULL DEFAULT 0,
        top_tokens          INTEGER NOT NULL DEFAULT 0,
        last_summarized_seq INTEGER,
        last_summary_at     TEXT
    );
    CREATE INDEX sessions_updated ON sessions (updated_at, id);
    CREATE INDEX sessions_title ON sessions (title COLLATE NOCASE, id);

    CREATE TABLE episodes (
        id         TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq        INTEGER NOT NULL CHECK (seq >= 0),
        role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
        content    TEXT NOT NULL,
        created_at TEXT NOT NULL,
        tokens     INTEGER,
        synthetic_time INTEGER NOT NULL DEFAULT 0,
        metadata   TEXT,
        UNIQUE (session_id, seq)
    );

    CREATE TABLE runs (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions (id),
        kind        TEXT NOT NULL CHECK (kind IN ('leaf', 'condense', 'full', 'resummarize', 'resummarize-session')),
        status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed', 'interrupted')),
        backend     TEXT NOT NULL,
        model       TEXT,
        started_at  TEXT NOT NULL,
        finished_at TEXT,
        normal      INTEGER NOT NULL DEFAULT 0,
        aggressive  INTEGER NOT NULL DEFAULT 0,
        fallback    INTEGER NOT NULL DEFAULT 0,
        summaries_created INTEGER NOT NULL DEFAULT 0,
        llm_seconds  REAL NOT NULL DEFAULT 0,
        wall_seconds REAL NOT NULL DEFAULT 0,
        error       TEXT,
        target      TEXT,
        pid         INTEGER,
        host        TEXT
    );
    CREATE INDEX runs_session ON runs (session_id, started_at);
    CREATE INDEX runs_status ON runs (status) WHERE status = 'running';

    CREATE TABLE summaries (
        id            TEXT PRIMARY KEY,
        session_id    TEXT NOT NULL REFERENCES sessions (id),
        depth         INTEGER NOT NULL CHECK (depth >= 0),
        kind          TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
        status        TEXT NOT NULL CHECK (status IN ('active', 'superseded')),
        tier          TEXT NOT NULL CHECK (tier IN ('normal', 'aggressive', 'fallback')),
        backend       TEXT NOT NULL,
        model         TEXT,
        prompt_version TEXT NOT NULL,
        content       TEXT NOT NULL,
        tokens        INTEGER NOT NULL,
        source_tokens INTEGER NOT NULL,
        input_tokens  INTEGER,
        output_tokens INTEGER,
        first_seq     INTEGER NOT NULL,
        last_seq      INTEGER NOT NULL,
        start_at      TEXT NOT NULL,
        end_at        TEXT NOT NULL,
        parent_id     TEXT REFERENCES summaries (id),
        supersedes    TEXT REFERENCES summaries (id),
        superseded_by TEXT,  -- the newer version, or "run:<id>" / "revert:<id>" for whole-run changes
        created_at    TEXT NOT NULL,
        duration_s    REAL NOT NULL DEFAULT 0,
        llm_seconds   REAL NOT NULL DEFAULT 0,
        run_id        TEXT REFERENCES runs (id),
        CHECK ((kind = 'leaf') = (depth = 0)),
        CHECK (first_seq <= last_seq)
    );
    CREATE INDEX summaries_active ON summaries (session_id, depth, first_seq) WHERE status = 'active';
    CREATE INDEX summaries_span ON summaries (session_id, kind, first_seq, last_seq);
    CREATE INDEX summaries_parent ON summaries (parent_id) WHERE parent_id IS NOT NULL;
    CREATE INDEX summaries_run ON summaries (run_id);

    CREATE TABLE summary_sources (
        summary_id  TEXT NOT NULL REFERENCES summaries (id),
        position    INTEGER NOT NULL,
        source_type TEXT NOT NULL CHECK (source_type IN ('episode', 'summary')),
        source_id   TEXT NOT NULL,
        PRIMARY KEY (summary_id, position)
    ) WITHOUT ROWID;
    CREATE INDEX summary_sources_source ON summary_sources (source_id);

    -- episode aggregates
    CREATE TRIGGER episodes_ai AFTER INSERT ON episodes BEGIN
        UPDATE sessions SET
            episode_count = episode_count + 1,
            token_count = token_count + coalesce(NEW.tokens, 0),
            updated_at = max(updated_at, NEW.created_at)
        WHERE id = NEW.session_id;
    END;
    CREATE TRIGGER episodes_tokens_au AFTER UPDATE OF tokens ON episodes BEGIN
        UPDATE sessions SET token_count = token_count - coalesce(OLD.tokens, 0) + coalesce(NEW.tokens, 0)
        WHERE id = NEW.session_id;
    END;
    CREATE TRIGGER episodes_immutable BEFORE UPDATE OF session_id, seq, role, content, created_at ON episodes BEGIN
        SELECT RAISE(ABORT, 'episodes are immutable');
    END;
    CREATE TRIGGER episodes_no_delete BEFORE DELETE ON episodes BEGIN
        SELECT RAISE(ABORT, 'episodes are never deleted');
    END;

    -- summary aggregates
    CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
        {_RECOMPUTE.format(sid="NEW.session_id")}
    END;
    CREATE TRIGGER summaries_au AFTER UPDATE OF status, parent_id, tokens, tier ON summaries BEGIN
        {_RECOMPUTE.format(sid="NEW.session_id")}
    END;
    CREATE TRIGGER summaries_no_delete BEFORE DELETE ON summaries BEGIN
        SELECT RAISE(ABORT, 'summaries are never deleted');
    END;
    CREATE TRIGGER summaries_immutable BEFORE UPDATE OF content, first_seq, last_seq, depth, kind, session_id ON summaries BEGIN
        SELECT RAISE(ABORT, 'summary text and coverage are immutable; write a new version');
    END;
    """,
    # ---- version 2: fidelity, rejected attempts, model speed, pinned/excluded episodes ----
    f"""
    -- Fidelity of a summary against its sources (NULL: made before it was measured).
    ALTER TABLE summaries ADD COLUMN fid_identifiers INTEGER;  -- salient identifiers in the sources
    ALTER TABLE summaries ADD COLUMN fid_kept INTEGER;         -- of those, found in the summary
    ALTER TABLE summaries ADD COLUMN fid_lost TEXT;            -- JSON list (bounded), most important first
    ALTER TABLE summaries ADD COLUMN fid_novel TEXT;           -- JSON list: in the summary, in no source
    ALTER TABLE summaries ADD COLUMN fid_added INTEGER NOT NULL DEFAULT 0;  -- an "Also mentioned" line was appended
    ALTER TABLE summaries ADD COLUMN fid_pins_missing TEXT;    -- JSON list of pinned episode ids not carried verbatim
    ALTER TABLE summaries ADD COLUMN rejections TEXT;          -- JSON list of rejected attempts {{tier, reason, detail}}
    -- runs gains the 'repair' kind (a CHECK constraint: the table is rebuilt), the reasons
    -- model answers were rejected, and how many summaries the run planned
    CREATE TABLE runs_v2 (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions (id),
        kind        TEXT NOT NULL CHECK (kind IN ('leaf', 'condense', 'full', 'resummarize', 'resummarize-session', 'repair')),
        status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed', 'interrupted')),
        backend     TEXT NOT NULL,
        model       TEXT,
        started_at  TEXT NOT NULL,
        finished_at TEXT,
        normal      INTEGER NOT NULL DEFAULT 0,
        aggressive  INTEGER NOT NULL DEFAULT 0,
        fallback    INTEGER NOT NULL DEFAULT 0,
        summaries_created INTEGER NOT NULL DEFAULT 0,
        llm_seconds  REAL NOT NULL DEFAULT 0,
        wall_seconds REAL NOT NULL DEFAULT 0,
        error       TEXT,
        target      TEXT,
        pid         INTEGER,
        host        TEXT,
        rejections  TEXT NOT NULL DEFAULT '{{}}',  -- JSON {{reason: count}}
        planned     INTEGER
    );
    INSERT INTO runs_v2 (id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive,
                         fallback, summaries_created, llm_seconds, wall_seconds, error, target, pid, host)
        SELECT id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive,
               fallback, summaries_created, llm_seconds, wall_seconds, error, target, pid, host FROM runs;
    DROP TABLE runs;
    ALTER TABLE runs_v2 RENAME TO runs;
    CREATE INDEX runs_session ON runs (session_id, started_at);
    CREATE INDEX runs_status ON runs (status) WHERE status = 'running';
    ALTER TABLE sessions ADD COLUMN min_retention REAL;

    -- Measured speed of each model, for timeouts and time estimates.
    CREATE TABLE model_speed (
        backend        TEXT NOT NULL,
        model          TEXT NOT NULL,
        calls          INTEGER NOT NULL DEFAULT 0,
        prompt_tokens  INTEGER NOT NULL DEFAULT 0,
        prompt_seconds REAL NOT NULL DEFAULT 0,
        output_tokens  INTEGER NOT NULL DEFAULT 0,
        output_seconds REAL NOT NULL DEFAULT 0,
        updated_at     TEXT NOT NULL,
        PRIMARY KEY (backend, model)
    ) WITHOUT ROWID;

    -- Pinned episodes must be carried verbatim by every summary covering them; excluded
    -- ones are never given to a summariser. Removing the row undoes the mark.
    CREATE TABLE episode_marks (
        episode_id TEXT PRIMARY KEY REFERENCES episodes (id),
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq        INTEGER NOT NULL,
        mark       TEXT NOT NULL CHECK (mark IN ('pin', 'exclude')),
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX episode_marks_session ON episode_marks (session_id, seq);

    DROP TRIGGER summaries_ai;
    DROP TRIGGER summaries_au;
    CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
        {_RECOMPUTE_V2.format(sid="NEW.session_id")}
    END;
    CREATE TRIGGER summaries_au AFTER UPDATE OF status, parent_id, tokens, tier, fid_identifiers, fid_kept ON summaries BEGIN
        {_RECOMPUTE_V2.format(sid="NEW.session_id")}
    END;
    """,
    # ---- version 3: full-text search over episodes and summaries ---------------------
    # Contentless FTS5 (the text is already in episodes/summaries; a copy would double the
    # file) keyed on search_docs.docid, an INTEGER PRIMARY KEY: VACUUM keeps those, where the
    # implicit rowid of a TEXT-keyed table may be renumbered and silently point an external-
    # content index at the wrong rows. Rows are insert-only on both sides (episodes and
    # summaries are never updated in their text nor deleted), so the index never needs a
    # delete. The `sess` column holds one token per row, 's' || hex(session id), so a search
    # within one session is an FTS intersection instead of a filter over every match.
    #
    # The triggers record every new episode and summary in search_docs, whoever writes it;
    # the FTS rows for docids above meta 'search_indexed' are then written in bulk by
    # store/search_index.py: at the end of each of our write transactions, and for a backlog
    # others left before a search (and when the TUI starts). Not in the trigger itself: FTS5
    # flushes its pending terms at every statement savepoint, so an FTS insert inside a
    # trigger writes one index segment per row and made imports ~7x slower.
    # Rows already in the file get their search_docs rows the same way, in resumable
    # batches (meta 'search_backfill' is that cursor while pending; a unique index on
    # (ref_id, kind) exists only while it is, so no row is recorded twice — kept for good it
    # would cost every import a second B-tree insert per episode).
    """
    CREATE TABLE search_docs (
        docid      INTEGER PRIMARY KEY,
        kind       TEXT NOT NULL CHECK (kind IN ('episode', 'summary')),
        ref_id     TEXT NOT NULL,
        session_id TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE search_index USING fts5 (
        text, sess, content = '', tokenize = 'unicode61 remove_diacritics 2'
    );
    INSERT INTO search_index (search_index, rank) VALUES ('rank', 'bm25(1.0, 0.0)');

    CREATE TRIGGER episodes_search_ai AFTER INSERT ON episodes BEGIN
        INSERT INTO search_docs (kind, ref_id, session_id) VALUES ('episode', NEW.id, NEW.session_id);
    END;
    CREATE TRIGGER summaries_search_ai AFTER INSERT ON summaries BEGIN
        INSERT INTO search_docs (kind, ref_id, session_id) VALUES ('summary', NEW.id, NEW.session_id);
    END;
    CREATE TRIGGER search_docs_no_delete BEFORE DELETE ON search_docs BEGIN
        SELECT RAISE(ABORT, 'search_docs rows are never deleted (the index counts on dense docids)');
    END;
    INSERT INTO meta (key, value) VALUES ('search_indexed', '0');
    INSERT INTO meta (key, value)
        SELECT 'search_backfill', 'episode:' WHERE EXISTS (SELECT 1 FROM episodes) OR EXISTS (SELECT 1 FROM summaries);

    -- The run history lists runs newest first across the whole file; whole-file stats group
    -- the active summaries by depth and tier from an index instead of reading their text.
    CREATE INDEX runs_started ON runs (started_at, id);
    CREATE INDEX summaries_stats ON summaries (depth, tier, tokens, source_tokens, fid_identifiers, fid_kept, status)
        WHERE status = 'active';  -- status too, or SQLite reads the row to re-check the WHERE
    """,
    # ---- version 4: keywords beside the text, clipped answers, key-name fidelity ----------
    # The names a summary lost go into their own field instead of an "Also mentioned" line in
    # its text (shown, exported, searchable; never given to a model). ``trimmed`` records that
    # the model's answer ran past its target and was clipped (kept, not regenerated).
    f"""
    ALTER TABLE summaries ADD COLUMN keywords TEXT;       -- JSON list, most important first
    ALTER TABLE summaries ADD COLUMN trimmed TEXT;        -- 'clipped', or NULL
    ALTER TABLE summaries ADD COLUMN fid_key INTEGER;     -- key names of the sources it is judged on
    ALTER TABLE summaries ADD COLUMN fid_key_kept INTEGER;
    DROP TRIGGER summaries_ai;
    DROP TRIGGER summaries_au;
    CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
        {_RECOMPUTE_V4.format(sid="NEW.session_id")}
    END;
    CREATE TRIGGER summaries_au AFTER UPDATE OF status, parent_id, tokens, tier, fid_identifiers, fid_kept, fid_key,
        fid_key_kept ON summaries BEGIN
        {_RECOMPUTE_V4.format(sid="NEW.session_id")}
    END;
    -- the whole-file stats count low-fidelity summaries by key names now: keep them covered
    DROP INDEX summaries_stats;
    CREATE INDEX summaries_stats ON summaries (depth, tier, tokens, source_tokens, fid_identifiers, fid_kept, fid_key,
        fid_key_kept, status) WHERE status = 'active';
    """,
    # ---- version 5: flagged summaries counted on their run ---------------------------------
    # A run said "7 normal · 0 fallback" while all 7 were flagged (issue 19): the summaries
    # flagged low-fidelity when written are counted beside the tiers. Runs before this say 0.
    """
    ALTER TABLE runs ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0;
    """,
    # ---- version 6: episodes without a token count, found without reading the table ----------
    # Every writable open counts the tokens of episodes another tool wrote without them
    # (``tokens IS NULL``); no index covered that, so each start read the whole episodes table
    # (206 ms on a million episodes with the file cached, far more when not). This partial index
    # holds only those rows: empty, and free, in the usual case.
    """
    CREATE INDEX episodes_tokens_missing ON episodes (id) WHERE tokens IS NULL;
    """,
    # ---- version 7: model speeds per host ---------------------------------------------------
    # With several Ollama hosts each measures its own speed of a model (a GPU box beside a
    # laptop: 20x apart), so the host joins the key (issue 20). The rows measured before are
    # kept with host '' (no host): the fallback for any host of that model until that host has
    # measured its own. A primary key column (WITHOUT ROWID): the table is rebuilt.
    """
    CREATE TABLE model_speed_v7 (
        backend        TEXT NOT NULL,
        model          TEXT NOT NULL,
        host           TEXT NOT NULL DEFAULT '',  -- the server's URL; '' measured before hosts were told apart
        calls          INTEGER NOT NULL DEFAULT 0,
        prompt_tokens  INTEGER NOT NULL DEFAULT 0,
        prompt_seconds REAL NOT NULL DEFAULT 0,
        output_tokens  INTEGER NOT NULL DEFAULT 0,
        output_seconds REAL NOT NULL DEFAULT 0,
        updated_at     TEXT NOT NULL,
        PRIMARY KEY (backend, model, host)
    ) WITHOUT ROWID;
    INSERT INTO model_speed_v7 (backend, model, host, calls, prompt_tokens, prompt_seconds, output_tokens,
                                output_seconds, updated_at)
        SELECT backend, model, '', calls, prompt_tokens, prompt_seconds, output_tokens, output_seconds, updated_at
        FROM model_speed;
    DROP TABLE model_speed;
    ALTER TABLE model_speed_v7 RENAME TO model_speed;
    """,
    # ---- version 8: the ways a run stops without failing or being cancelled ----------------
    # A time budget running out, the background backlog stopped (or the app quitting under it)
    # and a session left for one moved to the front were all recorded as 'cancelled', so the
    # run history filled with cancellations nobody asked for (issue 36). They get statuses of
    # their own: 'budget', 'paused', 'moved'. The status is a CHECK constraint: the table is
    # rebuilt, every column, row and index kept.
    """
    CREATE TABLE runs_v8 (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions (id),
        kind        TEXT NOT NULL CHECK (kind IN ('leaf', 'condense', 'full', 'resummarize', 'resummarize-session', 'repair')),
        status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed', 'interrupted',
                                                    'budget', 'paused', 'moved')),
        backend     TEXT NOT NULL,
        model       TEXT,
        started_at  TEXT NOT NULL,
        finished_at TEXT,
        normal      INTEGER NOT NULL DEFAULT 0,
        aggressive  INTEGER NOT NULL DEFAULT 0,
        fallback    INTEGER NOT NULL DEFAULT 0,
        summaries_created INTEGER NOT NULL DEFAULT 0,
        llm_seconds  REAL NOT NULL DEFAULT 0,
        wall_seconds REAL NOT NULL DEFAULT 0,
        error       TEXT,
        target      TEXT,
        pid         INTEGER,
        host        TEXT,
        rejections  TEXT NOT NULL DEFAULT '{}',  -- JSON {reason: count}
        planned     INTEGER,
        flagged     INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO runs_v8 (id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive,
                         fallback, summaries_created, llm_seconds, wall_seconds, error, target, pid, host, rejections,
                         planned, flagged)
        SELECT id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive,
               fallback, summaries_created, llm_seconds, wall_seconds, error, target, pid, host, rejections,
               planned, flagged FROM runs;
    DROP TABLE runs;
    ALTER TABLE runs_v8 RENAME TO runs;
    CREATE INDEX runs_session ON runs (session_id, started_at);
    CREATE INDEX runs_status ON runs (status) WHERE status = 'running';
    CREATE INDEX runs_started ON runs (started_at, id);
    """,
    # ---- version 9: a brief for every session ---------------------------------------------
    # A short summary of a whole session (what it was about, decided, made, where it ended), the
    # first thing a person reads of it. One active brief a session; a new one supersedes the old,
    # which is kept (never deleted, like a summary). ``last_seq``: the newest episode it covers,
    # so a session that gained messages has a stale brief and its next pass re-makes it.
    """
    CREATE TABLE briefs (
        id             TEXT PRIMARY KEY,
        session_id     TEXT NOT NULL REFERENCES sessions (id),
        status         TEXT NOT NULL CHECK (status IN ('active', 'superseded')),
        title          TEXT NOT NULL DEFAULT '',
        about          TEXT NOT NULL,
        text           TEXT NOT NULL,
        first_seq      INTEGER NOT NULL,
        last_seq       INTEGER NOT NULL,
        tier           TEXT NOT NULL CHECK (tier IN ('normal', 'aggressive', 'fallback')),
        backend        TEXT NOT NULL,
        model          TEXT,
        prompt_version TEXT NOT NULL,
        tokens         INTEGER NOT NULL,
        llm_seconds    REAL NOT NULL DEFAULT 0,
        run_id         TEXT,
        created_at     TEXT NOT NULL
    );
    CREATE UNIQUE INDEX briefs_active ON briefs (session_id) WHERE status = 'active';
    CREATE INDEX briefs_session ON briefs (session_id, created_at);
    CREATE TRIGGER briefs_no_delete BEFORE DELETE ON briefs BEGIN
        SELECT RAISE(ABORT, 'briefs are never deleted');
    END;
    """,
    # ---- version 10: the wall time a model's speed leaves out --------------------------------
    # A queued or remote host reports its runner's durations, tiny beside the seconds each call
    # takes (issue 38): what a call's wall time has beyond its load and those durations is kept
    # as ``wait_seconds``, so estimates count it. Rows measured before have none (0).
    """
    ALTER TABLE model_speed ADD COLUMN wait_seconds REAL NOT NULL DEFAULT 0;
    """,
    # ---- version 11: which way each model summarises, as measured --------------------------
    # ``hiermem-tui calibrate`` runs a small pack of chats with probes both ways (a title over the chat's key
    # lines, or the model writing the summary) and keeps 'writes' for a model only when it answered clearly
    # more with nothing invented (summarize/calibrate.py). One row a model, the latest measurement, with the
    # figures it was decided on; a model without a row summarises by titles.
    """
    CREATE TABLE model_ways (
        model           TEXT PRIMARY KEY,
        way             TEXT NOT NULL CHECK (way IN ('titles', 'writes')),
        backend         TEXT NOT NULL,
        host            TEXT NOT NULL DEFAULT '',
        titles_score    REAL NOT NULL,
        writes_score    REAL NOT NULL,
        titles_invented INTEGER NOT NULL DEFAULT 0,
        writes_invented INTEGER NOT NULL DEFAULT 0,
        pack            TEXT NOT NULL,
        calls           INTEGER NOT NULL DEFAULT 0,
        seconds         REAL NOT NULL DEFAULT 0,
        measured_at     TEXT NOT NULL
    ) WITHOUT ROWID;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
OUR_TABLES = {"meta", "sessions", "episodes", "summaries", "summary_sources", "runs"}
"""Tables every version has (a file missing one is damaged); later ones are checked by version."""

RECOMPUTE_SESSION: tuple[str, ...] = (
    "UPDATE sessions SET (episode_count, token_count) = "
    "(SELECT count(*), coalesce(sum(tokens), 0) FROM episodes WHERE session_id = :sid) WHERE id = :sid",
    _RECOMPUTE_V4.format(sid=":sid").strip().rstrip(";"),
)
"""The aggregates the triggers keep on one session (``:sid``), recomputed from its rows (``doctor --fix``).
The summary part is the current trigger's own statement, so a fix and the triggers cannot disagree."""
