"""A one-line progress bar on stderr for the command line (``derivgen generate``, ``derivgen warmup``).
Library functions never print: they take a ``progress(done, total, label)`` callback, and the command
line passes a bar only when asked or when stderr is a terminal."""
import sys


class ProgressBar:
    def __init__(self, title, stream=None, width=30):
        self.title = title
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._shown = False

    def __call__(self, done, total, label=""):
        filled = int(self.width * done / total) if total else self.width
        self.stream.write(f"\r{self.title} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                          f"{label[:40]:<40}")
        self.stream.flush()
        self._shown = True

    def close(self):
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False


def wanted(flag, stream=None):
    """Show progress when ``flag`` (``--progress``) is set, or when ``stream`` (stderr) is a terminal."""
    stream = stream if stream is not None else sys.stderr
    return bool(flag) or (hasattr(stream, "isatty") and stream.isatty())
