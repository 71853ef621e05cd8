/** Stands in for `ajv-formats` in the Worker bundle (see no-ajv.ts); never called. */
export default function noAjvFormats(): void {}
