"""lm-eval's local-chat-completions backend against an OpenAI-compatible server we run in-process.

The server reads the grid from the PNG it is sent, as a perfect model would: exact match 1.0 proves the image
crossed the API lossless (PNG, not resized, not JPEG) and the answer came back through the real parse and score path.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

from dataset_builder.grids.render import decode_matrix
from harness_tasks.evaluate import EvalSpec, run_eval
from scoring.budget import max_gen_toks
from scoring.parsing import format_answer

pytestmark = pytest.mark.slow  # builds releases, runs harnesses or trains probes


class _Handler(BaseHTTPRequestHandler):
    payloads: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.payloads.append(body)
        content = body["messages"][-1]["content"]
        image = next(p for p in content if p["type"] == "image_url")["image_url"]["url"]
        text = next(p for p in content if p["type"] == "text")["text"]
        header, b64 = image.split(",", 1)
        with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
            fmt, rgb = im.format, np.asarray(im.convert("RGB"))
        n = int(re.search(r"\b(\d+)x\1 grid", text).group(1))  # a model reads the size from the prompt
        answer = format_answer(decode_matrix(rgb, n)) if fmt == "PNG" and header == "data:image/png;base64" else "?"
        data = json.dumps({"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    _Handler.payloads = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/chat/completions", _Handler.payloads
    httpd.shutdown()


def test_chat_completions_send_lossless_png_and_score(server, small_release, tmp_path):
    url, payloads = server
    res = run_eval(EvalSpec(model="local-chat-completions",
                            model_args=f"model=fake-vlm,base_url={url},num_concurrent=2",
                            tasks=("g2m_n16_c10", "g2m_n05_c3"), data=str(small_release), output=str(tmp_path)))
    for task in ("g2m_n16_c10", "g2m_n05_c3"):
        assert res["results"][task]["exact_match,none"] == 1.0
    assert len(payloads) == 4
    for p in payloads:
        assert p["temperature"] == 0.0 and "max_tokens" in p
        parts = p["messages"][-1]["content"]
        assert [x["type"] for x in parts] == ["image_url", "text"]  # lm-eval puts the image first
        assert parts[1]["text"].startswith("<image>")  # and leaves the placeholder in the text (documented)
    assert {p["max_tokens"] for p in payloads} == {max_gen_toks(5), max_gen_toks(16)}
