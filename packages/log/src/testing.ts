/**
 * The test seam of @vault-yield/log (`@vault-yield/log/testing`): hooks that change behaviour for
 * a test, kept out of the package's main entry so no service can reach them by accident.
 */
export { setKafkajsPatchedFileForTests } from './publisher/patch-check.js';
