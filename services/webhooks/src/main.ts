import { ConfigError, redactText } from '@vault-yield/common';
import { runWebhooks } from './service.js';

try {
  process.exitCode = await runWebhooks();
} catch (err) {
  // Refused before starting: one line (secrets redacted), no stack trace to bury it; exit 2 for a
  // value refused (naming every bad variable), 1 otherwise (WEBHOOK_SECRET_KEY unset).
  process.stderr.write(`${redactText(err instanceof Error ? err.message : String(err))}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
