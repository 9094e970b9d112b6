"""``python -m g2m_cli`` is the ``g2m`` command."""

import sys

from g2m_cli.main import main

sys.exit(main())
