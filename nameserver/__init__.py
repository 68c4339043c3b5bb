"""The registry process: service name -> endpoint, with liveness."""
