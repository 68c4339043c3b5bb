"""The kinematic engine of the hardware stand-in: joints follow their commands, nothing collides.
It has no settings of its own."""

OPTIONS = ()
ENGINE = ".engine:KinematicEngine"
