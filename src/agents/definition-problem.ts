/** A rule an agent breaks beyond its shape, at a docs/api.md field path. */
export type DefinitionProblem = { path: string; message: string };
