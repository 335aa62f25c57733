/** The reader under test: a started reader with a typed client, and fixture rows written straight to the tables. */
export * from './client.js';
export * from './fixtures.js';
