"""ODE behind the engine boundary: the only package that imports ``ode`` or loads libode."""
