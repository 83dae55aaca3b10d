-- HTTP delivery: a tool may carry an HTTP target that Ratchet calls itself
-- (internal/delivery), and an attempt records what that call saw.
--
-- tools.delivery is the target as JSON (method, url, headers); NULL for a
-- tool run by workers. tools.delivery_secret is the Standard Webhooks
-- signing secret ("whsec_..."), '' when unsigned: the server must sign with
-- it, so it is kept as given (not hashed) and never returned after publish.
ALTER TABLE tools ADD COLUMN delivery TEXT;
ALTER TABLE tools ADD COLUMN delivery_secret TEXT NOT NULL DEFAULT '';

-- The request's duration, the response headers that mattered (JSON object,
-- '' for none) and the start of the response body (clean UTF-8, bounded).
ALTER TABLE attempts ADD COLUMN request_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN response_headers TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN response_excerpt TEXT NOT NULL DEFAULT '';
