// An outside agent for LLM Arena leagues, in JavaScript for Node (no packages needed).
//
//   node examples/agents/node_agent.js --port 9002
//   # league config:  - {name: js-agent, spec: "http:http://127.0.0.1:9002/move"}
//
// The league POSTs a move request (docs/agents.md) and reads back {"move": "..."}. This agent
// prefers the centre, then corners, of any board whose moves are cell numbers, else the first
// legal move; free-text games get a short text. Replace choose() with your own player.

"use strict";
const http = require("http");

const MAX_REQUEST_BYTES = 1 << 20;

function choose(request) {
  const legal = request.legal_moves;
  if (!Array.isArray(legal) || legal.length === 0) return "I accept.";
  for (const preferred of ["4", "0", "2", "6", "8"]) {
    if (legal.includes(preferred)) return preferred;
  }
  return legal[0];
}

function send(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

function argument(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST") return send(res, 200, { status: "ready" });
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) {
      send(res, 413, { error: "request body too large" });
      req.destroy();
    } else {
      chunks.push(chunk);
    }
  });
  req.on("end", () => {
    if (res.writableEnded) return;
    let request;
    try {
      request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch (err) {
      return send(res, 400, { error: "body is not JSON" });
    }
    send(res, 200, { move: choose(request) });
  });
});

const host = argument("--host", "127.0.0.1");
server.listen(Number(argument("--port", "9002")), host, () => {
  console.log(`node agent listening on http://${host}:${server.address().port}/move`);
});
