/**
 * Simplified SQL (ARCHITECTURE.md §4): `SELECT columns FROM table [WHERE expr] [ORDER BY order {, order}]
 * [LIMIT int [OFFSET int]] [;]`, validated clause by clause against allowlist.ts. The SQL that runs
 * is always a slice of the validated text (never user strings spliced into new SQL), so what SQLite
 * executes is exactly what was checked.
 *
 * Choices the grammar leaves open:
 * - `table.column` is accepted where `table` is the queried table (see names.ts); `t.*` is not.
 * - Output names must be unique (ignoring ASCII case, as SQLite does) so every Arrow field can be addressed by name.
 * - An alias needs `AS` (a forgotten comma must not silently rename a column).
 * - `LIMIT offset, count` is refused rather than normalised: its order is a classic source of mistakes.
 * - COLLATE is refused; lower()/upper() cover case-insensitive comparison.
 * - Unary `+` is accepted alongside `-` and NOT.
 */
import type { FromClause, LimitClause, Node, OrderByClause, SelectClause, SelectStmt, WhereClause } from "sql-parser-cst";
import type { Catalog, ColumnInfo, TableInfo } from "../catalog.ts";
import { ALLOWED_NODES, LIMITS } from "./allowlist.ts";
import { checkExpression } from "./expression.ts";
import { firstDataFailure } from "./data-failures.ts";
import { checkWhereCost, isCheapPerRow } from "./growth.ts";
import { readLimit } from "./limit.ts";
import { foldCase, identifierName, resolveColumn, type Scope } from "./names.ts";
import { checkOrderBy } from "./order.ts";
import type { OutputColumn, ValidatedQuery } from "./validated.ts";
import { guardUnfiltered, guardWhere } from "../engines/sqlite/guard.ts";
import { parseSelect } from "./parse.ts";
import type { Expr } from "./statement.ts";
import { refuse, refuseKnownConstruct, shown, sourceOf } from "./refusals.ts";

export type { OutputColumn, ValidatedQuery } from "./validated.ts";

interface Clauses {
  select?: SelectClause;
  from?: FromClause;
  where?: WhereClause;
  order?: OrderByClause;
  limit?: LimitClause;
}

/** Validates one Simplified SQL query; throws BadRequestError with a one-line reason otherwise. */
export function validateQuery(sql: string, catalog: Catalog, limits: { maxQueryBytes: number }): ValidatedQuery {
  return validateStatement(parseSelect(sql, limits.maxQueryBytes), sql, catalog);
}

/** Validates the parsed statement of `sql` (from parse.ts). */
export function validateStatement(statement: SelectStmt, sql: string, catalog: Catalog): ValidatedQuery {
  const clauses = collectClauses(statement.clauses, sql);
  if (!clauses.select) refuse("SELECT is required: SELECT columns FROM table");
  if (!clauses.from) refuse("FROM is required: SELECT columns FROM table");
  const scope: Scope = { table: resolveTable(clauses.from, catalog, sql), sql };
  const columns = checkSelectList(clauses.select, scope);
  let cheapPerRow = true;
  let failsOnData: string | null = null;
  let where: Expr | null = null;
  if (clauses.where) {
    where = checkExpression(clauses.where.expr, scope, 1);
    cheapPerRow = isCheapPerRow(checkWhereCost(clauses.where.expr, sql).work);
    failsOnData = firstDataFailure(clauses.where.expr, scope);
  }
  const orderBy = clauses.order ? checkOrderBy(clauses.order, columns, scope) : [];
  const { limit, offset } = clauses.limit ? readLimit(clauses.limit, scope) : { limit: null, offset: null };
  const [start, end] = statement.range!;
  const text = sql.slice(start, end);
  const whereRange = clauses.where?.expr.range;
  const sortsOrSkips = clauses.order !== undefined || offset !== null;
  let runSql = text;
  if (whereRange !== undefined) runSql = guardWhere(text, whereRange[0] - start, whereRange[1] - start);
  else if (sortsOrSkips) runSql = guardUnfiltered(text, clauses.from.range![1] - start);
  return {
    table: scope.table,
    sql: text,
    runSql,
    countedSql: clauses.order ? withoutRange(runSql, clauses.order.range!, end - runSql.length) : runSql,
    columns,
    limit,
    offset,
    filtered: clauses.where !== undefined,
    cheapPerRow,
    ordered: clauses.order !== undefined,
    readsClock: scope.readsClock === true,
    failsOnData,
    selectListEnd: clauses.select.columns!.range![1] - start,
    statement: {
      columns: columns.map(({ name, column }) => ({ name, column: scope.table.columns.indexOf(column) })),
      where,
      orderBy,
      limit,
      offset,
    },
  };
}

/** The row count of the query without materialising its rows (guarded like the query itself). */
export function countSql(q: ValidatedQuery): string {
  return `SELECT count(*) FROM (${q.countedSql})`;
}

/**
 * `run` without the source range [from, to) of the statement; `end` is where the statement ends
 * in the source minus the length of `run`. Guards are inserted before ORDER BY, so the clause keeps
 * its distance from the end.
 */
function withoutRange(run: string, [from, to]: [number, number], end: number): string {
  return `${run.slice(0, from - end)}${run.slice(to - end)}`;
}


/** The clauses in grammar order, each named as in messages. */
const CLAUSE_ORDER: [type: string, name: string, key: keyof Clauses][] = [
  ["select_clause", "SELECT", "select"],
  ["from_clause", "FROM", "from"],
  ["where_clause", "WHERE", "where"],
  ["order_by_clause", "ORDER BY", "order"],
  ["limit_clause", "LIMIT", "limit"],
];

/**
 * Each clause at most once, in grammar order. sql-parser-cst accepts repeated and reordered
 * clauses (`LIMIT 3 LIMIT 3`, `FROM a FROM b`, `LIMIT 1 WHERE …`) that SQLite refuses.
 */
function collectClauses(list: Node[], sql: string): Clauses {
  const clauses: Clauses = {};
  let last = -1;
  for (const clause of list) {
    refuseKnownConstruct(clause);
    const position = CLAUSE_ORDER.findIndex(([type]) => type === clause.type);
    if (position < 0 || !(ALLOWED_NODES.clause as readonly string[]).includes(clause.type)) {
      refuse(`Unsupported clause '${sourceOf(clause, sql)}'`);
    }
    const [, name, key] = CLAUSE_ORDER[position]!;
    if (clauses[key]) refuse(`${name} appears more than once: write each clause once`);
    if (position < last) {
      refuse(`${name} must come before ${CLAUSE_ORDER[last]![1]}: write the clauses in the order SELECT, FROM, WHERE, ORDER BY, LIMIT`);
    }
    last = position;
    (clauses as Record<string, Node>)[key] = clause;
  }
  return clauses;
}

const FROM_REFUSALS: Record<string, string> = {
  alias: "Table aliases are not supported: write the table name alone",
  member_expr: "Schema-qualified table names are not supported: write the table name alone",
  func_call: "Table-valued functions are not supported: query a configured table",
  paren_expr: "Subqueries are not supported: query a single table",
  indexed_table: "INDEXED BY is not supported: write the table name alone",
  not_indexed_table: "NOT INDEXED is not supported: write the table name alone",
};

function resolveTable(from: FromClause, catalog: Catalog, sql: string): TableInfo {
  const node = from.expr;
  refuseKnownConstruct(node);
  if (node.type !== "identifier" || !(ALLOWED_NODES.fromTable as readonly string[]).includes(node.type)) {
    refuse(Object.hasOwn(FROM_REFUSALS, node.type) ? FROM_REFUSALS[node.type]! : `FROM must name one table: '${sourceOf(node, sql)}'`);
  }
  const name = identifierName(node);
  const table = catalog.table(name);
  if (!table) {
    refuse(`Unknown table '${sourceOf(node, sql)}'; available tables: ${catalog.tables.map((t) => t.name).join(", ")}`);
  }
  return table;
}

function checkSelectList(select: SelectClause, scope: Scope): OutputColumn[] {
  for (const modifier of select.modifiers) {
    refuseKnownConstruct(modifier);
    refuse(`Unsupported SELECT modifier '${sourceOf(modifier, scope.sql)}'`);
  }
  const items = select.columns?.items ?? [];
  if (items.length === 1 && items[0]!.type === "all_columns") {
    return scope.table.columns.map((column) => ({ name: column.name, column }));
  }
  const columns: OutputColumn[] = [];
  const names = new Set<string>();
  // Counted by catalog column (the object names.ts resolves to), whatever name or case it was written in.
  const namedTimes = new Map<ColumnInfo, number>();
  for (const item of items) {
    if (item.type === "empty") refuse("Empty item in the select list: remove the extra comma");
    refuseKnownConstruct(item);
    if (!(ALLOWED_NODES.selectItem as readonly string[]).includes(item.type)) refuseExpression(item, scope);
    let expr: Node = item;
    let alias: string | undefined;
    if (item.type === "alias") {
      if (!item.asKw) refuse(`Write AS before the alias in '${sourceOf(item, scope.sql)}'`);
      if (item.alias.type !== "identifier") refuse(`Unsupported alias in '${sourceOf(item, scope.sql)}'`);
      alias = identifierName(item.alias);
      expr = item.expr;
    }
    if (expr.type !== "identifier" && expr.type !== "member_expr") refuseExpression(expr, scope);
    const column = resolveColumn(expr, scope);
    const name = alias ?? column.name;
    if (names.has(foldCase(name))) refuse(`Duplicate output column name '${shown(name)}': give each column a distinct alias`);
    names.add(foldCase(name));
    if (column.numbersOnly !== true) {
      const times = (namedTimes.get(column) ?? 0) + 1;
      if (times > LIMITS.maxColumnNames) {
        refuse(
          `Column '${shown(column.name)}' is named more than ${LIMITS.maxColumnNames} times in the select list; a column may be named at most ${LIMITS.maxColumnNames} times (each name reads its value again), unless SQLite keeps it to numbers (the rowid alias, INTEGER PRIMARY KEY without DESC; or an INTEGER or REAL column of a STRICT table): remove the repeats`,
        );
      }
      namedTimes.set(column, times);
    }
    columns.push({ name, column });
  }
  return columns;
}

/** Names the construct when it is refused anywhere (aggregate, CASE, ...), else the general rule. */
function refuseExpression(node: Node, scope: Scope): never {
  checkExpression(node, scope, 1);
  refuse(`Expressions and literals are not allowed in the select list: list column names or '*' ('${sourceOf(node, scope.sql)}')`);
}
