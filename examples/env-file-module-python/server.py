#!/usr/bin/env python3
"""env_file as an HTTP module (docs/http-modules.md), Python standard library only: the kind of
../env-file-module/index.js. KEY=value lines and a secret TOKEN in <dir>/<project>/<file>.

    python3 server.py --dir /tmp/env-files --port 9000
    STEWARD_HTTP_MODULES=http://127.0.0.1:9000 npm start
"""
import argparse
import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = {"type": "string", "pattern": "^0[0-7]{3}$", "default": "0600"}
VARS = {"type": "array", "items": {"type": "string", "pattern": r"^(?!TOKEN=)\w+=.*$"}}  # KEY=value lines
DESCRIPTION = {
    "kind": "env_file",
    "description": "KEY=value lines and a secret TOKEN in a file. Steps: write, chmod.",
    "config_schema": {
        "type": "object",
        "required": ["file", "vars", "token", "mode"],
        "properties": {
            "file": {"type": "string", "pattern": r"^\w[\w.-]*$"},  # a name in the project's folder, never ..
            "vars": VARS,
            "token": {"type": "string", "pattern": "^.+$", "writeOnly": True},  # a secret: the API never shows it
            "mode": MODE,
        },
    },
    "output_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    "actions": {"create": {}, "update": {}, "delete": {},
                "chmod": {"params_schema": {"type": "object", "required": ["mode"], "properties": {"mode": MODE}}}},
    "has_observe": True,
    "claim_key": ["file"],  # one resource per file name (the protocol's key is made of configs: across projects)
}


class Refused(Exception):
    """Retrying cannot help: /sync answers 409, which Steward takes as a TerminalError."""


def plan(request):
    """Pure: the steps for the action (in data.pending, the rest of data kept), from the request alone."""
    action, configs = request["action"], request["desired"]["spec"]["configs"]
    data = ((request["current"] or {}).get("state") or {}).get("data") or {}
    if action == "chmod":
        return {"configs": dict(configs, mode=request["params"]["mode"]), "data": dict(data, pending=["chmod"])}
    return {"data": dict(data, pending=["remove"] if action == "delete" else ["write", "chmod"])}


def write(path, r):
    header = "# made by steward for %s at %s\n" % (r["urn"], r["created_at"])  # who made the file
    found = read(path)
    if r["state"]["action"] == "create" and found is not None and not found.startswith(header):
        raise Refused("%s exists, not made by this resource" % r["spec"]["configs"]["file"])
    configs = r["spec"]["configs"]
    lines = ["TOKEN=%s" % configs["token"]] + configs["vars"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
        f.write(header + "\n".join(lines) + "\n")
    return {"held": True}  # kept in state.data: delete removes only a file it holds


STEPS = {
    "write": write,
    "chmod": lambda path, r: os.chmod(path, int(r["spec"]["configs"]["mode"], 8)),
    "remove": lambda path, r: r["state"]["data"].get("held") and os.path.exists(path) and os.remove(path),
}


def sync(root, request):
    """One step per call, what it returns merged into data; PENDING until the last, then COMPLETED."""
    r = request["resource"]
    path = os.path.join(root, r["project"], r["spec"]["configs"]["file"])
    data = r["state"].get("data") or {}
    pending = data.get("pending") or []
    if pending:
        if pending[0] not in STEPS:
            raise Refused('the module has no step "%s"' % pending[0])
        data = {**data, "pending": pending[1:], **(STEPS[pending[0]](path, r) or {})}
        if data["pending"]:
            return {"status": "PENDING", "data": data}
    if r["state"]["action"] == "delete":
        return {"status": "COMPLETED", "data": data}
    return {"status": "COMPLETED", "data": data, "output": {"path": path}}


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None  # not there; any other error is "cannot look", and goes up


def observe(root, request):
    """Reads the file and its mode, changes nothing."""
    r = request["resource"]
    path = os.path.join(root, r["project"], r["spec"]["configs"]["file"])
    found = read(path)
    if found is None:
        return {"exists": False}
    lines = re.findall(r"^\w+=.*$", found, re.MULTILINE)
    token = next((line[len("TOKEN="):] for line in lines if line.startswith("TOKEN=")), None)
    vars_ = [line for line in lines if not line.startswith("TOKEN=")]
    configs = {"token": token, "vars": vars_, "mode": "%04o" % (os.stat(path).st_mode & 0o777)}
    return {"exists": True, "configs": configs, "output": {"path": path}, "data": {"held": True}}


class Handler(BaseHTTPRequestHandler):
    root = "/tmp"  # set in main()

    def do_GET(self):
        self._answer(200, DESCRIPTION) if self.path == "/module" else self._answer(404, {"error": "no route"})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
        routes = {"/plan": plan, "/sync": lambda q: sync(self.root, q), "/observe": lambda q: observe(self.root, q)}
        try:
            self._answer(200, routes[self.path](request))
        except KeyError as missing:  # an unknown route, or a request without a member it needs
            self._answer(400, {"error": "bad request: %s" % missing})
        except Refused as refused:
            self._answer(409, {"error": str(refused)})
        except OSError as failure:  # worth retrying: a 5xx
            self._answer(503, {"error": "%s: %s" % (failure.filename, failure.strerror)})

    def _answer(self, status, body):
        payload = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Steward HTTP module: env_file.")
    parser.add_argument("--dir", default=os.environ.get("ENV_FILE_DIR", "/tmp"), help="where the files go")
    parser.add_argument("--port", type=int, default=9000, help="0 picks a free port")
    args = parser.parse_args()
    Handler.root = os.path.abspath(args.dir)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print("listening on http://%s:%d" % server.server_address[:2], flush=True)  # the first line: where to call
    server.serve_forever()
