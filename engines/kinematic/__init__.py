"""The kinematic engine of the hardware stand-in: joints follow their commands, nothing collides.
It has no settings of its own."""

OPTIONS = ()
ENGINE = ".engine:KinematicEngine"
PHYSICS = False  # joints follow commands: the conformance suite's physics cases are not for it
