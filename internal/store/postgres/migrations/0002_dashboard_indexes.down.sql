DROP INDEX attempts_finished;
DROP INDEX jobs_endpoint_state_due;
