#!/usr/bin/python3
"""kazoo_peer: kazoo's SetPartitioner (Debian's python3-kazoo, `scripts/deps.sh
kazoo`), the yardstick of the benchmark's partition scenarios, driven by the
driver (bench/internal/driver/kazoo.go) over stdin and stdout.

Usage: /usr/bin/python3 kazoo_peer.py CONNECT

One process for the whole benchmark; each trial has sessions of its own, one
KazooClient per member (60 s sessions, as every contender's). One line each:

  peer:   READY
  driver: partition PATH TIME_BOUNDARY ITEM,ITEM,...
                      a trial: members of one SetPartitioner of these items at PATH
  peer:   OK
  driver: connect ID  a session for member ID              peer: OK
  driver: join ID     its SetPartitioner joins the party    peer: AT <ns>
  driver: leave ID    it stops its work, releases its items and leaves the
                      party (finish), then closes its session  peer: AT <ns>
  driver: lose ID     its session is closed under it        peer: AT <ns>
  driver: close       every member stops                    peer: CLOSED
  peer, at any time:  RUN <ns> ID ITEM,ITEM,...   the member's work on these items starts
                      STOP <ns> ID ITEM,ITEM,...  and stops
  A failure: ERROR <message>.

<ns> is time.monotonic_ns() just before the change, or when the work starts or
stops. A member's work runs, as kazoo's documentation has it, while its
partitioner is ACQUIRED; when the partitioner asks for its items back (RELEASE)
the work stops and they are released, and it waits to be given its new share.
"""
import logging
import sys
import threading
import time

from kazoo.client import KazooClient

out = threading.Lock()


def say(*fields):
    with out:
        sys.stdout.write(" ".join(str(f) for f in fields) + "\n")
        sys.stdout.flush()


class Member:
    def __init__(self, connect, ident):
        self.ident = ident
        self.client = KazooClient(hosts=connect, timeout=60.0)
        self.client.start(timeout=30)
        self.changed = threading.Event()
        self.leaving = False
        self.lost = False
        self.partitioner = None
        self.thread = None

    def join(self, path, time_boundary, items):
        self.partitioner = self.client.SetPartitioner(
            path=path, set=items, identifier=self.ident,
            time_boundary=time_boundary, state_change_event=self.changed)
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        qp, running = self.partitioner, []

        def stop():
            if running:
                say("STOP", time.monotonic_ns(), self.ident, ",".join(running))
                running.clear()

        try:
            while True:
                self.changed.clear()
                if self.leaving:
                    stop()
                    qp.finish()
                    break
                if qp.failed or self.lost:
                    stop()
                    break
                if qp.release:
                    stop()
                    qp.release_set()
                    continue
                if qp.acquired and not running:
                    running.extend(qp)
                    if running:
                        say("RUN", time.monotonic_ns(), self.ident, ",".join(running))
                self.changed.wait(1)
        except Exception as e:  # the driver reports it and fails the trial
            say("ERROR", self.ident, repr(e).replace("\n", " "))
        finally:
            self.end()

    def end(self):
        self.client.stop()
        self.client.close()

    def leave(self):
        self.leaving = True
        self.changed.set()

    def lose(self):
        # The session's close: the server deletes its party node and its locks
        # at once, as at an expiry. The partitioner would hear LOST and fail out;
        # the loop stops at once instead, as the work must.
        self.lost = True
        self.client.stop()
        self.changed.set()

    def wait(self):
        if self.thread is not None:
            self.thread.join(60)
        else:
            self.end()


def serve(connect):
    members, trial = {}, None
    say("READY")
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "partition":
                trial = (f[1], float(f[2]), f[3].split(","))
                say("OK")
            elif f[0] == "connect":
                members[f[1]] = Member(connect, f[1])
                say("OK")
            elif f[0] == "join":
                at = time.monotonic_ns()
                members[f[1]].join(*trial)
                say("AT", at)
            elif f[0] in ("leave", "lose"):
                at = time.monotonic_ns()
                getattr(members[f[1]], f[0])()
                say("AT", at)
            elif f[0] == "close":
                for m in members.values():
                    if m.partitioner is not None:
                        m.leave()
                for m in members.values():
                    m.wait()
                members, trial = {}, None
                say("CLOSED")
            else:
                raise ValueError("unknown command " + f[0])
        except Exception as e:
            say("ERROR", repr(e).replace("\n", " "))


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    serve(sys.argv[1])
