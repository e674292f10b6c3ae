"""Small helpers shared by every layer: time stamps, rotations, paths of bundled robot models."""
