"""hrpsim.gym: any hrpsim project as a Gymnasium environment (docs/gym.md).

    import gymnasium
    import hrpsim.gym  # registers hrpsim/Project-v0

    env = gymnasium.make("hrpsim/Project-v0", project="examples/sample_stand.yaml", frame_skip=10)

or ``hrpsim.gym.ProjectEnv(project, ...)`` directly; ``PolicyController`` runs a policy as a
controller, with the env's observation and action (a sweep of many runs on Ray). Needs Gymnasium:
``pip install 'hrpsim[gym]'``.
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as exc:  # the extra is optional: say how to get it
    raise ImportError(f"hrpsim.gym needs Gymnasium ({exc}); install it with: pip install 'hrpsim[gym]'") from exc

from hrpsim.gym.env import ProjectEnv
from hrpsim.gym.policy import PolicyController
from hrpsim.gym.tasks import Standing, Transition

__all__ = ["ENV_ID", "PolicyController", "ProjectEnv", "Standing", "Transition"]

ENV_ID = "hrpsim/Project-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="hrpsim.gym.env:ProjectEnv")
