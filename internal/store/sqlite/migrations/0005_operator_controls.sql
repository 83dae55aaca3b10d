-- Placeholder on the scale branch only: migration numbers run 1..N without
-- gaps, and 0005 belongs to the operator controls (branch ops). When the
-- branches merge, the ops branch's 0005_operator_controls.sql replaces this
-- file. It changes nothing.
SELECT 1;
