"""Memory of `serve` while camera viewers come and go.

Starts `vegas-table serve --source demo` on a fresh data dir, then runs rounds of N MJPEG
viewers that read the camera stream for a while and leave, and prints the server's resident
memory (VmRSS) when idle, while watched and after each round. What matters is the line
"after": it must level off, not climb by the same amount every round.

    .venv/bin/python bench/viewers.py [--rounds 3] [--viewers 4] [--seconds 25]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import free_port, serve_process  # noqa: E402


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no VmRSS")


def watch(port: int, stop: threading.Event) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/camera/stream", timeout=10) as r:
        while not stop.is_set():
            r.read(65536)


def measure(rounds: int, viewers: int, seconds: float, port: int | None = None) -> dict:
    port = port or free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = serve_process(["--source", "demo", "--data-dir", data, "--no-mdns"], port,
                             ready="/api/health")
        try:
            time.sleep(seconds)  # the demo's first frames and game settle in
            out: dict = {"idle": rss_mb(proc.pid), "watched": [], "after": []}
            for _ in range(rounds):
                stop = threading.Event()
                threads = [threading.Thread(target=watch, args=(port, stop))
                           for _ in range(viewers)]
                for t in threads:
                    t.start()
                time.sleep(seconds)
                out["watched"].append(rss_mb(proc.pid))
                stop.set()
                for t in threads:
                    t.join()
                time.sleep(min(8.0, seconds))
                out["after"].append(rss_mb(proc.pid))
            return out
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--viewers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=25.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.rounds, args.viewers, args.seconds)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"idle {out['idle']} MB")
    for i, (w, a) in enumerate(zip(out["watched"], out["after"], strict=True), 1):
        print(f"round {i}: {args.viewers} viewers {w} MB, after they left {a} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
