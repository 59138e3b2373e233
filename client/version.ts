/** This ferry's release, as in package.json (a test keeps the two equal); `ferry --version` prints it. */
export const FERRY_VERSION = "0.1.0";
