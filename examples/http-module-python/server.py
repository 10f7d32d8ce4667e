#!/usr/bin/env python3
"""An example Steward HTTP module in Python, standard library only.

Kind ``kv_entry``: one key of a JSON key-value file that this server keeps (the
``--store`` file). Steward plans and syncs each resource by calling this server;
the protocol is described in docs/http-modules.md.

    python3 server.py --store ./kv.json --port 9000
    STEWARD_HTTP_MODULES=http://127.0.0.1:9000 npm start

Endpoints:
    GET  /module  the module description (kind, schemas, actions)
    POST /plan    pure: decides what sync has to do; never touches the store
    POST /sync    does it: writes or removes the key, reports the outcome
    POST /observe reads the key and changes nothing (for import and refresh)
"""

import argparse
import hashlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KIND = "kv_entry"
MAX_VALUE = 65536

DESCRIPTION = {
    "kind": KIND,
    "description": "One key of a JSON key-value file kept by the example Python server (its --store file).",
    "config_schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["key"],
        "properties": {
            "key": {
                "type": "string",
                "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
                "description": "The key. It cannot change after create.",
            },
            "value": {"type": "string", "maxLength": MAX_VALUE, "default": "", "description": "The value."},
        },
    },
    "output_schema": {
        "type": "object",
        "properties": {
            "key": {"type": "string"},
            "length": {"type": "integer"},
            "sha256": {"type": "string"},
            "store": {"type": "string", "description": "Absolute path of the store file."},
        },
    },
    "actions": {
        "create": {"description": "Set the key."},
        "update": {"description": "Set a new value (the key cannot change)."},
        "delete": {"description": "Remove the key."},
        "append": {
            "description": "Append text to the value.",
            "params_schema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["text"],
                "properties": {"text": {"type": "string", "minLength": 1}},
            },
        },
    },
    # Steward re-syncs COMPLETED entries this often, which repairs a value edited by hand.
    "resync_interval_ms": 60000,
    # This server answers POST /observe, so entries can be imported and refreshed.
    "has_observe": True,
    # The key names the entry: two resources on one key are refused when the second is accepted.
    "claim_key": ["key"],
}


class Rejected(Exception):
    """A request the module refuses: /plan answers 400 and Steward answers 400 with the message."""


def plan(request):
    """Pure: the answer depends on the request alone. No store access, no clock (use request["now"])."""
    action = request["action"]
    desired = request["desired"]["spec"]["configs"]
    current = request["current"]
    # An imported key stays this resource's through every later plan (sync reads the mark in data).
    adopted = current is not None and bool((current["state"].get("data") or {}).get("adopted"))

    def steps(*pending):
        return dict({"adopted": True} if adopted else {}, pending=list(pending))
    if action in ("create", "update"):
        if current is not None and current["spec"]["configs"]["key"] != desired["key"]:
            raise Rejected(
                'key cannot change from "%s" to "%s"; delete this entry and create another'
                % (current["spec"]["configs"]["key"], desired["key"])
            )
        return {"data": steps("write")}
    if action == "append":
        value = desired.get("value", "") + request["params"]["text"]
        if len(value) > MAX_VALUE:
            raise Rejected("appending would make the value %d characters long, more than %d" % (len(value), MAX_VALUE))
        return {"configs": dict(desired, value=value), "data": steps("write")}
    if action == "delete":
        return {"data": steps("remove")}
    raise Rejected('kv_entry has no action "%s"' % action)


class Store:
    """The key-value file. Every write replaces it atomically (write aside, then rename)."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.lock = threading.Lock()

    def _read(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def _write(self, entries):
        temporary = self.path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(entries, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(temporary, self.path)

    def put(self, key, value):
        with self.lock:
            entries = self._read()
            if entries.get(key) != value:
                entries[key] = value
                self._write(entries)

    def get(self, key):
        """The value, or None when the key is not there. Reads only."""
        with self.lock:
            return self._read().get(key)

    def remove(self, key):
        with self.lock:
            entries = self._read()
            if key in entries:
                del entries[key]
                self._write(entries)


class Owners(Store):
    """Which resource wrote each key (``<store>.owners.json``): a create never takes over a key it did not write."""

    def __init__(self, store_path):
        super().__init__(store_path + ".owners.json")


def owner_token(resource):
    """One resource, one token: a resource created again under the same URN later is another owner."""
    return "%s %s" % (resource["urn"], resource["created_at"])


def owns(owners, resource, key):
    """This resource wrote the key (its token is recorded), or adopted it with an import (its data says so)."""
    return owners.get(key) == owner_token(resource) or bool((resource["state"].get("data") or {}).get("adopted"))


class AlreadyExists(Exception):
    """The key is there and this resource did not write it: /sync answers 409, which Steward takes as terminal."""


def sync(store, owners, request):
    """Idempotent: sets (or removes) the key whatever the pending step says, so a repeat or a drift re-sync is harmless.

    Never takes over: a key that exists and that this resource did not write (nor import) is refused, untouched. The
    owner is recorded before the value, so a create retried after a crash finds its own key.
    """
    resource = request["resource"]
    key = resource["spec"]["configs"]["key"]
    data = resource["state"].get("data") or {}
    mine = owns(owners, resource, key)
    if resource["state"]["action"] == "delete":
        if mine:
            store.remove(key)
            owners.remove(key)
        return {"status": "COMPLETED", "data": {"pending": []}}
    if store.get(key) is not None and not mine:
        raise AlreadyExists(
            'key "%s" already exists and was not written by this resource; import it with "import": true to manage it'
            % key
        )
    owners.put(key, owner_token(resource))
    value = resource["spec"]["configs"].get("value", "")
    store.put(key, value)
    kept = {"adopted": True} if data.get("adopted") else {}
    return {"status": "COMPLETED", "output": output_of(store, key, value), "data": dict(kept, pending=[])}


def observe(store, request):
    """Reads the key and changes nothing: what is there, as configs and as the output /sync would publish."""
    key = request["resource"]["spec"]["configs"]["key"]
    value = store.get(key)
    if value is None:
        return {"exists": False}
    return {
        "exists": True,
        "configs": {"key": key, "value": value},
        "output": output_of(store, key, value),
        # Kept by an import only: this resource now holds the key (sync may change and delete it).
        "data": {"pending": [], "adopted": True},
    }


def output_of(store, key, value):
    return {
        "key": key,
        "length": len(value),
        "sha256": hashlib.sha256(value.encode("utf-8")).hexdigest(),
        "store": store.path,
    }


class Handler(BaseHTTPRequestHandler):
    server_version = "steward-kv-example/1"
    store = None  # set in main()
    owners = None  # set in main()
    quiet = False

    def do_GET(self):
        if self.path == "/module":
            self._answer(200, DESCRIPTION)
        else:
            self._error(404, "no route for GET %s" % self.path)

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            self._error(400, "the request body is not valid JSON")
            return
        try:
            if self.path == "/plan":
                self._answer(200, plan(request))
            elif self.path == "/sync":
                self._answer(200, sync(self.store, self.owners, request))
            elif self.path == "/observe":
                self._answer(200, observe(self.store, request))
            else:
                self._error(404, "no route for POST %s" % self.path)
        except Rejected as rejected:
            self._error(400, str(rejected))
        except AlreadyExists as taken:
            self._error(409, str(taken))
        except (KeyError, TypeError) as bad:
            self._error(400, "malformed request: %r" % (bad,))
        except OSError as failure:
            # The store could not be written: worth retrying, so a 5xx.
            self._error(503, "store %s: %s" % (self.store.path, failure.strerror or failure))

    def _error(self, status, message):
        self._answer(status, {"error": {"message": message}})

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
    parser = argparse.ArgumentParser(description="Example Steward HTTP module: entries of a JSON key-value file.")
    parser.add_argument("--store", required=True, help="the JSON file holding the entries (created when missing)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000, help="0 picks a free port")
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    args = parser.parse_args()

    Handler.store = Store(args.store)
    Handler.owners = Owners(args.store)
    Handler.quiet = args.quiet
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    # The first line on stdout says where to reach the server (the tests read it).
    print("listening on http://%s:%d" % (host, port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
