"""A stateful fake of the GitHub REST API endpoints the action uses, served over real HTTP on
127.0.0.1 so the action's client (and the action run as a subprocess) talk to it like to GitHub.

Endpoints: ``GET /user``; issue comments list (paginated with ``Link``, ``per_page`` up to 100),
create, update and get; ``GET /repos/{repo}/pulls/{n}``; ``GET /repos/{repo}/actions/runs/{id}``.
Behaviours: 401 for an unknown token, 403 "Resource not accessible by integration" for writes with
a read-only (fork) token and for ``GET /user`` with an app token, 422 for a body over
``max_body`` characters, and injected failures (secondary rate limit with and without
``Retry-After``, primary rate limit with ``x-ratelimit-reset``, 429, 5xx). Every request is logged.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BOT = "github-actions[bot]"
FORBIDDEN = "Resource not accessible by integration"


@dataclass(frozen=True)
class Token:
    login: str
    app: bool = True  # an installation token (GITHUB_TOKEN): GET /user is forbidden
    write: bool = True  # False: the read-only token a fork's pull request gets


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

    kind: str  # "secondary", "secondary-no-retry-after", "primary", "429", "500", "502"
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

    def add_token(self, token: str, login: str = BOT, *, app: bool = True, write: bool = True) -> None:
        self.tokens[token] = Token(login, app, write)

    def add_pull(self, repo: str, number: int, *, head_sha: str, head_ref: str, head_repo: str | None = None) -> None:
        self.pulls[(repo, number)] = {
            "number": number,
            "state": "open",
            "head": {"sha": head_sha, "ref": head_ref, "repo": {"full_name": head_repo or repo}},
            "base": {"ref": "main", "repo": {"full_name": repo}},
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
