"""What ``g2m validate`` says of a submission, in one place: the command prints these lines, and the board's sync
posts the same lines on the submitter's pull request, so the two never word a verdict differently."""

from __future__ import annotations

from g2m_base.untrusted import term


def rejected(reason: str) -> str:
    return f"REJECTED: {term(reason, 1000)}"


def warning(text: str) -> str:
    return f"warning: {term(text, 1000)}"


def accepted(v, name: str) -> list[str]:
    """The ACCEPTED line of a passing ``Validation`` of the file shown as ``name``, then a line per probe section."""
    o = v.scores["overall"]
    lines = [f"ACCEPTED {term(name)} ({term(v.metadata['model']['id'])}, {v.data}): re-scored exact match "
             f"{o['exact_match']:.4f}, cell accuracy {o['cell_accuracy']:.4f}, parse failed {o['parse_failed']:.4f}, "
             f"truncated {o['truncated']:.4f}"]
    for sec in v.probes:
        b = sec["best"]
        lines.append(
            f"  probe {sec['kind']} {sec['config']} ({sec['rows']:,} test rows, scale {sec['scale']:g}) of "
            f"{term(sec['checkpoint'])} (revision {term(str(sec['revision'] or 'not recorded'))}, config.json "
            f"sha256 {(sec['config_sha256'] or 'not recorded')[:12]}): re-scored "
            + ", ".join(f"{r['point']} {r['cell_accuracy']:.4f}" for r in sec["readouts"])
            + f"; best {b['point']} cell accuracy {b['cell_accuracy']:.4f}, exact match {b['exact_match']:.4f}")
    return lines
