"""An outside agent for LLM Arena leagues, in Python with only the standard library.

    python examples/agents/python_agent.py --port 9001
    # league config:  - {name: py-agent, spec: "http:http://127.0.0.1:9001/move"}

The league POSTs a move request (docs/agents.md) and reads back {"move": "..."}. This agent plays
a legal move at random (seeded by the match, turn and attempt, so a match replays the same) and
answers free-text games with a short text. Replace `choose` with your own player.
"""

from __future__ import annotations

import argparse
import json
import random
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_REQUEST_BYTES = 1 << 20


def choose(request: dict) -> str:
    legal = request.get("legal_moves")
    rng = random.Random(f"{request.get('match_id')}:{request.get('turn')}:{request.get('attempt')}")
    if legal:
        return rng.choice(legal)
    return "I accept."  # free-text games (negotiation, ...): a real agent reads request["observation"]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        length = int(self.headers.get("content-length") or 0)
        if not 0 < length <= MAX_REQUEST_BYTES:
            self._send(413, {"error": "request body missing or too large"})
            return
        try:
            request = json.loads(self.rfile.read(length))
        except ValueError:
            self._send(400, {"error": "body is not JSON"})
            return
        self._send(200, {"move": choose(request)})

    def do_GET(self) -> None:  # noqa: N802
        self._send(200, {"status": "ready"})

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass  # one line per move would drown the terminal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9001)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"python agent listening on http://{args.host}:{server.server_port}/move", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
