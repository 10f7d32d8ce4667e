// The PostgreSQL project of jest.passes.config.js: its files see STEWARD_TEST_STORE=postgres, as
// `npm run test:postgres` sets it for the whole run (jest gives each test file its own process.env).
process.env.STEWARD_TEST_STORE = 'postgres';
