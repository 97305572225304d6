"""Render what a user sees on a pull request into docs/pr-comment.png and docs/job-summary.png.

The Markdown is real: the action's entrypoint (``python -m mcp_replay_action.github``) runs as a
subprocess with a runner's environment, replays a recorded calculator session against the
sample server's regressed twin, and posts its sticky comment to the fake GitHub API from
tests/fakegithub.py on 127.0.0.1; the job summary is what it wrote to GITHUB_STEP_SUMMARY.
Both are rendered to HTML with markdown-it-py in GitHub's look (its fonts, colours, tables) and
photographed with headless Chromium (Debian's ``chromium`` package).

    apt-get install chromium fonts-noto-color-emoji
    pip install -e '.[test,docs]'
    .venv/bin/python docs/render_screenshots.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
REPO = "octo/calc-server"
PR = 42
TOKEN = "screenshot-token"
HEAD_SHA = "3f2c1a9be07d4c55a1f0e6b2d9c8a7f6e5d4c3b2"
WIDTH = 900

CSS = """
body { margin: 0; padding: 24px; background: #ffffff; color: #1f2328;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial,
  "Liberation Sans", sans-serif, "Apple Color Emoji", "Noto Color Emoji"; }
.box { border: 1px solid #d1d9e0; border-radius: 6px; overflow: hidden; }
.box-header { display: flex; align-items: center; gap: 8px; background: #f6f8fa;
  border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e; }
.box-header strong { color: #1f2328; }
.avatar { width: 24px; height: 24px; border-radius: 6px; background: #2da44e; color: #fff;
  display: inline-flex; align-items: center; justify-content: center; font-weight: 700; font-size: 12px; }
.label { border: 1px solid #d1d9e0; border-radius: 2em; padding: 0 7px; font-size: 12px; font-weight: 500; }
.markdown-body { padding: 16px; word-wrap: break-word; }
.markdown-body > :first-child { margin-top: 0 !important; }
.markdown-body > :last-child { margin-bottom: 0 !important; }
.markdown-body h1, .markdown-body h2, .markdown-body h3, .markdown-body h4 {
  margin: 24px 0 16px; font-weight: 600; line-height: 1.25; }
.markdown-body h1, .markdown-body h2 { padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; }
.markdown-body h1 { font-size: 2em; } .markdown-body h2 { font-size: 1.5em; }
.markdown-body h3 { font-size: 1.25em; } .markdown-body h4 { font-size: 1em; }
.markdown-body p, .markdown-body table, .markdown-body blockquote, .markdown-body details,
.markdown-body ul, .markdown-body ol, .markdown-body pre { margin: 0 0 16px; }
.markdown-body table { border-spacing: 0; border-collapse: collapse; display: block; width: max-content;
  max-width: 100%; overflow: auto; }
.markdown-body th, .markdown-body td { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; background: #f6f8fa; }
.markdown-body tr:nth-child(2n) td { background: #f6f8fa; }
.markdown-body code { padding: .2em .4em; font-size: 85%; background: rgba(129,139,152,.12); border-radius: 6px;
  font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; }
.markdown-body pre { padding: 16px; background: #f6f8fa; border-radius: 6px; overflow: auto; font-size: 85%; }
.markdown-body pre code { padding: 0; background: transparent; font-size: 100%; }
.markdown-body blockquote { padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
.markdown-body a { color: #0969da; text-decoration: none; }
.markdown-body sub { color: #59636e; }
.markdown-body summary { cursor: pointer; }
.page-title { font-size: 20px; font-weight: 600; margin: 0 0 16px; }
"""


def run_action(work: Path) -> tuple[str, str]:
    """Run the real entrypoint against the fake GitHub API; return (comment body, job summary)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fakegithub import FakeGitHub  # tests/fakegithub.py
    from mcp_replay_action.demo import record_demo_session

    workspace = work / "workspace"
    cassette = workspace / "cassettes" / "calc.jsonl"
    cassette.parent.mkdir(parents=True)
    record_demo_session(cassette)  # a real recording, through the real proxy
    event = work / "event.json"
    repo = {"full_name": REPO, "fork": False}
    event.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": PR,
                "pull_request": {
                    "number": PR,
                    "head": {"sha": HEAD_SHA, "ref": "faster-jobs", "repo": repo},
                    "base": {"ref": "main", "repo": repo},
                },
                "repository": {"full_name": REPO},
            }
        ),
        encoding="utf-8",
    )
    output, summary = work / "output", work / "summary.md"
    with FakeGitHub() as github:
        github.add_token(TOKEN)
        github.add_pull(REPO, PR, head_sha=HEAD_SHA, head_ref="faster-jobs")
        env = {
            # `python` is this interpreter, so the summary names the server as a user would write it.
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "HOME": str(work),
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_SHA": HEAD_SHA,
            "GITHUB_RUN_ID": "7654321",
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_API_URL": github.url,
            # The comment links this workflow's page and names the branch to run it on.
            "GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/mcp-replay.yml@refs/pull/{PR}/merge",
            "INPUT_SERVER": "python -m mcp_replay_action.samples.calc_server_regressed",
            "INPUT_MIN-GRADE": "B",
            "INPUT_GITHUB-TOKEN": TOKEN,
        }
        result = subprocess.run(
            [sys.executable, "-m", "mcp_replay_action.github"],
            cwd=workspace, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        posted = github.comments.get((REPO, PR), [])
    if result.returncode not in (0, 1) or len(posted) != 1:
        raise SystemExit(f"the action did not comment (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")
    return posted[0]["body"], summary.read_text(encoding="utf-8")


def to_html(markdown: str, *, header: str, title: str = "", open_details: int = 0) -> str:
    """GitHub-flavoured enough Markdown -> a standalone page. GitHub renders <details> closed;
    ``open_details`` opens the first few so the picture shows what a click reveals."""
    md = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    body = md.render(markdown)
    for _ in range(open_details):
        body = body.replace("<details>", "<details open>", 1)
    heading = f'<div class="page-title">{html.escape(title)}</div>' if title else ""
    # The height probe lets a first Chromium pass measure the page, so the shot has no blank tail.
    probe = "<script>document.title = String(Math.ceil(document.body.getBoundingClientRect().bottom));</script>"
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><style>{CSS}</style></head><body>'
        f'{heading}<div class="box"><div class="box-header">{header}</div>'
        f'<div class="markdown-body">{body}</div></div>{probe}</body></html>'
    )


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("headless Chromium is needed: apt-get install chromium")


def screenshot(page: Path, png: Path, work: Path) -> None:
    """Two passes: measure the page's height, then shoot exactly that much."""

    def browser(*args: str) -> subprocess.CompletedProcess[str]:
        profile = tempfile.mkdtemp(prefix="chromium-", dir=work)  # a fresh profile each time
        command = [
            chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={profile}", *args,
        ]  # fmt: skip
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    dom = browser(f"--window-size={WIDTH},800", "--dump-dom", page.as_uri())
    found = re.search(r"<title>(\d+)</title>", dom.stdout)
    if not found:
        raise SystemExit(f"could not measure {page}: {dom.stderr[-2000:]}")
    height = int(found.group(1))
    shot = browser(f"--window-size={WIDTH},{height}", f"--screenshot={png}", page.as_uri())
    if not png.exists():
        raise SystemExit(f"chromium made no screenshot of {page}: {shot.stderr[-2000:]}")
    print(f"{png.relative_to(ROOT)}: {WIDTH}x{height}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="keep the Markdown and HTML in this directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-replay-shots-") as tmp:
        work = Path(tmp)
        comment, summary = run_action(work)
        pages = {
            "pr-comment": to_html(
                comment,
                header='<span class="avatar">A</span><strong>github-actions</strong>'
                '<span class="label">bot</span> commented',
            ),
            "job-summary": to_html(
                summary,
                header="<strong>replay summary</strong>",
                title="Dogfood · Replay sample cassettes",
                open_details=1,
            ),
        }
        for name, page_html in pages.items():
            page = work / f"{name}.html"
            page.write_text(page_html, encoding="utf-8")
            screenshot(page, DOCS / f"{name}.png", work)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "pr-comment.md").write_text(comment, encoding="utf-8")
            (args.keep / "job-summary.md").write_text(summary, encoding="utf-8")
            for name in pages:
                shutil.copy(work / f"{name}.html", args.keep / f"{name}.html")


if __name__ == "__main__":
    main()
