/**
 * Secrets never leave a process through a log line or an error message: credentials in URLs
 * (`postgres://user:password@host`), and RPC provider keys, which providers put in the URL's path
 * (`https://eth.example.com/v2/<key>`) or query (`?apikey=<key>`). A URL keeps its scheme, user,
 * host and port — enough to tell which endpoint failed — and loses its password, path and query.
 * Values of settings named like a secret (…PASSWORD, …SECRET, …TOKEN, …KEY) are hidden whole.
 */

/** What a hidden value reads as. */
export const REDACTED = '***';

/** A URL with an authority (scheme://…), up to the first character no URL holds. */
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*):\/\/([^\s"'<>`]+)/gi;

/**
 * A setting (or log field) whose value is a secret whatever it looks like: …PASSWORD, …SECRET,
 * …TOKEN, …API_KEY, …PRIVATE_KEY, …CREDENTIALS in any case, or an env name ending `_KEY`. A name
 * ending `_FILE` names a file, not a secret.
 */
export const isSecretName = (name: string): boolean =>
  /(password|passwd|secret|token|api_?key|private_?key|credentials?)$/i.test(name) || /(^|_)KEY$/.test(name);

/** One URL (the part after `scheme://`) with its password, path and query hidden. */
function redactAuthority(scheme: string, rest: string): string {
  // authority = [user[:password]@]host[:port], up to the first / ? or #
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? '' : rest.slice(end);
  const at = authority.lastIndexOf('@');
  let shownAuthority = authority;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
    shownAuthority = `${colon < 0 ? REDACTED : `${user}:${REDACTED}`}@${authority.slice(at + 1)}`;
  }
  let shownTail = tail === '/' ? '/' : '';
  if (tail !== '' && tail !== '/') {
    const q = tail.indexOf('?');
    const path = q < 0 ? tail : tail.slice(0, q);
    shownTail = path.length > 1 ? `/${REDACTED}` : path;
    if (q >= 0) shownTail += `?${REDACTED}`;
  }
  return `${scheme}://${shownAuthority}${shownTail}`;
}

/** `text` with every URL in it redacted (see the module's comment). */
export function redactText(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (_m, scheme: string, rest: string) => redactAuthority(scheme, rest));
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
