/**
 * Rows → one line of text each, for the text formats. A format says how a column's text is written
 * (CSV quotes text that needs it, JSON quotes strings and names keys) and what NULL is; this loop
 * reads the cells the way the Arrow encoder does and refuses the same values, naming the same cell.
 */
import { firstMisfit, fitProblem, ValueDoesNotFit, type EncoderColumn, type Row } from "../arrow/encode.ts";
import { Misfit } from "../arrow/fit.ts";
import { checkColumnType, type ArrowKind } from "../arrow/types.ts";
import type { FormatOptions } from "./encoder.ts";
import { textForms, type TextForm } from "./text-values.ts";

export interface TextLayout {
  /** The written text of a non-null value of a column, from its plain text form. */
  cell(kind: ArrowKind, form: TextForm, column: EncoderColumn): TextForm;
  /** What goes before the column's text in a line (a separator, a key). */
  before(column: EncoderColumn, index: number): string;
  /** What ends a line after the last column (JSON's `}`). */
  after: string;
  /** The text of NULL. */
  nullText: string;
}

/** Reads batches of rows into lines; throws ValueDoesNotFit like the Arrow encoder. */
export type LineRenderer = (rows: readonly Row[], firstRowIndex: number) => string[];

export function lineRenderer(columns: EncoderColumn[], options: FormatOptions, layout: TextLayout): LineRenderer {
  const safeIntegers = options.safeIntegers ?? true;
  const forms = textForms(safeIntegers);
  const cells = columns.map((column) => {
    checkColumnType(column);
    return layout.cell(column.kind, forms[column.kind](column), column);
  });
  const before = columns.map((column, i) => layout.before(column, i));
  const nullable = columns.map((column) => column.nullable);
  const rowKeys = options.rowKeys ?? columns.map((column) => column.name);
  const positionKeys = columns.map((_, i) => i);
  const { after, nullText } = layout;
  const width = columns.length;

  return (rows, firstRowIndex) => {
    // Positions for array rows, property names for object rows (as arrow/encode.ts).
    const keys: readonly (string | number)[] = rows.length > 0 && !Array.isArray(rows[0]) ? rowKeys : positionKeys;
    const records = rows as readonly Readonly<Record<PropertyKey, unknown>>[];
    const lines: string[] = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const row = records[r]!;
      let line = "";
      for (let c = 0; c < width; c++) {
        const value = row[keys[c]!];
        let text: string | Misfit;
        if (value === null) text = nullable[c] ? nullText : new Misfit(fitProblem(columns[c]!, null, { nullable: false }) ?? "NULL");
        else text = cells[c]!(value);
        if (typeof text !== "string") {
          // Cells are read row by row: earlier columns may still hold a misfit in a later row.
          const found = new ValueDoesNotFit(c, firstRowIndex + r, text.detail);
          throw firstMisfit(columns, records, keys, firstRowIndex, found, safeIntegers);
        }
        line += before[c] + text;
      }
      lines[r] = line + after;
    }
    return lines;
  };
}
