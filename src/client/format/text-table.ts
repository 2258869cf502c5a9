/**
 * A table for reading on a terminal: aligned columns (numbers to the right), nulls blank, long
 * cells cut with "…" so one wide value does not hide the rest; the other formats carry every
 * value whole.
 */
import { cellText, type CellKind } from "./cells.ts";
import type { DecodedResult } from "./rows.ts";

export const MAX_CELL_WIDTH = 60;

export function* textTableChunks(result: DecodedResult): Generator<string> {
  const { columns } = result;
  const cells: string[][] = [];
  for (const row of result.rows()) cells.push(row.map((value, index) => displayCell(cellText(columns[index]!.kind, value))));
  const widths = columns.map((column, index) => Math.max(width(column.name), ...cells.map((row) => width(row[index]!))));
  const line = (values: string[], kinds: (CellKind | null)[]) =>
    values.map((value, index) => pad(value, widths[index]!, kinds[index] === "int" || kinds[index] === "float")).join("  ").trimEnd() + "\n";
  yield line(columns.map((column) => column.name), columns.map(() => null));
  yield widths.map((w) => "─".repeat(w)).join("  ") + "\n";
  const kinds = columns.map((column) => column.kind);
  for (const row of cells) yield line(row, kinds);
  yield `(${cells.length} row${cells.length === 1 ? "" : "s"})\n`;
}

function displayCell(text: string | null): string {
  if (text === null) return "";
  const flat = text.replace(/[\r\n\t]/g, " ");
  const chars = [...flat];
  return chars.length > MAX_CELL_WIDTH ? chars.slice(0, MAX_CELL_WIDTH - 1).join("") + "…" : flat;
}

function width(text: string): number {
  return [...text].length;
}

function pad(text: string, size: number, right: boolean): string {
  const fill = " ".repeat(Math.max(0, size - width(text)));
  return right ? fill + text : text + fill;
}
