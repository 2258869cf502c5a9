/**
 * From `ledger.url` to Bun.SQL's connection options, and to the location shown in messages.
 *
 * Every part the URL names is also passed as an explicit option: Bun.SQL lets the environment's
 * PGDATABASE take priority over a URL's database, and a seller's ledger must not move to another
 * database because of a variable set for some other tool.
 */

export interface PostgresConnection {
  url: string;
  hostname?: string;
  port?: number;
  username?: string;
  password?: string;
  database?: string;
}

export function postgresConnection(url: string): PostgresConnection {
  const parsed = new URL(url);
  const connection: PostgresConnection = { url };
  const hostname = decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, "$1");
  if (hostname !== "") connection.hostname = hostname;
  if (parsed.port !== "") connection.port = Number(parsed.port);
  if (parsed.username !== "") connection.username = decodeURIComponent(parsed.username);
  if (parsed.password !== "") connection.password = decodeURIComponent(parsed.password);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (database !== "") connection.database = database;
  return connection;
}

/**
 * The URL without its password and without its parameters (which may carry secrets too, e.g.
 * `?password=` or `?sslpassword=`): safe for messages and logs.
 */
export function postgresLocation(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username === "" ? "" : `${parsed.username}@`;
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "(an unreadable PostgreSQL URL)";
  }
}
