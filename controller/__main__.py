"""``python -m controller`` runs the ``crisscross`` command line (see ``controller.cli.main``)."""

from controller.cli.main import main

raise SystemExit(main())
