/**
 * What kind of failure an RPC error is, so callers know whether to split a log range, back off
 * and retry, or give up. Providers word "range too large" many ways; the patterns below cover
 * geth, erigon, reth, anvil, Alchemy, Infura, QuickNode and Ankr messages.
 */
export type RpcErrorKind =
  /** The node refused the range (too many results, range or response too large): split it. */
  | 'range'
  /** The request timed out: a smaller range may pass; also retryable. */
  | 'timeout'
  /** Rate limited (HTTP 429, -32005 limit): back off and retry. */
  | 'rate-limit'
  /**
   * The node has not got the block yet ("header not found", "unknown block", "block out of
   * range"): a node behind the head, e.g. one of several behind one URL. Retry, patiently.
   */
  | 'behind'
  /** Network / 5xx / connection reset: retry. */
  | 'transient'
  /** Anything else (bad params, execution reverted): retrying will not help. */
  | 'fatal';

const rangePatterns = [
  /more than \d+ (results|logs)/i,
  /query returned more than/i,
  /block range/i,
  /range (is )?too (large|wide|big)/i,
  /exceed(s|ed)? (the )?max(imum)? (block )?range/i,
  /response (size )?(is )?too (large|big)/i,
  /response size exceeded/i,
  /log response size/i,
  /too many (results|logs|blocks)/i,
  /limit exceeded/i,
  /query timeout exceeded/i,
  /payload too large/i,
];

/** Real providers' wording for "I don't have that block (yet)" (geth, erigon, reth, Alchemy, Infura, QuickNode). */
const behindPatterns = [
  /header (for hash )?not found/i,
  /unknown block/i,
  /block (is )?not found/i,
  /block (number )?out of range/i,
  /beyond (the )?current head/i,
  /greater than (the )?(latest|current|head) block/i,
  /requested block .*(not (yet )?available|in the future)/i,
];

function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const parts = [err.message];
  const e = err as Error & { details?: string; shortMessage?: string; cause?: unknown };
  if (e.details) parts.push(e.details);
  if (e.shortMessage) parts.push(e.shortMessage);
  if (e.cause && e.cause !== err) parts.push(messageOf(e.cause));
  return parts.join(' | ');
}

function codeOf(err: unknown): number | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'number') return c;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function statusOf(err: unknown): number | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    const s = (e as { status?: unknown }).status;
    if (typeof s === 'number') return s;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export function classifyRpcError(err: unknown): RpcErrorKind {
  const msg = messageOf(err);
  const name = err instanceof Error ? err.name : '';
  if (name === 'TimeoutError' || /timed? ?out/i.test(msg)) return 'timeout';
  const status = statusOf(err);
  // viem refuses bodies over its limit (10 MiB): the range held too many logs.
  if (status === 413 || name === 'ResponseBodyTooLargeError' || /exceeded the size limit/i.test(msg))
    return 'range';
  if (status === 429 || /rate limit|too many requests/i.test(msg)) return 'rate-limit';
  if (behindPatterns.some((p) => p.test(msg))) return 'behind';
  if (rangePatterns.some((p) => p.test(msg))) return 'range';
  const code = codeOf(err);
  if (code === -32005) return 'range';
  if (status !== undefined && status >= 500) return 'transient';
  if (/fetch failed|ECONNRESET|ECONNREFUSED|socket hang up|EPIPE|network|HTTP request failed/i.test(msg)) {
    return 'transient';
  }
  if (code === -32603 || code === -32000) return 'transient';
  return 'fatal';
}

/** A short, single-line description of an RPC error for logs and thrown messages. */
export function describeRpcError(err: unknown): string {
  return messageOf(err).split('\n')[0]!.slice(0, 500);
}
