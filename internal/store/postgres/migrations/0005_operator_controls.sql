-- Placeholder on branch observe only, so that 0007 runs: the ops branch
-- brings the real 0005_operator_controls.sql (take theirs when merging).
SELECT 1;
