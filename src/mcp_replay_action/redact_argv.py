"""Redaction of command lines: a server's argv in a cassette header, the report's target, the
action's log line and the local command the comment suggests. A `Redactor`'s string rules see one
word at a time here, so the words must be the shell's: ``--header 'Authorization: Bearer X'`` is
two words, and the second one names its secret.

The rules, beyond every string rule of the redactor:

* a flag whose name says secret hides its value (``--password X``, ``--api-key=X``,
  ``--db-pass X``; ``redact_rules.is_secret_flag``), and so does ``NAME=value`` or ``Name: value`` when the
  name is a secret key (``API_KEY=X``, ``Authorization: Bearer X``);
* a one-letter flag says nothing by itself (``-p`` is a port for ``ssh`` and ``psql``, parents for
  ``mkdir``), so its value is hidden only when the value looks like a password: 8 characters or
  more, upper case, lower case and digits, none of a path's or an assignment's separators
  (``srv -p Xk3...``); ``-p 8000``, ``mkdir -p DIR``, ``ssh -p 2222`` are kept;
* a value attached to ``-p`` or ``-P`` is the password of ``mysql``, ``mariadb``, ``7z`` and
  ``sshpass`` (``mysql -pS3cret``): hidden when it mixes letters with digits or symbols, as a
  port (``-p8080``) or a bundle of switches (``-pv``, ``-pthread``) does not;
* a script (``sh -c '...'``) is split into its words and the same rules run over them.

A text is split into shell words by one linear pattern; a word the rules leave alone keeps its
exact spelling (quotes, escapes), and a changed one keeps its surrounding quotes.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_rules import PLACEHOLDER, SHELL_REFERENCE, is_secret_flag

# One shell word: runs of plain characters, quoted strings and escapes, side by side. Each
# alternative starts with a different character, so the scan is linear; a quote left open is a
# character of its word.
_SHELL_WORD = re.compile(r"""(?:[^\s'"\\]++|'[^']*+'|"(?:[^"\\]|\\.)*+"|\\.?|['"])++""", re.DOTALL)
_SHORT_FLAG = re.compile(r"-[A-Za-z]")
_FLAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")  # "-p$DB_PASSWORD" names no flag
_PASSWORD_FLAG = re.compile(r"(?P<flag>-[pP])(?P<value>[^\s/]{6,100})")
MAX_DEPTH = 3  # a script in a script in a script (``ssh host "sh -c '...'"``)
_NOT_IN_A_PASSWORD = re.compile(r"[\s/=]")
_NEEDS_QUOTES = re.compile(r"[\s'\"\\$`;&|<>()]")


def looks_like_password(value: str) -> bool:
    """A value after a one-letter flag that is a password or a generated key: 8 to 100
    characters with upper case, lower case and digits, and no whitespace, ``/`` or ``=`` (a
    path, an assignment). A port, a directory, a host or a plain word is none."""
    return (
        8 <= len(value) <= 100
        and not _NOT_IN_A_PASSWORD.search(value)
        and not SHELL_REFERENCE.fullmatch(value)
        and any(map(str.isdigit, value))
        and any(map(str.islower, value))
        and any(map(str.isupper, value))
    )


def _attached_password(arg: str) -> str | None:
    """``-p`` when ``arg`` is ``-p<password>`` (mysql's spelling): a value of 6 characters or more
    that mixes letters with something else (digits, symbols, both cases); None otherwise."""
    match = _PASSWORD_FLAG.fullmatch(arg)
    if match is None:
        return None
    value = match.group("value")
    if SHELL_REFERENCE.fullmatch(value) or not any(map(str.isalpha, value)):
        return None  # "-p$DB_PASS", "-p8080", "-p8080:80"
    if value.isalpha() and (value.islower() or value.isupper()):
        return None  # "-pthread", "-pedantic", "-pvr": switches
    return match.group("flag")


def redact_argv(redactor: Redactor, argv: Sequence[str], depth: int = 0) -> list[str]:
    """``argv`` with secrets hidden (see the module's rules), each word also through every
    string rule of ``redactor``. Hits are counted in ``redactor.hits`` as ``secret-keys``.
    ``depth``: how many scripts this argv is inside (``MAX_DEPTH`` deep, a script is text)."""
    out: list[str] = []
    hide_next = False
    short_flag_before = False
    for arg in argv:
        after_short, short_flag_before = short_flag_before, bool(_SHORT_FLAG.fullmatch(arg))
        if hide_next or (after_short and redactor.defaults and looks_like_password(arg)):
            out.append(_hit(redactor))
            hide_next = False
            continue
        attached = _attached_password(arg) if redactor.defaults else None
        if attached is not None:
            out.append(attached + _hit(redactor))
            continue
        name, sep, value = arg.partition("=") if "=" in arg else arg.partition(":")
        flag = name.strip().lstrip("-")
        is_flag = arg.startswith("-")
        shown = value.strip()
        if (
            sep
            and shown
            and not SHELL_REFERENCE.fullmatch(shown)
            and " " not in flag
            and flag
            and _secret_arg(redactor, flag, is_flag)
        ):
            out.append(f"{name}{sep}{' ' if value.startswith(' ') else ''}{_hit(redactor)}")
            continue
        if is_flag and sep == "=":  # ``--header=X`` is ``--header X``: X by the same rules
            out.append(f"{name}={redact_argv(redactor, [name, value], depth)[1]}")
            continue
        if is_flag and not sep and _FLAG_NAME.fullmatch(flag) and _secret_arg(redactor, flag, True):
            hide_next = True
        if " " in arg.strip() and depth < MAX_DEPTH:  # a script (``sh -c '...'``): its words count too
            arg = redact_command(redactor, arg, depth + 1)
        out.append(redactor.apply(arg))
    return out


def redact_command(redactor: Redactor, text: str, depth: int = 0) -> str:
    """A command line given as one text (a report's target, a ``sh -c`` script) with its secrets
    hidden: split into shell words, each word unquoted and passed through ``redact_argv`` with
    the others, a changed word put back with its quotes, everything between the words kept
    exactly; then the whole text through the string rules (``Bearer X`` across two words)."""
    spans = [match.span() for match in _SHELL_WORD.finditer(text)]
    words = [_unquoted(text[start:end]) for start, end in spans]
    shown = redact_argv(redactor, words, depth)
    parts: list[str] = []
    last = 0
    for (start, end), word, new in zip(spans, words, shown, strict=True):
        original = text[start:end]
        parts += [text[last:start], original if new == word else _requoted(original, new)]
        last = end
    parts.append(text[last:])
    return str(redactor.apply("".join(parts)))


def _secret_arg(redactor: Redactor, flag: str, is_flag: bool) -> bool:
    return redactor.is_secret_name(flag) or (is_flag and redactor.defaults and is_secret_flag(flag))


def _hit(redactor: Redactor) -> str:
    redactor.hits["secret-keys"] += 1
    return PLACEHOLDER


def _unquoted(word: str) -> str:
    """A shell word as the program gets it; as written when the shell could not read it (a
    quote left open)."""
    try:
        split = shlex.split(word)
    except ValueError:
        return word
    return split[0] if len(split) == 1 else word


def _requoted(original: str, shown: str) -> str:
    """``shown`` written as ``original`` was: inside the same quotes when it was one quoted
    string, else quoted for a POSIX shell only when it has to be."""
    if len(original) >= 2 and original[0] == original[-1] and original[0] in "'\"":
        return original[0] + shown + original[0]
    return shlex.quote(shown) if _NEEDS_QUOTES.search(shown) else shown
