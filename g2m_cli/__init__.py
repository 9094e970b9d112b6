"""The ``g2m`` command: the one module above every package.

It imports each package's ``register(subparsers)`` statically (so the dependency is visible to any import analysis)
and nothing else; the heavy imports (lm-eval, torch, matplotlib) stay inside the commands. Layering, lowest first:
``dataset_builder`` (spec, data, provenance, errors) <- ``harness_tasks`` and ``probing`` (independent of each
other) <- ``leaderboard`` <- ``g2m_cli``. No package imports one above it.
"""
