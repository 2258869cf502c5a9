/** The executor over a SQLite engine, as src/server.ts assembles it, with the engine's own figures at hand. */
import type { Config } from "../../../src/config/types.ts";
import { SqliteEngine, type SqliteLimits } from "../../../src/engines/sqlite/engine.ts";
import { QueryExecutor, type DeliveryLimits } from "../../../src/results/executor.ts";

export class SqliteExecutor extends QueryExecutor {
  readonly engine: SqliteEngine;

  constructor(path: string, limits: SqliteLimits & DeliveryLimits & Partial<Config["limits"]>, workers?: number) {
    const engine = new SqliteEngine(path, limits, workers);
    super(engine, limits);
    this.engine = engine;
  }
}
