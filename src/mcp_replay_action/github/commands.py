"""Workflow commands: how the action talks to the runner through stdout and the file commands.

Escaping follows the runner's parser exactly: in a command's data ``%``, CR and LF are encoded
(``%25``, ``%0D``, ``%0A``); in a property value ``:`` and ``,`` are encoded as well (``%3A``,
``%2C``). Text we did not write ourselves (a server's answer, a path, an install log) never starts a
line of output: it is either inside an escaped command or passed through ``neutralise``, which
breaks the two prefixes the runner looks for, ``::`` at the start of a line and ``##[`` anywhere.
Foreign output printed in bulk (the install log) is also fenced by ``stop-commands``.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TextIO

from mcp_replay_action.values.safe import no_workflow_commands

if TYPE_CHECKING:
    from mcp_replay_action.redact import Redactor

Level = Literal["error", "warning", "notice"]


# Characters that would act rather than show in the log viewer or break the line elsewhere: C0/C1
# controls other than CR/LF/TAB (CR and LF are escaped as GitHub specifies), other line and
# paragraph separators, bidi overrides, and lone surrogates (which cannot be written as UTF-8).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control, separator and bidi characters shown as escapes (``\\x1b``)."""
    return _UNPRINTABLE.sub(_show, text)


def escape_data(text: str) -> str:
    """Escape the data part of a workflow command (after the second ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``...) of a workflow command."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_command(name: str, properties: Mapping[str, object] | None = None, message: str = "") -> str:
    """One workflow command line: ``::name k=v,k=v::message`` with everything escaped."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (properties or {}).items()
        if value is not None and value != ""
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def format_annotation_command(name: str, properties: Mapping[str, object], message: str) -> str:
    """Like ``format_command``, with foreign text first made printable (annotations show it)."""
    clean = {key: printable(str(value)) for key, value in properties.items() if value is not None}
    return format_command(name, clean, printable(message))


def neutralise(text: str) -> str:
    """Untrusted text made safe to print as plain log lines: no line of it can be read as a
    workflow command (``::`` at a line's start, or the legacy ``##[`` anywhere, are broken with a
    zero-width joiner, see ``values.safe``); the text stays readable."""
    return no_workflow_commands(text)


@dataclass(frozen=True)
class Annotation:
    """One annotation: shown on the file and line in the pull request and the run."""

    level: Level
    message: str
    title: str = ""
    file: str = ""
    line: int | None = None


class Commands:
    """Writes workflow commands and log lines to the runner (stdout)."""

    def __init__(self, stream: TextIO | None = None, *, debug: bool = False) -> None:
        self.stream = stream or sys.stdout
        self.debug_enabled = debug
        self._hidden: Redactor | None = None

    def hide(self, values: Mapping[str, str]) -> None:
        """From now on, write each of ``values`` (the ``env`` input's secret values) as
        ``[REDACTED]`` in every line: ``install``'s output, the server's stderr, annotations."""
        from mcp_replay_action.redact import Redactor

        self._hidden = Redactor(defaults=False, env_values=values) if values else None

    def _write(self, line: str) -> None:
        if self._hidden is not None:
            line = self._hidden.apply(line)
        # A lone surrogate (legal in JSON) cannot be encoded: show it instead of crashing.
        self.stream.write(_SURROGATE.sub(_show, line) + "\n")
        self.stream.flush()

    def log(self, text: str) -> None:
        """Print text that may come from outside (paths, server output): neutralised."""
        self._write(neutralise(text))

    def info(self, text: str) -> None:
        """Print a line we wrote ourselves; still neutralised, since it may embed a name."""
        self.log(text)

    def debug(self, message: str) -> None:
        """A debug line, shown only when the run has debug logging on."""
        if self.debug_enabled:
            self._write(format_command("debug", None, message))

    def annotate(self, annotation: Annotation) -> None:
        """An error, warning or notice annotation, on a file and line when it names them."""
        props: dict[str, object] = {}
        if annotation.file:
            props["file"] = annotation.file
            if annotation.line:
                props["line"] = annotation.line
        if annotation.title:
            props["title"] = annotation.title
        self._write(format_annotation_command(annotation.level, props, annotation.message))

    def error(self, message: str, *, title: str = "") -> None:
        """An error annotation on the run (no file)."""
        self.annotate(Annotation("error", message, title))

    def warning(self, message: str, *, title: str = "") -> None:
        """A warning annotation on the run (no file)."""
        self.annotate(Annotation("warning", message, title))

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        """A collapsible group in the log."""
        self._write(format_command("group", None, title))
        try:
            yield
        finally:
            self._write("::endgroup::")

    @contextmanager
    def untrusted(self) -> Iterator[None]:
        """Stop command processing while foreign output is printed (``stop-commands`` with a token
        nobody can guess), on top of neutralising each line."""
        token = secrets.token_hex(16)
        self._write(f"::stop-commands::{token}")
        try:
            yield
        finally:
            self._write(f"::{token}::")


def write_outputs(path: str | os.PathLike[str] | None, outputs: Mapping[str, str]) -> None:
    """Append outputs to ``GITHUB_OUTPUT`` in the multiline form with a random delimiter that
    appears in no value, so no value can end its own block early and set another output."""
    if not path:
        return
    blocks = []
    for name, value in outputs.items():
        text = str(value)
        delimiter = "ghadelimiter_" + secrets.token_hex(16)
        while delimiter in text or delimiter in name:  # pragma: no cover - 128 random bits
            delimiter = "ghadelimiter_" + secrets.token_hex(16)
        blocks.append(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")
    with open(path, "a", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write("".join(blocks))


def append_summary(path: str | os.PathLike[str] | None, markdown: str) -> None:
    """Append Markdown to ``GITHUB_STEP_SUMMARY`` (the runner shows it on the run page)."""
    if not path:
        return
    with open(path, "a", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
