#!/usr/bin/env python3
"""The peer of scripts/bench/serve.sh's fan-out: a build behind HTTP the way a user without
`trtbuild serve` would put it there, with the Python 3 standard library alone.

    bench/serve-peer.py [--port N] --trtbuild BIN -- TRTBUILD-ARGS...

An asyncio server (one thread, one event loop) on 127.0.0.1: GET /events is a Server-Sent
Events stream of the build's lines (id: N, event: the line's "type", data: the line), replayed
from the start to a client that comes late and closed after the result event; POST /start runs
`BIN TRTBUILD-ARGS...` (which should include --progress json) once and relays every line of its
stdout to every client as it comes. Each write goes into the client's transport buffer (no
backpressure: a slow client's buffer grows). It prints "listening on 127.0.0.1:PORT" on stderr.
"""

import argparse
import asyncio
import json
import sys


class Relay:
    def __init__(self, cmd):
        self.cmd = cmd
        self.events = []  # the encoded events so far
        self.clients = set()
        self.ended = False
        self.started = False

    async def run_build(self):
        proc = await asyncio.create_subprocess_exec(*self.cmd, stdout=asyncio.subprocess.PIPE)
        while True:
            line = await proc.stdout.readline()
            if not line:
                break
            line = line.rstrip(b"\n")
            try:
                typ = json.loads(line).get("type", "")
            except ValueError:
                continue
            ev = b"id: %d\nevent: %s\ndata: %s\n\n" % (len(self.events) + 1, typ.encode(), line)
            self.events.append(ev)
            for w in list(self.clients):
                w.write(ev)
            if typ == "result":
                self.ended = True
                for w in list(self.clients):
                    w.close()
                self.clients.clear()
        await proc.wait()

    async def handle(self, reader, writer):
        try:
            request = await reader.readline()
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # the headers
            method, path = request.split()[:2]
        except (ValueError, ConnectionError):
            writer.close()
            return
        if method == b"POST" and path == b"/start":
            if not self.started:
                self.started = True
                asyncio.get_running_loop().create_task(self.run_build())
            writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        if method != b"GET" or path != b"/events":
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")
        for ev in self.events:
            writer.write(ev)
        if self.ended:
            writer.close()
            return
        self.clients.add(writer)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--trtbuild", required=True)
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    relay = Relay([a.trtbuild] + args)
    server = await asyncio.start_server(relay.handle, "127.0.0.1", a.port, backlog=2048)
    port = server.sockets[0].getsockname()[1]
    print("listening on 127.0.0.1:%d" % port, file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
