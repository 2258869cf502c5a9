/**
 * What can go wrong for the buyer, as values (each maps to one exit code in src/cli/query.ts).
 * Every message is one line that says what happened and, when the user can act, what to do.
 */
export type FailureKind =
  /** The server could not be reached, or the connection broke. */
  | "network"
  /** Arguments or environment the user must fix (the signing key variable). */
  | "usage"
  /** The server refused the query (400): its message says what to change. */
  | "bad-query"
  /** Nothing was paid: over budget, not confirmed, or no offer this client may pay. */
  | "declined"
  /** A payment was sent and the server answered 402: not verified or not settled. */
  | "refused"
  /** The server failed (5xx). */
  | "server"
  /** An answer that is not what an arrow402 server sends, or a local failure (signing, output). */
  | "runtime";

export interface Failure {
  kind: FailureKind;
  message: string;
}

export function failure(kind: FailureKind, message: string): Failure {
  return { kind, message };
}
