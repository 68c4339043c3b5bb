"""Hardware-in-the-loop: the stand-in (the kinematic engine under the simulator's tick loop) and
device models."""
