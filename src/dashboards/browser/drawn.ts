/** A chart drawn for the page: its element and the line of detail shown under it. */
export interface Drawn {
  element: SVGSVGElement | HTMLElement;
  detail: string;
}
