"""The MuJoCo engine: a project's models in one MuJoCo model built in memory (``mujoco.MjSpec``)."""
