// Types of plugin-bundle.mjs for the tests that call it.
export function bundlePlugin(root: string, outfile: string): Promise<Map<string, number>>;
