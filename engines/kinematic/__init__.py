"""The kinematic engine of the hardware stand-in: joints follow their commands, nothing collides."""
