"""A small MCP server for the tests: newline-delimited JSON-RPC on stdio.

Tools: echo, add, env_names (the names of its environment), hang (never
answers), crash (exits mid-call), fail (answers with isError), picture (an
image and a text block), write (writes `content` to the file at `path`),
read (answers the text of the file at `path`, which may be a `file:` URI
with percent escapes or a glob pattern, as some servers read them),
write_later (answers at once and writes `content` to `path` `delay_ms`
later, from a background thread). Arguments: --marker PATH
writes the server's pid to PATH at start (to prove it ran, and to find it
afterwards); --garbage answers initialize with a line that is not JSON-RPC;
--log PATH appends every call it receives to PATH, one JSON line each (to
prove what reached it).
"""

import glob
import json
import os
import sys
import threading
import time
import urllib.parse

TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "add", "description": "Add two numbers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
    {"name": "env_names", "description": "The names of the server's environment variables.",
     "inputSchema": {"type": "object"}},
    {"name": "write", "description": "Write a file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}},
    {"name": "write_later", "description": "Write a file in the background.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "delay_ms": {"type": "number"}}}},
    {"name": "read", "description": "Read a file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Exits during the call.", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "Answers with an error.", "inputSchema": {"type": "object"}},
    {"name": "picture", "description": "An image and a caption.", "inputSchema": {"type": "object"}},
    {"name": "bad name!", "description": "Not a valid name.", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(t, is_error=False):
    result = {"content": [{"type": "text", "text": t}]}
    if is_error:
        result["isError"] = True
    return result


def call(name, args):
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "add":
        return text(str(args.get("a", 0) + args.get("b", 0)))
    if name == "env_names":
        return text(" ".join(sorted(os.environ)))
    if name == "hang":
        while True:
            time.sleep(60)
    if name == "crash":
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "write":
        with open(args["path"], "w") as f:
            f.write(args.get("content", ""))
        return text("written")
    if name == "write_later":
        def later():
            with open(args["path"], "w") as f:
                f.write(args.get("content", ""))
        threading.Timer(args.get("delay_ms", 500) / 1000, later).start()
        return text("scheduled")
    if name == "read":
        path = args["path"]
        if path.lower().startswith("file:"):
            path = urllib.parse.unquote(urllib.parse.urlparse(path).path)
        paths = sorted(glob.glob(path)) if any(c in path for c in "*?[") else [path]
        texts = []
        for one in paths:
            with open(one) as f:
                texts.append(f.read())
        return text("".join(texts))
    if name == "fail":
        return text("the thing failed", is_error=True)
    if name == "picture":
        return {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"},
                            {"type": "text", "text": "a caption"}]}
    return None


def main():
    argv = sys.argv[1:]
    if "--marker" in argv:
        with open(argv[argv.index("--marker") + 1], "w") as f:
            f.write(str(os.getpid()))
    garbage = "--garbage" in argv
    log = argv[argv.index("--log") + 1] if "--log" in argv else None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, mid = message["method"], message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            if garbage:
                sys.stdout.write("this is not json-rpc\n")
                sys.stdout.flush()
                continue
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "test-server", "version": "1.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            if log:
                with open(log, "a") as f:
                    f.write(json.dumps(params) + "\n")
            result = call(params.get("name"), params.get("arguments") or {})
            if result is None:
                send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}})
            else:
                send({"jsonrpc": "2.0", "id": mid, "result": result})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
