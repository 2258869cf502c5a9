/**
 * The Host header names this server; it never picks a route or a resource (a resource is
 * `base_url` + path and query, DESIGN.md §6). Bun builds `request.url` from it, so a Host that is
 * not a valid host (`a b`, `evil:99999`, `[`) leaves a URL that does not parse, or only the path,
 * and nothing after it could read the request: such a request is refused with 400, as RFC 9112
 * §3.2 requires of "a Host header field with an invalid field value".
 */
import { BadRequestError, errorResponse } from "../errors.ts";

/** A 400 for a request whose Host made its URL unreadable; null for every other request. */
export function invalidHostResponse(request: Request): Response | null {
  if (URL.canParse(request.url)) return null;
  return errorResponse(
    new BadRequestError("The Host header is not a valid host: send the server's host name and port (e.g. Host: data.example.com:4021), as HTTP clients do"),
  );
}

/**
 * Elysia's router finds the path after the 11th character of the URL by default, assuming a host
 * of at least 4 characters (`http://a.bc`): behind a proxy that reaches the server as `http://api/`
 * or `http://web:80/`, every route would answer 404. With this option it starts after `http://`.
 */
export const ROUTER_OPTIONS = { handler: { standardHostname: false } } as const;
