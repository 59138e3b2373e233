/**
 * The store directory inside a synced root; the scanner never syncs it. Its
 * own module, with nothing else, so that the CLI's entry can name it
 * (cli/resident-socket.ts) without loading the store.
 */
export { STORE_NAME as STORE_DIR } from "../../protocol/paths.ts";
