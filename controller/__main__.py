"""``python -m controller`` runs the ``crisscross`` command line (see ``controller.cli.entry``)."""

from controller.cli.entry import main

raise SystemExit(main())
