/**
 * Hex text ↔ bytea, for columns that hold an address or a hash as bytes (the ledger's keys,
 * migration 0014) while the service speaks "0x" + lowercase hex everywhere else.
 */

/** SQL: the bytes of a "0x…" text expression (a parameter, a column). */
export const hexToBytes = (expr: string): string => `decode(substr(${expr}, 3), 'hex')`;

/** SQL: a bytea expression as "0x" + lowercase hex, the form the API serves. */
export const bytesToHex = (expr: string): string => `('0x' || encode(${expr}, 'hex'))`;

/** A "0x…" value as a bytea field of COPY text format (`\x` + hex, its backslash escaped). */
export const copyHex = (hex: string): string => `\\\\x${hex.slice(2)}`;
