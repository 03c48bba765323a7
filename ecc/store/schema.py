"""The session database's schema: ordered migrations, shared by the SQLite and PostgreSQL stores.

The statements are written in SQLite's column types; the PostgreSQL store widens them when it
applies a migration (``ecc.store.postgres``). The schema version is the number of migrations
applied (SQLite: ``PRAGMA user_version``; PostgreSQL: the table ``ecc_schema``); opening a
current database performs no writes.
"""

from __future__ import annotations

# Each entry upgrades the schema by one version. Never edit a released entry: append a new one.
MIGRATIONS: list[list[str]] = [
    [  # 1: sessions, output, events, worktree queue, tool calls, notifications
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL DEFAULT '',
            task TEXT NOT NULL,
            harness TEXT NOT NULL,
            profile_name TEXT,
            profile_json TEXT,
            executor TEXT NOT NULL DEFAULT 'local',
            state TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            project_dir TEXT NOT NULL,
            repo_root TEXT,
            working_dir TEXT NOT NULL,
            use_worktree INTEGER NOT NULL DEFAULT 0,
            worktree_path TEXT,
            worktree_branch TEXT,
            base_branch TEXT,
            base_commit TEXT,
            slot INTEGER NOT NULL DEFAULT 0,
            runner_pid INTEGER,
            runner_host TEXT,
            runner_token TEXT,
            harness_pid INTEGER,
            harness_pgid INTEGER,
            harness_token TEXT,
            exit_code INTEGER,
            exit_signal INTEGER,
            stop_requested INTEGER NOT NULL DEFAULT 0,
            stop_grace REAL,
            attempts INTEGER NOT NULL DEFAULT 0,
            run_kind TEXT NOT NULL DEFAULT 'start',
            harness_session_id TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            started_at TEXT,
            ended_at TEXT,
            heartbeat_at TEXT
        )
        """,
        "CREATE INDEX sessions_state ON sessions (state)",
        "CREATE INDEX sessions_created ON sessions (created_at)",
        """
        CREATE TABLE output (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            stream TEXT NOT NULL,
            ts TEXT NOT NULL,
            line TEXT NOT NULL,
            UNIQUE (session_id, seq)
        )
        """,
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            from_state TEXT,
            to_state TEXT,
            reason TEXT NOT NULL DEFAULT '',
            data_json TEXT,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX events_session ON events (session_id, id)",
        """
        CREATE TABLE worktree_queue (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            repo_root TEXT,
            requested_at TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE tool_calls (
            id INTEGER PRIMARY KEY,
            session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
            harness TEXT NOT NULL DEFAULT '',
            tool TEXT NOT NULL,
            input_json TEXT NOT NULL,
            score REAL,
            action TEXT,
            reasons_json TEXT NOT NULL DEFAULT '[]',
            decision TEXT,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX tool_calls_session ON tool_calls (session_id, id)",
        """
        CREATE TABLE notifications (
            id INTEGER PRIMARY KEY,
            event TEXT NOT NULL,
            session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
            title TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL DEFAULT '',
            data_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )
        """,
    ],
    [  # 2: distributed sessions name their repository by remote URL (issue 11)
        "ALTER TABLE sessions ADD COLUMN repo_url TEXT",
    ],
    [  # 3: how far each run's output spool is stored, moved with its lines (issue 21)
        """
        CREATE TABLE output_spool (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            run INTEGER NOT NULL,
            stream TEXT NOT NULL,
            consumed INTEGER NOT NULL DEFAULT 0,
            skipping INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (session_id, run, stream)
        )
        """,
    ],
    [  # 4: the pull request opened for a session's branch (ecc pr, issue 17)
        "ALTER TABLE sessions ADD COLUMN pr_url TEXT",
    ],
    [  # 5: tool calls held for a person's decision (ecc approve / ecc deny, issue 17)
        """
        CREATE TABLE approvals (
            id TEXT PRIMARY KEY,
            session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
            harness TEXT NOT NULL DEFAULT '',
            tool TEXT NOT NULL,
            input_excerpt TEXT NOT NULL DEFAULT '',
            score REAL,
            action TEXT NOT NULL DEFAULT '',
            reasons_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            on_timeout TEXT NOT NULL DEFAULT 'deny',
            decision TEXT,
            decided_by TEXT,
            decided_at TEXT,
            reason TEXT NOT NULL DEFAULT ''
        )
        """,
        "CREATE INDEX approvals_session ON approvals (session_id, decision)",
        "CREATE INDEX approvals_pending ON approvals (decision, expires_at)",
    ],
    [  # 6: whether the session's harness ran under ecc's own hook with risk.enforce (issue 17)
        "ALTER TABLE sessions ADD COLUMN enforced INTEGER",
    ],
    [  # 7: a session's conversation: each run's prompt and the agent's answers (ecc send)
        """
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            run INTEGER,
            role TEXT NOT NULL,
            status TEXT NOT NULL,
            text TEXT NOT NULL,
            after_seq INTEGER,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX messages_session ON messages (session_id, id)",
        "CREATE INDEX messages_queued ON messages (status, session_id)",
    ],
    [  # 8: one row per tool call: the harness's call id, and who saw it (hook, output, both)
        "ALTER TABLE tool_calls ADD COLUMN call_id TEXT",
        "ALTER TABLE tool_calls ADD COLUMN source TEXT",
        "UPDATE tool_calls SET source = CASE WHEN decision = 'observed' THEN 'output' "
        "ELSE 'hook' END",
        "CREATE INDEX tool_calls_call ON tool_calls (session_id, call_id)",
    ],
    [  # 9: schedules: a task started by the daemon on a cron expression (ecc schedule, issue 20)
        """
        CREATE TABLE schedules (
            id TEXT PRIMARY KEY,
            cron TEXT NOT NULL,
            timezone TEXT NOT NULL DEFAULT 'UTC',
            harness TEXT NOT NULL,
            profile_name TEXT,
            task TEXT NOT NULL,
            working_dir TEXT NOT NULL,
            enabled INTEGER NOT NULL DEFAULT 1,
            skip_if_running INTEGER NOT NULL DEFAULT 1,
            next_run_at TEXT NOT NULL,
            last_run_at TEXT,
            last_session_id TEXT,
            last_outcome TEXT,
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX schedules_due ON schedules (enabled, next_run_at)",
    ],
    [  # 10: a schedule's catch-up policy for runs missed while no daemon ran: once, or skip
        "ALTER TABLE schedules ADD COLUMN catch_up TEXT NOT NULL DEFAULT 'once'",
    ],
    [  # 11: conflicts between sessions (issue 20): one incident per path and session pair
        """
        CREATE TABLE conflicts (
            id INTEGER PRIMARY KEY,
            repo TEXT NOT NULL,
            path TEXT NOT NULL,
            first_session TEXT NOT NULL,
            second_session TEXT NOT NULL,
            strategy TEXT NOT NULL,
            paused_session TEXT,
            kept_session TEXT,
            status TEXT NOT NULL DEFAULT 'open',
            reason TEXT NOT NULL DEFAULT '',
            resolution TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (repo, path, first_session, second_session)
        )
        """,
        "CREATE INDEX conflicts_first ON conflicts (first_session, status)",
        "CREATE INDEX conflicts_second ON conflicts (second_session, status)",
        "CREATE INDEX conflicts_status ON conflicts (status, id)",
    ],
    [  # 12: groups/templates (issue 20): session groups (fan-out, template sets and sequences)
        """
        CREATE TABLE session_groups (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            template TEXT,
            project_dir TEXT NOT NULL,
            check_command TEXT,
            check_timeout_secs REAL NOT NULL DEFAULT 600,
            executor TEXT,
            picked_session_id TEXT,
            picked_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX session_groups_created ON session_groups (created_at)",
        """
        CREATE TABLE group_members (
            group_id TEXT NOT NULL REFERENCES session_groups (id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            step_name TEXT NOT NULL DEFAULT '',
            session_id TEXT,
            status TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            task TEXT NOT NULL,
            harness TEXT,
            profile_name TEXT,
            use_worktree INTEGER,
            check_state TEXT,
            check_exit_code INTEGER,
            check_seconds REAL,
            check_output TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (group_id, position)
        )
        """,
        "CREATE INDEX group_members_session ON group_members (session_id)",
    ],
    [  # 13: delegation and messages (issue 20): a session's parent, and messages between sessions
        "ALTER TABLE sessions ADD COLUMN parent_id TEXT",
        "CREATE INDEX sessions_parent ON sessions (parent_id)",
        """
        CREATE TABLE mail (
            id INTEGER PRIMARY KEY,
            recipient_id TEXT NOT NULL,
            sender_id TEXT,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            data TEXT,
            read_at TEXT,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX mail_recipient ON mail (recipient_id, id)",
    ],
    [  # 14: which finished sessions each exporter plugin delivered, and of which end (issue 24)
        """
        CREATE TABLE exports (
            exporter TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            ended_at TEXT NOT NULL,
            exported_at TEXT NOT NULL,
            PRIMARY KEY (exporter, session_id)
        )
        """,
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

# The session columns callers may set (insert, update, transition): never id, state or stamps.
SESSION_COLUMNS = frozenset(
    {
        "name",
        "task",
        "harness",
        "profile_name",
        "profile_json",
        "executor",
        "project_dir",
        "repo_root",
        "repo_url",
        "pr_url",
        "enforced",
        "working_dir",
        "use_worktree",
        "worktree_path",
        "worktree_branch",
        "base_branch",
        "base_commit",
        "slot",
        "runner_pid",
        "runner_host",
        "runner_token",
        "harness_pid",
        "harness_pgid",
        "harness_token",
        "exit_code",
        "exit_signal",
        "stop_requested",
        "stop_grace",
        "attempts",
        "run_kind",
        "harness_session_id",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "started_at",
        "ended_at",
        "heartbeat_at",
        "reason",
        "parent_id",
    }
)
