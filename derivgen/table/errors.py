class TableError(Exception):
    """A problem in the formula table, located by file, line and entry."""

    def __init__(self, message, file=None, line=None, entry=None):
        self.file, self.line, self.entry, self.reason = file, line, entry, message
        where = f"{file}:{line}" if file and line else (file or "<table>")
        what = f" entry '{entry}':" if entry else ""
        super().__init__(f"{where}:{what} {message}")
