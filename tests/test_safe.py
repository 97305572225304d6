"""The escaping helpers against hostile strings, checked by rendering with a real CommonMark + GFM
table parser (markdown-it-py) and by the Actions runner's own workflow-command rules."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest
from markdown_it import MarkdownIt

from mcp_replay_action.values import safe
from mcp_replay_action.values.safe import (
    ZWJ,
    md_cell,
    md_code_block,
    no_mentions,
    no_workflow_commands,
    visible,
    xml_text,
)

pytestmark = pytest.mark.unit

HOSTILE = [
    "a|b",
    "a\\|b",
    "\\",
    "`code`",
    "```",
    "````x````",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<!-- open comment",
    "<details><summary>x</summary>",
    "</details></summary></td></table>",
    "@octocat",
    "@org/team",
    "hi @octocat and @github/security-team!",
    "mail me: someone@example.com",
    "::error::injected",
    "  ::warning file=a.py,line=1::x",
    "\t::notice::tab",
    "ok\n::error::second line",
    "ok\r::error::carriage return",
    "ok\r\n::error::crlf",
    "ok\u2028::error::line separator",
    "ok\x85::error::next line",
    "ok\x0b::error::vertical tab",
    "prefix ##[error]legacy anywhere",
    "[x](javascript:alert(1))",
    "![pixel](https://evil.example/p.png)",
    "[ref]: https://evil.example",
    "[^1]",
    "**bold** __bold__ *em* _em_",
    "~~strike~~ ~one~",
    "$x^2$ and $$\\sum$$",
    "&amp; &#124; &lt;script&gt;",
    "# heading",
    "## heading",
    "- item",
    "+ item",
    "* item",
    "1. item",
    "1) item",
    "> quote",
    "---",
    "===",
    "    indented code",
    "\x00nul \x07bell \x1b[31mred\x1b[0m \x7f",
    "\u202eevil\u202c \u2066iso\u2069",
    "lone \ud800 surrogate \udfff",
    "\ufffe\uffff",
    "https://evil.example <https://evil.example>",
    "| a | b |\n|---|---|\n| c | d |",
    "x" * 5000,
]

_MENTION = re.compile(r"(?<![\w@/`.])@[A-Za-z0-9]")
_LINE_BREAK_CHARS = set("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _md() -> MarkdownIt:
    # html=True like GitHub's renderer accepts raw HTML: our escaping must make it inert anyway.
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _inline_children(tokens: list) -> list:
    return [child for tok in tokens if tok.type == "inline" for child in (tok.children or [])]


def _runner_sees_command(line: str) -> bool:
    """The Actions runner's rules: '::' after leading whitespace (.NET TrimStart), or '##[' anywhere."""
    return line.lstrip().startswith("::") or "##[" in line


# -- md_cell ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE)
def test_md_cell_stays_one_inert_table_cell(text: str) -> None:
    cell = md_cell(text, 200)
    assert not set(cell) & _LINE_BREAK_CHARS
    cell.encode("utf-8")  # no lone surrogates
    tokens = _md().parse(f"| left | cell | right |\n|---|---|---|\n| L | {cell} | R |\n")
    types = [t.type for t in tokens]
    assert types.count("td_open") == 3, types  # the row still has exactly three cells
    assert types.count("tr_open") == 2
    children = _inline_children(tokens)
    assert {c.type for c in children} <= {"text"}, [c.type for c in children]
    body = [t for t in tokens if t.type == "inline"][-2].content  # the middle cell
    assert html.unescape(body) == html.unescape(cell)


@pytest.mark.parametrize("text", HOSTILE)
def test_md_cell_is_inert_at_the_start_of_a_line(text: str) -> None:
    cell = md_cell(text, 200)
    tokens = _md().parse(cell + "\n")
    if not cell:
        assert tokens == []
        return
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    assert {c.type for c in _inline_children(tokens)} <= {"text"}


@pytest.mark.parametrize("text", HOSTILE)
def test_md_cell_neither_mentions_nor_commands(text: str) -> None:
    cell = md_cell(text, 200)
    rendered = _md().render(f"| a |\n|---|\n| {cell} |\n")
    assert not _MENTION.search(html.unescape(rendered))
    assert not _runner_sees_command(cell)
    assert "<script" not in rendered and "<img" not in rendered and "<a " not in rendered


@pytest.mark.parametrize("text", [t for t in HOSTILE if t.isprintable() and len(t) < 200])
def test_md_cell_renders_back_to_the_original_text(text: str) -> None:
    rendered = _md().render(md_cell(text, 200) + "\n")
    assert rendered.startswith("<p>") and rendered.endswith("</p>\n")
    assert html.unescape(rendered[3:-5]).replace(ZWJ, "") == text.strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_md_cell_leaves_no_raw_syntax_characters(text: str) -> None:
    # GitHub extras the test parser lacks: $math$, and backslash escapes next to references.
    cell = md_cell(text, 200)
    assert not set(cell) & set("|<`*_[~$\\")
    assert not re.search(r"&(?!#\d+;|amp;)", cell)


def test_md_cell_keeps_ordinary_text_readable() -> None:
    assert md_cell("tools/call add") == "tools/call add"
    assert md_cell("key 'echoed' added -> 6") == "key 'echoed' added -> 6"
    assert html.unescape(md_cell("a|b <c> `d` $e")) == "a|b <c> `d` $e"


def test_md_cell_caps_visible_length_and_joins_lines() -> None:
    cell = md_cell("|" * 1000, 50)
    assert len(html.unescape(cell)) == 50 and html.unescape(cell).endswith("…")
    assert html.unescape(md_cell("one\ntwo\r\nthree")) == "one ↵ two ↵ three"
    assert md_cell(None) == "" and md_cell(42) == "42" and md_cell("0.1.0") == "0.1.0"
    assert md_cell("1. item") == "&#49;. item" and md_cell("12) x") == "&#49;2) x"  # ordered-list markers


def test_md_cell_shows_control_characters_as_escapes() -> None:
    assert html.unescape(md_cell("a\x1b[31mb\x00")) == "a\\x1b[31mb\\x00"
    assert html.unescape(md_cell("\u202eabc")) == "\\u202eabc"
    assert html.unescape(md_cell("x\ud800y")) == "x\\ud800y"


# -- md_code_block ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE + ["```\n</details>\n```", "~~~\nx", "```diff\n+a\n```"])
def test_md_code_block_cannot_be_escaped(text: str) -> None:
    block = md_code_block(text, 10_000, "diff")
    tokens = _md().parse(block + "\nafter the block\n")
    assert [t.type for t in tokens][:1] == ["fence"]
    fence = tokens[0]
    assert fence.info == "diff"
    # The paragraph after the block is a paragraph: nothing inside closed the fence early.
    assert [t.type for t in tokens[1:]] == ["paragraph_open", "inline", "paragraph_close"]
    assert tokens[2].content == "after the block"
    block.encode("utf-8")
    assert not any(_runner_sees_command(line) for line in block.splitlines())
    assert "\x1b" not in block and "\x00" not in block


def test_md_code_block_keeps_plain_text_verbatim() -> None:
    text = "--- recorded\n+++ live\n@@ -1 +1 @@\n-<b>@octocat</b> | `x`\n+new"
    tokens = _md().parse(md_code_block(text))
    assert tokens[0].type == "fence" and tokens[0].content == text + "\n"


def test_md_code_block_caps_and_says_so() -> None:
    block = md_code_block("x" * 100 + "\n" + "y" * 100, 50)
    assert "x" * 50 in block and "y" not in block
    assert "151 more characters not shown" in block


def test_md_code_block_rejects_an_unsafe_info_string() -> None:
    with pytest.raises(ValueError):
        md_code_block("x", info="js`\n<script>")


# -- no_mentions / no_workflow_commands / visible / xml_text ------------------------------------------


def test_no_mentions_breaks_users_and_teams_but_looks_the_same() -> None:
    out = no_mentions("cc @octocat @org/team-name, @-not, mail a@b.c")
    assert not _MENTION.search(out)
    assert out.replace(ZWJ, "") == "cc @octocat @org/team-name, @-not, mail a@b.c"


@pytest.mark.parametrize(
    "text",
    [
        "::error::x",
        "   ::error::x",
        "\t::set-output name=a::b",
        "ok\n::error::x",
        "ok\r::error::x",
        "ok\r\n  ::error::x",
        "ok\u2028::error::x",
        "::::",
        "a ##[error]b",
        "##[group]x\n##[endgroup]",
    ],
)
def test_no_workflow_commands(text: str) -> None:
    out = no_workflow_commands(text)
    for line in re.split(r"\r\n|\r|\n", out) + out.splitlines():
        assert not _runner_sees_command(line), repr(line)
    assert out.replace(ZWJ, "") == text


def test_no_workflow_commands_leaves_mid_line_colons_alone() -> None:
    assert no_workflow_commands("std::vector a::b") == "std::vector a::b"


@pytest.mark.parametrize("text", HOSTILE)
def test_visible_is_one_safe_line(text: str) -> None:
    out = visible(text, 300)
    assert len(out) <= 300 + 10  # the cap, plus ZWJs that break a command
    assert not set(out) & _LINE_BREAK_CHARS
    assert not re.search(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out)
    assert not _runner_sees_command(out)
    out.encode("utf-8")


def test_visible_shows_what_was_there() -> None:
    assert visible("a\nb\r\nc\td") == "a\\nb\\r\\nc d"
    assert visible("\x1b[31mred") == "\\x1b[31mred"
    assert visible("y" * 400, 10) == "y" * 9 + "…"


@pytest.mark.parametrize("text", HOSTILE)
def test_xml_text_always_serialises_and_parses(text: str) -> None:
    element = ET.Element("t", attr=xml_text(text))
    element.text = xml_text(text)
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.text == element.text


def test_cap() -> None:
    assert safe.cap("abc", 3) == "abc"
    assert safe.cap("abcd", 3) == "ab…"
    assert safe.cap("abcd", 0) == ""
