/** A function of zod that Agentry's bundle leaves out (src/core/zod-slim): calling it is a bug. */
export const leftOut =
  (name: string) =>
  (..._args: unknown[]): never => {
    throw new Error(`zod's ${name} is left out of Agentry's bundle (src/core/zod-slim)`);
  };
