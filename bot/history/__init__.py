"""The main-branch watch: change points along a history of commits (docs/HISTORY.md).

Where ``pr`` compares a base with a head, ``history`` reads every commit's runs, orders them
along commit order and asks, at every split between two commits, whether the same four guards
the PR mode has (bot/decide) moved there: series.py (commits in order), table.py (every series
as arrays), scan.py (the vectorised screen), rows.py and window.py (the decision at one split),
changepoint.py (the method), broken.py (points that stop running), follow.py (what each
change's linked issue should do), render.py and issues.py (what is printed and filed),
calibrate.py (false alarms and power on the recorded runs).
"""
