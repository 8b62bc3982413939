// Types of plugin-platforms.mjs for the tests and benchmarks that call it.
export interface Runtime {
  package: string;
  version: string;
  integrity: string;
  binary: string;
}
export const blobMakers: Readonly<Record<string, Runtime>>;
export const platforms: readonly string[];
export function hostPlatform(): string;
export function runtimeVersion(platform: string): string;
export function executableName(platform: string): string;
export function runtimeBinary(runtime: Runtime): string;
export function adHocSignatureProblems(executable: string): string[];
