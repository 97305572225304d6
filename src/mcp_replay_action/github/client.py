"""A small GitHub REST client on the standard library.

It does the few things the action needs and does them carefully: JSON in and out, pagination by
the ``Link`` header, bounded retries of server errors and rate limits (honouring ``Retry-After``,
else ``x-ratelimit-reset``), typed errors. The token goes into the ``Authorization`` header and
nowhere else: it is never logged, never part of an error, never sent to another host (redirects
are refused and ``Link`` URLs must stay on the API's origin).
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.message import Message

from mcp_replay_action import __version__
from mcp_replay_action.errors import EXIT_INFRA, ReplayError
from mcp_replay_action.model import JSON

DEFAULT_API_URL = "https://api.github.com"
RETRY_STATUSES = (500, 502, 503, 504)
MAX_BODY_BYTES = 32 * 1024 * 1024


class GitHubError(ReplayError):
    """The GitHub API answered with an error, or could not be reached."""

    exit_code = EXIT_INFRA

    def __init__(self, message: str, *, status: int | None = None, method: str = "", path: str = "") -> None:
        self.status = status
        self.method = method
        self.path = path
        self.api_message = message
        where = f"GitHub API {method} {path}".rstrip() if method else "GitHub API"
        code = f" {status}" if status else ""
        super().__init__(f"{where}:{code} {message}")


class Forbidden(GitHubError):
    """403: the token may not do this (a read-only token on a pull request from a fork)."""


class MissingPermission(Forbidden):
    """403 on a write this run needs: names what to grant (a workflow ``permissions:`` scope or a
    repository setting), because GitHub's own message ("Resource not accessible by integration")
    does not say."""

    def __init__(self, exc: GitHubError, permission: str) -> None:
        self.permission = permission
        super().__init__(
            f"{exc.api_message}; the token needs {permission}", status=exc.status, method=exc.method, path=exc.path
        )


class NotFound(GitHubError):
    """404: no such resource, or the token cannot see it."""


class Unprocessable(GitHubError):
    """422: GitHub refused the content (for example a comment body that is too long)."""


class Redirected(GitHubError):
    """A 3xx: the repository was renamed or moved, or ``api-url`` is wrong. Never followed, since
    following would send the token wherever ``Location`` points."""


class Unreachable(GitHubError):
    """The API could not be reached at all (a network error on every attempt): no answer, so
    nothing is known of the token."""


class RateLimited(GitHubError):
    """Still rate limited after the bounded waits."""


@dataclass(frozen=True)
class Response:
    """One API answer: status, lower-cased headers and the decoded JSON body (or None)."""

    status: int
    headers: Mapping[str, str]
    data: JSON


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: urllib would resend the Authorization header to wherever they point."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


class GitHubClient:
    """Call the REST API at ``api_url`` with ``token``.

    ``max_attempts`` bounds the tries of one request; a wait longer than ``max_wait`` seconds is
    not waited for (the request fails with ``RateLimited`` instead).
    """

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        max_attempts: int = 5,
        max_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self._origin = _origin(self.api_url)
        self._token = token
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.max_wait = max_wait
        self._sleep = sleep
        self._log = log or (lambda _message: None)
        self._opener = urllib.request.build_opener(_NoRedirect())

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r}, token=***)"

    # -- the public verbs -------------------------------------------------------------------

    def get(self, path: str, params: Mapping[str, JSON] | None = None) -> JSON:
        """GET ``path`` (relative to the API URL); the decoded JSON."""
        return self.request("GET", path, params=params).data

    def post(self, path: str, body: JSON) -> JSON:
        """POST ``body`` as JSON; the decoded JSON answer."""
        return self.request("POST", path, body=body).data

    def patch(self, path: str, body: JSON) -> JSON:
        """PATCH ``body`` as JSON; the decoded JSON answer."""
        return self.request("PATCH", path, body=body).data

    def paginate(self, path: str, params: Mapping[str, JSON] | None = None, *, max_pages: int = 1000) -> Iterator[JSON]:
        """Every item of a list endpoint, following ``Link: <...>; rel="next"`` page by page."""
        query = {"per_page": 100, **(params or {})}
        url: str | None = self._url(path, query)
        pages = 0
        while url and pages < max_pages:
            response = self.request("GET", url)
            pages += 1
            if not isinstance(response.data, list):
                raise GitHubError("expected a list", status=response.status, method="GET", path=_path(url))
            yield from response.data
            url = next_link(response.headers.get("link", ""))
            if url and _origin(url) != self._origin:
                raise GitHubError("a Link header pointed to another host", method="GET", path=_path(url))

    # -- one request, with retries ------------------------------------------------------------

    def request(self, method: str, path: str, *, params: Mapping[str, JSON] | None = None, body: JSON = None) -> Response:
        """Send one request, retrying server errors, rate limits and network faults (bounded)."""
        url = path if path.startswith(("http://", "https://")) else self._url(path, params)
        if _origin(url) != self._origin:
            raise GitHubError("refusing to send the token to another host", method=method, path=_path(url))
        shown = _path(url)
        data = json.dumps(body).encode("utf-8") if body is not None else None
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._send(method, url, data)
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if attempt >= self.max_attempts:
                    raise Unreachable(f"cannot reach the API ({reason})", method=method, path=shown) from None
                pause = self._backoff(attempt)
                self._log(f"{method} {shown}: network error ({reason}); retry {attempt} in {pause:g} s")
                self._sleep(pause)
                continue
            self._log(f"{method} {shown} -> {response.status}")
            if 300 <= response.status < 400:
                location = str(response.headers.get("location", ""))
                where = _origin(location) if "://" in location else "another path"
                raise Redirected(
                    f"the API redirects to {where} (was the repository renamed or moved, or is api-url wrong?);"
                    " not followed, so the token stays here",
                    status=response.status,
                    method=method,
                    path=shown,
                )
            if response.status < 400:
                return response
            wait = self._retry_wait(response, attempt)
            message = _message(response)
            if wait is None:
                raise _error_for(response.status, message, method, shown)
            if attempt >= self.max_attempts or wait > self.max_wait:
                cls = RateLimited if response.status in (403, 429) else GitHubError
                after = f"; GitHub asks to wait {wait:g} s" if wait > self.max_wait else ""
                raise cls(
                    f"{message} (gave up after {attempt} attempts{after})",
                    status=response.status,
                    method=method,
                    path=shown,
                )
            self._log(f"{method} {shown}: {response.status}; retry {attempt} in {wait:g} s")
            self._sleep(wait)

    def _send(self, method: str, url: str, data: bytes | None) -> Response:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": f"mcp-replay-action/{__version__}",
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as fh:
                return _response(fh.status, fh.headers, fh.read(MAX_BODY_BYTES + 1))
        except urllib.error.HTTPError as exc:
            with exc:
                return _response(exc.code, exc.headers, exc.read(MAX_BODY_BYTES + 1))

    def _retry_wait(self, response: Response, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when this error is final."""
        status = response.status
        headers = response.headers
        limited = status == 429 or (
            status == 403
            and (
                "retry-after" in headers
                or headers.get("x-ratelimit-remaining") == "0"
                or "rate limit" in _message(response).lower()
            )
        )
        if not limited and status not in RETRY_STATUSES:
            return None
        after = _retry_after(headers.get("retry-after", ""))
        if after is not None:
            return after
        if limited and headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
            try:
                return max(0.0, float(headers["x-ratelimit-reset"]) - time.time()) + 1.0
            except ValueError:
                pass
        if limited:
            # A secondary limit without headers: GitHub asks for at least a minute.
            return max(60.0, self._backoff(attempt))
        return self._backoff(attempt)

    def _backoff(self, attempt: int) -> float:
        return float(min(2 ** (attempt - 1), self.max_wait))

    def _url(self, path: str, params: Mapping[str, JSON] | None) -> str:
        url = self.api_url + "/" + path.lstrip("/")
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return url


def next_link(header: str) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header, or None."""
    for part in header.split(","):
        segments = part.split(";")
        target = segments[0].strip()
        if not (target.startswith("<") and target.endswith(">")):
            continue
        for param in segments[1:]:
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "rel" and "next" in value.strip().strip('"').split():
                return target[1:-1]
    return None


def _response(status: int, headers: Message | None, raw: bytes) -> Response:
    lowered = {k.lower(): v for k, v in headers.items()} if headers is not None else {}
    data: JSON = None
    if raw:
        try:
            data = json.loads(raw[:MAX_BODY_BYTES])
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = raw[:500].decode("utf-8", "replace")
    return Response(status, lowered, data)


def _message(response: Response) -> str:
    data = response.data
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        message = data["message"]
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            found = (e.get("message") or e.get("code") for e in errors if isinstance(e, dict))
            details = [str(d) for d in found if d]
            if details:
                message += " (" + "; ".join(details[:3]) + ")"
        return " ".join(message.split())[:300]
    if isinstance(data, str) and data.strip():
        return " ".join(data.split())[:200]
    return f"HTTP {response.status}"


def _error_for(status: int, message: str, method: str, path: str) -> GitHubError:
    cls: type[GitHubError] = {403: Forbidden, 404: NotFound, 422: Unprocessable}.get(status, GitHubError)
    return cls(message, status=status, method=method, path=path)


def _retry_after(value: str) -> float | None:
    value = value.strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _path(url: str) -> str:
    """The path of a URL, without the query (never holds a secret, but keeps errors short)."""
    return urllib.parse.urlsplit(url).path or "/"
