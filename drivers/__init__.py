"""Device drivers at the edge of the controller (design.md, "Drivers at the edge"; docs/protocol.md).

``DRIVERS`` maps a device kind, as named in the table configuration, to its driver class.
"""

from __future__ import annotations

from drivers.panel.driver import PanelDriver
from drivers.reader.driver import ReaderDriver
from drivers.sensors.driver import SensorDriver
from drivers.shoe.driver import ShoeDriver

#: Device kind -> driver class; the kind is also what the device reports in IDENT.
DRIVERS = {"shoe": ShoeDriver, "sensors": SensorDriver, "panel": PanelDriver, "reader": ReaderDriver}

__all__ = ["DRIVERS", "PanelDriver", "ReaderDriver", "SensorDriver", "ShoeDriver"]
