"""``g2m-lm-eval``: the ``lm_eval`` command with G2M's backends registered (g2m-chat, g2m-oracle, g2m-random).

lm-eval 0.4.13 finds models only by import (no plugin entry points), so plain ``lm_eval --model g2m-oracle`` cannot
see ours. This entry point imports them, then hands over to lm-eval's own CLI unchanged.
"""

from __future__ import annotations


def main() -> None:
    from lm_eval.__main__ import cli_evaluate

    from harness_tasks.serving import chat  # noqa: F401  registers g2m-chat
    from harness_tasks.with_lm_eval import baseline_models  # noqa: F401  registers g2m-oracle and g2m-random
    from harness_tasks.with_lm_eval.fixes import lm_eval_fixes

    with lm_eval_fixes():
        cli_evaluate()


if __name__ == "__main__":
    main()
