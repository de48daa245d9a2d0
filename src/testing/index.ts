/** `toolstream/testing`: test doubles for hosts that test their agents offline. */
export { ScriptedChatModel, type ScriptedChatModelOptions, type ScriptedToolCall, type ScriptedTurn } from '../executor/models/scripted-chat-model';
