"""Hardware-in-the-loop: the stand-in (the kinematic engine under the simulator's tick loop). The
hardware models it shares with the simulator are the simulator's (simserver/hardware_models.py)."""
