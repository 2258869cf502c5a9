import pkg from "../package.json" with { type: "json" };

/** Reported by `arrow402 version` and in the discovery document's `server.version`. */
export const VERSION: string = pkg.version;
