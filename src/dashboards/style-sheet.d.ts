/** `style.css` is imported as text (`with { type: "text" }`) and written into the pages. */
declare module "*/style.css" {
  const text: string;
  export default text;
}
