/**
 * CORS (ARCHITECTURE.md §6): browsers may call the API from the configured origins, send
 * PAYMENT-SIGNATURE and read PAYMENT-REQUIRED / PAYMENT-RESPONSE.
 */
const EXPOSED = "PAYMENT-REQUIRED, PAYMENT-RESPONSE";

/** The Access-Control-Allow-Origin value for this request's origin, or null when it is not allowed. */
function allowedOrigin(origins: string[], requestOrigin: string | null): string | null {
  if (origins.includes("*")) return "*";
  return requestOrigin !== null && origins.includes(requestOrigin) ? requestOrigin : null;
}

export function corsHeaders(origins: string[], requestOrigin: string | null): Record<string, string> {
  const origin = allowedOrigin(origins, requestOrigin);
  if (origin === null) return {};
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": EXPOSED,
    ...(origin === "*" ? {} : { vary: "Origin" }),
  };
}

/** Adds the CORS headers for this request's origin to a response built without them. */
export function addCorsHeaders(headers: Headers, origins: string[], requestOrigin: string | null): void {
  const origin = allowedOrigin(origins, requestOrigin);
  if (origin === null) return;
  headers.set("access-control-allow-origin", origin);
  headers.set("access-control-expose-headers", EXPOSED);
  if (origin !== "*") headers.append("vary", "Origin");
}

export function preflightResponse(origins: string[], requestOrigin: string | null): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(origins, requestOrigin),
      // POST: MCP (ARCHITECTURE.md §12), whose clients send Mcp-Protocol-Version (and Mcp-Session-Id when they have one).
      "access-control-allow-methods": "GET, POST, OPTIONS",
      // @x402/fetch's paid retry also sends an Access-Control-Expose-Headers request header.
      "access-control-allow-headers": "PAYMENT-SIGNATURE, Access-Control-Expose-Headers, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id",
      "access-control-max-age": "600",
    },
  });
}
