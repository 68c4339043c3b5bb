"""Hardware-in-the-loop: the stand-in (the kinematic engine under the simulator's tick loop). The
device models it shares with the simulator are the simulator's (simserver/devices.py)."""
