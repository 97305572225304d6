"""Why a server stopped, in one line: the informative line of its stderr, and a hint when the
script it was told to run does not exist.

The last line of a crashed server's stderr is often the runtime's banner, not the cause: Node ends
with ``Node.js v20.11.0`` after a stack and a ``{ code: 'MODULE_NOT_FOUND' }`` block, and Python's
traceback puts its frames before the exception. So the headline is, in this order:

- the exception line of Python's last traceback (the first line after ``Traceback (most recent
  call last):`` that is not indented: ``ModuleNotFoundError: No module named 'x'``);
- else the last line that opens like an error report (``Error: Cannot find module ...``,
  ``TypeError: ...``, ``Error [ERR_MODULE_NOT_FOUND]: ...``, ``error: ...``, ``panic: ...``,
  ``fatal: ...``), stack frames and the runtime banner left out;
- else the last line that is not a stack frame, a brace, a banner or blank.

The hint is proved, not guessed: the first argument that names a script file (``dist/index.js``,
``server.py``) is looked up in the server's working directory, and only a file that is not there
earns "does not exist", with the closest name in that directory, if any, and "did you build it?"
for what a build writes (``.js``, ``.jar``).
Each regular expression is anchored at a line's start and has no nested repetition: linear in the
line's length (StderrTail caps a line at 4000 characters anyway).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

_WIDTH = 200  # characters of the headline kept in a one-line message

_TRACEBACK = "Traceback (most recent call last):"
# ``Error: ...``, ``TypeError: ...``, ``mod.BadThing: ...``, ``Error [ERR_X]: ...``, ``error: ...``.
_ERRORISH = re.compile(
    r"(?:Uncaught )?(?:[A-Za-z_][\w.]*(?:Error|Exception)|Error|ERROR|error|FATAL|[Ff]atal|panic)(?: \[[\w-]+\])?:"
)
_BANNER = re.compile(r"Node\.js v\d")  # what node prints last after an uncaught error
_FRAME = re.compile(r"\s*(?:at |File \"|\^+$|~+$|[{}]$)|\s+\w+: .*,$")
# An argument that names a script the interpreter should run (not an option, not a module name).
_SCRIPT = re.compile(r"[^-].*\.(?:[cm]?js|tsx?|py|rb|php|pl|jar|sh)")
_BUILT = re.compile(r".*\.(?:[cm]?js|jar)")  # what a build step writes: missing, it was likely not run


def headline(text: str) -> str:
    """The line of ``text`` (a stderr tail) that says why the server stopped, trimmed to one
    line's width; "" when it holds nothing but blanks."""
    lines = [line.rstrip() for line in text.splitlines()]
    start = max((i for i, line in enumerate(lines) if line.strip() == _TRACEBACK), default=-1)
    if start >= 0:
        for line in lines[start + 1 :]:
            if line.strip() and not line[0].isspace():
                return _trim(line)
    for line in reversed(lines):
        stripped = line.strip()
        if stripped and _ERRORISH.match(stripped) and not _FRAME.match(line):
            return _trim(stripped)
    for line in reversed(lines):
        stripped = line.strip()
        if stripped and not _BANNER.match(stripped) and not _FRAME.match(line):
            return _trim(stripped)
    return ""


def missing_script_hint(argv: Sequence[str], cwd: str | None) -> str:
    """``"dist/indx.js does not exist in /app (did you mean dist/index.js? did you build it?)"``
    when the first script argument of ``argv`` is not a file; "" when it is, or there is none."""
    for arg in argv[1:]:
        if not _SCRIPT.fullmatch(arg):
            continue
        base = cwd or os.getcwd()
        path = os.path.join(base, arg)
        if os.path.exists(path):
            return ""
        where = f" in {base}" if not os.path.isabs(arg) else ""
        guess = _closest(path)
        shown = os.path.join(os.path.dirname(arg), guess) if guess else ""
        asks = [f"did you mean {shown}?"] if guess else []
        if _BUILT.fullmatch(arg):
            asks.append("did you build it?")
        return f"{arg} does not exist{where}" + (f" ({' '.join(asks)})" if asks else "")
    return ""


def start_failure(what: str, tail: str, argv: Sequence[str] = (), cwd: str | None = None) -> str:
    """The one-line account of a failed start: ``what`` happened, the stderr headline, the hint."""
    why = headline(tail)
    hint = missing_script_hint(argv, cwd) if argv else ""
    return what + (f": {why}" if why else "") + (f"; {hint}" if hint else "")


def _closest(path: str) -> str:
    directory, name = os.path.split(path)
    try:
        names = os.listdir(directory)
    except OSError:
        return ""
    import difflib  # only for a script that is not there

    found = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return found[0] if found else ""


def _trim(line: str) -> str:
    line = line.strip()
    return line if len(line) <= _WIDTH else line[: _WIDTH - 1] + "…"
