"""The blind review page: one case at a time, keyboard-driven, every verdict fsynced at once.

Starlette + Jinja2 (autoescaping on for every template) served by uvicorn, bound to 127.0.0.1
unless told otherwise. One server serves one annotator; a second annotator runs a second server
(another port) and writes only their own ``review/<annotator>.jsonl``.

Generated text is adversarial by design, so: every string reaches the page through an
autoescaped template (never ``|safe``); the script is a static file and reads only ``data-*``
attributes, never writes markup; a Content-Security-Policy allows scripts, styles and requests
from this origin only (no inline script); the verdict endpoint takes JSON only (a cross-site form
cannot send it without a CORS preflight, which is never granted) and refuses other origins; the
Host header must name this server (no DNS rebinding).

The judge's verdict, the case status and the checks are not in the page at all until the
annotator has answered that case.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from experiments.review.sample import open_sample, sampled_records
from experiments.review.verdict_log import VerdictLog
from experiments.review.verdicts import VERDICTS, Verdict
from experiments.review.view import case_view
from experiments.run_store import RunNotFound, RunStore  # noqa: F401 - RunNotFound: ReviewSession.open raises it

logger = logging.getLogger(__name__)

HERE = Path(__file__).parent
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_BODY = 64_000

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


@dataclass
class ReviewSession:
    """One annotator's review of one run's sample: the cases in sample order and their verdicts."""

    run_id: str
    annotator: str
    cases: list[dict[str, Any]]
    log: VerdictLog
    verdicts: dict[str, Verdict]
    sample: dict[str, Any]

    @classmethod
    def open(
        cls,
        run_id: str,
        annotator: str,
        runs_root: Path | None = None,
        size: int | None = None,
        seed: int | None = None,
    ) -> ReviewSession:
        store = RunStore(run_id, root=runs_root)
        store.require_cases()
        log = VerdictLog(store.dir / "review", annotator)  # validates the name before anything is written
        records = store.records()
        sample, _ = open_sample(store.dir / "review", records, run_id, size=size, seed=seed)
        return cls(run_id, annotator, sampled_records(sample, records), log, log.read(), sample)

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def answered(self) -> int:
        return sum(str(c["id"]) in self.verdicts for c in self.cases)

    def first_unanswered(self) -> int | None:
        return next((i for i, c in enumerate(self.cases) if str(c["id"]) not in self.verdicts), None)

    def index_of(self, case_id: str) -> int | None:
        return next((i for i, c in enumerate(self.cases) if str(c["id"]) == case_id), None)

    def record(self, case_id: str, verdict: str, note: str) -> Verdict:
        saved = self.log.append(case_id, verdict, note)
        self.verdicts[case_id] = saved
        return saved


class SecurityHeaders:
    """Pure ASGI middleware: the headers go on every response, static files and errors included."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.decode("latin-1").lower() not in SECURITY_HEADERS
                ]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, undefined=jinja2.StrictUndefined
    )
    return Jinja2Templates(env=env)


def allowed_hosts_for(host: str) -> list[str]:
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    return sorted({host, "127.0.0.1", "localhost", "[::1]"})


def create_app(session: ReviewSession, allowed_hosts: list[str] | None = None) -> Starlette:
    templates = _templates()
    hosts = allowed_hosts or allowed_hosts_for(DEFAULT_HOST)

    def case_url(index: int) -> str:
        return f"/case/{index}"

    async def home(request: Request) -> Response:
        first = session.first_unanswered()
        return RedirectResponse(case_url(0 if first is None else first), status_code=303)

    async def show_case(request: Request) -> Response:
        index = request.path_params["index"]
        if not 0 <= index < session.total:
            return HTMLResponse(f"No case {index}: the sample has {session.total}.", status_code=404)
        record = session.cases[index]
        verdict = session.verdicts.get(str(record["id"]))
        first = session.first_unanswered()
        context = {
            "run_id": session.run_id,
            "annotator": session.annotator,
            "verdicts_path": str(session.log.path.resolve()),  # where the file is, wherever reeval runs from
            "index": index,
            "total": session.total,
            "answered": session.answered,
            "case": case_view(record),
            "verdict": verdict,
            "prev_url": case_url(index - 1) if index > 0 else "",
            "next_url": case_url(index + 1) if index + 1 < session.total else "",
            "next_unanswered_url": case_url(first) if first is not None and first != index else "",
            "all_done": first is None,
            "answered_flags": [str(c["id"]) in session.verdicts for c in session.cases],
        }
        return templates.TemplateResponse(request, "case.html", context)

    async def post_verdict(request: Request) -> Response:
        if not _same_origin(request, hosts):
            return JSONResponse({"error": "cross-origin request refused"}, status_code=403)
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return JSONResponse({"error": "send application/json"}, status_code=415)
        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": "request too large"}, status_code=413)
        try:
            payload = json.loads(body)
        except json.JSONDecodeError:
            return JSONResponse({"error": "invalid JSON"}, status_code=400)
        if not isinstance(payload, dict):
            return JSONResponse({"error": "expected a JSON object"}, status_code=400)
        case_id, verdict, note = payload.get("id"), payload.get("verdict"), payload.get("note", "")
        if not isinstance(case_id, str) or session.index_of(case_id) is None:
            return JSONResponse({"error": "unknown case id"}, status_code=400)
        if verdict not in VERDICTS:
            return JSONResponse({"error": f"verdict must be one of {', '.join(VERDICTS)}"}, status_code=400)
        if not isinstance(note, str):
            return JSONResponse({"error": "note must be a string"}, status_code=400)
        saved = session.record(case_id, verdict, note)
        logger.info("%s: %s -> %s", session.annotator, case_id, verdict)
        first = session.first_unanswered()
        return JSONResponse(
            {
                "saved": saved.verdict,
                "at": saved.at,
                "answered": session.answered,
                "total": session.total,
                "next_unanswered": None if first is None else case_url(first),
            }
        )

    routes = [
        Route("/", home),
        Route("/case/{index:int}", show_case),
        Route("/api/verdict", post_verdict, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=hosts)]
    return Starlette(routes=routes, middleware=middleware)


def _same_origin(request: Request, hosts: list[str]) -> bool:
    # Browsers label cross-site fetches; a page on another site must not record verdicts here.
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    if origin == "null":
        return False
    origin_host = urlsplit(origin).netloc
    return origin_host == request.headers.get("host", "") and (
        "*" in hosts or urlsplit(origin).hostname in {h.strip("[]") for h in hosts}
    )


def serve(session: ReviewSession, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    import uvicorn

    app = create_app(session, allowed_hosts_for(host))
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
