/** The demo application's agent: six offline tools and the English-speaking planner model. Not part of the library. */
export { PlannerChatModel, type PlannerChatModelOptions } from './planner/planner-chat-model';
export { createDemoTools, type DemoToolsOptions } from './tools/demo-tools';
export { CALCULATOR_TOOL } from './tools/calculator.tool';
export { WORLD_CLOCK_TOOL } from './tools/world-clock.tool';
export { SEARCH_DOCS_TOOL } from './tools/search-docs.tool';
export { WEATHER_TOOL } from './tools/weather.tool';
export { SLOW_TASK_TOOL } from './tools/slow-task.tool';
export { READ_DOC_TOOL } from './tools/read-doc.tool';
