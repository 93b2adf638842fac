"""The one wait limit of the tests: a guard against a hang, never a speed limit.

No test measures how fast anything runs (speed is for ``benchmarks/``), and no
test may fail because the machine is slow or shared: every wait on a child
process, a server or a browser ends at :data:`HANG_GUARD` seconds, which only a
test that will never finish reaches (the slowest of these waits takes under 30 s
on a loaded 2-core machine, so a machine 20 times slower still passes).
"""

#: Seconds a test waits for something that may hang (a child process, a server,
#: a page) before it calls it hung.
HANG_GUARD = 600
