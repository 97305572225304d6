"""Checks that anyone can pull an image by digest: fetches its manifest from the registry with no
credentials (the Docker registry v2 protocol, with an anonymous bearer token where the registry
asks for one, as ghcr.io does). A new ghcr package starts private: this fails until it is public.

usage: python3 anonymous-pull.py REGISTRY/NAME@sha256:DIGEST
(a registry on 127.0.0.1 or localhost is asked over plain HTTP, as Docker does; tests use one)
"""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

ACCEPT = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    ]
)


def fetch(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (the registry's URL)
            return response.status, dict(response.headers), response.read(4 << 20)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), b""


def main(argv: list[str]) -> int:
    ref = argv[0]
    found = re.fullmatch(r"([^/]+)/(.+)@(sha256:[0-9a-f]{64})", ref)
    if not found:
        print(f"anonymous-pull: {ref!r} is not REGISTRY/NAME@sha256:DIGEST", file=sys.stderr)
        return 2
    registry, name, digest = found.groups()
    scheme = "http" if registry.split(":")[0] in ("127.0.0.1", "localhost") else "https"
    url = f"{scheme}://{registry}/v2/{name}/manifests/{digest}"
    headers = {"Accept": ACCEPT}
    status, response_headers, body = fetch(url, headers)
    challenge = response_headers.get("WWW-Authenticate") or response_headers.get("Www-Authenticate") or ""
    if status == 401 and challenge.lower().startswith("bearer "):
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        query = urllib.parse.urlencode({k: v for k, v in params.items() if k in ("service", "scope")})
        token_status, _, token_body = fetch(f"{params['realm']}?{query}", {})
        if token_status == 200:
            token = json.loads(token_body).get("token") or json.loads(token_body).get("access_token", "")
            status, response_headers, body = fetch(url, {**headers, "Authorization": f"Bearer {token}"})
    if status != 200:
        print(
            f"::error title=Image not pullable::anonymous pull of {ref} answered HTTP {status}; "
            "a new ghcr.io package is private: make it public in the package settings, then re-run",
            file=sys.stderr,
        )
        return 1
    served = response_headers.get("Docker-Content-Digest") or response_headers.get("docker-content-digest")
    if served and served != digest:
        print(f"anonymous-pull: the registry served {served} for {digest}", file=sys.stderr)
        return 1
    json.loads(body)  # a manifest, not an HTML error page
    print(f"anonymous pull of {ref}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
