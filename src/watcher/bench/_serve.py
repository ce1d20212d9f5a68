"""Entry point of the simulated model server's child process: ``python -m watcher.bench._serve PROVIDER PARAMS``.

Prints the base URL on one line, then serves until its stdin closes (the parent finished or died).
"""

from __future__ import annotations

import json
import signal
import sys

from watcher.bench.policies import SimParams
from watcher.bench.simulated import simulated_server


def main() -> None:
    # Ctrl-C in the terminal reaches the whole process group: the parent handles it and closes
    # our stdin, which is how this server learns to stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    provider, params = sys.argv[1], SimParams(**json.loads(sys.argv[2]))
    server = simulated_server(provider, params)
    try:
        print(server.base_url, flush=True)
        sys.stdin.read()
    finally:
        server.close()


if __name__ == "__main__":
    main()
