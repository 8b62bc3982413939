// One platform's plugin folder, made in a worker thread of writePluginFolders (plugin-platforms.mjs): postject's
// injection is WebAssembly that keeps one core busy, so platforms are made side by side.
import { workerData } from "node:worker_threads";
import { writePluginFolder } from "./plugin-platforms.mjs";

const { platform, folder, blob, shared } = workerData;
await writePluginFolder(platform, folder, blob, shared);
