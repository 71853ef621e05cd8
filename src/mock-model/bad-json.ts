import { typeOf } from "./sample-json";
import { asArray, isObject, type JsonObject } from "./values";

const NOT_AN_OBJECT = ["not", "an", "object"];

/**
 * JSON that violates `schema`: required properties left out, every other declared property
 * given a value of the wrong type. When that would still be valid (no constraints at all),
 * an array instead of the object.
 */
export function badValue(schema: JsonObject | null): unknown {
  if (schema === null || typeOf(schema) !== "object") return NOT_AN_OBJECT;
  const required = new Set(asArray(schema.required).filter((key) => typeof key === "string"));
  const properties = isObject(schema.properties) ? schema.properties : {};
  const value: JsonObject = {};
  let violated = required.size > 0;
  for (const [key, property] of Object.entries(properties)) {
    if (required.has(key) || !isObject(property)) continue;
    const wrong = wrongValue(property);
    if (wrong === undefined) continue;
    value[key] = wrong;
    violated = true;
  }
  if (!violated && schema.additionalProperties === false) {
    value.unexpected_property = true;
    violated = true;
  }
  return violated ? value : NOT_AN_OBJECT;
}

/** A value outside what `property` allows, or `undefined` when it allows anything. */
function wrongValue(property: JsonObject): unknown {
  if (Array.isArray(property.enum) || "const" in property) return "__not_an_allowed_value__";
  const types = new Set(Array.isArray(property.type) ? property.type : [property.type].filter(Boolean));
  if (types.size === 0) return undefined;
  if (!types.has("number") && !types.has("integer")) return 12345;
  if (!types.has("string")) return "not a number";
  if (!types.has("boolean")) return true;
  return undefined;
}
