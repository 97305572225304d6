"""A stateful fake of the GitHub REST API endpoints the action uses, served over real HTTP on
127.0.0.1 so the action's client (and the action run as a subprocess) talk to it like to GitHub.

Endpoints: ``GET /user``; issue comments list (paginated with ``Link``, ``per_page`` up to 100),
create, update and get; ``GET /repos/{repo}/pulls/{n}``; ``GET /repos/{repo}/actions/runs/{id}``.
For a repository added with ``add_git_repo`` (a real bare git repository on disk, the ``origin``):
``GET /repos/{repo}``, the git data API (blobs, trees on ``base_tree``, commits, refs get /
create / update with the fast-forward rule unless ``force``), each written into that repository
with git itself; pulls list (``head``, ``state``), create (422 when one is open for the head),
update; issues list / create / update, labels. Tokens carry permissions (``contents``,
``pull-requests``, ``issues``) and the repository setting that lets Actions open pull requests;
a write without them is a 403 worded as GitHub words it.
Behaviours: 401 for an unknown token, 403 "Resource not accessible by integration" for writes with
a read-only (fork) token and for ``GET /user`` with an app token, 422 for a body over
``max_body`` characters, and injected failures (secondary rate limit with and without
``Retry-After``, primary rate limit with ``x-ratelimit-reset``, 429, 5xx). Every request is logged.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BOT = "github-actions[bot]"
FORBIDDEN = "Resource not accessible by integration"
NO_ACTIONS_PRS = "GitHub Actions is not permitted to create or approve pull requests."
ALL_PERMISSIONS = frozenset({"contents", "pull-requests", "issues"})


@dataclass(frozen=True)
class Token:
    login: str
    app: bool = True  # an installation token (GITHUB_TOKEN): GET /user is forbidden
    write: bool = True  # False: the read-only token a fork's pull request gets
    permissions: frozenset[str] = ALL_PERMISSIONS  # what it may write
    create_pulls: bool = True  # the repository setting "Allow GitHub Actions to create ... PRs"

    def may(self, permission: str) -> bool:
        return self.write and permission in self.permissions


def git(repo: str | os.PathLike[str], *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """Run git in ``repo``; its stdout (stripped). Raises on failure."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=input,
        capture_output=True,
        timeout=60,
        check=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", **(env or {})},
    )
    return done.stdout.decode().strip()


@dataclass
class Logged:
    method: str
    path: str
    query: dict[str, list[str]]
    token: str | None
    body: Any
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Failure:
    """An injected failure for the next request matching ``method`` and ``path_re``."""

    kind: str  # "secondary", "secondary-no-retry-after", "primary", "429", "500", "502", "moved"
    method: str | None = None
    path_re: str | None = None
    retry_after: int = 1


class FakeGitHub:
    """The state and the server. Use as a context manager or call ``start``/``stop``."""

    def __init__(self, *, max_body: int = 65536) -> None:
        self.max_body = max_body
        self.tokens: dict[str, Token] = {}
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.runs: dict[tuple[str, int], dict[str, Any]] = {}
        self.git_repos: dict[str, tuple[str, str]] = {}  # repo -> (bare repository path, default branch)
        self.issues: dict[tuple[str, int], dict[str, Any]] = {}
        self.failures: list[Failure] = []
        self.log: list[Logged] = []
        self._next_id = 1000
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- set-up helpers --------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add_token(
        self,
        token: str,
        login: str = BOT,
        *,
        app: bool = True,
        write: bool = True,
        permissions: frozenset[str] = ALL_PERMISSIONS,
        create_pulls: bool = True,
    ) -> None:
        self.tokens[token] = Token(login, app, write, permissions, create_pulls)

    def add_git_repo(self, repo: str, bare: str | os.PathLike[str], default_branch: str = "main") -> None:
        """Serve the git data API for ``repo`` from the bare repository ``bare``."""
        self.git_repos[repo] = (str(bare), default_branch)

    def open_pulls(self, repo: str) -> list[dict[str, Any]]:
        return [p for (r, _), p in sorted(self.pulls.items()) if r == repo and p["state"] == "open"]

    def repo_issues(self, repo: str, state: str | None = None) -> list[dict[str, Any]]:
        return [i for (r, _), i in sorted(self.issues.items()) if r == repo and state in (None, i["state"])]

    def _number(self, repo: str) -> int:
        taken = [n for (r, n) in (*self.pulls, *self.issues) if r == repo]
        return max(taken, default=0) + 1

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        head_sha: str,
        head_ref: str,
        head_repo: str | None = None,
        base_ref: str = "main",
        title: str = "",
    ) -> None:
        self.pulls[(repo, number)] = {
            "number": number,
            "state": "open",
            "title": title,
            "head": {"sha": head_sha, "ref": head_ref, "repo": {"full_name": head_repo or repo}},
            "base": {"ref": base_ref, "repo": {"full_name": repo}},
            "html_url": f"https://github.example/{repo}/pull/{number}",
        }

    def add_run(
        self,
        repo: str,
        run_id: int,
        *,
        head_sha: str,
        head_branch: str,
        head_repo: str | None = None,
        event: str = "pull_request",
        pull_requests: tuple[int, ...] = (),
    ) -> None:
        self.runs[(repo, run_id)] = {
            "id": run_id,
            "event": event,
            "status": "completed",
            "conclusion": "success",
            "head_sha": head_sha,
            "head_branch": head_branch,
            "head_repository": {"full_name": head_repo or repo},
            "repository": {"full_name": repo},
            "pull_requests": [{"number": n} for n in pull_requests],
        }

    def add_comment(self, repo: str, issue: int, body: str, login: str) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            comment = {
                "id": self._next_id,
                "body": body,
                "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
                "html_url": f"https://github.example/{repo}/pull/{issue}#issuecomment-{self._next_id}",
                "created_at": "2026-01-01T00:00:00Z",
                "updated_at": "2026-01-01T00:00:00Z",
            }
            self.comments.setdefault((repo, issue), []).append(comment)
            return comment

    def fail_next(
        self, kind: str, *, method: str | None = None, path_re: str | None = None, times: int = 1, retry_after: int = 1
    ) -> None:
        for _ in range(times):
            self.failures.append(Failure(kind, method, path_re, retry_after))

    def requests(self, method: str | None = None, path_re: str | None = None) -> list[Logged]:
        return [
            r
            for r in self.log
            if (method is None or r.method == method) and (path_re is None or re.search(path_re, r.path))
        ]

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        fake = self

        class Handler(_Handler):
            state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from the server threads) ----------------------------------

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: Any) -> tuple[int, dict[str, str], Any]:
        parts = urllib.parse.urlsplit(raw_path)
        path = parts.path
        query = urllib.parse.parse_qs(parts.query)
        auth = headers.get("authorization", "")
        token = auth.removeprefix("Bearer ").removeprefix("token ") if auth else None
        entry = Logged(method, path, query, token, body)
        with self._lock:
            self.log.append(entry)
            status, out_headers, data = self._dispatch(method, path, query, token, body)
        entry.status = status
        entry.headers = out_headers
        return status, out_headers, data

    def _take_failure(self, method: str, path: str) -> Failure | None:
        for i, failure in enumerate(self.failures):
            if (failure.method is None or failure.method == method) and (
                failure.path_re is None or re.search(failure.path_re, path)
            ):
                return self.failures.pop(i)
        return None

    def _dispatch(
        self, method: str, path: str, query: dict[str, list[str]], token: str | None, body: Any
    ) -> tuple[int, dict[str, str], Any]:
        failure = self._take_failure(method, path)
        if failure is not None:
            return _failure_response(failure)
        if token is None or token not in self.tokens:
            return 401, {}, {"message": "Bad credentials"}
        who = self.tokens[token]
        if path == "/user" and method == "GET":
            if who.app:
                return 403, {}, {"message": FORBIDDEN}
            return 200, {}, {"login": who.login, "type": "User"}
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path)
        if m:
            repo, issue = m.group(1), int(m.group(2))
            if method == "GET":
                return self._list(path, query, self.comments.get((repo, issue), []))
            if method == "POST":
                if not who.write:
                    return 403, {}, {"message": FORBIDDEN}
                problem = self._check_body(body)
                if problem:
                    return problem
                return 201, {}, self.add_comment(repo, issue, body["body"], who.login)
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", path)
        if m:
            repo, comment_id = m.group(1), int(m.group(2))
            comment = next(
                (c for (r, _), cs in self.comments.items() if r == repo for c in cs if c["id"] == comment_id), None
            )
            if comment is None:
                return 404, {}, {"message": "Not Found"}
            if method == "GET":
                return 200, {}, comment
            if method == "PATCH":
                if not who.write:
                    return 403, {}, {"message": FORBIDDEN}
                if comment["user"]["login"] != who.login:
                    return 403, {}, {"message": "Must have admin rights to Repository."}
                problem = self._check_body(body)
                if problem:
                    return problem
                comment["body"] = body["body"]
                comment["updated_at"] = "2026-01-02T00:00:00Z"
                return 200, {}, comment
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", path)
        if m and method == "GET":
            pull = self.pulls.get((m.group(1), int(m.group(2))))
            return (200, {}, pull) if pull else (404, {}, {"message": "Not Found"})
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/actions/runs/(\d+)", path)
        if m and method == "GET":
            run = self.runs.get((m.group(1), int(m.group(2))))
            return (200, {}, run) if run else (404, {}, {"message": "Not Found"})
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if m:
            return self._repo_dispatch(m.group(1), m.group(2) or "", method, path, query, who, body)
        return 404, {}, {"message": "Not Found"}

    # -- a repository backed by a bare git repository on disk --------------------------------

    def _repo_dispatch(
        self, repo: str, rest: str, method: str, path: str, query: dict[str, list[str]], who: Token, body: Any
    ) -> tuple[int, dict[str, str], Any]:
        not_found = (404, {}, {"message": "Not Found"})
        listing_pulls = rest == "/pulls" and method == "GET"
        if repo not in self.git_repos and not (rest.startswith("/issues") or listing_pulls):
            return not_found  # only issues and the pulls list are served for a repository without a git origin
        bare, default = self.git_repos.get(repo, ("", "main"))
        if rest == "" and method == "GET":
            return 200, {}, {"full_name": repo, "default_branch": default}
        if rest.startswith("/git/"):
            if method != "GET" and not who.may("contents"):
                return 403, {}, {"message": FORBIDDEN}
            try:
                return self._git_data(repo, bare, rest[len("/git") :], method, body)
            except subprocess.CalledProcessError as exc:
                return 422, {}, {"message": f"git refused: {exc.stderr.decode(errors='replace').strip()[:200]}"}
        if rest == "/pulls" and method == "GET":
            pulls = self.open_pulls(repo) if query.get("state", ["open"])[0] == "open" else []
            if "head" in query:
                owner, _, branch = query["head"][0].partition(":")
                pulls = [p for p in pulls if p["head"]["ref"] == branch and repo.startswith(owner + "/")]
            if "base" in query:
                pulls = [p for p in pulls if p["base"]["ref"] == query["base"][0]]
            return self._list(path, query, pulls)
        if rest == "/pulls" and method == "POST":
            if not who.may("pull-requests"):
                return 403, {}, {"message": FORBIDDEN}
            if not who.create_pulls:
                return 403, {}, {"message": NO_ACTIONS_PRS}
            head, base = str(body.get("head", "")), str(body.get("base", ""))
            if any(p["head"]["ref"] == head for p in self.open_pulls(repo)):
                return (
                    422,
                    {},
                    {
                        "message": "Validation Failed",
                        "errors": [{"message": f"A pull request already exists for {repo.split('/')[0]}:{head}."}],
                    },
                )
            head_sha = self._ref(bare, head)
            if head_sha is None or self._ref(bare, base) is None:
                return 422, {}, {"message": "Validation Failed", "errors": [{"field": "head", "code": "invalid"}]}
            number = self._number(repo)
            self.add_pull(repo, number, head_sha=head_sha, head_ref=head)
            pull = self.pulls[(repo, number)]
            pull.update(
                title=body.get("title", ""),
                body=body.get("body", ""),
                draft=bool(body.get("draft", False)),
                user={"login": who.login},
                labels=[],
            )
            pull["base"]["ref"] = base
            return 201, {}, pull
        m = re.fullmatch(r"/pulls/(\d+)", rest)
        if m and method == "PATCH":
            pull = self.pulls.get((repo, int(m.group(1))))
            if pull is None:
                return not_found
            if not who.may("pull-requests"):
                return 403, {}, {"message": FORBIDDEN}
            pull.update({k: body[k] for k in ("title", "body", "state") if k in body})
            pull["head"]["sha"] = self._ref(bare, pull["head"]["ref"]) or pull["head"]["sha"]
            return 200, {}, pull
        m = re.fullmatch(r"/issues/(\d+)/labels", rest)
        if m and method == "POST":
            target = self.pulls.get((repo, int(m.group(1)))) or self.issues.get((repo, int(m.group(1))))
            if target is None:
                return not_found
            if not (who.may("issues") or who.may("pull-requests")):
                return 403, {}, {"message": FORBIDDEN}
            names = [label["name"] for label in target.setdefault("labels", [])]
            target["labels"] += [{"name": n} for n in body.get("labels", []) if n not in names]
            return 200, {}, target["labels"]
        if rest == "/issues" and method == "GET":
            state = query.get("state", ["open"])[0]
            items = [
                i
                for i in self.repo_issues(repo, None if state == "all" else state)
                if "creator" not in query or i["user"]["login"] == query["creator"][0]
            ]
            # GitHub lists pull requests among issues; the action must skip them.
            items += [{**p, "pull_request": {"url": p["html_url"]}} for p in self.open_pulls(repo)]
            return self._list(path, query, items)
        if rest == "/issues" and method == "POST":
            if not who.may("issues"):
                return 403, {}, {"message": FORBIDDEN}
            number = self._number(repo)
            issue = {
                "number": number,
                "state": "open",
                "title": body.get("title", ""),
                "body": body.get("body", ""),
                "user": {"login": who.login},
                "labels": [{"name": n} for n in body.get("labels", [])],
                "html_url": f"https://github.example/{repo}/issues/{number}",
            }
            self.issues[(repo, number)] = issue
            return 201, {}, issue
        m = re.fullmatch(r"/issues/(\d+)", rest)
        if m and method == "PATCH":
            issue = self.issues.get((repo, int(m.group(1))))
            if issue is None:
                return not_found
            if not who.may("issues"):
                return 403, {}, {"message": FORBIDDEN}
            issue.update({k: body[k] for k in ("title", "body", "state", "state_reason") if k in body})
            return 200, {}, issue
        m = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if m and method == "POST" and (repo, int(m.group(1))) in self.issues:
            if not who.may("issues"):
                return 403, {}, {"message": FORBIDDEN}
            return 201, {}, self.add_comment(repo, int(m.group(1)), body["body"], who.login)
        return not_found

    def _ref(self, bare: str, branch: str) -> str | None:
        try:
            return git(bare, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
        except subprocess.CalledProcessError:
            return None

    def _git_data(self, repo: str, bare: str, rest: str, method: str, body: Any) -> tuple[int, dict[str, str], Any]:
        if rest == "/blobs" and method == "POST":
            raw = body["content"]
            content = base64.b64decode(raw) if body.get("encoding") == "base64" else raw.encode()
            return 201, {}, {"sha": git(bare, "hash-object", "-w", "--stdin", input=content)}
        if rest == "/trees" and method == "POST":
            with tempfile.TemporaryDirectory() as tmp:
                env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
                if body.get("base_tree"):
                    git(bare, "read-tree", body["base_tree"], env=env)
                else:
                    git(bare, "read-tree", "--empty", env=env)
                for entry in body["tree"]:
                    if entry.get("sha") is None:
                        git(bare, "update-index", "--force-remove", entry["path"], env=env)
                        continue
                    info = f"{entry['mode']},{entry['sha']},{entry['path']}"
                    git(bare, "update-index", "--add", "--cacheinfo", info, env=env)
                return 201, {}, {"sha": git(bare, "write-tree", env=env)}
        if rest == "/commits" and method == "POST":
            author = body.get("author") or {"name": "someone", "email": "someone@example.com"}
            committer = body.get("committer") or author
            env = {
                "GIT_AUTHOR_NAME": author["name"],
                "GIT_AUTHOR_EMAIL": author["email"],
                "GIT_COMMITTER_NAME": committer["name"],
                "GIT_COMMITTER_EMAIL": committer["email"],
            }
            parents = [arg for p in body.get("parents", []) for arg in ("-p", p)]
            sha = git(bare, "commit-tree", body["tree"], *parents, "-m", body["message"], env=env)
            return 201, {}, {"sha": sha, "tree": {"sha": body["tree"]}}
        m = re.fullmatch(r"/commits/([0-9a-f]{40})", rest)
        if m and method == "GET":
            try:
                tree = git(bare, "rev-parse", f"{m.group(1)}^{{tree}}")
            except subprocess.CalledProcessError:
                return 404, {}, {"message": "Not Found"}
            return 200, {}, {"sha": m.group(1), "tree": {"sha": tree}}
        m = re.fullmatch(r"/ref/heads/(.+)", rest)
        if m and method == "GET":
            sha = self._ref(bare, m.group(1))
            if sha is None:
                return 404, {}, {"message": "Not Found"}
            return 200, {}, {"ref": f"refs/heads/{m.group(1)}", "object": {"sha": sha, "type": "commit"}}
        if rest == "/refs" and method == "POST":
            ref = body["ref"]
            if self._ref(bare, ref.removeprefix("refs/heads/")) is not None:
                return 422, {}, {"message": "Reference already exists"}
            git(bare, "update-ref", ref, body["sha"])
            return 201, {}, {"ref": ref, "object": {"sha": body["sha"]}}
        m = re.fullmatch(r"/refs/heads/(.+)", rest)
        if m and method == "PATCH":
            old = self._ref(bare, m.group(1))
            if old is None:
                return 422, {}, {"message": "Reference does not exist"}
            fast_forward = (
                subprocess.run(
                    ["git", "-C", bare, "merge-base", "--is-ancestor", old, body["sha"]],
                    capture_output=True,
                    timeout=60,
                ).returncode
                == 0
            )
            if not fast_forward and not body.get("force"):
                return 422, {}, {"message": "Update is not a fast forward"}
            git(bare, "update-ref", f"refs/heads/{m.group(1)}", body["sha"])
            return 200, {}, {"ref": f"refs/heads/{m.group(1)}", "object": {"sha": body["sha"]}}
        return 404, {}, {"message": "Not Found"}

    def _check_body(self, body: Any) -> tuple[int, dict[str, str], Any] | None:
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {}, {"message": "Invalid request", "errors": [{"message": "body is missing"}]}
        if len(body["body"]) > self.max_body:
            return (
                422,
                {},
                {
                    "message": "Validation Failed",
                    "errors": [
                        {
                            "resource": "IssueComment",
                            "code": "custom",
                            "field": "body",
                            "message": f"body is too long (maximum is {self.max_body} characters)",
                        }
                    ],
                },
            )
        return None

    def _list(
        self, path: str, query: dict[str, list[str]], items: list[dict[str, Any]]
    ) -> tuple[int, dict[str, str], Any]:
        per_page = min(100, max(1, int(query.get("per_page", ["30"])[0])))
        page = max(1, int(query.get("page", ["1"])[0]))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        if page < last:
            links.append(f'<{self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{self.url}{path}?per_page={per_page}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{self.url}{path}?per_page={per_page}&page={page - 1}>; rel="prev"')
        return 200, ({"Link": ", ".join(links)} if links else {}), list(chunk)


def _failure_response(failure: Failure) -> tuple[int, dict[str, str], Any]:
    secondary = {
        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
    }
    if failure.kind == "secondary":
        return 403, {"Retry-After": str(failure.retry_after)}, secondary
    if failure.kind == "secondary-no-retry-after":
        reset = int(time.time()) + failure.retry_after
        return 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}, secondary
    if failure.kind == "primary":
        reset = int(time.time()) + failure.retry_after
        return (
            403,
            {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
            {"message": "API rate limit exceeded for installation."},
        )
    if failure.kind == "429":
        return 429, {"Retry-After": str(failure.retry_after)}, {"message": "Too Many Requests"}
    if failure.kind == "long-wait":
        return 403, {"Retry-After": "3600"}, secondary
    if failure.kind == "moved":  # what GitHub answers for a renamed or transferred repository
        moved = "https://api.github.com/repositories/1296269/issues/7/comments"
        return 301, {"Location": moved}, {"message": "Moved Permanently", "url": moved}
    return int(failure.kind), {}, {"message": "Server Error"}


class _Handler(BaseHTTPRequestHandler):
    state: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, out_headers, data = self.state.handle(self.command, self.path, headers, body)
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in out_headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _serve
    do_POST = _serve
    do_PATCH = _serve
    do_PUT = _serve
    do_DELETE = _serve


def running_fake(**kwargs: Any) -> FakeGitHub:
    """A started fake with the usual tokens: ``app-token`` (github-actions[bot], may write),
    ``fork-token`` (read-only), ``user-token`` (a person's token, login ``octo-user``)."""
    fake = FakeGitHub(**kwargs).start()
    fake.add_token("app-token", BOT)
    fake.add_token("fork-token", BOT, write=False)
    fake.add_token("user-token", "octo-user", app=False)
    return fake
