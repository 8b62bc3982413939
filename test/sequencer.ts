import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order files start in. Vitest starts the longest first where it remembers earlier runs' times, and the largest
 * file first where it does not: on a fresh CI runner a short engine file could then start last and leave one worker
 * running alone for minutes. Without those times, the engine and import tests (whole programs under the real
 * engine, a minute or more each) go first and the quick unit files fill in behind them.
 */
export default class EngineTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const remembered = sorted.every((spec) => this.ctx.cache.getTestSpecificationResult(spec)?.duration);
    if (remembered) return sorted;
    const long = (spec: TestSpecification) => /[/\\]test[/\\](e2e|importer)[/\\]/.test(spec.moduleId);
    return [...sorted.filter(long), ...sorted.filter((spec) => !long(spec))];
  }
}
