"""Output schemas: a live tool result checked against the ``outputSchema`` the live server
declared for that tool in the same session's ``tools/list`` answer.

A recording can only say what a result used to be; a tool's declared schema says what every
client that validates (the official SDKs do) will accept. A live ``structuredContent`` that does
not validate is a breaking ``output-schema`` finding, even when it equals its recording (the
schema may have moved under it). The spec's backwards-compatible copy in ``content`` is checked
too: a lone text block that is a JSON object is taken to claim to be ``structuredContent``, and
one that is not equal to it is reported (a client reading the text sees other data than one
reading the structure).

The spec's default dialect is JSON Schema 2020-12 (``$schema`` may name another); ``$ref`` into
the schema's own ``$defs`` resolves, a remote one is not fetched. ``jsonschema`` is imported only
once a live ``tools/list`` declares an output schema: a replay of a server without one never
loads it.
"""

from __future__ import annotations

import json

from mcp_replay_action.compare.classes import finding
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.results import Finding
from mcp_replay_action.values.paths import index_segment, key_segment

MESSAGE_LIMIT = 300  # characters of a validator's account kept in the finding
BASE = "$.result.structuredContent"


class OutputSchemas:
    """The output schemas one live session declared, by tool name, and the check of each of its
    tool results against them."""

    def __init__(self) -> None:
        self.schemas: JSONObject = {}
        self.validators: JSONObject = {}  # built on a tool's first call

    def learn(self, live: JSONObject) -> None:
        """Take the output schemas a live ``tools/list`` answer declares (each page adds its own;
        a tool listed again without one loses it)."""
        result = live.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            name = tool["name"]
            self.validators.pop(name, None)
            schema = tool.get("outputSchema")
            if isinstance(schema, dict):
                self.schemas[name] = schema
            else:
                self.schemas.pop(name, None)

    def check(self, sent: JSONObject, live: JSONObject) -> tuple[Finding, ...]:
        """The ``output-schema`` findings of a live ``tools/call`` answer to ``sent``: nothing for
        an error result, a tool without a declared schema, or a conforming result."""
        params = sent.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            name = ""
        result = live.get("result")
        if not isinstance(result, dict) or result.get("isError") is True:
            return ()
        if result.get("resultType", "complete") != "complete":
            # A multi round-trip request's first leg (``input_required``) is not the tool's
            # output: the schema is for the result the last leg completes with.
            return ()
        structured = result.get("structuredContent")
        findings = list(_text_disagrees(result, structured))
        schema = self.schemas.get(name)
        if schema is None:
            return tuple(findings)
        if structured is None:
            findings.insert(
                0,
                finding(
                    "output-schema",
                    "output-schema",
                    BASE,
                    f"tool {name} declares an outputSchema and its result has no structuredContent",
                ),
            )
            return tuple(findings)
        error = self._first_error(name, schema, structured)
        if error is not None:
            findings.insert(0, error)
        return tuple(findings)

    def _first_error(self, name: str, schema: JSONObject, instance: JSON) -> Finding | None:
        # Only a session whose server declares an output schema needs these.
        import jsonschema
        import referencing.exceptions

        validator = self.validators.get(name)
        try:
            if validator is None:
                cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
                cls.check_schema(schema)
                validator = self.validators[name] = cls(schema)
            error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        except jsonschema.exceptions.SchemaError as exc:
            return finding(
                "output-schema",
                "output-schema",
                "$",
                _capped(f"the outputSchema of tool {name} is not a valid JSON Schema: {exc.message}"),
            )
        except referencing.exceptions.Unresolvable as exc:  # a $ref that leads nowhere (none is fetched)
            return finding(
                "output-schema",
                "output-schema",
                "$",
                _capped(f"the outputSchema of tool {name} has a $ref that does not resolve: {exc}"),
            )
        if error is None:
            return None
        path = BASE + "".join(
            index_segment(step) if isinstance(step, int) else key_segment(step) for step in error.absolute_path
        )
        return finding(
            "output-schema",
            "output-schema",
            path,
            _capped(f"structuredContent does not match the outputSchema of tool {name}: {error.message}"),
            after=_capped(json.dumps(error.instance, ensure_ascii=False, default=str)),
        )


def _text_disagrees(result: JSONObject, structured: JSON) -> tuple[Finding, ...]:
    """A finding when the result's only text block is a JSON object other than
    ``structuredContent`` (the spec's copy for clients that read text)."""
    if not isinstance(structured, dict):
        return ()
    content = result.get("content")
    if not isinstance(content, list):
        return ()
    texts = [i for i, block in enumerate(content) if isinstance(block, dict) and block.get("type") == "text"]
    if len(texts) != 1:
        return ()  # several text blocks (a list's items, prose beside data) claim nothing whole
    at = texts[0]
    text = content[at].get("text")
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return ()
    try:
        claimed = json.loads(text)
    except ValueError:
        return ()
    if not isinstance(claimed, dict) or claimed == structured:
        return ()
    if structured.keys() == {"result"} and structured["result"] in (text, claimed):
        # The SDKs' wrapping of a tool that returns a str or a non-object: the text is the
        # returned value, and structuredContent holds it under "result", as its schema says.
        return ()
    differing = sorted(k for k in claimed.keys() | structured.keys() if claimed.get(k, ...) != structured.get(k, ...))
    return (
        finding(
            "output-text-disagrees",
            "output-schema",
            f"$.result.content{index_segment(at)}.text",
            _capped(
                "the text content is JSON other than structuredContent (differs at "
                + ", ".join(differing[:5])
                + (", ..." if len(differing) > 5 else "")
                + ")"
            ),
        ),
    )


def _capped(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def new_violations(live: tuple[Finding, ...], recorded: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The live findings the recording did not already show: a result that broke its declared
    schema (or whose text already disagreed with it) when it was recorded, the same way at the
    same place, has not changed, and failing the gate on day one for it would cry wolf. A result
    that conforms to a schema that moved under it is still new (the recording, checked against
    the schema it was recorded with, conformed)."""
    if not live or not recorded:
        return live
    seen = {(f.rule, f.path) for f in recorded}
    return tuple(f for f in live if (f.rule, f.path) not in seen)
