"""What a server that could not start was missing: a Python module, a Node package or module, or
a program. The one place that reads this from a failed start, so every edge that explains it
(the action's comment and error, today) says the same.

Read from the error's stderr tail (already redacted by whoever raised it: the tail is never
re-read from the process here), the last line that says so winning, since a traceback ends with
its cause:

- Python: ``ModuleNotFoundError: No module named 'x'`` (or ``ImportError: No module named x``);
- Node: ``Error: Cannot find module 'x'`` (CommonJS), ``Error [ERR_MODULE_NOT_FOUND]: Cannot find
  package 'x' imported from ...`` (ES modules); a name that is a path is a file a build writes;
- a shell's ``bash: line 1: tsx: command not found``, ``sh: 1: tsx: not found``, ``zsh: command
  not found: tsx``, and Node's ``Error: spawn uvx ENOENT``;
- and, with no stderr at all, the spawn's own ENOENT (``CommandNotFound``).

Each pattern is anchored at the line's start with no nested repetition (linear in the line,
which StderrTail caps anyway); a name is kept only when it is a plain module or command name, so
what reaches a comment is a short, inert word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from mcp_replay_action.errors import CommandNotFound, ServerStartError

Kind = Literal["python", "node", "file", "program"]

_PYTHON = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)")
_NODE = re.compile(r"(?:Uncaught )?Error(?: \[ERR_MODULE_NOT_FOUND\])?: Cannot find (?:module|package) '([^'\s]+)'")
_SPAWN = re.compile(r"(?:Error: )?spawn (\S+) ENOENT")
_SH = re.compile(r"(?:ba|da|k)?sh: (?:line )?\d+: (\S+): (?:command )?not found")
_ZSH = re.compile(r"zsh: command not found: (\S+)")
_BASH_BARE = re.compile(r"(?:ba)?sh: (\S+): command not found")
_PROGRAM = (_SPAWN, _SH, _ZSH, _BASH_BARE)
_NAME = re.compile(r"[\w@][\w@./+-]{0,99}")  # what may be named: a module, a package, a command


@dataclass(frozen=True)
class Missing:
    """What was missing: ``kind`` (a Python module, a Node package, a file a build writes, a
    program) and its ``name`` (empty when it was not a plain name)."""

    kind: Kind
    name: str


def missing_dependency(exc: BaseException) -> Missing | None:
    """What ``exc`` (a failed start) says was missing, or None when it says nothing of the kind."""
    if isinstance(exc, CommandNotFound):
        return Missing("program", _plain(exc.program.rpartition("/")[2]))
    if not isinstance(exc, ServerStartError):
        return None
    for line in reversed(exc.stderr_tail.splitlines()):
        found = _read(line.strip())
        if found is not None:
            return found
    return None


def _read(line: str) -> Missing | None:
    if match := _PYTHON.match(line):
        return Missing("python", _plain(match.group(1)))
    if match := _NODE.match(line):
        name = match.group(1)
        if name.startswith(("/", ".", "file:")):  # a script or a built file, not a package
            return Missing("file", _plain("/".join(name.split("/")[-2:])))  # dist/index.js
        return Missing("node", _plain(name))
    for pattern in _PROGRAM:
        if match := pattern.match(line):
            return Missing("program", _plain(match.group(1)))
    return None


def _plain(name: str) -> str:
    return name if _NAME.fullmatch(name) else ""
