"""The sample viewer ``g2m report`` writes beside its pages (``viewer/index.html``): every sample of the run, one at
a time, the grid beside the answer drawn as a grid.

A researcher's next question after the tables is about one answer: did it skip a row, shift a column, stop early,
write prose? The viewer is one static folder that opens from disk with no server and no network:

- ``index.html`` (``templates/viewer.html.j2``, autoescaped; its script and style inlined) holds the summary of every
  sample (id, task, N, C, outcome, parse strategy, cell accuracy, error shape, finish reason): small enough for a
  4,500-sample run to open at once, and all that filtering and sorting need;
- ``chunks/NNNN.js`` hold the details, ``CHUNK`` samples a file (the true grid and the parsed answer as rows of
  digits, the raw text, the part the parser read, seed and budget; the prompt, one per (N, C), is in the index),
  loaded only when one of their samples is shown: a 64x64 answer is 4,096 cells and a run's texts run to megabytes.

The true grid is drawn by the page from its cells and the release's cell bounds (``render.cell_layout``), the same
rule that drew the PNG the model saw, so no image is copied; the answer is drawn cell for cell in the same layout
and palette, with thin gridlines. Wrong cells are marked on the grid (a frame up to N = 16, a small corner past it).
The address holds the view: ``?n=12&outcome=wrong+cells&q=...&sort=...#<id>`` (the filters, the sample shown).
Everything a sample holds is data to the page: written as JSON, shown through text nodes.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np

from dataset_builder.grids.prompt import build_prompt
from dataset_builder.grids.render import cell_layout
from dataset_builder.grids.spec import DEFAULT_RESOLUTION, OUTLINE_RGB, PALETTE
from drawing.html import render
from g2m_base.files import atomic_write_text, ensure_dir
from scoring.catalog import budget, task_name
from scoring.paper import STRATEGY_NAMES as PAPER_STRATEGY_NAMES
from scoring.paper import parse_paper
from scoring.parsing import STRATEGY_NAMES, parse_matrix
from scoring.rescoring.rescore import zero_shot_truth
from viewer.shapes import SHAPE_NAMES, error_shape
from viewer.spans import parsed_span

VIEWER_DIR = "viewer"
CHUNK = 50
CHUNK_LEVEL = 1  # zlib's: 6 saves a tenth more of the size for six times the time
#: The most of one answer's text a chunk keeps (a hostile or runaway answer may hold 262,144 characters).
MAX_TEXT_SHOWN = 50_000
OUTCOMES = ("exact", "wrong cells", "parse failure", "truncated", "request failed")
TEMPLATES = Path(__file__).with_name("templates")


def outcome(score) -> str:
    """One word for what happened to an answer, the most telling first: no answer, nothing read, cut off, right."""
    if score.request_failed:
        return "request failed"
    if score.parse_failed:
        return "parse failure"
    if score.truncated:
        return "truncated"
    return "exact" if score.exact_match == 1.0 else "wrong cells"


def _rows(matrix, num_colors: int) -> list[str]:
    """A matrix (ragged allowed) as rows of digits, ``?`` for a value outside the palette."""
    try:
        cells = np.asarray(matrix, dtype=np.int64)
    except (ValueError, OverflowError):  # ragged, or a value past int64: cell by cell
        cells = None
    if cells is None or cells.ndim != 2:
        return ["".join(str(v) if 0 <= v < num_colors else "?" for v in row) for row in matrix]
    chars = np.where((cells >= 0) & (cells < num_colors), cells + ord("0"), ord("?")).astype(np.uint8)
    text, width = chars.tobytes().decode("ascii"), chars.shape[1]  # one string, cut into rows
    return [text[i:i + width] for i in range(0, len(text), width)] if width else [""] * len(chars)


def _parsed(text: str, scored, protocol: str):
    """The whole matrix the parser read (the score keeps only its N x N window): read again only when it was not
    N x N (else the window is all of it; an exact answer's is its target, the array)."""
    if scored.score.matrix is None:
        return None
    if scored.score.exact_match == 1.0:
        return scored.target
    if not scored.score.shape_mismatch:
        return scored.score.matrix
    n = scored.grid_size
    return parse_matrix(text, n).matrix if protocol == "g2m" else parse_paper(text, n)[0]


def details(sample, scored, protocol: str, budgets: dict[str, int]) -> tuple[list, dict]:
    """(summary row, detail) of one sample."""
    n, c = scored.grid_size, scored.num_colors
    task = task_name(n, c, "g2m" if protocol == "g2m" else "paper")
    truth = zero_shot_truth().get(scored.id)
    text = sample.output if isinstance(sample.output, str) else ""
    matrix = _parsed(text, scored, protocol)
    shape = error_shape(matrix, scored.target) if matrix is not None and scored.score.exact_match != 1.0 else None
    span = parsed_span(text, matrix) if matrix is not None else None
    shown = text[:MAX_TEXT_SHOWN]
    row = [scored.id, task, n, c, outcome(scored.score), scored.score.strategy, round(scored.score.cell_accuracy, 6),
           shape, sample.finish_reason]
    exact = scored.score.exact_match == 1.0
    detail = {"id": scored.id, "seed": truth.seed if truth else None, "text": shown,  # the prompt: in the index
              "span": list(span) if span and span[1] <= len(shown) else None, "target": _rows(scored.target, c),
              "parsed": "=" if exact else None if matrix is None else _rows(matrix, c),  # "=": the target's rows
              "finish": sample.finish_reason, "budget": budgets.get(task) or budget(n, protocol),
              "reason": scored.score.reason, "chars": len(text), "text_cut": len(text) - len(shown)}
    return row, detail


def write_viewer(out: Path, run, scored: list, protocol: str, title: str,
                 back: tuple[str, str] = ("../index.html", "report")) -> str:
    """The viewer of ``scored`` (the run's samples of ``protocol``, as the report scored them) in ``out/viewer``,
    with a link back (its address from the viewer, and what it is called); returns the page's path relative to
    ``out``."""
    folder = ensure_dir(out / VIEWER_DIR)
    chunks = ensure_dir(folder / "chunks")
    for old in chunks.glob("*.js"):  # a rerun with fewer samples leaves no chunk of the last one behind
        old.unlink()
    texts = {s.id: s for s in run.samples if s.protocol == protocol}
    configs = run.results.get("configs") or {}
    budgets = {t: (c.get("generation_kwargs") or {}).get("max_gen_toks") for t, c in configs.items()
               if isinstance(c, dict)}
    rows, batch = [], []
    for r in scored:
        row, detail = details(texts[r.id], r, protocol, budgets)
        rows.append(row)
        batch.append(detail)
        if len(batch) == CHUNK:
            _chunk(chunks, len(rows) // CHUNK - 1, batch)
            batch = []
    if batch:
        _chunk(chunks, (len(rows) - 1) // CHUNK, batch)
    sizes = sorted({r[2] for r in rows})
    index = {"model": run.model, "protocol": protocol, "palette": [_hex(p.rgb) for p in PALETTE],
             "palette_names": [p.name for p in PALETTE],
             "bounds": {str(n): list(cell_layout(n).bounds) for n in sizes}, "image_size": DEFAULT_RESOLUTION,
             "outline": {str(n): cell_layout(n).width for n in sizes}, "outline_colour": _hex(OUTLINE_RGB),
             "patch": 16, "chunk_size": CHUNK, "outcomes": list(OUTCOMES),
             "strategies": list(STRATEGY_NAMES if protocol == "g2m" else PAPER_STRATEGY_NAMES),
             "shapes": list(SHAPE_NAMES), "rows": rows,
             "prompts": {f"{n}x{c}": build_prompt(n, c) for n, c in sorted({(r[2], r[3]) for r in rows})}}
    html = render(TEMPLATES, "viewer.html.j2", title=f"{title}: every sample", model=run.model, back=back,
                  subtitle=f"{protocol} protocol, {len(rows):,} samples", index=index)
    atomic_write_text(folder / "index.html", html)
    return f"{VIEWER_DIR}/index.html"


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{v:02x}" for v in rgb)


def _chunk(folder: Path, k: int, items: list[dict]) -> None:
    """The chunk's JSON, deflated (level 1: the texts and rows of digits shrink about 3.5 times for a tenth of a
    second a full run) and written as base64 in a call the page inflates (``DecompressionStream``, from file:// too):
    a report or a board of many submissions is a third of the size on disk and on a Space. ASCII JSON: a line or
    paragraph separator in an answer stays an escape whatever reads it."""
    data = zlib.compress(json.dumps(items, ensure_ascii=True).encode("ascii"), CHUNK_LEVEL)
    atomic_write_text(folder / f"{k:04d}.js", f'g2mChunkZ({k}, "{base64.b64encode(data).decode("ascii")}");\n')
