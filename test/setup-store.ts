import { stopTestDatabases } from './helpers/test-database.js';

// One PostgreSQL cluster per test file in the PostgreSQL pass; nothing to do on SQLite.
afterAll(() => stopTestDatabases());
