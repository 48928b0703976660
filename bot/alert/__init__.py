"""Alerts (pure): one per change, whatever number of guards and machines it moved.

A pull request (or a break on main) that moves several guards is ONE change to the people who
read the issues: Mozilla's Perfherder groups a push's alerts into one summary, pandas files one
"Potential regression induced by PR #N". So every guard that moved, on every machine, is a
section of one alert: one issue in the repository that owns it, and one short linked issue in
the other repository that points at it (as NVIDIA/Fuser#3629 was tracked as
Lightning-AI/lightning-thunder#1582).

model.py builds the alert from the verdicts; ack.py says whether a maintainer's
acknowledgement holds; plan.py says what to do with the issues (given the PR's state and the
configured policy); status.py gives the commit status. Nothing here talks to GitHub.
"""
