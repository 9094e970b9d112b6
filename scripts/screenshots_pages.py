"""Screenshots of the three pages at a glance, built offline: python scripts/screenshots_pages.py [--work DIR]

- the report (``docs/img/report.png``): ``g2m report`` of a seeded g2m-random run on a small local build (the tests'
  ``random_run``: zero_shot and probe_n20_c3 at scale 0.02), with the tiny VLM's sweep as its probes;
- the board (``docs/img/board.png``): the index page (``write_index``) of twelve models and both baselines, each row
  scored from real outputs (a share of cells misread that grows with N, as the tests' crowded board);
- the sweep (``docs/img/sweep.png``): the figure of ``g2m probe sweep`` on the tiny VLM of ``scripts/make_tiny_vlm.py``
  (3 vision blocks, 3 decoder layers) over probe_n20_c3 at scale 0.003, a few training steps.

Pages are opened in Debian's chromium (Playwright, no browser download) at 1,280 x 900 CSS pixels and the first screen
of each is saved. What it measured (page heights, where the first figure and table sit, the board's width, the sweep
PNG's size) is printed as JSON, so a change can be compared with the code before it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 900}


def release(work: Path, configs: str, scale: float) -> Path:
    from dataset_builder.release.build import BuildParams, build

    out = work / f"g2m-{scale:g}"
    if not (out / "manifest.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        build(out, configs, BuildParams(scale=scale, rows_per_shard=60), workers=1, progress=False)
    return out


def random_run(work: Path, data: Path) -> Path:
    from harness_tasks.evaluate import EvalSpec, run_eval

    done = work / "run.txt"
    if done.is_file() and Path(done.read_text()).is_dir():
        return Path(done.read_text())
    res = run_eval(EvalSpec(model="g2m-random", data=str(data), output=str(work / "runs"), progress=False))
    done.write_text(res["output_dir"])
    return Path(res["output_dir"])


def sweep(work: Path, data: Path) -> Path:
    """The tiny VLM swept on probe_n20_c3 by the command line; returns the folder of its sweep.json."""
    found = sorted((work / "sweep").rglob("sweep.json"))
    if found:
        return found[0].parent
    vlm = work / "demo-vlm"
    if not vlm.is_dir():
        subprocess.run([sys.executable, str(REPO / "scripts" / "make_tiny_vlm.py"), str(vlm), "--tower-depth", "3",
                        "--llm-layers", "3"], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "g2m_cli", "probe", "sweep", "--encoder", str(vlm), "--config",
                    "probe_n20_c3", "--data", str(data), "--steps", "6", "--eval-every", "3", "--out",
                    str(work / "sweep"), "--quiet"], check=True, cwd=REPO,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    return sorted((work / "sweep").rglob("sweep.json"))[0].parent


def report(work: Path, run: Path, probes: Path) -> Path:
    from report.report import ReportOptions, build_report

    out = work / "report"
    shutil.rmtree(out, ignore_errors=True)
    build_report(run, out, probes, ReportOptions(overlay_patch=16, compare_other_models=True))
    return out / "index.html"


def board(work: Path) -> Path:
    """Twelve models and the two baselines, every row scored from outputs (model k misreads more cells, more so at a
    larger N), written by the board's own ``write_index``."""
    import numpy as np

    from leaderboard.build import REPORTED
    from leaderboard.index_page import VIEWS, write_index
    from leaderboard.rows import summaries
    from scoring.parsing import format_answer
    from scoring.rescoring.rescore import score_output, truth_matrix, zero_shot_truth

    first = {}
    for t in zero_shot_truth().values():
        first.setdefault((t.grid_size, t.num_colors), t)
    names = ["Qwen/Qwen2.5-VL-72B-Instruct", "OpenGVLab/InternVL3-78B", "google/gemma-3-27b-it",
             "meta-llama/Llama-3.2-90B-Vision-Instruct", "mistralai/Pixtral-Large-Instruct-2411",
             "allenai/Molmo-72B-0924", "llava-hf/llava-onevision-qwen2-72b-ov-hf", "microsoft/Phi-4-multimodal",
             "deepseek-ai/deepseek-vl2", "HuggingFaceTB/SmolVLM2-2.2B-Instruct", "openbmb/MiniCPM-V-2_6",
             "THUDM/glm-4v-9b"]
    rows = []
    for k, name in enumerate(["g2m-oracle", "g2m-random", *names]):
        rng = np.random.default_rng(k)
        scored = []
        for (n, c), t in sorted(first.items()):
            target = truth_matrix(t)
            drift = min(1.0, 0.02 * k + (n / 64) ** 1.5 * (0.2 + 0.05 * k))
            share = 0.0 if k == 0 else (c - 1) / c if k == 1 else drift  # the oracle, the random baseline, models
            wrong = rng.random(target.shape) < share
            answer = np.where(wrong, (target + rng.integers(1, c, target.shape)) % c, target)
            scored.append(score_output(t.id, format_answer(answer), target, c))
        baseline = k < 2
        meta = {"id": name} if baseline else {"id": name, "params": f"{[72, 78, 27, 90, 124, 72][k % 6]}B",
                                                "open_weights": k % 4 != 3, "release_date": f"2025-0{1 + k % 9}-15",
                                                "url": f"https://huggingface.co/{name}"}
        row = {"name": name, "kind": "baseline" if baseline else "submission", "scored": scored,
               "meta": {"model": meta}, "data": "release", "page": f"models/m{k}.html",
               "raw": None if baseline else f"raw/m{k}.json.gz"}
        row["views"] = {v: summaries(row, v) for v in VIEWS}
        rows.append(row)
    out = work / "board"
    out.mkdir(parents=True, exist_ok=True)
    write_index(out, rows, json.loads(REPORTED.read_text()), [])
    return out / "index.html"


MEASURE = """() => {
  const top = e => e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : null;
  const board = document.querySelector('#board');
  const last = board ? board.querySelector('thead th:last-child').getBoundingClientRect() : null;
  const folded = Array.from(document.querySelectorAll('details')).filter(d => d.querySelector('table') && !d.open);
  return {page_height: document.documentElement.scrollHeight, page_width: document.documentElement.scrollWidth,
          first_figure_y: top(document.querySelector('img, figure')),
          heatmaps_y: top(document.querySelector('img[src="heatmaps.png"]')),
          first_table_y: top(document.querySelector('table')),
          tables: document.querySelectorAll('table').length, tables_folded: folded.length,
          board_width: board ? Math.round(board.getBoundingClientRect().width) : null,
          board_last_column_right: last ? Math.round(last.right) : null};
}"""


def shoot(pages: dict[str, Path], out: Path) -> dict:
    from playwright.sync_api import sync_playwright

    found = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"])
        for name, path in pages.items():
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(path.as_uri())
            page.wait_for_load_state("networkidle")
            found[name] = page.evaluate(MEASURE)
            page.screenshot(path=str(out / f"{name}.png"))
            page.close()
        browser.close()
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", help="folder for the builds (kept, reused by the next run); default: a temporary one")
    ap.add_argument("--out", default=str(REPO / "docs" / "img"), help="where the PNGs go (default docs/img)")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="g2m-shots-"))
    work.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    swept = sweep(work, release(work, "probe_n20_c3", 0.003))
    index = report(work, random_run(work, release(work, "zero_shot,probe_n20_c3", 0.02)), work / "sweep")
    found = shoot({"report": index, "board": board(work)}, out)
    shutil.copyfile(swept / "sweep.png", out / "sweep.png")
    from PIL import Image

    with Image.open(out / "sweep.png") as im:
        found["sweep"] = {"png_size": list(im.size)}
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
