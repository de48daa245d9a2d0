import { OfflineToolModel, type OfflineToolModelOptions } from '../../executor/models/offline-tool-model';
import type { ToolOutcome } from '../../executor/models/offline-chat-model';
import { parseToolRequest, type PlannedCall, type ToolSignature } from '../../executor/models/tool-request';
import { composeAnswer, PLANNER_HELP } from './planner-answer';
import { planDelegation, planToolCalls } from './planner-plan';

export type PlannerChatModelOptions = OfflineToolModelOptions;

/**
 * The demo's model: the library's offline model (tools called by name, "weather city=Paris"),
 * which also understands plain English about the demo tools ("weather in Paris and the time in
 * Tokyo") and answers in sentences written for them.
 */
export class PlannerChatModel extends OfflineToolModel {
  static override lc_name(): string {
    return 'PlannerChatModel';
  }

  override _llmType(): string {
    return 'toolstream-planner';
  }

  protected override plan(request: string, tools: readonly ToolSignature[]): PlannedCall[] {
    return planDelegation(request, tools) ?? parseToolRequest(request, tools) ?? planToolCalls(request, new Set(tools.map((t) => t.name)));
  }

  protected override answer(outcomes: readonly ToolOutcome[]): string {
    return composeAnswer(outcomes);
  }

  protected override help(): string {
    return PLANNER_HELP;
  }
}
