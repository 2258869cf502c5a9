/**
 * The checkout's browser bundle as text (ARCHITECTURE.md §15): written into each dashboard folder
 * as `checkout.js` and served by the server at CHECKOUT_SCRIPT_PATH for its paywall pages. The
 * macro import bundles at transpile time (dashboards/bundle-macro.ts), so `dist/arrow402` carries
 * it and nothing is built or fetched at run time.
 */
import { buildBrowserBundle } from "../dashboards/bundle-macro.ts" with { type: "macro" };

export const CHECKOUT_BUNDLE: string = buildBrowserBundle("checkout/browser/main.ts");

/** Where the server serves CHECKOUT_BUNDLE (routes/paywall.ts). */
export const CHECKOUT_SCRIPT_PATH = "/api/checkout.js";
