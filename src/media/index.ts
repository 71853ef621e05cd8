export { mediaContext, parseInput, type MediaContext, type ParsedPart } from "./parse-input";
export { resolveInput, type ResolvedPart } from "./resolve-input";
export { stageInput, releaseUnreferenced, type StagedInput } from "./stage";
export { loadMedia } from "./load";
export { deleteMedia, deleteSessionMedia, mediaKey, type MediaScope } from "./store";
export { contentPart, type ContentPart } from "./part-schemas";
