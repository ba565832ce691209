"""The Textual UI for ttrecord sessions, installed as `ttrecord.tui`.

Only `ttrecord.cli.tui` imports this package, so the core never depends on Textual. Screens
read sessions through `ttrecord.store.reader`, compute what they show with the pure functions
in `snapshots` and `memlayout`, and run every query in a thread worker.
"""
