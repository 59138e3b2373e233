/** This ferry's release, as in package.json (a test keeps the two equal); `ferry --version` prints it. */
export const FERRY_VERSION = "0.1.0";

declare const __FERRY_BUILD__: string | undefined;

/**
 * Which build of this version runs: a fresh id for each build of the CLI
 * (scripts/build-client.mjs), `source` when run through tsx. A watch serves
 * commands of its own build only (cli/resident-server.ts): the same version
 * number, built again from other sources, may not do what it does.
 */
export const FERRY_BUILD: string = typeof __FERRY_BUILD__ === "string" ? __FERRY_BUILD__ : "source";
