"""pySerial URL handlers of the project (``protocol_<scheme>`` modules; ``drivers.link`` registers the package
in ``serial.protocol_handler_packages``): ``sim://`` opens a device simulator (``protocol_sim``)."""
