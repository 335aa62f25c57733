/** Progress of a fold on stderr: a bar on a terminal, a line every few seconds otherwise. */
export interface Progress {
  update(done: number, total: number): void;
  /** Final line (always printed). */
  finish(message: string): void;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function eta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

export function createProgress(
  label: string,
  out: NodeJS.WriteStream = process.stderr,
  opts: { quiet?: boolean; lineEveryMs?: number; unit?: string } = {},
): Progress {
  const tty = out.isTTY === true;
  const every = opts.lineEveryMs ?? 5000;
  const unit = opts.unit ?? 'records';
  const started = performance.now();
  let lastAt = started;
  let lastDone = -1;
  let lastLine = 0;
  let rate = 0;
  return {
    update(done, total) {
      if (opts.quiet) return;
      const now = performance.now();
      if (lastDone >= 0 && now > lastAt) {
        const instant = ((done - lastDone) / (now - lastAt)) * 1000;
        rate = rate === 0 ? instant : 0.7 * rate + 0.3 * instant;
      }
      lastAt = now;
      lastDone = done;
      const pct = total > 0 ? Math.min(100, (done / total) * 100) : 100;
      const remaining = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
      const text = `${label}: ${fmt(done)} / ${fmt(total)} ${unit} (${pct.toFixed(1)}%), ${fmt(rate)} ${unit}/s, ETA ${eta(remaining)}`;
      if (tty) {
        const width = 24;
        const filled = Math.round((pct / 100) * width);
        out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}\x1b[K`);
      } else if (now - lastLine >= every) {
        lastLine = now;
        out.write(`${text}\n`);
      }
    },
    finish(message) {
      const seconds = (performance.now() - started) / 1000;
      out.write(`${tty && !opts.quiet ? '\n' : ''}${label}: ${message} (${seconds.toFixed(1)} s)\n`);
    },
  };
}
