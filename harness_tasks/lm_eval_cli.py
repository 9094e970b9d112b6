"""``g2m-lm-eval``: the ``lm_eval`` command with the G2M baselines registered.

lm-eval 0.4.13 finds models only by import (no plugin entry points), so plain ``lm_eval --model g2m-oracle`` cannot
see ours. This entry point imports them, then hands over to lm-eval's own CLI unchanged.
"""

from __future__ import annotations


def main() -> None:
    from lm_eval.__main__ import cli_evaluate

    from . import models  # noqa: F401
    from .evaluate import quiet_lm_eval

    quiet_lm_eval()
    cli_evaluate()


if __name__ == "__main__":
    main()
