/**
 * The sortable preview table. Each heading is a button (keyboard and screen-reader friendly);
 * `aria-sort` tells which column the whole snapshot is sorted by, and the first rows are shown.
 */
import type { PlanColumn } from "../chart-plan.ts";
import { compareCells, displayCell, type Row } from "./data.ts";

type Direction = "ascending" | "descending";

/** Right-aligned: integers, floats and decimals of every width. */
function isNumericKind(kind: PlanColumn["kind"]): boolean {
  return ["int16", "int32", "int64", "float32", "float64", "decimal128"].includes(kind);
}

export function renderPreview(table: HTMLTableElement, columns: PlanColumn[], rows: Row[], limit: number): void {
  const thead = table.tHead ?? table.createTHead();
  const tbody = table.tBodies[0] ?? table.createTBody();
  let sorted = rows;
  let sortedBy: { column: string; direction: Direction } | null = null;

  const headerRow = document.createElement("tr");
  const headers = columns.map((column) => {
    const th = document.createElement("th");
    th.scope = "col";
    th.setAttribute("aria-sort", "none");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    button.textContent = column.name;
    button.addEventListener("click", () => sortBy(column.name));
    th.append(button);
    headerRow.append(th);
    return th;
  });
  thead.replaceChildren(headerRow);

  function drawBody(): void {
    const fragment = document.createDocumentFragment();
    for (const row of sorted.slice(0, limit)) {
      const tr = document.createElement("tr");
      for (const column of columns) {
        const td = document.createElement("td");
        const cell = row[column.name] ?? null;
        td.textContent = displayCell(cell, column.kind);
        if (cell === null) td.className = "null";
        else if (isNumericKind(column.kind)) td.className = "num";
        tr.append(td);
      }
      fragment.append(tr);
    }
    tbody.replaceChildren(fragment);
  }

  function sortBy(name: string): void {
    const direction: Direction =
      sortedBy?.column === name && sortedBy.direction === "ascending" ? "descending" : "ascending";
    sortedBy = { column: name, direction };
    const sign = direction === "ascending" ? 1 : -1;
    // Nulls stay last in both directions.
    sorted = [...rows].sort((a, b) => {
      const x = a[name] ?? null;
      const y = b[name] ?? null;
      if (x === null || y === null) return compareCells(x, y);
      return sign * compareCells(x, y);
    });
    columns.forEach((column, i) => headers[i]?.setAttribute("aria-sort", column.name === name ? direction : "none"));
    drawBody();
  }

  drawBody();
}
