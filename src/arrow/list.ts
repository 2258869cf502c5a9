/**
 * List<child> columns (DESIGN §14: PostgreSQL arrays, DuckDB lists): a validity bitmap and int32
 * offsets, like Utf8, then the child array of every element of the batch, which any column
 * planner writes, a List's own included (nested lists). Elements are always nullable.
 *
 * The plan reads the rows once to learn the offsets and gather the elements, then plans the child
 * over them as if they were rows. A misfit deep in the child is found at an element's position;
 * the column is then read again with `fitProblem`, which names the first misfit by row and element
 * ("list element 2: ..."), exactly as the text formats and Parquet name it.
 */
import { slowValue, ValueDoesNotFit, type Cells, type ColumnContext, type ColumnPlan, type ColumnPlanner } from "./columns.ts";
import { fitProblem } from "./fit.ts";
import type { ArrowKind } from "./types.ts";
import { standaloneValidity, writeValidityAndOffsets } from "./variable-width.ts";

/** The List planner, given the planner of each kind for the elements. */
export function listPlanner(planFor: (kind: ArrowKind) => ColumnPlanner): ColumnPlanner {
  return (rows: Cells, column: number, context: ColumnContext): ColumnPlan => {
    const n = rows.length;
    const key = context.key;
    const childType = context.type.child!;
    const validity = standaloneValidity(n, context.nullable);
    const offsets = new Int32Array(n + 1);
    // Each element as a one-value row, read by the child's planner at position 0.
    const elements: unknown[][] = [];
    const rescan = () => firstMisfit(rows, column, context);
    for (let r = 0; r < n; r++) {
      const value = rows[r]![key];
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) elements.push([value[i]]);
      } else {
        // NULL, or a misfit (anything else): a later row's misfit may not be the first.
        guarded(() => slowValue(value, r, column, context, validity), rescan);
      }
      offsets[r + 1] = elements.length;
    }
    const childContext: ColumnContext = { ...context, kind: childType.kind, type: childType, key: 0, nullable: true, firstRowIndex: 0 };
    const childPlan = guarded(() => planFor(childType.kind)(elements as unknown as Cells, column, childContext), rescan);
    return {
      lengths: [validity.length, (n + 1) * 4],
      write(out, positions, first) {
        writeValidityAndOffsets(out, positions, first, validity, offsets);
        return validity.nullCount;
      },
      children: [{ length: elements.length, plan: guardedPlan(childPlan, rescan) }],
    };
  };
}

/** The first misfit of the column in row order, with the detail `fitProblem` gives. */
export function firstMisfit(rows: Cells, column: number, context: ColumnContext): ValueDoesNotFit | null {
  const options = { nullable: context.nullable, safeIntegers: context.safeIntegers };
  for (let r = 0; r < rows.length; r++) {
    const detail = fitProblem(context.type, rows[r]![context.key], options);
    if (detail !== null) return new ValueDoesNotFit(column, context.firstRowIndex + r, detail);
  }
  return null;
}

export function guarded<T>(action: () => T, rescan: () => ValueDoesNotFit | null): T {
  try {
    return action();
  } catch (error) {
    if (error instanceof ValueDoesNotFit) throw rescan() ?? error;
    throw error;
  }
}

/** The plan, its children's and theirs: a misfit written anywhere below names the list's (or struct's) row. */
export function guardedPlan(plan: ColumnPlan, rescan: () => ValueDoesNotFit | null): ColumnPlan {
  return {
    lengths: plan.lengths,
    write: (out, positions, first) => guarded(() => plan.write(out, positions, first), rescan),
    ...(plan.children ? { children: plan.children.map((child) => ({ length: child.length, plan: guardedPlan(child.plan, rescan) })) } : {}),
  };
}
