"""Chapter-specific exercise checks: ``minigrad.teach.exercises.chNN`` per chapter.

Each module defines one function per exercise that takes the learner's answer and returns
a ``CheckResult`` (see ``minigrad.teach.checks``), computing the right answer itself.
"""
