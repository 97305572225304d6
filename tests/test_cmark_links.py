"""Issue 28 item 6: no server text becomes a link, a mention or an issue reference in the PR
comment or the job summary, checked by rendering them with GitHub's own renderer, cmark-gfm with
its autolink extension (Debian's ``cmark-gfm``, installed by ``tests/install-cmark.sh``), not by
our patterns alone. cmark-gfm links ``https://`` right after a digit, ``_``, ``.`` or ``-``
(``1https://evil.example``), ``ftp://``, and ``www.`` after ``_``: the escaping must break them
all. Mentions and issue references are GitHub's own filters, run on the rendered text: that text
is searched for them (outside code, where GitHub does not look)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_replay_action.github.summary import render_summary
from mcp_replay_action.github.template import Links, render_comment
from mcp_replay_action.model.results import Finding, InteractionResult
from mcp_replay_action.values.safe import md_cell
from profiles import examples
from report_fixtures import hostile_cassette, report, score

CMARK = shutil.which("cmark-gfm")
# Skipped on a machine without it, never in CI, where tests/run.sh installed it.
pytestmark = [pytest.mark.integration, pytest.mark.skipif(
    CMARK is None and not os.environ.get("CI"), reason="cmark-gfm is not installed (tests/install-cmark.sh)"
)]

LINKS = Links(
    server_url="https://github.com",
    repository="octo/demo",
    sha="abcdef1234567890abcdef1234567890abcdef12",
    run_url="https://github.com/octo/demo/actions/runs/42",
)
MARKER = "<!-- mcp-replay -->"
OURS = "https://github.com/octo/demo/"  # every link the comment makes itself starts so

# What GitHub links in rendered text, beyond cmark-gfm's autolinks: written wider than GitHub's
# own filters (any ``@`` before a name character, any ``#`` before a digit not inside a word), so
# the check errs on the side of calling something a link.
MENTION = re.compile(r"@[A-Za-z0-9_-]")
ISSUE = re.compile(r"(?<![A-Za-z0-9_])#\d|[\w.-]/[\w.-]+#\d|(?<![A-Za-z0-9_-])GH-\d", re.IGNORECASE)

# Pieces that open links in cmark-gfm or GitHub, and what may come before or after them.
PIECES = [
    "https://", "http://", "ftp://", "HTTPS://", "www.", "WWW.", "mailto:", "xmpp:", "@", "#", "GH-", "gh-",
    "1", "9", "v1.", "_", ".", "-", "a", "Z", "/", "\\", "(", ")", "[", "]", "<", ">", "*", "~", "`", "&", ";",
    "|", " ", "\n", ":", "evil.example", "owner/repo", "#12", "&#95;", "&amp;", "\u200d", "!", "=", "'", '"',
]  # fmt: skip
TRICKY = st.lists(st.sampled_from(PIECES), min_size=1, max_size=14).map("".join)
TEXT = st.one_of(TRICKY, st.text(alphabet=st.sampled_from("".join(PIECES)), max_size=40))

URLS = [
    "1https://evil.example",
    "v1.https://evil.example/x",
    "_https://evil.example",
    "-https://evil.example",
    "x.https://evil.example",
    "ftp://evil.example",
    "1ftp://evil.example",
    "a_www.evil.example",
    "_www.evil.example",
    "(www.evil.example)",
    "*www.evil.example*",
    "https://evil.example",
    "<https://evil.example>",
    "mailto:a@evil.example",
    "xmpp:a@evil.example",
    "admin@evil.example",
    "mailto:.@.jsonl",  # hypothesis found it: an "@" before a "." links too
    "mailto:a@_b.example",
]
KNOWN = [
    *URLS,
    "@octocat",
    "#12",
    "&#12",
    "owner/repo#3",
    "GH-7",
]


class _Rendered(HTMLParser):
    """What a rendering links (each ``<a>``'s href) and its text outside code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")
        elif tag in ("code", "pre"):
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._code -= 1

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text.append(data)


def render(markdown: str) -> _Rendered:
    """``markdown`` as GitHub renders it (cmark-gfm with the extensions GitHub turns on), parsed."""
    assert CMARK is not None, "cmark-gfm is missing: tests/install-cmark.sh installs it (tests/run.sh runs it)"
    done = subprocess.run(
        [CMARK, "-e", "autolink", "-e", "table", "-e", "strikethrough", "-e", "tagfilter", "-e", "tasklist"],
        input=markdown.encode("utf-8"),
        capture_output=True,
        timeout=30,
        check=True,
    )
    parsed = _Rendered()
    parsed.feed(done.stdout.decode("utf-8"))
    parsed.close()
    return parsed


def assert_links_only_ours(markdown: str, ours: str = OURS) -> None:
    rendered = render(markdown)
    foreign = [href for href in rendered.hrefs if not (ours and href.startswith(ours))]
    assert foreign == [], markdown
    text = "".join(rendered.text)
    assert not MENTION.search(text), (MENTION.search(text), markdown)
    assert not ISSUE.search(text), (ISSUE.search(text), markdown)


def in_places(value: str) -> str:
    """``value`` escaped where a sink puts it: running text, a table cell, a line's start."""
    cell = md_cell(value)
    return f"{cell}\n\n| a | b |\n|---|---|\n| {cell} | x{cell} |\n\nx {cell} y\n\n- {cell}\n"


def hostile_report(text: str):  # type: ignore[no-untyped-def]
    """A failing report with ``text`` in every place a server's words reach a comment."""
    cassette = hostile_cassette()
    finding = Finding(kind="value-change", cls="breaking", path=f"$.result.{text}", message=text,
                      before=text, after={text: text}, diff=f"--- recorded\n+++ live\n-{text}\n+{text}\n")  # fmt: skip
    result = InteractionResult(seq=1, line=3, method="tools/call", name=text, status="fail", findings=(finding,))
    cassette = replace(cassette, path=f"cassettes/{text}.jsonl", results=(result,), error=text, stderr_tail=text)
    return report(cassette, overall=score(40.0, "F"), target=text)


@pytest.mark.parametrize("text", URLS)
def test_cmark_gfm_links_each_trick_as_it_is(text: str) -> None:
    # The probe itself: without the escaping, each of these is a link.
    assert render(text).hrefs, f"cmark-gfm no longer links {text!r}: pick another example"


@pytest.mark.parametrize("text", KNOWN)
def test_no_known_trick_becomes_a_link(text: str) -> None:
    assert_links_only_ours(in_places(text), ours="")


@given(TEXT)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_escaped_text_becomes_a_link(text: str) -> None:
    assert_links_only_ours(in_places(text), ours="")


@pytest.mark.parametrize("text", KNOWN)
def test_the_comment_and_the_summary_link_nothing_a_server_said(text: str) -> None:
    hostile = hostile_report(text)
    assert_links_only_ours(render_comment(hostile, marker=MARKER, links=LINKS))
    assert_links_only_ours(render_summary(hostile), ours="")


@given(TRICKY)
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_comment_and_the_summary_link_nothing_fuzzed(text: str) -> None:
    hostile = hostile_report(text)
    assert_links_only_ours(render_comment(hostile, marker=MARKER, links=LINKS))
    assert_links_only_ours(render_summary(hostile), ours="")
