"""The hardware-in-the-loop rig: device simulators (or real ports), a scripted table, and journal checks."""
