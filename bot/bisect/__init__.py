"""``python -m bot bisect``: the first bad build of a dependency, across its nightlies.

A regression found between two builds of Thunder or nvFuser (a week of nightlies apart, say)
names no change; the build that first shows it does, and its date or commit range is where a
maintainer starts reading. Each build between a known-good and a known-bad one is measured at
the regressed points only, and decided against the known-good build by the bot's own verdict
(bot/decide/verdict.py), so "bad" here means exactly what it means in a PR comment.

The parts, in the order the data flows: the timeline of builds (timeline.py, index.py), the
points and variants measured (points.py), a measurer (measure.py: the GPU; recorded.py:
recorded runs), each build's class (classify.py), the next step of the search (search.py,
pure), the state file that makes a bisect span several GPU calls (state.py), the loop
(driver.py), its text, JSON and issue section (render.py, words.py) and the issue (issue.py).
"""
