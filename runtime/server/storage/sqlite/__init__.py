"""The SQLite backend: one file in WAL mode, group commit, shared by the processes of `--workers`.

Modules: `store` (`SqliteStore`), `reads` (pages, gets, history), `batch`
(one group commit's SQL), `compact`, `errors` (SQLite's errors as the
store's), `peers` (processes sharing the file learn each other's writes),
`snapshot` (save, restore and check a snapshot). Internal to
`runtime.server.storage`, which opens it (`open_store("sqlite", path)`).
"""

__all__: list[str] = []
