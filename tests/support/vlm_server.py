"""A real OpenAI-compatible chat server on the loopback interface that reads the grid from the PNG it receives.

It answers like a perfect model: the grid size from the prompt, each cell from the pixels of the image it was sent,
so exact match 1.0 proves the image crossed the API lossless. It can be told to misbehave, per grid size:

- ``fail``: {N: k}: answer HTTP ``fail_status`` (500) to the first k attempts of each request of size N (k >= 99:
  always), with a ``Retry-After: retry_after`` header when that is set;
- ``abort``: {N: k}: answer 200 to the first k attempts with half the rows and ``finish_reason: "abort"``, as vLLM
  does for an answer it gave up on;
- ``stall``: [N, ...]: wait ``stall_seconds`` before answering (a client timeout), or until the test calls
  ``release()``, whichever comes first (a request held open while the test does something else);
- ``truncate``: [N, ...]: answer only the first half of the rows, as a well-formed list, and say
  ``finish_reason: "length"`` (so only the finish reason tells that the answer was cut);
- ``reasoning``: a number of characters of reasoning, returned in ``reasoning_content`` before the answer, holding a
  decoy matrix of the right shape that a parser must never read; reasoning counts against ``max_tokens`` at one
  token per character, as a real server counts it;
- ``sentinel``: [N, ...]: answer 200 with the text another harness puts in place of a failed request;
- ``body``: {N: kind}: answer 200 with a body that is not a well-formed completion (``BODIES``: choices of strings,
  a string message, no message, a number for content, no choices, not JSON) or, for ``null_content``, a
  well-formed completion whose content is ``null``; ``body_attempts`` (default: always) limits it to the first k
  attempts of each request;
- ``huge``: {N: chars}: the right answer followed by that many characters of chatter (an answer far over any cap);
- ``allowed_local_media_path``: a folder whose files may be sent as ``file://`` URLs, as vLLM's
  ``--allowed-local-media-path`` allows (VLMEvalKit's ``--local-media`` sends its dumped PNGs so); any other file is
  refused with HTTP 400, as vLLM refuses it.

It says what it is as vLLM does: ``GET /v1/models`` lists the model with its ``root`` (config ``root``, default the
model name) and ``max_model_len`` (config ``max_model_len``, default 32768), and ``GET /version`` answers
``{"version": V}`` when the config names a ``version`` (404 otherwise, as a server that reports none).

``TransformersVLM`` is the same server over a real tiny transformers model (``tiny_vlms``): greedy answers from the
prompt and image it receives, with ``finish_reason`` "length" when it generated ``max_tokens`` tokens without an
end-of-sequence token, as vLLM decides it.

It counts what it receives (``GET /stats``), so tests can check what was retried. Run as a script it serves until
killed: ``python tests/support/vlm_server.py --port P --model NAME [--config JSON]`` (the stand-in ``vllm`` uses this).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import re
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dataset_builder.grids.render import decode_matrix  # noqa: E402
from scoring.parsing import format_answer  # noqa: E402

SENTINEL = "[... REQUEST_FAILED after 3 retries: 1 2 3 4 5 6 7 8 9] ..."
#: Bodies a broken server or proxy may send with HTTP 200, each not a chat completion.
BODIES = {
    "choices_of_strings": {"choices": ["x"]},
    "message_is_a_string": {"choices": [{"index": 0, "message": "[[0]]", "finish_reason": "stop"}]},
    "no_message": {"choices": [{"index": 0, "finish_reason": "stop"}]},
    "content_is_a_number": {"choices": [{"index": 0, "message": {"role": "assistant", "content": 7}}]},
    "no_choices": {"id": "x", "object": "chat.completion"},
    "empty_choices": {"choices": []},
    "not_json": "<html>502 Bad Gateway</html>",
}
_SIZE = re.compile(r"\b(\d+)x\1 grid")


class FakeVLM:
    """The server's state: its behaviour (mutable between runs) and what it has received."""

    def __init__(self, model: str = "fake-vlm", **config) -> None:
        self.model = model
        self.config = config
        self.received: Counter = Counter()  # grid size -> requests received (every attempt)
        self.attempts: Counter = Counter()  # request identity -> attempts
        self.payloads: list[dict] = []
        self.lock = threading.Lock()
        self.released = threading.Event()  # ends every stall at once
        self.one_at_a_time = threading.Lock()  # config "serial_seconds": one answer at a time, each taking that long
        self.in_flight, self.most_in_flight = 0, 0  # requests inside the server at once (queued or answered)

    def release(self) -> None:
        """End the stalls under way and every later one."""
        self.released.set()

    def answer(self, body: dict) -> tuple[int, dict]:
        content = body["messages"][-1]["content"]
        image = next(p for p in content if p["type"] == "image_url")["image_url"]["url"]
        text = next(p for p in content if p["type"] == "text")["text"]
        n = int(_SIZE.search(text).group(1))
        key = hashlib.sha256((image + text).encode()).hexdigest()
        with self.lock:
            self.received[n] += 1
            self.attempts[key] += 1
            attempt = self.attempts[key]
            self.payloads.append({k: v for k, v in body.items() if k != "messages"} | {"grid_size": n, "text": text})
        fail = {int(k): v for k, v in self.config.get("fail", {}).items()}
        if attempt <= fail.get(n, 0):
            headers = {"Retry-After": str(self.config["retry_after"])} if "retry_after" in self.config else {}
            return int(self.config.get("fail_status", 500)), {"error": {"message": "simulated server error"}}, headers
        kind = {int(k): v for k, v in self.config.get("body", {}).items()}.get(n)
        if kind in BODIES and attempt <= int(self.config.get("body_attempts", 10**9)):
            return 200, BODIES[kind], {}
        if n in self.config.get("stall", ()):
            self.released.wait(float(self.config.get("stall_seconds", 30)))
        if image.startswith("file://"):
            allowed = self.config.get("allowed_local_media_path")
            path = Path(image[len("file://"):]).resolve()
            if not allowed or not path.is_relative_to(Path(allowed).resolve()):
                return 400, {"error": {"message": f"{path} is not under --allowed-local-media-path"}}, {}
            header, raw = ("data:image/png;base64" if path.suffix == ".png" else "file"), path.read_bytes()
        else:
            header, b64 = image.split(",", 1)
            raw = base64.b64decode(b64)
        with Image.open(io.BytesIO(raw)) as im:
            fmt, rgb = im.format, np.asarray(im.convert("RGB"))
        answer = format_answer(decode_matrix(rgb, n)) if fmt == "PNG" and header == "data:image/png;base64" else "?"
        if n in self.config.get("sentinel", ()):
            answer = SENTINEL
        finish, reasoning = "stop", None
        budget = int(body.get("max_tokens") or 10**9)
        if self.config.get("reasoning"):
            decoy = format_answer([[9] * n for _ in range(n)])
            reasoning = ("Let me think. A first guess: " + decoy + " ").ljust(int(self.config["reasoning"]), ".")
            if len(reasoning) >= budget:
                reasoning, answer, finish = reasoning[:budget], None, "length"
            else:
                budget -= len(reasoning)
        aborted = attempt <= {int(k): v for k, v in self.config.get("abort", {}).items()}.get(n, 0)
        if answer is not None and (aborted or n in self.config.get("truncate", ())):  # the first rows, closed: only the
            answer = format_answer(decode_matrix(rgb, n)[: n // 2])  # only the finish reason says "cut"
            finish = "abort" if aborted else "length"
        elif answer is not None and len(answer) > budget:
            answer, finish = answer[:budget], "length"
        extra = {int(k): v for k, v in self.config.get("huge", {}).items()}.get(n)
        if extra and answer is not None:
            answer += "\n" + "That is the grid. " * (int(extra) // 18 + 1)
        if kind == "null_content":
            answer = None
        message = {"role": "assistant", "content": answer}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        return 200, {"id": "cmpl-" + key[:12], "object": "chat.completion", "model": self.model,
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                     "usage": {"prompt_tokens": 300, "completion_tokens": len(answer or ""),
                               "total_tokens": 300 + len(answer or "")}}, {}

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: dict | str, headers: dict | None = None) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def do_GET(self):
                if self.path == "/health":
                    self._send(200, {})
                elif self.path == "/v1/models":
                    entry = {"id": server.model, "object": "model", "root": server.config.get("root", server.model),
                             "max_model_len": server.config.get("max_model_len", 32768)}
                    self._send(200, {"object": "list", "data": [entry]})
                elif self.path == "/version" and "version" in server.config:
                    self._send(200, {"version": server.config["version"]})
                elif self.path == "/stats":
                    self._send(200, {"received": {str(k): v for k, v in server.received.items()}})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server.lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    if "serial_seconds" in server.config:  # a server that answers one request at a time
                        with server.one_at_a_time:
                            time.sleep(float(server.config["serial_seconds"]))
                            reply = server.answer(body)
                    else:
                        reply = server.answer(body)
                finally:
                    with server.lock:
                        server.in_flight -= 1
                self._send(*reply)

        return Handler


class TransformersVLM(FakeVLM):
    """A real transformers VLM (a ``tiny_vlms`` folder) behind the same API: the chat template applied to the
    messages it receives (image parts in place), greedy generation of at most ``max_tokens`` tokens."""

    def __init__(self, path, model: str | None = None, **config) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        super().__init__(model or str(path), **{"root": str(path), **config})
        try:
            self.processor = AutoProcessor.from_pretrained(path)
        except (ImportError, ValueError):  # Qwen's and InternVL's processors bring a video processor that needs
            # torchvision (InternVL's says so with a ValueError); images need none
            kind = json.loads((Path(path) / "config.json").read_text())["model_type"]
            self.processor = (InternVLImagesOnly if kind == "internvl" else QwenImagesOnly)(path)
        self.vlm = AutoModelForImageTextToText.from_pretrained(path, dtype=torch.float32).eval()
        eos = self.vlm.generation_config.eos_token_id
        self.eos = set(eos if isinstance(eos, list) else [eos]) | {self.processor.tokenizer.eos_token_id}

    def answer(self, body: dict) -> tuple[int, dict, dict]:
        import torch

        messages, images = [], []
        for message in body["messages"]:
            content = message["content"]
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else []
            for part in content if isinstance(content, list) else []:
                if part["type"] == "image_url":
                    raw = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                    images.append(Image.open(io.BytesIO(raw)).convert("RGB"))
                    parts.append({"type": "image"})
                else:
                    parts.append({"type": "text", "text": part["text"]})
            messages.append({"role": message["role"], "content": parts})
        prompt = self.processor.apply_chat_template(messages, add_generation_prompt=True)
        inputs = self.processor(images=images or None, text=[prompt], return_tensors="pt")
        budget = int(body.get("max_tokens") or 16)
        with self.lock, torch.no_grad():
            self.payloads.append({k: v for k, v in body.items() if k != "messages"})
            out = self.vlm.generate(**inputs, max_new_tokens=budget, do_sample=False)
        ids = out[0, inputs["input_ids"].shape[1]:].tolist()
        finish = "stop" if any(t in self.eos for t in ids) or len(ids) < budget else "length"
        text = self.processor.decode(ids, skip_special_tokens=True)
        return 200, {"id": "cmpl-real", "object": "chat.completion", "model": self.model,
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                  "finish_reason": finish}],
                     "usage": {"prompt_tokens": int(inputs["input_ids"].shape[1]), "completion_tokens": len(ids),
                               "total_tokens": int(inputs["input_ids"].shape[1]) + len(ids)}}, {}


class QwenImagesOnly:
    """A Qwen-VL processor for images alone (the parts ``AutoProcessor`` would combine, without the video processor
    that needs torchvision): the tokenizer's chat template, the image processor, and each ``<|image_pad|>`` expanded
    to the image's merged token count and marked as image tokens (``mm_token_type_ids``), as ``Qwen3VLProcessor``
    does."""

    def __init__(self, path) -> None:
        from transformers import AutoImageProcessor, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.images = AutoImageProcessor.from_pretrained(path)

    def apply_chat_template(self, messages, add_generation_prompt=True):
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)

    def __call__(self, images=None, text=(), return_tensors="pt"):
        out = dict(self.images(images=images, return_tensors=return_tensors)) if images else {}
        merge = self.images.merge_size**2
        texts = list(text)
        for thw in out.get("image_grid_thw", []):
            texts = [t.replace("<|image_pad|>", "<|placeholder|>" * (int(thw.prod()) // merge), 1) for t in texts]
        texts = [t.replace("<|placeholder|>", "<|image_pad|>") for t in texts]
        ids = self.tokenizer(texts, return_tensors=return_tensors, add_special_tokens=False)
        # which tokens are the image's: Qwen-VL places them on its 3-D rotary grid (without it, as text positions)
        kinds = (ids["input_ids"] == self.tokenizer.convert_tokens_to_ids("<|image_pad|>")).int()
        return {**out, **ids, "mm_token_type_ids": kinds}

    def decode(self, ids, skip_special_tokens=True):
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)


class InternVLImagesOnly(QwenImagesOnly):
    """An InternVL processor for images alone, written from its checkpoint's files: each ``<IMG_CONTEXT>`` of the
    prompt becomes ``<img>``, ``image_seq_length`` (processor_config.json) context tokens per tile of the image,
    ``</img>``."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.per_tile = int(json.loads((Path(path) / "processor_config.json").read_text())["image_seq_length"])

    def __call__(self, images=None, text=(), return_tensors="pt"):
        out = dict(self.images(images=images, return_tensors=return_tensors)) if images else {}
        texts = list(text)
        for tiles in out.pop("num_patches", []):
            texts = [t.replace("<IMG_CONTEXT>", "<img>" + "<PLACEHOLDER>" * (self.per_tile * int(tiles)) + "</img>", 1)
                     for t in texts]
        texts = [t.replace("<PLACEHOLDER>", "<IMG_CONTEXT>") for t in texts]
        return {**out, **self.tokenizer(texts, return_tensors=return_tensors, add_special_tokens=False)}


def serve(state: FakeVLM, port: int = 0) -> ThreadingHTTPServer:
    """Serve ``state`` in a background thread; returns the HTTP server (``.shutdown()`` it)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", port), state.handler())
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def start(model: str = "fake-vlm", port: int = 0, **config) -> tuple[ThreadingHTTPServer, FakeVLM]:
    """Serve in a background thread; returns the HTTP server (``.shutdown()`` it) and the state."""
    state = FakeVLM(model, **config)
    return serve(state, port), state


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--model", default="fake-vlm")
    ap.add_argument("--config", default="{}")
    args = ap.parse_args(argv)
    state = FakeVLM(args.model, **json.loads(args.config))
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), state.handler())
    httpd.daemon_threads = True
    print(f"fake vLLM serving {args.model} on port {args.port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
