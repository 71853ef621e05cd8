/** Vite's `?raw` imports (vitest): a file's text. */
declare module "*?raw" {
  const text: string;
  export default text;
}

/** The README's TypeScript client example, run as written (test/node/readme-example-plugin.ts). */
declare module "virtual:readme-client-example" {}
