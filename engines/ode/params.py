"""ODE's numeric constants as the installed libode 0.16 defines them.

pyode's ``Param*`` constants predate ODE 0.13, which inserted ``dParamLoVel``/``dParamHiVel``
after ``dParamVel``: through pyode, "FMax" sets a velocity bound and a motor silently does
nothing (docs/physics.md). Every joint parameter the simulator sets comes from here.
"""

from __future__ import annotations

import ode

# /usr/include/ode/common.h, libode 0.16
LO_STOP = 0
HI_STOP = 1
VEL = 2
LO_VEL = 3
HI_VEL = 4
FMAX = 5
FUDGE_FACTOR = 6
BOUNCE = 7
CFM = 8
STOP_ERP = 9
STOP_CFM = 10
SUSPENSION_ERP = 11
SUSPENSION_CFM = 12
AXIS_GROUP = 0x100  # add once for axis 2, twice for axis 3

# Contact flags. Mu2/FDir1/Bounce/Soft*/Motion1/2/Approx1 agree with pyode; slip flags do not.
CONTACT_MU2 = ode.ContactMu2
CONTACT_FDIR1 = ode.ContactFDir1
CONTACT_BOUNCE = ode.ContactBounce
CONTACT_SOFT_ERP = ode.ContactSoftERP
CONTACT_SOFT_CFM = ode.ContactSoftCFM
CONTACT_MOTION1 = ode.ContactMotion1
CONTACT_SLIP1 = 0x100
CONTACT_SLIP2 = 0x200
CONTACT_APPROX1 = 0x3000  # pyramid friction in both directions: mu is a coefficient, not newtons
