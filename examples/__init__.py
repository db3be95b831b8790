"""Worked examples of user-written controllers (see the README, "How to write a controller")."""
