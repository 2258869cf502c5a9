/**
 * Struct<fields> columns (DESIGN §14: DuckDB's STRUCT): a validity bitmap, then one child array per
 * member, each as long as the column, written by the member type's own planner (a List's or a
 * Struct's included: nested types). Members are always nullable; a NULL struct has every member
 * null below it, as Arrow readers expect of a struct's children.
 *
 * A member's planner reads the struct objects themselves as its rows, with the member's name as
 * the key, so no member value is copied. A misfit deep in a member is then found at its row; the
 * column is read again with `fitProblem`, which names the first misfit by row and member
 * ("struct member 'a': ..."), as lists name their elements (list.ts).
 */
import { slowValue, type Cells, type ColumnContext, type ColumnPlan, type ColumnPlanner } from "./columns.ts";
import { isStructObject } from "./fit.ts";
import { firstMisfit, guarded, guardedPlan } from "./list.ts";
import type { ArrowKind } from "./types.ts";
import { standaloneValidity } from "./variable-width.ts";

/** What a member's planner reads at a NULL struct's row: no property, so every member is null. */
const NO_MEMBERS: Readonly<Record<PropertyKey, unknown>> = new Proxy({}, { get: () => null });

/** The Struct planner, given the planner of each kind for the members. */
export function structPlanner(planFor: (kind: ArrowKind) => ColumnPlanner): ColumnPlanner {
  return (rows: Cells, column: number, context: ColumnContext): ColumnPlan => {
    const n = rows.length;
    const key = context.key;
    const validity = standaloneValidity(n, context.nullable);
    const rescan = () => firstMisfit(rows, column, context);
    const objects: Readonly<Record<PropertyKey, unknown>>[] = new Array(n);
    for (let r = 0; r < n; r++) {
      const value = rows[r]![key];
      if (isStructObject(value)) {
        objects[r] = value as Readonly<Record<PropertyKey, unknown>>;
      } else {
        // NULL, or a misfit (anything else): a later row's misfit may not be the first.
        guarded(() => slowValue(value, r, column, context, validity), rescan);
        objects[r] = NO_MEMBERS;
      }
    }
    const children = context.type.fields!.map((field) => {
      const memberContext: ColumnContext = { ...context, kind: field.type.kind, type: field.type, key: field.name, nullable: true };
      const plan = guarded(() => planFor(field.type.kind)(objects, column, memberContext), rescan);
      return { length: n, plan: guardedPlan(plan, rescan) };
    });
    return {
      lengths: [validity.length],
      write(out, positions, first) {
        if (validity.length > 0) out.bytes.set(validity.bytes, positions[first]!);
        return validity.nullCount;
      },
      children,
    };
  };
}
