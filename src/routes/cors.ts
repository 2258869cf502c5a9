/**
 * CORS (DESIGN.md §6): browsers may call the API from the configured origins, send
 * PAYMENT-SIGNATURE and read PAYMENT-REQUIRED / PAYMENT-RESPONSE.
 */
export function corsHeaders(origins: string[], requestOrigin: string | null): Record<string, string> {
  const allowAll = origins.includes("*");
  const origin = allowAll ? "*" : requestOrigin && origins.includes(requestOrigin) ? requestOrigin : null;
  if (!origin) return {};
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "PAYMENT-REQUIRED, PAYMENT-RESPONSE",
    ...(allowAll ? {} : { vary: "Origin" }),
  };
}

export function preflightResponse(origins: string[], requestOrigin: string | null): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(origins, requestOrigin),
      "access-control-allow-methods": "GET, OPTIONS",
      // @x402/fetch's paid retry also sends an Access-Control-Expose-Headers request header.
      "access-control-allow-headers": "PAYMENT-SIGNATURE, Access-Control-Expose-Headers, Content-Type",
      "access-control-max-age": "600",
    },
  });
}
