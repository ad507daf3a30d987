"""Schemathesis hooks of `npm run fuzz` (test/fuzz/run.ts): one custom check, `no_secret_in_body`.

It fails a response whose body holds
  - any string of the world's secret list (provider keys, SVC_ENCRYPTION_KEY, SECRET_KEY, the upload
    key, passwords, every password hash, session/agent/proxy/registration tokens) other than the
    caller's own credential;
  - anything shaped like a bcrypt hash (whoever it belongs to);
  - a marker of another tenant (its name, slug, usernames, key names, machine/session/alert ids) when
    the caller belongs to a tenant, unless the caller itself sent that marker in this run (the fuzz
    hands it other tenants' real ids on purpose; an answer or an audit record of its own request may
    repeat what it sent, which discloses nothing).

The world is read from the JSON file named by FUZZ_WORLD_FILE:
  {"secrets": [...], "own": "<caller's token or empty>", "tenant": <id or null>,
   "markers": {"<tenant id>": [...]}}

`find_leak` is a plain function so that test/unit/fuzz-hooks.test.ts can prove it catches a planted
secret without running schemathesis (python3 test/fuzz/hooks.py --self-check FILE < body).
"""

from __future__ import annotations

import json
import os
import re
import sys

# bcrypt: $2a$/$2b$/$2y$, cost, 53 characters of salt and hash. Fixed-width: linear.
BCRYPT = re.compile(r"\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}")
_WORD = re.compile(r"[A-Za-z0-9_-]")


def load_world(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        world = json.load(f)
    own = world.get("own") or ""
    world["forbidden"] = [s for s in world.get("secrets", []) if s and s != own]
    tenant = world.get("tenant")
    world["foreign"] = []
    if tenant is not None:
        for tid, markers in (world.get("markers") or {}).items():
            if str(tid) != str(tenant):
                world["foreign"].extend(m for m in markers if m)
    return world


def _whole(text: str, needle: str) -> bool:
    """`needle` occurs in `text` not followed by another name character (user-1 is not in user-12)."""
    start = 0
    while True:
        i = text.find(needle, start)
        if i < 0:
            return False
        end = i + len(needle)
        before_ok = i == 0 or not _WORD.match(text[i - 1])
        after_ok = end >= len(text) or not _WORD.match(text[end])
        if before_ok and after_ok:
            return True
        start = i + 1


def markers_in(world: dict, request_text: str) -> set[str]:
    """The other tenants' markers a request carries (its URL and body)."""
    return {m for m in world["foreign"] if m in request_text}


def find_leak(world: dict, text: str, sent: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The reason this body leaks something, or None; `sent`: markers the caller sent itself."""
    if not text:
        return None
    for secret in world["forbidden"]:
        if secret in text:
            return f"a secret of the seeded world ({secret[:6]}...) is in the body"
    if BCRYPT.search(text):
        return "a bcrypt password hash is in the body"
    for marker in world["foreign"]:
        if marker not in sent and _whole(text, marker):
            return f"another tenant's data ({marker}) is in the body"
    return None


def _serialize_ast_work() -> None:
    """CPython 3.11 keeps one AST recursion-depth counter per interpreter, not per thread: two threads
    building ASTs at once fail with `SystemError: AST constructor recursion depth mismatch`. With
    schemathesis workers (threads) Hypothesis does so when it describes lambdas; run that, and
    ast.parse, under one lock so a worker count above one cannot turn into tool errors."""
    import ast
    import threading

    lock = threading.RLock()

    def locked(fn):
        def wrapper(*args, **kwargs):
            with lock:
                return fn(*args, **kwargs)

        wrapper.__wrapped__ = fn
        return wrapper

    ast.parse = locked(ast.parse)
    try:
        from hypothesis.internal import lambda_sources

        lambda_sources._lambda_description = locked(lambda_sources._lambda_description)
    except (ImportError, AttributeError):  # another Hypothesis layout: the ast.parse lock still holds
        pass


_WORLD: dict | None = None
# Markers this caller has sent so far in the run (schemathesis runs one role per process).
_SENT: set[str] = set()


def _world() -> dict:
    global _WORLD
    if _WORLD is None:
        _WORLD = load_world(os.environ["FUZZ_WORLD_FILE"])
    return _WORLD


try:
    import schemathesis

    _serialize_ast_work()

    @schemathesis.check
    def no_secret_in_body(ctx, response, case):
        """No secret, password hash or other tenant's data in any response body."""
        try:
            text = response.content.decode("utf-8", errors="replace")
        except Exception:  # pragma: no cover - a body that is not bytes
            text = str(response.content)
        request = response.request
        body = request.body or b""
        if isinstance(body, bytes):
            body = body.decode("utf-8", errors="replace")
        _SENT.update(markers_in(_world(), f"{request.url}\n{body}"))
        reason = find_leak(_world(), text, _SENT)
        if reason:
            raise AssertionError(reason)
        return None

except ImportError:  # the self-check runs without schemathesis installed
    pass


if __name__ == "__main__" and len(sys.argv) in (3, 4) and sys.argv[1] == "--self-check":
    # --self-check WORLD [SENT_REQUEST_TEXT] < body
    w = load_world(sys.argv[2])
    leak = find_leak(w, sys.stdin.read(), markers_in(w, sys.argv[3]) if len(sys.argv) == 4 else frozenset())
    print(leak or "clean")
    sys.exit(1 if leak else 0)
