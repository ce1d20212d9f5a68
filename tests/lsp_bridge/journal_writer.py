"""Write events to a journal from a separate process, as a kernel or an agent run would.

Usage: ``python journal_writer.py JOURNAL EVENTS_JSON`` (or ``@FILE`` holding it) where EVENTS_JSON is a list of
``{"kind", "session", "watcher", "payload"}`` objects; ``{"kind": "raw", "payload": "..."}``
inserts a row whose payload is the given text verbatim (a corrupt row).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

from watcher.runtime.events import event_from_payload
from watcher.runtime.journal import Journal


def main(path: str, spec: str) -> None:
    if spec.startswith("@"):  # too long for a command line
        with open(spec[1:], encoding="utf-8") as given:
            spec = given.read()
    with Journal(path) as journal:
        for item in json.loads(spec):
            if item["kind"] == "raw":
                journal.flush()
                conn = sqlite3.connect(path, timeout=5)
                with conn:
                    conn.execute(
                        "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (?, ?, ?, ?, ?)",
                        (
                            time.time(),
                            item.get("session", "s"),
                            item.get("watcher", ""),
                            item.get("as", "interjection"),
                            item["payload"],
                        ),
                    )
                conn.close()
                continue
            event = event_from_payload(
                item["kind"], item["payload"], session=item["session"], watcher=item.get("watcher", ""), ts=time.time()
            )
            journal.append(event)
        journal.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
