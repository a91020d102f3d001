"""The bench (`task: bench`): the papers' main tables in one command.

One shared seed set, every generator with its checks and (but for context enriching) the judge, every
target on the accepted cases and their originals in the papers' settings, identical calls made once,
each stage resumable (`driver` orchestrates; `stages` checkpoints and records; `seeds` and `sharing` make identical
calls once; `tables`, `render` and `report` write the report).
"""
