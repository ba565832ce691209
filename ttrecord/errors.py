"""The one exception type for failures a user should see as a one-line message."""


class TtrecordError(Exception):
    """A user-facing failure. Library code raises it; only the CLI's main() prints it."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class SessionError(TtrecordError):
    """A file that cannot be read as a ttrecord session (missing, foreign, newer, truncated)."""
