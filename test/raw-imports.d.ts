/** Vite's `?raw` imports (vitest): a file's text. */
declare module "*?raw" {
  const text: string;
  export default text;
}
