DROP TABLE attempts;
DROP TABLE jobs;
DROP TABLE runs;
DROP TABLE tools;
DROP TABLE endpoints;
DROP TABLE api_keys;
DROP TABLE projects;
