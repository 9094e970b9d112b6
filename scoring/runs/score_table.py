"""The score table ``g2m eval`` prints: per protocol, one row per grid size and a column pair per palette size, then
each complete tag's scores."""

from __future__ import annotations

from scoring.score import METRICS as SCORES
from scoring.score import PROTOCOL_TITLES


def _value(entry: dict, metric: str) -> float | None:
    v = entry.get(f"{metric},none")
    return v if isinstance(v, (int, float)) else None


def _cells(results: dict) -> dict[str, dict[tuple[int, int], dict]]:
    from scoring.catalog import task_info

    out: dict[str, dict[tuple[int, int], dict]] = {}
    for task, entry in results.get("results", {}).items():
        info = task_info(task)
        if info:
            n, c, protocol = info
            out.setdefault(protocol, {})[(n, c)] = entry
    return out


def score_table(results: dict, title: str) -> str:
    """Markdown: exact match / cell accuracy per (N, C) and protocol, then each complete tag's scores."""
    by_protocol = _cells(results)
    if not by_protocol:
        return f"{title}: no G2M task results"
    lines = [f"### {title}"]
    for protocol, cells in sorted(by_protocol.items()):
        sizes = sorted({n for n, _ in cells})
        colors = sorted({c for _, c in cells})
        rates = ["parse_failed", "truncated"]
        if any(_value(e, "request_failed") for e in cells.values()):
            rates.append("request_failed")  # shown only when a request failed: those answers never came
        head = "| N | " + " | ".join(f"C={c} exact | C={c} cell" for c in colors) + " | " + \
            " | ".join(r.replace("_", " ") for r in rates) + " |"
        lines += ["", f"{PROTOCOL_TITLES[protocol]}:", "", head, "|---:|" + "---:|" * (2 * len(colors) + len(rates))]
        for n in sizes:
            row = [str(n)]
            for c in colors:
                e = cells.get((n, c), {})
                em, ca = _value(e, "exact_match"), _value(e, "cell_accuracy")
                row += ["-" if em is None else f"{em:.2f}", "-" if ca is None else f"{ca:.3f}"]
            for rate in rates:  # over the palettes this grid size has
                values = [_value(cells[(n, c)], rate) or 0.0 for c in colors if (n, c) in cells]
                row.append(f"{sum(values) / len(values):.2f}")
            lines.append("| " + " | ".join(row) + " |")
    lines += _tag_rows(results)
    return "\n".join(lines)


def tag_scores(results: dict) -> dict[str, dict[str, float]]:
    """Each G2M tag whose tasks all ran: its scores, the per-task means weighted by sample count (what an lm-eval
    group would aggregate; G2M's sets are tags, which lm-eval does not aggregate)."""
    from scoring.catalog import tags, task_info

    ran = {k.strip(" -"): v for k, v in results.get("results", {}).items() if task_info(k)}
    counts = {t: (results.get("n-samples", {}).get(t) or {}).get("effective") or 1 for t in ran}
    out = {}
    for tag, members in tags().items():
        if all(m in ran for m in members):
            total = sum(counts[m] for m in members)
            out[tag] = {s: sum((_value(ran[m], s) or 0.0) * counts[m] for m in members) / total for s in SCORES}
    return out


def _tag_rows(results: dict) -> list[str]:
    rows = [f"| {tag} | " + " | ".join(f"{v[s]:.3f}" for s in SCORES) + " |" for tag, v in tag_scores(results).items()]
    if not rows:
        return []
    return ["", "| tag (weighted by samples) | " + " | ".join(SCORES) + " |", "|---|" + "---:|" * len(SCORES), *rows]
