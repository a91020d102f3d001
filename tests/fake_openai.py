"""A fake OpenAI-compatible chat server on 127.0.0.1 for provider tests.

It answers `POST /v1/chat/completions` from a reply function, with a `usage` block, unless a
scripted fault applies to the request: `rate_limit` (429 with Retry-After: 0), `server` (500),
`timeout` (holds the reply past the client's timeout), `truncated` (a 200 whose JSON is cut in
half), `empty` (a 200 with no body), `echo_auth` (a 500 whose message repeats the request's
Authorization header, as a careless proxy might), `echo_key` (a 200 whose answer text repeats
that header) or `unparseable` (a 200 whose answer is prose, not the JSON the adapter asked for).
`report_usage=False` leaves the usage block out of every reply, as some servers do; `count_tokens=True` reports
tokens counted from the request's messages and the reply (a token per four characters, four more per message),
so that longer prompts cost more, as they do at a provider. Faults are
scripted per request: the first key of `faults` that the request's last message contains pops its
next fault. Past `max_requests` every request gets a 400, which no client retries, so a test
always stops.
`loopback_only` makes any connection to another host fail, so such a test never reaches a network.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

USAGE = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def loopback_only(monkeypatch) -> None:
    """Connections and name lookups for any host but this one raise (the test fails, nothing leaves)."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise OSError(f"test guard: connection to {address[0]} refused (tests stay on 127.0.0.1)")
        return real_connect(sock, address)

    def getaddrinfo(host, *args, **kwargs):
        if host not in LOOPBACK and host is not None:
            raise OSError(f"test guard: lookup of {host} refused (tests stay on 127.0.0.1)")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@dataclass
class Seen:
    fault: str
    prompt: str
    authorization: str
    body: dict


class FakeOpenAI:
    def __init__(
        self,
        reply: Callable[[str], str],
        faults: dict[str, list[str]] | None = None,
        default: str = "ok",
        hang: float = 2.0,
        max_requests: int = 200,
        report_usage: bool = True,
        count_tokens: bool = False,
    ):
        self.reply = reply
        self.report_usage = report_usage
        self.count_tokens = count_tokens
        self.usages: list[dict] = []  # the usage block of every reply, in order
        self.faults = {key: list(seq) for key, seq in (faults or {}).items()}
        self.default = default
        self.hang = hang
        self.max_requests = max_requests
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _fault_for(self, prompt: str) -> str:
        with self._lock:
            if len(self.seen) >= self.max_requests:
                return "over_budget"
            for key, sequence in self.faults.items():
                if key in prompt and sequence:
                    return sequence.pop(0)
            return self.default

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        prompt = str(body["messages"][-1].get("content", ""))
        fault = self._fault_for(prompt)
        with self._lock:
            self.seen.append(Seen(fault, prompt, request.headers.get("authorization", ""), body))
        if fault == "over_budget":
            return JSONResponse({"error": {"message": "fake server: request budget spent"}}, status_code=400)
        if fault == "rate_limit":
            return JSONResponse(
                {"error": {"message": "slow down", "type": "rate_limit_error"}},
                status_code=429,
                headers={"retry-after": "0"},
            )
        if fault == "server":
            return JSONResponse({"error": {"message": "upstream failed"}}, status_code=500)
        if fault == "echo_auth":
            message = f"bad credentials: {request.headers.get('authorization', '')}"
            return JSONResponse({"error": {"message": message}}, status_code=500)
        if fault == "timeout":
            try:
                await asyncio.sleep(self.hang)
            except asyncio.CancelledError:  # the server stops while a reply is held: end quietly
                return Response(status_code=503)
        content = self.reply(prompt)
        if fault == "echo_key":
            content = json.dumps({"answer": f"the key you sent is {request.headers.get('authorization', '')}"})
        if fault == "unparseable":
            content = "I would rather not answer in JSON."
        message = {"role": "assistant", "content": content}
        reply = {
            "id": f"fake-{len(self.seen)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        }
        if self.report_usage:
            reply["usage"] = counted_usage(body["messages"], content) if self.count_tokens else USAGE
            with self._lock:
                self.usages.append(reply["usage"])
        payload = json.dumps(reply)
        if fault == "truncated":
            return Response(payload[: len(payload) // 2], media_type="application/json")
        if fault == "empty":
            return Response(b"", media_type="application/json")
        return Response(payload, media_type="application/json")

    def __enter__(self) -> FakeOpenAI:
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))  # a free port, held until uvicorn takes the socket
        self.port = sock.getsockname()[1]
        # Idle keep-alive connections stay open: a client reusing one the server had closed meets a
        # connection reset, a fault nobody scripted.
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", timeout_keep_alive=600))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self._server.should_exit = self._server.force_exit = True  # don't wait for a held reply
        self._thread.join(timeout=10)
        assert not self._thread.is_alive(), "fake OpenAI server did not stop"

    def requests_with(self, text: str) -> list[Seen]:
        return [s for s in self.seen if text in s.prompt]


def counted_usage(messages: list[dict], content: str) -> dict:
    prompt = sum(4 + len(str(m.get("content", ""))) // 4 for m in messages)
    completion = 1 + len(content) // 4
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def replies_from(answers: dict[str, dict]) -> Callable[[str], str]:
    """DummyLM's rule over HTTP: the first key the last message contains gives the JSON reply."""

    def reply(prompt: str) -> str:
        return json.dumps(next((value for key, value in answers.items() if key in prompt), {"answer": "?"}))

    return reply
