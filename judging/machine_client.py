"""Talking to an OpenAI-compatible chat-completions endpoint (vLLM, Ollama,
llama.cpp's server, OpenAI, most hosted models): POST <base_url>/chat/completions.

One `ChatClient` per run, shared by the run's threads (httpx.Client is
thread-safe): real timeouts, a requests-per-minute limiter, and retries with
exponential backoff on 429, 5xx, timeouts and connection errors, honouring
Retry-After (capped). Any other 4xx fails fast with the endpoint's message
(`EndpointError`), as does an endpoint still unreachable after the retries
(`EndpointUnreachable`)."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx


class EndpointError(ValueError):
    """The endpoint refuses the requests (a 4xx other than 429): the run stops."""


class EndpointUnreachable(EndpointError):
    """No connection to the endpoint (or no answer in time) after the retries."""


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str = ""
    temperature: float = 0.0
    requests_per_minute: int | None = None
    concurrency: int = 4
    timeout: float = 60.0
    connect_timeout: float = 5.0
    retries: int = 4
    backoff: float = 0.5  # seconds before the first retry, doubled each time
    retry_after_cap: float = 30.0

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class Completion:
    """What one request gave: the reply's text (None when the request failed for
    good: then `failure` says why), tokens and latency."""

    content: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    failure: str = ""


class _RateLimiter:
    """At most `per_minute` requests a minute, spread evenly, across threads."""

    def __init__(self, per_minute: int | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.next_at = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            at = max(now, self.next_at)
            self.next_at = at + self.interval
        if at > now:
            time.sleep(at - now)


def check_base_url(url: str) -> str:
    """The base URL if it is an http(s) URL with a host; ValueError otherwise."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"endpoint {url!r} must be an http:// or https:// URL with a host")
    return url.strip().rstrip("/")


class ChatClient:
    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        headers = {"Content-Type": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        self.http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(endpoint.timeout, connect=endpoint.connect_timeout),
            limits=httpx.Limits(
                max_connections=max(1, endpoint.concurrency),
                max_keepalive_connections=max(1, endpoint.concurrency),
            ),
        )
        self.limiter = _RateLimiter(endpoint.requests_per_minute)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self, messages: list[dict[str, str]], response_format: dict[str, Any] | None
    ) -> Completion:
        """One chat completion, retried as the module says. Raises EndpointError
        (a 4xx other than 429) and EndpointUnreachable (no connection after the
        retries); a 429/5xx/timeout still failing after the retries is a
        Completion with a failure."""
        endpoint = self.endpoint
        body: dict[str, Any] = {
            "model": endpoint.model,
            "messages": messages,
            "temperature": endpoint.temperature,
        }
        if response_format is not None:
            body["response_format"] = response_format
        failure = ""
        unreachable = False
        failure_response: httpx.Response | None = None
        for attempt in range(endpoint.retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, failure_response))
            failure_response = None
            self.limiter.wait()
            started = time.monotonic()
            try:
                response = self.http.post(endpoint.url, json=body)
            except httpx.TimeoutException:
                failure, unreachable = "timeout", False
                continue
            except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as error:
                failure = f"connection failed ({type(error).__name__})"
                unreachable = isinstance(error, httpx.ConnectError)
                continue
            latency = int((time.monotonic() - started) * 1000)
            if response.status_code == 429 or response.status_code >= 500:
                failure, unreachable = f"HTTP {response.status_code}", False
                failure_response = response
                continue
            if response.status_code >= 400:
                raise EndpointError(
                    f"{endpoint.host} answered HTTP {response.status_code}: {_message(response)}"
                )
            return _completion(response, latency)
        if unreachable:
            raise EndpointUnreachable(f"cannot reach {endpoint.url}: {failure}")
        return Completion(None, failure=f"{failure} after {endpoint.retries + 1} tries")

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = self.endpoint.backoff * 2 ** (attempt - 1)
        if response is not None:
            header = response.headers.get("Retry-After", "")
            with contextlib.suppress(ValueError):
                delay = max(delay, float(header))
        return min(delay, self.endpoint.retry_after_cap)


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        error = error.get("message", error)
    return str(error)[:300]


def _completion(response: httpx.Response, latency: int) -> Completion:
    try:
        data = response.json()
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Completion(
            None, latency_ms=latency, failure="not a chat completion: " + response.text[:200]
        )
    usage = data.get("usage") or {}
    return Completion(
        content if isinstance(content, str) else None,
        tokens_in=int(usage.get("prompt_tokens") or 0),
        tokens_out=int(usage.get("completion_tokens") or 0),
        latency_ms=latency,
        failure="" if isinstance(content, str) else "no text in the reply",
    )
