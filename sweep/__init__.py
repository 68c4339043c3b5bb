"""Many runs of one project: sweeps and Monte Carlo studies (docs/sweeps.md)."""
