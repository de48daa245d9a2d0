/**
 * The demo app's remote agents: TOOLSTREAM_REMOTE_AGENTS (`name=url` pairs, comma-separated)
 * adds one tool per agent, described from the agent's card, and one skill per agent to this
 * agent's card. Credentials per agent come from TOOLSTREAM_REMOTE_AGENT_<NAME>_API_KEY or
 * ..._BEARER_TOKEN (NAME upper-cased, `-` as `_`); they are sent to that agent only and never logged.
 */
import { Logger } from '@nestjs/common';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { A2aSkillOptions } from '../a2a';
import { describeFromCard, readRemoteAgentCard, remoteAgentTool, type RemoteAgentToolOptions } from '../remote-agents';

export const REMOTE_AGENTS_ENV = 'TOOLSTREAM_REMOTE_AGENTS';

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** The environment variable holding one credential of one agent. */
export function remoteAgentCredentialEnv(name: string, kind: 'API_KEY' | 'BEARER_TOKEN'): string {
  return `TOOLSTREAM_REMOTE_AGENT_${name.toUpperCase().replace(/-/g, '_')}_${kind}`;
}

/**
 * The agents TOOLSTREAM_REMOTE_AGENTS names, with their credentials; a malformed value fails
 * the boot with a message naming the variable (and never a credential).
 */
export function remoteAgentsFromEnv(env: NodeJS.ProcessEnv = process.env, taken: readonly string[] = []): RemoteAgentToolOptions[] {
  const raw = env[REMOTE_AGENTS_ENV]?.trim();
  if (!raw) return [];
  const agents: RemoteAgentToolOptions[] = [];
  const names = new Set(taken.map((n) => n.toLowerCase()));
  for (const pair of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = pair.indexOf('=');
    const shown = JSON.stringify(pair.slice(0, 80));
    if (eq <= 0) throw new Error(`${REMOTE_AGENTS_ENV} must be name=url pairs separated by commas; ${shown} is not name=url`);
    const name = pair.slice(0, eq).trim();
    const url = pair.slice(eq + 1).trim();
    if (!NAME.test(name)) throw new Error(`${REMOTE_AGENTS_ENV}: the name ${JSON.stringify(name.slice(0, 64))} must start with a letter and hold only letters, digits, "_" or "-" (at most 64)`);
    if (names.has(name.toLowerCase())) throw new Error(`${REMOTE_AGENTS_ENV}: the name ${name} is used twice (or by a built-in tool)`);
    names.add(name.toLowerCase());
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`${REMOTE_AGENTS_ENV}: the URL of ${name} is not a URL: ${JSON.stringify(url.slice(0, 80))}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${REMOTE_AGENTS_ENV}: the URL of ${name} must be http or https`);
    const agent: RemoteAgentToolOptions = { name, url };
    const apiKey = env[remoteAgentCredentialEnv(name, 'API_KEY')]?.trim();
    const bearerToken = env[remoteAgentCredentialEnv(name, 'BEARER_TOKEN')]?.trim();
    if (apiKey) agent.apiKey = apiKey;
    if (bearerToken) agent.bearerToken = bearerToken;
    agents.push(agent);
  }
  return agents;
}

export interface DemoRemoteAgents {
  tools: StructuredToolInterface[];
  /** One skill per agent for this agent's card. */
  skills: A2aSkillOptions[];
  /** Narration of the delegating calls: "asking <name>". */
  phrases: Record<string, string>;
}

const loaded = new Map<string, Promise<DemoRemoteAgents>>();

/**
 * The tools, card skills and phrases for the agents the environment names, each described
 * from its card. An agent whose card cannot be read at boot is still added, described
 * generically (a warning says why): its tool reads the card again on each call.
 * Read once per configuration, as the executor and the card both need it.
 */
export function loadRemoteAgents(env: NodeJS.ProcessEnv, taken: readonly string[]): Promise<DemoRemoteAgents> {
  const agents = remoteAgentsFromEnv(env, taken);
  const key = JSON.stringify(agents);
  let found = loaded.get(key);
  if (!found) {
    found = describeAll(agents);
    loaded.set(key, found);
  }
  return found;
}

async function describeAll(agents: RemoteAgentToolOptions[]): Promise<DemoRemoteAgents> {
  const logger = new Logger('RemoteAgents');
  const described = await Promise.all(
    agents.map(async (agent) => {
      try {
        const card = await readRemoteAgentCard(agent);
        return { agent, card, description: describeFromCard(agent.name, card) };
      } catch (err) {
        logger.warn(`${err instanceof Error ? err.message : String(err)}; its tool is described generically and reads the card again when called`);
        return { agent, card: undefined, description: undefined };
      }
    }),
  );
  return {
    tools: described.map(({ agent, description }) => remoteAgentTool({ ...agent, description })),
    skills: described.map(({ agent, card }) => ({
      id: `remote-agent-${agent.name}`,
      name: `Ask ${agent.name}`,
      description: card
        ? `Delegates to the remote A2A agent ${agent.name} (${card.name}): ${card.description}`.trim()
        : `Delegates to the remote A2A agent ${agent.name}.`,
      tags: ['remote-agent', 'delegation'],
      examples: [`ask ${agent.name}: ${card?.skills.flatMap((s) => s.examples)[0] ?? 'what can you do?'}`],
    })),
    phrases: Object.fromEntries(agents.map((agent) => [agent.name, `asking ${agent.name}`])),
  };
}
