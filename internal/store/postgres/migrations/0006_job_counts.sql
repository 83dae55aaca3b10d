-- Placeholder on branch observe only, so that 0007 runs: the scale branch
-- brings the real 0006_job_counts.sql (take theirs when merging).
SELECT 1;
