"""The controllers' toolkit: the robot's model on Pinocchio (``hrpsim.toolkit.model.RobotModel``, a
controller's ``self.model``), inverse kinematics, the ZMP and PD gains from the model.

It needs Pinocchio (``pip install 'hrpsim[toolkit]'``); the controller SDK (``hrpsim.controllers``)
loads it only when a controller asks for its model.
"""
