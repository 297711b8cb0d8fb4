"""``python -m controller`` runs the ``crisscross`` command line (see ``controller.cli``)."""

from controller.cli import main

raise SystemExit(main())
