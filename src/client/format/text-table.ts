/**
 * A table for reading on a terminal: aligned columns (numbers to the right), nulls blank, long
 * cells cut with "…" so one wide value does not hide the rest; the other formats carry every
 * value whole. Line breaks and tabs become spaces, and every other control character of a name
 * or a value a visible `\u{…}` escape (printable.ts, DESIGN §17), before widths are measured.
 * The rows are read twice, once for the widths and once to write them, so that no more than a
 * batch is held however long the result.
 */
import { printable } from "../printable.ts";
import { cellText, type CellKind } from "./cells.ts";
import type { DecodedResult } from "./rows.ts";

export const MAX_CELL_WIDTH = 60;

export function* textTableChunks(result: DecodedResult): Generator<string> {
  const { columns } = result;
  const names = columns.map((column) => printable(flat(column.name)));
  const kinds = columns.map((column) => column.kind);
  const cellsOf = (row: unknown[]) => row.map((value, index) => displayCell(cellText(kinds[index]!, value)));
  const widths = names.map(width);
  let count = 0;
  for (const row of result.rows()) {
    cellsOf(row).forEach((cell, index) => (widths[index] = Math.max(widths[index]!, width(cell))));
    count++;
  }
  const line = (values: string[], kinds: (CellKind | null)[]) =>
    values.map((value, index) => pad(value, widths[index]!, kinds[index] === "int" || kinds[index] === "float")).join("  ").trimEnd() + "\n";
  yield line(names, columns.map(() => null));
  yield widths.map((w) => "─".repeat(w)).join("  ") + "\n";
  for (const row of result.rows()) yield line(cellsOf(row), kinds);
  yield `(${count} row${count === 1 ? "" : "s"})\n`;
}

function flat(text: string): string {
  return text.replace(/[\r\n\t]/g, " ");
}

function displayCell(text: string | null): string {
  if (text === null) return "";
  // A long value is cut before it is escaped: 4 × the width in UTF-16 units holds more characters than are shown.
  const chars = [...printable(flat(text.length > 4 * MAX_CELL_WIDTH ? text.slice(0, 4 * MAX_CELL_WIDTH) : text))];
  return chars.length > MAX_CELL_WIDTH ? chars.slice(0, MAX_CELL_WIDTH - 1).join("") + "…" : chars.join("");
}

function width(text: string): number {
  return [...text].length;
}

function pad(text: string, size: number, right: boolean): string {
  const fill = " ".repeat(Math.max(0, size - width(text)));
  return right ? fill + text : text + fill;
}
