-- Read-your-writes for operators: every operator write (pause, resume,
-- circuit, run now, bulk action, policy save...) adds one to its project's
-- writes in the write's own transaction. A view shared between streams
-- (the overview) remembers the count it was read at and is read again
-- once the count moved, on whichever node the write happened. The row
-- lock the update takes orders the counts as the commits are ordered.
ALTER TABLE projects ADD COLUMN writes BIGINT NOT NULL DEFAULT 0;
