/**
 * The dashboard browser bundle as text, written into each scaffolded folder as `dashboard.js`.
 * The macro import bundles at transpile time (see bundle-macro.ts); nothing is built at run time.
 */
import { buildBrowserBundle } from "./bundle-macro.ts" with { type: "macro" };

export const BROWSER_BUNDLE: string = buildBrowserBundle();
