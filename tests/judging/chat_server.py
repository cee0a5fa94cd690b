"""A real chat-completions server on the loopback, with scripted replies, for the
machine assessors' tests and bench (no mock of the HTTP client)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GOOD = '{"relevance": 2, "effectiveness": 3, "credibility": 1}'


@dataclass
class Reply:
    """What the server answers one request: a completion with `content`, or an
    HTTP `status` (with headers and a body), or `close` (no answer), after `delay`."""

    content: str = GOOD
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    delay: float = 0.0
    close: bool = False


def completion(content: str, tokens: tuple[int, int] = (100, 5)) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    }


class ChatServer:
    """`with ChatServer() as server:` serves http://127.0.0.1:<port>/v1; `server.queue`
    replies are used first, in order, then `server.default(body)`; `server.requests`
    keeps every request's body."""

    def __init__(
        self, default: Callable[[dict[str, Any]], Reply] | None = None, *, keep: bool = True
    ) -> None:
        self.keep = keep  # keep each request (tests); the bench only counts them
        self.count = 0
        self.queue: list[Reply] = []
        self.default = default or (lambda body: Reply())
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.count += 1
                    if server.keep:
                        server.requests.append(body)
                        server.headers.append(dict(self.headers))
                    reply = server.queue.pop(0) if server.queue else None
                if reply is None:
                    reply = server.default(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.close:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if self.path != "/v1/chat/completions":
                    reply = Reply(status=404, body='{"error": {"message": "no such path"}}')
                if reply.body is None:
                    data = json.dumps(completion(reply.content)).encode()
                else:
                    data = reply.body.encode()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def document_of(body: dict[str, Any]) -> str:
    """The document's text in a request (between the template's <<< and >>>)."""
    text = body["messages"][-1]["content"]
    return text.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
