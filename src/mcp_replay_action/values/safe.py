"""Escaping for text that came from a server or a cassette, before it goes anywhere a reader or
GitHub will interpret it: a terminal, a Markdown table, a job summary, a PR comment, a log that
the Actions runner scans for workflow commands, an XML file.

Everything here is a pure ``str -> str`` function. The rules, and why:

- The Actions runner treats a stdout line as a workflow command when it starts with ``::`` after
  leading whitespace, and (legacy syntax) when it contains ``##[`` anywhere. We break both with a
  zero-width joiner, which no runner trims.
- GitHub turns ``@login`` and ``@org/team`` into notifications. A zero-width joiner after every
  ``@`` (an e-mail address links too) stops the match and looks the same. Likewise ``#123``,
  ``owner/repo#45`` and ``GH-7`` would link (and cross-reference) issues, and bare ``https://``
  / ``www.`` text would become a link a server chose: a zero-width joiner breaks each. GitHub's renderer (cmark-gfm) links a
  scheme even right after a digit or ``_`` (``1https://x``), so the joiner goes in wherever the
  scheme starts; ``tests/test_cmark_links.py`` renders with cmark-gfm to hold it.
- Markdown: every character that can open inline syntax (``| ` * _ [ < ~ $ \\ &``: tables,
  code, emphasis, links and images, HTML and autolinks, strikethrough, math, escapes, references)
  becomes a numeric character reference; at the start of a line, so does any character that can
  open a block (``# + - = : . > 0-9``). CommonMark treats references as literal text, never
  markup, and GFM splits table rows before decoding them, so ``&#124;`` can never end a cell.
- Terminals and renderers: control characters (ANSI escapes, NUL) and bidirectional overrides
  ("Trojan Source") are shown as visible ``\\xNN`` / ``\\uNNNN`` escapes instead of acting.
- Lone surrogates (legal in JSON ``"\\ud800"``, illegal in UTF-8) are shown escaped, so writing
  the result to a UTF-8 file can never fail.
"""

from __future__ import annotations

import re

from mcp_replay_action.model import JSON

ZWJ = "\u200d"
ELLIPSIS = "…"

# Line breaks as Python's str.splitlines sees them: a superset of what the runner (.NET
# ReadLine: \r, \n) and CommonMark (\r, \n) split on, so nothing slips between the two views.
_LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_NEWLINE_RE = re.compile(r"\r\n|[" + _LINE_BREAKS + "]")

# Control characters that would act rather than show: C0 (except tab and line breaks, handled
# separately), DEL, C1, and the bidirectional embedding/override/isolate controls.
_CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f\x80-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")
# In a code block "\n" stays a line break; every other break character is shown escaped.
_CODE_CONTROL_RE = re.compile(_CONTROL_RE.pattern[:-1] + "\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

# ``#123`` / ``owner/repo#45`` (a digit after "#", not inside a word) and ``GH-7``. The owner is
# tried only where its run of name characters starts, from the run's first word character (what
# a bare ``\b`` start finds first): tried at every word start of a long run ("a-b-c-..."), it
# read to the run's end each time (quadratic). The text is kept as it is either way.
_ISSUE_REF_RE = re.compile(
    r"(?<![\w.-])[.-]*+\b[\w.-]+/[\w.-]+#(?=\d)|(?<!\w)#(?=\d)|(?<![\w-])GH-(?=\d)", re.IGNORECASE
)
# GitHub's renderer (cmark-gfm's autolink extension) links a scheme after a digit, ``_``, ``.``
# or ``-`` (``1https://x``), ``ftp://`` as well, and ``www.`` after ``_`` or ``(`` too: whatever
# comes before, the joiner goes in (it is invisible where nothing would have linked).
_BARE_URL_RE = re.compile(r"(https?|ftp)(?=://)|(www)(?=\.)", re.IGNORECASE)
# A workflow command: "::" at the start of a line after any whitespace.
_COMMAND_START_RE = re.compile(r"(^|[" + _LINE_BREAKS + r"])([^\S" + _LINE_BREAKS + r"]*):(?=:)")

# Characters that can open inline Markdown / HTML / GitHub math, as numeric references.
_MD_SPECIAL = "\\`*_[<|~$"
_MD_TABLE = {ord("&"): "&amp;"} | {ord(c): f"&#{ord(c)};" for c in _MD_SPECIAL}
# At the start of a line these open a block (heading, list, quote, setext, ordered list, "::").
_MD_LINE_START = "#+-=:.0123456789>"
_FENCE_INFO_RE = re.compile(r"[A-Za-z0-9_+-]*")
_BACKTICK_RUN_RE = re.compile(r"`+")

# XML 1.0 allows #x9, #xA, #xD, #x20-#xD7FF, #xE000-#xFFFD, #x10000-#x10FFFF; nothing else.
_XML_ILLEGAL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def text_of(value: JSON) -> str:
    """``value`` as text that encodes to UTF-8: ``None`` is empty, lone surrogates are escaped."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return _SURROGATE_RE.sub(_escape_char, text)


def cap(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS


def visible(value: JSON, limit: int = 300) -> str:
    """One line of plain text for a terminal or a log: line breaks shown as ``\\n``, control and
    bidi characters as escapes, capped at ``limit`` characters, safe from workflow commands."""
    text = text_of(value).replace("\t", " ")
    text = _NEWLINE_RE.sub(_escape_break, text)
    text = _CONTROL_RE.sub(_escape_char, text)
    return no_workflow_commands(cap(text, limit))


def no_mentions(text: str) -> str:
    """Stop GitHub from notifying anyone (``@login``, ``@org/team``) and from linking an e-mail
    address: every ``@`` gets a zero-width joiner after it, whatever follows (cmark-gfm links
    ``.@.jsonl`` and ``mailto:a@_b``: no narrower rule is safe). Looks identical when rendered."""
    return text.replace("@", "@" + ZWJ)


def no_references(text: str) -> str:
    """Stop GitHub from linking issues or pull requests (``#123``, ``owner/repo#45``, ``GH-7``)
    and from turning bare ``http(s)://``, ``ftp://`` or ``www.`` text into links (wherever it
    starts: ``1https://`` links too): a zero-width joiner goes
    after the ``#`` / ``GH-`` and after the scheme or ``www``. Looks identical when rendered."""
    text = _ISSUE_REF_RE.sub(lambda m: m.group(0) + ZWJ, text)
    return _BARE_URL_RE.sub(lambda m: m.group(0) + ZWJ, text)


def no_workflow_commands(text: str) -> str:
    """Make sure no line of ``text`` is a GitHub Actions workflow command: a line starting with
    ``::`` (after whitespace) gets a zero-width joiner between the colons, and the legacy
    ``##[`` prefix, which the runner honours anywhere in a line, is broken the same way."""
    text = _COMMAND_START_RE.sub(lambda m: m.group(1) + m.group(2) + ":" + ZWJ, text)
    return text.replace("##[", "#" + ZWJ + "#[")


_ORDERED_MARKER_RE = re.compile(r"\d{1,9}[.)](?:\s|$)")


def md_cell(value: JSON, limit: int = 200) -> str:
    """``value`` as inert inline Markdown, safe inside a GFM table cell, a heading, a
    ``<summary>`` or running text: one line, at most ``limit`` visible characters, no markup, no
    HTML, no mentions, no workflow commands."""
    text = text_of(value).replace("\t", " ")
    text = _NEWLINE_RE.sub(" ↵ ", text)
    text = _CONTROL_RE.sub(_escape_char, text)
    text = no_references(no_mentions(cap(text.strip(), limit)))
    out = text.translate(_MD_TABLE)
    # A leading digit only opens a block as an ordered-list marker ("1." / "1)"); plain numbers
    # and versions stay readable in the raw text.
    if out and out[0] in _MD_LINE_START and (not out[0].isdigit() or _ORDERED_MARKER_RE.match(out)):
        out = f"&#{ord(out[0])};" + out[1:]
    return out


def md_code_block(value: JSON, limit: int = 4000, info: str = "") -> str:
    """``value`` as a fenced code block that nothing inside can close early: the fence is longer
    than any run of backticks in the text. At most ``limit`` characters (a note says how many were
    cut). Control characters are escaped and no line can be a workflow command. Mentions inside
    code do not notify, so the text is otherwise verbatim. Ends with a newline.

    ``info`` is the language tag (``diff``, ``json``); it must be a plain word."""
    if not _FENCE_INFO_RE.fullmatch(info):
        raise ValueError(f"code block info must be a plain word, not {info!r}")
    text = text_of(value).replace("\r\n", "\n").replace("\r", "\n")
    text = _CODE_CONTROL_RE.sub(_escape_char, text).rstrip("\n")
    if len(text) > limit:
        cut = len(text) - limit
        text = text[:limit].rstrip("\n") + f"\n{ELLIPSIS} ({cut} more characters not shown)"
    runs = [len(r) for r in _BACKTICK_RUN_RE.findall(text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{info}\n{no_workflow_commands(text)}\n{fence}\n"


def xml_text(value: JSON, limit: int | None = None) -> str:
    """``value`` with every character XML 1.0 forbids shown as an escape (``\\x00``) and line
    ends as ``\\n`` (what an XML parser would turn them into anyway), optionally capped; the XML
    serializer does the ``<&>"`` escaping."""
    text = text_of(value).replace("\r\n", "\n").replace("\r", "\n")
    text = _XML_ILLEGAL_RE.sub(_escape_char, text)
    return cap(text, limit) if limit is not None else text


_BREAK_NAMES = {"\r\n": "\\r\\n", "\r": "\\r", "\n": "\\n"}


def _escape_break(match: re.Match[str]) -> str:
    return _BREAK_NAMES.get(match.group()) or _escape_char(match)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
