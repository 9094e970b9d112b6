"""``g2m eval --base-url`` end to end against an instant server: requests per second and peak memory, one run.

    python benchmarks/bench_client.py [--data DIR] [--concurrency 64 256]

The server (a child process on the loopback interface, aiohttp) answers every chat request at once and correctly,
from the request's image alone and without reading a pixel: it looks up the sha256 of the PNG bytes it receives in a
table built from the release's own image bytes. So the run measures the client: ``g2m eval`` (lm-eval, ``g2m-chat``,
the resumable runner, scoring and writing the results) on the full zero_shot config, 4,500 requests, in a child
process as a user runs it, start-up included, without the resume cache. Peak memory is the kernel's figure for that
child alone (``wait4``). Exact match must be 1.000 on every task: any image that did not arrive byte for byte would
miss its answer.

Targets (issue: performance): at least 200 requests/s on 2 cores and under 1 GB peak, at concurrency 64 and 256.
Builds the zero_shot config first unless --data is given (the build is not counted).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIN_RATE, MAX_GB = 200.0, 1.0
MODEL = "bench-instant"


def answer_table(data: str) -> dict[str, str]:
    """sha256 of each zero_shot PNG -> the exact answer for its grid, from the stored rows (no pixel decoded)."""
    import pyarrow.parquet as pq

    sys.path.insert(0, str(REPO))
    from scoring.parsing import format_answer

    table = {}
    for path in sorted((Path(data) / "zero_shot").glob("*.parquet")):
        t = pq.read_table(path, columns=["image", "matrix"])
        for image, matrix in zip(t.column("image").to_pylist(), t.column("matrix").to_pylist(), strict=True):
            table[hashlib.sha256(image["bytes"]).hexdigest()] = format_answer(matrix)
    return table


def serve(port: int, data: str) -> None:
    """The instant server (run in a child process): /v1/models and /v1/chat/completions."""
    from aiohttp import web

    table = answer_table(data)
    served = {"n": 0}

    async def models(_request):
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def chat(request):
        body = await request.json()
        answer = "?"
        for message in body.get("messages", []):
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                url = (part.get("image_url") or {}).get("url", "") if part.get("type") == "image_url" else ""
                if url.startswith("data:image/png;base64,"):
                    answer = table.get(hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest(), "?")
        served["n"] += 1
        return web.json_response({"id": f"cmpl-{served['n']}", "object": "chat.completion", "model": MODEL,
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                               "finish_reason": "stop"}]})

    app = web.Application(client_max_size=64 << 20)
    app.add_routes([web.get("/v1/models", models), web.post("/v1/chat/completions", chat)])
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port: int, seconds: float = 120) -> None:
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit("the benchmark server did not start")


def run(data: str, concurrency: int, port: int, out: Path, env: dict) -> tuple[int, float, float, float]:
    """(requests, seconds, peak GB, worst exact match over the tasks) of one ``g2m eval --base-url`` run."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "g2m_cli", "eval", "--base-url", f"http://127.0.0.1:{port}/v1",
                             "--data", data, "--concurrency", str(concurrency), "--out", str(out), "--no-resume",
                             "--quiet"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"g2m eval failed:\n{proc.stderr.read().decode(errors='replace')[-3000:]}")
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    exact = min(v["exact_match,none"] for k, v in results["results"].items() if "exact_match,none" in v)
    requests = sum(n["effective"] for n in results["n-samples"].values())
    return requests, seconds, usage.ru_maxrss * 1024 / 1e9, exact


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)  # the server's own process
    args = ap.parse_args()
    if args.serve is not None:
        serve(args.serve, args.data)
        return
    tmp = Path(tempfile.mkdtemp(prefix="g2m-bench-client-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp / "hf"),
           "OPENAI_API_KEY": "unused"}
    data = args.data
    if data is None:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "g2m_cli", "build", "--out", str(tmp / "data"), "--configs", "zero_shot",
                        "--quiet"], cwd=REPO, env=env, check=True, capture_output=True)
        data = str(tmp / "data")
        print(f"built zero_shot (4,500 rows) in {time.perf_counter() - t:.1f} s (not counted)")
    port = _free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--data", data], cwd=REPO, env=env)
    try:
        _wait_for(port)
        print(f"instant server on 127.0.0.1:{port} (answers from the sha256 of the PNG it receives)")
        for c in args.concurrency:
            requests, seconds, gb, exact = run(data, c, port, tmp / f"runs-{c}", env)
            rate = requests / seconds
            print(f"concurrency {c:4d}: {requests:,} requests in {seconds:5.1f} s = {rate:5.0f} requests/s "
                  f"(target >= {MIN_RATE:.0f}: {'met' if rate >= MIN_RATE else 'MISSED'}), peak {gb:.2f} GB "
                  f"(target < {MAX_GB:.0f}: {'met' if gb < MAX_GB else 'MISSED'}), worst task exact match {exact:.3f}")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
