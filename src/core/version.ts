import packageJson from "../../package.json";

/** The build's version (package.json), reported by the health routes. */
export const BUILD_VERSION: string = packageJson.version;
