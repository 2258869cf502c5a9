import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/config/load.ts";
import { PAY_TO, minimal, perRow } from "./examples.ts";
import { expectProblem, problemsOf } from "./support.ts";

const resolve = (raw: Record<string, unknown>, env: Record<string, string | undefined>) => resolveConfig(raw, { baseDir: "/srv", env });

describe("${VAR} expansion", () => {
  test("expands in every string value, at any depth, before validation", () => {
    const config = resolve(
      minimal({
        server: { bind: "${HOST}:${PORT}", cors_origins: ["https://${DOMAIN}"] },
        facilitator: { url: "${FACILITATOR}", headers: { Authorization: "Bearer ${TOKEN}" } },
        database: { sqlite: "${DATA}/market.sqlite" },
        tables: [{ name: "${TABLE}", price_tags: [perRow({ pay_to: "${PAY_TO}", amount_per_item: "${PRICE}" })] }],
      }),
      {
        HOST: "0.0.0.0",
        PORT: "9000",
        DOMAIN: "app.example",
        FACILITATOR: "https://f.example/",
        TOKEN: "t0k",
        DATA: "/data",
        TABLE: "swaps",
        PAY_TO,
        PRICE: "0.25",
      },
    );
    expect(config.server).toMatchObject({ host: "0.0.0.0", port: 9000, corsOrigins: ["https://app.example"] });
    expect(config.facilitator).toMatchObject({ url: "https://f.example", headers: { Authorization: "Bearer t0k" } });
    expect(config.databases).toEqual({ main: { engine: "sqlite", path: "/data/market.sqlite" } });
    const [tag] = config.tables[0]!.priceTags;
    expect(config.tables[0]!.name).toBe("swaps");
    expect(tag?.type === "per_row" && tag.amountPerItem).toBe(250000n);
  });

  test("keys are not expanded; a variable set to the empty string expands to nothing", () => {
    const config = resolve(minimal({ tables: [{ name: "items", columns: { "${A}": "v${EMPTY}" } }] }), { A: "a", EMPTY: "" });
    expect(config.tables[0]!.columns).toEqual({ "${A}": "v" });
  });

  test("$${ writes a literal ${, and a lone $ is literal", () => {
    const config = resolve(minimal({ tables: [{ name: "items", description: "costs $5, see $${HOME} or $X" }] }), { HOME: "/root", X: "x" });
    expect(config.tables[0]!.description).toBe("costs $5, see ${HOME} or $X");
  });

  test("the environment defaults to process.env", () => {
    const name = "ARROW402_CONFIG_TEST_TABLE";
    process.env[name] = "from_process_env";
    try {
      const config = resolveConfig(minimal({ tables: [{ name: `\${${name}}` }] }), { baseDir: "/srv" });
      expect(config.tables[0]!.name).toBe("from_process_env");
    } finally {
      delete process.env[name];
    }
  });

  test("an unset variable is a problem naming the path and the variable, each one reported", () => {
    const problems = problemsOf(
      minimal({
        facilitator: { headers: { Authorization: "Bearer ${FACILITATOR_TOKEN}" } },
        tables: [{ name: "items", price_tags: [perRow({ pay_to: "${PAY_TO}" })] }],
      }),
      { PAY_TO: undefined },
    );
    expectProblem(problems, "facilitator.headers.Authorization", "environment variable FACILITATOR_TOKEN is not set");
    expect(problems).toContain("tables[0].price_tags[0].pay_to: environment variable PAY_TO is not set; set it or remove ${PAY_TO} from the config");
  });

  test("a malformed reference is a problem", () => {
    const problems = problemsOf(minimal({ tables: [{ name: "items", description: "${1X} and ${UNCLOSED" }] }));
    expectProblem(problems, "tables[0].description", "malformed variable reference");
  });
});
