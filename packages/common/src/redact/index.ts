/**
 * Secrets never leave a process through a log line or an error message: credentials in URLs
 * (`postgres://user:password@host`), and RPC provider keys, which providers put in the URL's path
 * (`https://eth.example.com/v2/<key>`) or query (`?apikey=<key>`). A URL keeps its scheme, user,
 * host and port — enough to tell which endpoint failed — and loses its password, path and query.
 * Values of settings named like a secret (…PASSWORD, …SECRET, …TOKEN, …KEY) are hidden whole.
 */

/** What a hidden value reads as. */
export const REDACTED = '***';

/** Where a URL (`scheme://`) starts in text. */
const SCHEME = /\b([a-z][a-z0-9+.-]*):\/\//gi;

/**
 * A host (name, IPv4 or [IPv6]) with its port, where it ends as a host does: what follows the
 * last `@` of a userinfo.
 */
const HOST = /(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%-]+)(?::\d+)?(?=$|[/?#\s"'<>`),;\]}\\])/y;

/** A character no authority (userinfo or host) holds: userinfo stops here. */
const AUTHORITY_END = /[\n/?#<>`]/;

/**
 * Credentials without `scheme://`: `user:password@host` (libpq's `postgres:pw@host/db`, a
 * broker's `user:pass@host:9093`). The password is everything up to the last `@` followed by a
 * host, so one holding `@` or `:` is hidden whole; one with a space or a quote cannot be told
 * from the text around it in this form.
 */
const BARE_CREDENTIALS =
  /(?<=^|[\s"'(=,;<[{])([A-Za-z0-9._~%+-]+):([^\s/"<>`]*)@((?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%-]+)(?::\d+)?)(?=$|[/?#\s"'<>`),;\]}\\])/g;

/**
 * A setting (or log field) whose value is a secret whatever it looks like: …PASSWORD, …SECRET,
 * …TOKEN, …API_KEY, …PRIVATE_KEY, …CREDENTIALS in any case, or an env name ending `_KEY`. A name
 * ending `_FILE` names a file, not a secret.
 */
export const isSecretName = (name: string): boolean =>
  /(password|passwd|secret|token|api_?key|private_?key|credentials?)$/i.test(name) || /(^|_)KEY$/.test(name);

/**
 * Where the userinfo of the URL whose authority starts at `from` ends (its last `@`), or -1
 * without one. A password may hold `@`, `:`, quotes and spaces, so the userinfo runs to the last
 * `@` followed by a host before anything no authority holds: a newline (or JSON's `\n`), `/`,
 * `?`, `#`, or a `"` that closes a JSON string (followed by `,` `:` `}` `]` or the end; inside
 * JSON a password's `"` is `\"`, so only a raw password holding `",` `":` `"}` `"]` is cut there).
 */
function userinfoEnd(text: string, from: number): number {
  let at = -1;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (AUTHORITY_END.test(c)) break;
    if (c === '\\' && text[i + 1] === 'n') break;
    if (c === '"' && text[i - 1] !== '\\' && /^(?:$|[,:}\]])/.test(text.slice(i + 1, i + 2))) break;
    if (c !== '@') continue;
    HOST.lastIndex = i + 1;
    if (HOST.test(text)) at = i;
  }
  return at;
}

/** A URL's path, query and fragment (`tail`, from its `/`, `?` or `#`) as shown: `/***`, `?***`. */
function shownTail(tail: string): string {
  if (tail === '' || tail === '/') return tail;
  const q = tail.indexOf('?');
  const path = q < 0 ? tail : tail.slice(0, q);
  return (path.length > 1 ? `/${REDACTED}` : path) + (q >= 0 ? `?${REDACTED}` : '');
}

/**
 * The URL whose authority starts at `from` (just past `scheme://`): its shown text and where it
 * ends in `text`. The user stays, the password goes; host and port stay; path and query go.
 */
function redactUrlAt(text: string, from: number): { shown: string; end: number } {
  const at = userinfoEnd(text, from);
  let shown = '';
  let hostStart = from;
  if (at >= 0) {
    const userinfo = text.slice(from, at);
    const colon = userinfo.indexOf(':');
    shown = `${colon < 0 ? REDACTED : `${userinfo.slice(0, colon)}:${REDACTED}`}@`;
    hostStart = at + 1;
  }
  const hostEnd = indexOf(text, /[\s"'<>`/?#]/, hostStart);
  let tailEnd = indexOf(text, /[\s"'<>`\\]/, hostEnd);
  // Punctuation closing the sentence around the URL (`(see …/v2/key).`) stays: one character of a
  // path or query is no secret.
  while (tailEnd > hostEnd + 1 && '),.;:'.includes(text[tailEnd - 1]!)) tailEnd--;
  return {
    shown: shown + text.slice(hostStart, hostEnd) + shownTail(text.slice(hostEnd, tailEnd)),
    end: tailEnd,
  };
}

/** The first index at or after `from` where `re` matches one character, else the text's length. */
function indexOf(text: string, re: RegExp, from: number): number {
  for (let i = from; i < text.length; i++) if (re.test(text[i]!)) return i;
  return text.length;
}

/**
 * `text` with every URL in it redacted (see the module's comment), and credentials written
 * without a scheme (`user:password@host`). A `file://` URL is a path (a stack frame's): kept.
 */
export function redactText(text: string): string {
  let out = text;
  if (text.includes('://')) {
    out = '';
    let done = 0;
    for (const m of text.matchAll(SCHEME)) {
      if (m.index < done || m[1]!.toLowerCase() === 'file') continue;
      const from = m.index + m[0].length;
      const url = redactUrlAt(text, from);
      out += text.slice(done, from) + url.shown;
      done = url.end;
    }
    out += text.slice(done);
  }
  if (!out.includes('@')) return out;
  return out.replace(
    BARE_CREDENTIALS,
    (_m, user: string, _password: string, host: string) => `${user}:${REDACTED}@${host}`,
  );
}

/** A setting's value as it may be shown: hidden whole for a secret's name, else its URLs redacted. */
export function shownValue(name: string, value: string): string {
  return isSecretName(name) ? REDACTED : redactText(value);
}

/**
 * A copy of a log object with every string in it redacted (depth-limited; errors by their message
 * and stack). Returns the same object when nothing in it changed (the usual line).
 */
export function redactValue<T>(value: T, depth = 4): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (depth === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const r = redactValue(v, depth - 1);
      if (r === v) return;
      out ??= [...value];
      out[i] = r;
    });
    return (out ?? value) as T;
  }
  let out: Record<string, unknown> | undefined;
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    const r = typeof v === 'string' && isSecretName(key) && v !== '' ? REDACTED : redactValue(v, depth - 1);
    if (r !== v) {
      out ??= { ...obj };
      out[key] = r;
    }
  }
  return (out ?? value) as T;
}
