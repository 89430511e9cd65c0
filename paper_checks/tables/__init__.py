"""The paper's tables beside ours (MODEL §11): one file per group of tables, named by their numbers.

The third layer of ``paper_checks`` (above the foundations and ``rules``; below ``claims``, whose
``Workspace`` builds the ``tables`` block of ``--design paper``, and the report). Table 4 (and 3,
its LongMemEval twin) is in ``_tables_3_4``; Tables 2, 8 and 11 (routing) in ``_tables_2_8_11``
with their cross-fitted choices in ``_crossfit``; Tables 5, 6 and 12 (second reader, full
history) in ``_tables_5_6_12``; Tables 1, 7, 9 and 10 in ``_tables_1_7_9_10``. ``_design``
assembles the block, checks a second reader's file and writes the markdown. Each cell carries the
paper's value (``paper_checks._published``), ours and both intervals.
"""
