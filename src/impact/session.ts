import type { TfeClient } from "../client";
import { readImpact } from "./read-impact";
import { ResultsCache } from "./reads";
import type { Answer, ImpactSettings, StricterChange } from "./verdict";

/**
 * The reads of whom stricter changes would block, for every resource of one operation (a preview): one window (its
 * end fixed at the start), one cache (a workspace's runs are read once however many resources ask), one budget
 * (`budgetSaid` names it where it stops the reads).
 */
export class ImpactSession {
  private readonly cache = new ResultsCache();
  private spent = 0;

  constructor(
    private readonly budgetSaid: (settings: ImpactSettings) => string,
    /** The end of the window: the start of the operation. */
    private readonly now = new Date(),
  ) {}

  /** Whom `change` would block, within what is left of the operation's budget. */
  async read(client: TfeClient, change: StricterChange, settings: ImpactSettings): Promise<Answer> {
    const answer = await readImpact(
      client,
      change,
      { ...settings, requestBudget: Math.max(0, settings.requestBudget - this.spent), now: this.now },
      { cache: this.cache, budgetSaid: this.budgetSaid(settings) },
    );
    this.spent += answer.requests;
    return answer;
  }
}
