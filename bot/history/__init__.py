"""The main-branch watch: change points along a history of commits (docs/HISTORY.md).

Where ``pr`` compares a base with a head, ``history`` reads every commit's runs, orders them
along commit order and asks, at every split between two commits, whether the same four guards
the PR mode has (bot/decide) moved there: series.py (commits in order), table.py (every series
as arrays), scan.py (the vectorised screen), rows.py and window.py (the decision at one split),
changepoint.py (the method), broken.py (points that stop running), follow.py (what each
change's section of its alert says now), alerts.py (one alert per break: the changes and
breaks at one commit range), render.py, issues.py and sections.py (what is printed and filed),
stranded.py (open issues no current alert matches), calibrate.py (false alarms and power on
the recorded runs).
"""
