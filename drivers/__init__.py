"""Device drivers at the edge of the controller (design.md, "Drivers at the edge"; docs/protocol.md).

``DRIVERS`` maps a device kind, as named in the table configuration, to its driver class. The driver classes
(and ``DRIVERS``) are imported when first asked for, so a module that needs only ``drivers.events`` or a
protocol's constants (``crisscross settle``, the analysis) does not load the four drivers and pySerial.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Driver class name -> the module that defines it.
_CLASSES = {"PanelDriver": "drivers.panel.driver", "ReaderDriver": "drivers.reader.driver",
            "SensorDriver": "drivers.sensors.driver", "ShoeDriver": "drivers.shoe.driver"}
#: Device kind -> driver class name; the kind is also what the device reports in IDENT.
_KINDS = {"shoe": "ShoeDriver", "sensors": "SensorDriver", "panel": "PanelDriver", "reader": "ReaderDriver"}

__all__ = ["DRIVERS", "PanelDriver", "ReaderDriver", "SensorDriver", "ShoeDriver"]


def __getattr__(name: str) -> Any:
    """``DRIVERS`` (device kind -> driver class) or a driver class, imported on first use and kept;
    ``AttributeError`` for any other name."""
    if name == "DRIVERS":
        value: Any = {kind: __getattr__(cls) for kind, cls in _KINDS.items()}
    elif name in _CLASSES:
        value = getattr(importlib.import_module(_CLASSES[name]), name)
    else:
        raise AttributeError(f"module 'drivers' has no attribute {name!r}")
    globals()[name] = value
    return value
