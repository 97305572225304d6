"""A model of how the Actions runner reads workflow commands out of a step's output, for tests
that must prove nothing foreign becomes a command.

Per line (the runner splits on CR, LF, CRLF): the v2 syntax ``::name props::data`` after leading
whitespace is trimmed, and the legacy v1 syntax ``##[name props]data`` anywhere in the line.
While ``::stop-commands::TOKEN`` is in force only ``::TOKEN::`` is honoured. Any command name
counts here (the runner honours only registered ones: this model is stricter).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

_LINES = re.compile(r"\r\n|\r|\n")


@dataclass
class Cmd:
    name: str
    properties: dict[str, str] = field(default_factory=dict)
    data: str = ""
    line: str = ""


def unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _v2(line: str) -> Cmd | None:
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    name, _, props = info.partition(" ")
    if not name:
        return None
    cmd = Cmd(name, data=unescape_data(message[end + 2 :]), line=line)
    for pair in props.split(","):
        key, sep, value = pair.partition("=")
        if sep and key and value:
            cmd.properties[key] = unescape_property(value)
    return cmd


def _v1(line: str) -> Cmd | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name = line[start + 3 : end].split(" ")[0]
    return Cmd(name, data=line[end + 1 :], line=line) if name else None


def parse_commands(text: str, *, honour_stop: bool = True) -> list[Cmd]:
    """Every workflow command the runner would act on in ``text``."""
    out: list[Cmd] = []
    stop_token: str | None = None
    for line in _LINES.split(text):
        cmd = _v2(line) or _v1(line)
        if cmd is None:
            continue
        if stop_token is not None:
            if cmd.name == stop_token:
                stop_token = None
            continue
        if honour_stop and cmd.name == "stop-commands":
            stop_token = cmd.data
            continue
        out.append(cmd)
    return out


def read_outputs(path: str | os.PathLike[str]) -> dict[str, str]:
    """A ``GITHUB_OUTPUT`` file read the way the runner reads it (``name=value`` and the
    ``name<<DELIMITER`` form)."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value: list[str] = []
            while i < len(lines) and lines[i] != delimiter:
                value.append(lines[i])
                i += 1
            if i >= len(lines):
                raise ValueError(f"{path}: output {name!r} has no closing delimiter")
            i += 1
            out[name] = "\n".join(value)
        else:
            name, _, text = line.partition("=")
            out[name] = text
    return out
