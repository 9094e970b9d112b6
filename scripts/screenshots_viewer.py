"""Screenshots of the sample viewer for the docs, from a tiny seeded run of g2m-random (offline, no model):
``docs/img/viewer_3x3.png`` (a 3 x 3 sample selected, the patch grid drawn) and ``docs/img/viewer_64x64_wrong.png``
(a 64 x 64 wrong answer selected, as the viewer opens it), both 1280 x 900, drawn by Debian's chromium through
Playwright. It also prints how much of the 64 x 64 grid the wrong-cell marking paints (pixels and cells covered).

    .venv/bin/python scripts/screenshots_viewer.py [--out docs/img] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SIZE = {"width": 1280, "height": 900}
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

#: What the wrong-cell marking covers on the grid canvas: the fraction of its pixels the marking changed, and the
#: cells more than half of whose pixels it changed (drawn once with the marking and once without).
COVERAGE_JS = """n => {
    const cv = document.querySelector('canvas#grid'), ctx = cv.getContext('2d');
    const box = document.querySelector('#t-wrong');
    const read = () => ctx.getImageData(0, 0, cv.width, cv.height).data;
    const on = box.checked;
    box.checked = true; box.dispatchEvent(new Event('change')); const a = read();
    box.checked = false; box.dispatchEvent(new Event('change')); const b = read();
    box.checked = on; box.dispatchEvent(new Event('change'));
    const w = cv.width;
    let changed = 0, cells = 0;
    const per = new Float64Array(n * n), size = new Float64Array(n * n);
    for (let y = 0; y < w; y++) {
        for (let x = 0; x < w; x++) {
            const k = 4 * (y * w + x), d = a[k] !== b[k] || a[k + 1] !== b[k + 1] || a[k + 2] !== b[k + 2];
            const c = Math.min(n - 1, Math.floor(x * n / w)), r = Math.min(n - 1, Math.floor(y * n / w));
            size[r * n + c]++;
            if (d) { changed++; per[r * n + c]++; }
        }
    }
    for (let j = 0; j < n * n; j++) { if (per[j] > size[j] / 2) { cells++; } }
    return {pixels: changed / (w * w), cells_covered: cells};
}"""


def build(folder: Path) -> Path:
    """A small release (zero_shot, 2 grids per (N, C)) and a g2m-random run of it (90 samples); the run's folder."""
    from dataset_builder.release.build import BuildParams
    from dataset_builder.release.build import build as build_release
    from harness_tasks.evaluate import EvalSpec, run_eval

    build_release(folder / "g2m", "zero_shot", BuildParams(scale=0.02, rows_per_shard=60), workers=2, progress=False)
    spec = EvalSpec(model="g2m-random", data=str(folder / "g2m"), output=str(folder / "run"))
    return Path(run_eval(spec)["output_dir"])


def report(run: Path) -> Path:
    """The run's report, written again (the viewer as the code has it now); the viewer's page."""
    from report.report import build_report

    return run / "report" / build_report(run, run / "report").document["viewer"]


def rows(page: Path) -> list[list]:
    html = page.read_text()
    return json.loads(re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', html,
                                re.S).group(1))["rows"]


def shoot(page_path: Path, out: Path) -> dict:
    from playwright.sync_api import sync_playwright

    index = rows(page_path)
    small = next(r for r in index if r[2] == 3 and r[4] == "wrong cells")
    big = min((r for r in index if r[2] == 64 and r[4] == "wrong cells"), key=lambda r: r[6])
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport=SIZE)
        page.goto(page_path.as_uri() + "#" + small[0])
        page.wait_for_selector(f"[data-drawn='{small[0]}']")
        page.check("#t-patch")
        page.screenshot(path=str(out / "viewer_3x3.png"))
        page.close()
        page = browser.new_page(viewport=SIZE)
        page.goto(page_path.as_uri() + "#" + big[0])
        page.wait_for_selector(f"[data-drawn='{big[0]}']")
        page.screenshot(path=str(out / "viewer_64x64_wrong.png"))
        coverage = page.evaluate(COVERAGE_JS, 64)
        wrong = page.evaluate("document.querySelector('#grid-note').textContent")
        browser.close()
    return {"3x3": small[0], "64x64": big[0], "note": wrong, **coverage}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--keep", type=Path, help="build the run in this folder (kept, and its run reused the next time)")
    a = ap.parse_args()
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
        found = sorted(p.parents[2] for p in a.keep.glob("run/**/report/viewer/index.html"))
        print(json.dumps(shoot(report(found[0] if found else build(a.keep)), a.out), indent=1))
        return
    with tempfile.TemporaryDirectory(prefix="g2m-viewer-shots-") as tmp:
        print(json.dumps(shoot(report(build(Path(tmp))), a.out), indent=1))

if __name__ == "__main__":
    main()
