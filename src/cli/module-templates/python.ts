/**
 * `steward module init NAME --lang python`: server.py, an HTTP module with the
 * standard library only (docs/http-modules.md). `__KIND__` and `__DIR_VAR__` are filled in.
 */
export const PYTHON_SERVER = String.raw`#!/usr/bin/env python3
"""__KIND__: a Steward HTTP module, standard library only (docs/http-modules.md in Steward).

One text file per resource, <dir>/<project>/<name>.txt, where <dir> is --dir, else $__DIR_VAR__, else a folder in /tmp.
Edit DESCRIPTION (the schema and actions), plan (which steps an action needs), STEPS, output_of and observe.

    python3 server.py [--port 9000] [--dir DIR] [--quiet]
"""

import argparse
import json
import os
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DESCRIPTION = {
    "kind": "__KIND__",
    "description": "A text file under --dir (replace with what your kind manages).",
    "config_schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["text"],
        "properties": {
            "text": {"type": "string", "maxLength": 65536, "description": "What the file holds."},
            "mode": {"type": "string", "pattern": "^0[0-7]{3}$", "default": "0644", "description": "Its permissions."},
        },
    },
    "output_schema": {"type": "object", "properties": {"path": {"type": "string"}, "bytes": {"type": "integer"}}},
    "actions": {
        "create": {"description": "Write the file."},
        "update": {"description": "Write it again."},
        "delete": {"description": "Remove it."},
        "append": {
            "description": "Append a line to the text.",
            "params_schema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["line"],
                "properties": {"line": {"type": "string", "minLength": 1}},
            },
        },
    },
    "has_observe": True,
}

ROOT = None  # set in main()


class Rejected(Exception):
    """A request the module refuses: /plan answers 400 with the message, /sync ends in ERROR."""


def file_of(resource):
    return os.path.join(ROOT, resource["project"], resource["name"] + ".txt")


def plan(request):
    """Pure: the answer depends on the request alone. No files, no clock (use request["now"])."""
    action = request["action"]
    if action == "delete":
        return {"data": {"pending": ["remove"]}}
    if action == "append":
        configs = dict(request["desired"]["spec"]["configs"])
        configs["text"] += request["params"]["line"] + "\n"
        return {"configs": configs, "data": {"pending": ["write", "chmod"]}}
    return {"data": {"pending": ["write", "chmod"]}}  # create, update


def write(resource):
    path = file_of(resource)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(resource["spec"]["configs"]["text"])
    os.replace(path + ".tmp", path)  # never half a file


def chmod(resource):
    os.chmod(file_of(resource), int(resource["spec"]["configs"]["mode"], 8))


def remove(resource):
    try:
        os.remove(file_of(resource))
    except FileNotFoundError:
        pass  # already gone is fine


# One step a /sync call; each must be safe to run twice.
STEPS = {"write": write, "chmod": chmod, "remove": remove}


def sync(request):
    resource = request["resource"]
    pending = (resource["state"].get("data") or {}).get("pending") or []
    if pending:
        step = STEPS.get(pending[0])
        if step is None:
            raise Rejected("unknown step %r" % pending[0])
        step(resource)
    rest = pending[1:]
    if rest:
        return {"status": "PENDING", "data": {"pending": rest}}
    if resource["state"]["action"] == "delete":
        return {"status": "COMPLETED"}
    return {"status": "COMPLETED", "data": {"pending": []}, "output": output_of(resource)}


def output_of(resource):
    return {"path": file_of(resource), "bytes": len(resource["spec"]["configs"]["text"].encode("utf-8"))}


def observe(request):
    """Reads the file and changes nothing: for import and refresh."""
    resource = request["resource"]
    path = file_of(resource)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        mode = "0%03o" % (os.stat(path).st_mode & 0o777)
    except FileNotFoundError:
        return {"exists": False}
    output = {"path": path, "bytes": len(text.encode("utf-8"))}
    return {"exists": True, "configs": {"text": text, "mode": mode}, "output": output, "data": {"pending": []}}


class Handler(BaseHTTPRequestHandler):
    quiet = False

    def do_GET(self):
        if self.path == "/module":
            self._answer(200, DESCRIPTION)
        else:
            self._answer(404, {"error": {"message": "no route for GET %s" % self.path}})

    def do_POST(self):
        routes = {"/plan": plan, "/sync": sync, "/observe": observe}
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            if self.path not in routes:
                return self._answer(404, {"error": {"message": "no route for POST %s" % self.path}})
            self._answer(200, routes[self.path](request))
        except (Rejected, ValueError, KeyError, TypeError) as bad:
            self._answer(400, {"error": {"message": str(bad)}})  # 4xx: not retried
        except OSError as failure:
            self._answer(503, {"error": {"message": str(failure)}})  # 5xx: Steward retries

    def _answer(self, status, body):
        payload = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format, *args):
        if not self.quiet:
            super().log_message(format, *args)


def main():
    global ROOT
    parser = argparse.ArgumentParser(description=DESCRIPTION["description"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000, help="0 picks a free port")
    default_dir = os.environ.get("__DIR_VAR__") or os.path.join(tempfile.gettempdir(), "steward-__KIND__")
    parser.add_argument("--dir", default=default_dir, help="where the files go")
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    args = parser.parse_args()
    ROOT = os.path.abspath(args.dir)
    Handler.quiet = args.quiet
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    # The first line on stdout says where to reach the server (steward module dev reads it).
    print("listening on http://%s:%d" % server.server_address[:2], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
`;
